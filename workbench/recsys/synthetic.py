"""Synthetic click-through data with Criteo's 26 categorical features: their cardinalities, their skew, and
labels from a planted model, so that accuracy is reachable and its ceiling is known.

Cardinalities (:data:`CRITEO_CARDINALITIES`): the Criteo Display Advertising Challenge (Kaggle, 45.8 M rows)
counts used by ``facebookresearch/dlrm``'s preprocessing and TorchRec's examples (sum 33,762,577).
Exponents (:data:`CRITEO_ZIPF`): fitted on the shared 200-row ``criteo_sample.txt`` by
:func:`workbench.recsys.zipf.fit_zipf_exponent` (frequency-of-frequencies match, grid 0..3 step 0.01; the
test ``test_fitted_exponents_are_the_stated_ones`` refits them). C9, C20 and C22 sit at a grid end: the
sample only bounds them (C20's 4 values all occur >= 5 times in 200 rows, which every s fits).

Scaling to this machine: feature f keeps ``min(N_f, max(64, round(N_f * vocab_scale)))`` values (the 10 M-value
features shrink, the small ones keep their size), so a table fits in memory while keeping Criteo's shape.
Ids are random permutations of the ranks, so hot ids are scattered over the table as in hashed data.

Planted model (the "teacher"): per feature f and value v a scalar ``u_f[v] ~ N(0, sigma_u^2)`` and a vector
``t_f[v] ~ N(0, sigma_t^2 I_k)``; 13 dense features ``x ~ N(0, 1)`` with weights ``w ~ N(0, 0.15^2)``;
``logit = b + w.x + sum_f u_f[v_f] + sum_{f<g} <t_f[v_f], t_g[v_g]>``, label ~ Bernoulli(sigmoid(logit)), with
``b`` set so the mean CTR is about 0.25 (Criteo's is 0.256). :attr:`CTRDataset.probability` keeps each row's true
click probability, whose AUC is the Bayes ceiling of any model on this data.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.recsys.samples import CTRData
from workbench.recsys.zipf import zipf_sampler

__all__ = [
    "CRITEO_CARDINALITIES",
    "CRITEO_ZIPF",
    "SyntheticSpec",
    "CTRDataset",
    "generate",
    "load_or_generate",
    "scaled_cardinalities",
]

log = logging.getLogger(__name__)

CRITEO_CARDINALITIES = (
    1460,
    583,
    10131227,
    2202608,
    305,
    24,
    12517,
    633,
    3,
    93145,
    5683,
    8351593,
    3194,
    27,
    14992,
    5461306,
    10,
    5652,
    2173,
    4,
    7046547,
    18,
    15,
    286181,
    105,
    142572,
)
#: Zipf exponents of C1..C26 fitted on criteo_sample.txt (see the module docstring)
CRITEO_ZIPF = (
    1.76,
    1.04,
    1.0,
    1.04,
    2.41,
    2.87,
    0.74,
    2.0,
    3.0,
    0.97,
    0.8,
    1.02,
    0.81,
    1.84,
    0.9,
    1.02,
    0.87,
    1.05,
    1.44,
    0.0,
    1.01,
    3.0,
    1.91,
    1.12,
    1.73,
    1.2,
)
NUM_DENSE = 13
TEACHER_DIM = 4
GEN_CHUNK = 100_000  # rows generated per step (progress bar granularity)


def scaled_cardinalities(vocab_scale: float) -> tuple[int, ...]:
    """Criteo's cardinalities scaled to this machine: ``min(N, max(64, round(N * vocab_scale)))``."""
    if not 0 < vocab_scale <= 1:
        raise ValueError(f"vocab_scale={vocab_scale} is out of range: valid range is 0..1 (fraction, exclusive of 0)")
    return tuple(min(n, max(64, int(round(n * vocab_scale)))) for n in CRITEO_CARDINALITIES)


@dataclass(frozen=True)
class SyntheticSpec:
    """What defines a synthetic data set: rows, vocabulary scale, skew multiplier on the fitted exponents,
    the teacher's scales and the seed. Equal specs give bit-identical data."""

    rows: int
    vocab_scale: float = 0.002
    skew: float = 1.0
    sigma_u: float = 0.2
    sigma_t: float = 0.15
    seed: int = 0

    @property
    def cardinalities(self) -> tuple[int, ...]:
        return scaled_cardinalities(self.vocab_scale)

    @property
    def exponents(self) -> tuple[float, ...]:
        return tuple(round(s * self.skew, 6) for s in CRITEO_ZIPF)

    def key(self) -> str:
        text = repr((1, self.rows, self.vocab_scale, self.skew, self.sigma_u, self.sigma_t, self.seed))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CTRDataset:
    """Generated data: :class:`CTRData` plus each row's true click probability (the planted model's)."""

    data: CTRData
    probability: np.ndarray
    spec: SyntheticSpec


class _Teacher:
    def __init__(self, spec: SyntheticSpec, rng: np.random.Generator) -> None:
        cards = spec.cardinalities
        self.u = [rng.normal(0, spec.sigma_u, n).astype(np.float32) for n in cards]
        self.t = [rng.normal(0, spec.sigma_t, (n, TEACHER_DIM)).astype(np.float32) for n in cards]
        self.w = rng.normal(0, 0.15, NUM_DENSE).astype(np.float32)
        self.bias = 0.0

    def logit(self, dense: np.ndarray, sparse: np.ndarray) -> np.ndarray:
        z = dense @ self.w + self.bias
        t = np.stack([self.t[f][sparse[:, f]] for f in range(sparse.shape[1])], axis=1)  # [B, F, k]
        s = t.sum(axis=1)
        pair = 0.5 * (np.einsum("bk,bk->b", s, s) - np.einsum("bfk,bfk->b", t, t))  # sum_{f<g} <t_f, t_g>
        return z + sum(self.u[f][sparse[:, f]] for f in range(sparse.shape[1])) + pair


def generate(spec: SyntheticSpec, *, progress: Callable[[int, int], None] | None = None) -> CTRDataset:
    """Generate ``spec.rows`` rows (module docstring); ``progress(done, total)`` after each block of rows."""
    if spec.rows < 2:
        raise ValueError(f"rows={spec.rows} is out of range: valid range is >= 2")
    rng = np.random.default_rng(spec.seed)
    cards, exps = spec.cardinalities, spec.exponents
    draws = [zipf_sampler(n, s) for n, s in zip(cards, exps)]
    perms = [rng.permutation(n) for n in cards]
    teacher = _Teacher(spec, rng)
    # centre the logit so the mean CTR is about 0.25, on a pilot sample of the same distribution
    pilot_rng = np.random.default_rng(spec.seed + 7_919)
    pilot = np.stack([perms[f][draws[f](pilot_rng, 20_000)] for f in range(len(cards))], axis=1)
    pilot_logit = teacher.logit(pilot_rng.standard_normal((20_000, NUM_DENSE)).astype(np.float32), pilot)
    lo, hi = -20.0, 20.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.mean(1 / (1 + np.exp(-(pilot_logit + mid)))) < 0.25 else (lo, mid)
    teacher.bias = 0.5 * (lo + hi)
    n = spec.rows
    sparse = np.empty((n, len(cards)), dtype=np.int64)
    dense = np.empty((n, NUM_DENSE), dtype=np.float32)
    prob = np.empty(n, dtype=np.float32)
    label = np.empty(n, dtype=np.float32)
    for start in range(0, n, GEN_CHUNK):
        stop = min(n, start + GEN_CHUNK)
        m = stop - start
        block = np.stack([perms[f][draws[f](rng, m)] for f in range(len(cards))], axis=1)
        x = rng.standard_normal((m, NUM_DENSE)).astype(np.float32)
        p = 1.0 / (1.0 + np.exp(-teacher.logit(x, block).astype(np.float64)))
        sparse[start:stop], dense[start:stop], prob[start:stop] = block, x, p
        label[start:stop] = (rng.random(m) < p).astype(np.float32)
        if progress is not None:
            progress(stop, n)
    features = tuple(f"C{i}" for i in range(1, 27))
    data = CTRData(label, dense, sparse, cards, features, f"synthetic-criteo(rows={n}, seed={spec.seed})")
    return CTRDataset(data, prob, spec)


def _cache_file(spec: SyntheticSpec, folder: Path) -> Path:
    return folder / f"ctr-{spec.key()}.npz"


def load_or_generate(
    spec: SyntheticSpec,
    cache: str | os.PathLike[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> CTRDataset:
    """:func:`generate`, stored in (and read back from) the folder ``cache`` when given (``.npz`` written
    atomically). A cached file that cannot be read raises ValueError naming it (delete it to regenerate)."""
    if cache is None:
        return generate(spec, progress=progress)
    from workbench.atomic import atomic_write

    path = _cache_file(spec, Path(cache))
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in ("label", "dense", "sparse", "probability", "cards")}
        except Exception as exc:  # zipfile.BadZipFile, OSError, KeyError, ValueError: all mean a bad file
            raise ValueError(
                f"dataset file {path} is corrupt ({type(exc).__name__}: {exc}); delete it and it is generated again"
            ) from None
        if arrays["sparse"].shape != (spec.rows, 26) or tuple(arrays["cards"]) != spec.cardinalities:
            raise ValueError(
                f"dataset file {path} does not hold the data set it is named for (shape "
                f"{arrays['sparse'].shape}); delete it and it is generated again"
            )
        data = CTRData(
            arrays["label"],
            arrays["dense"],
            arrays["sparse"],
            spec.cardinalities,
            tuple(f"C{i}" for i in range(1, 27)),
            f"synthetic-criteo(rows={spec.rows}, seed={spec.seed})",
        )
        if progress is not None:
            progress(spec.rows, spec.rows)
        return CTRDataset(data, arrays["probability"], spec)
    made = generate(spec, progress=progress)
    with atomic_write(path, "wb") as f:
        np.savez(
            f,
            label=made.data.label,
            dense=made.data.dense,
            sparse=made.data.sparse,
            probability=made.probability,
            cards=np.array(spec.cardinalities),
        )
    log.info("cached %s (%.1f MB)", path, path.stat().st_size / 1e6)
    return made


def expected_counts(spec: SyntheticSpec) -> list[np.ndarray]:
    """Per feature, the expected number of occurrences of each rank (1 = hottest) in ``spec.rows`` rows."""
    from workbench.recsys.zipf import zipf_probabilities

    return [spec.rows * zipf_probabilities(n, s) for n, s in zip(spec.cardinalities, spec.exponents)]


def total_rows(cards: tuple[int, ...]) -> int:
    return int(math.fsum(cards))
