"""Synthetic click-through data with Criteo's 26 categorical features: their cardinalities, their skew, its click
rate, and labels from a planted model whose per-id information grows with frequency, so that accuracy is reachable,
its ceiling is known, and narrow embeddings lose it.

Statistics and where they come from (:func:`statistics_rows` prints them with their sources):

- cardinalities (:data:`CRITEO_CARDINALITIES`): distinct values of C1..C26 in the Criteo Display Advertising
  Challenge training set (Kaggle, 45,840,617 rows), as counted by ``facebookresearch/dlrm``'s preprocessing and
  listed by TorchRec's Criteo example (sum 33,762,577);
- Zipf exponents (:data:`CRITEO_ZIPF`): no per-field exponents are published with the data set, so they are
  fitted on Criteo's own rows (the shared 200-row ``criteo_sample.txt``, the Kaggle data's first rows as DeepCTR
  ships them) by :func:`workbench.recsys.zipf.fit_zipf_exponent` (frequency-of-frequencies match, grid 0..3 step
  0.01; ``test_fitted_exponents_are_the_stated_ones`` refits them). C9, C20 and C22 sit at a grid end: the
  sample only bounds them (C20's 4 values all occur >= 5 times in 200 rows, which every s fits);
- click rate (:data:`CRITEO_CTR`): 0.256, the Kaggle training set's share of clicks (11,745,438 of 45,840,617
  rows, as commonly reported; not re-counted here).

Scaling to this machine: feature f keeps ``min(N_f, max(64, round(N_f * vocab_scale)))`` values (the 10 M-value
features shrink, the small ones keep their size), so a table fits in memory while keeping Criteo's shape.
Ids are random permutations of the ranks, so hot ids are scattered over the table as in hashed data.

Planted model (the "teacher"): per feature f and value v a scalar ``u_f[v] ~ N(0, sigma_u^2)`` and a vector
``t_f[v]`` of ``teacher_dim`` (K) floats of which only the first ``k_v`` are nonzero, ``N(0, s^2)`` each, with

    k_v = floor(K min(1, n_v / full_count)^grade),   n_v = rows x P(rank of v)   (expected occurrences)

so a hot id carries up to K dimensions of information and a rare id none beyond its scalar (``grade = 0``: every
id K, the flat teacher). 13 dense features ``x ~ N(0, 1)`` with weights ``w ~ N(0, 0.15^2)``;
``logit = b + w.x + sum_f u_f[v_f] + sum_{f<g} <t_f[v_f], t_g[v_g]>``, label ~ Bernoulli(sigmoid(logit)). ``s`` is
set on a pilot sample so that the pair term's standard deviation is ``pair_std``, and ``b`` so that the mean
click rate is :data:`CRITEO_CTR`. A table of ``d < k_v`` floats per id cannot represent the interactions of the
hot ids, so uniform tables lose AUC as ``d`` falls. :attr:`CTRDataset.probability` keeps each row's true click
probability, whose AUC is the Bayes ceiling of any model on this data.

The teacher's defaults (issue #27: data on which dimensions matter; measured on FIITED's equal-memory sweep,
``benchmarks/recsys/fiited_sweep.py``: 20,000 rows, vocabulary scale 0.0002, seeds 0-4, paired with the full table):

- ``pair_std = 6`` (was 2): at 2 the pair term was not learnable from 14,400 training rows: even a factorization
  machine of the teacher's own form (width 8, Adam, best test epoch) reached AUC 0.786 against the planted
  model's 0.904, and the same machine at width 1 reached 0.786 too; about 65 % of the pair term's variance is
  additive per id (the hot values of C6, C9, C20, ... occur in most rows, so ``<t_f[v], t_g[hot]>`` acts as a
  scalar of ``v``), which one float per id carries through the DLRM's dot interaction with the bottom MLP's
  output. A stronger pair term makes its non-additive part learnable;
- ``teacher_dim = 4`` (was 8): fewer parameters per hot id to learn from the same rows (a width-4 factorization
  machine at ``pair_std = 4`` reached 0.903 against 0.846 at width 1). At these defaults and the sweep's
  ``lr = 0.02`` the DLRM's uniform 1 / 4 / 16-float tables lose 0.0258 / 0.0157 / 0.0084 AUC to the full table
  (paired, 5 seeds; 95 % half-widths 0.012 / 0.007 / 0.006), where at width 8 and ``pair_std = 2`` one float lost
  0.0054 (seed 0). The planted model's AUC rises to 0.983; the full table's (0.849) stays far below it.

``full_count``, ``grade`` and ``sigma_u`` keep their values (at the old teacher, seed 0: ``full_count = 300``
lowered the full table's AUC to 0.748 with a curve that did not fall monotonically, 1-float loss 0.016; 60,000
rows gave a 1-float loss of 0.011 at three times the sweep's cost); Criteo's statistics are unchanged.
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
from workbench.recsys.zipf import zipf_probabilities, zipf_sampler

__all__ = [
    "CRITEO_CARDINALITIES",
    "CRITEO_ZIPF",
    "CRITEO_CTR",
    "SOURCES",
    "statistics_rows",
    "teacher_dims",
    "estimate_bytes",
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
CRITEO_CTR = 0.256
#: where each statistic comes from (printed by :func:`statistics_rows`)
SOURCES = {
    "cardinality": "Criteo Kaggle train set (45,840,617 rows), counts of facebookresearch/dlrm / TorchRec's example",
    "zipf": "fitted on Criteo's rows in criteo_sample.txt (DeepCTR; frequency-of-frequencies, "
    "workbench.recsys.zipf); no per-field exponent is published",
    "ctr": "Criteo Kaggle train set: 11,745,438 clicks / 45,840,617 rows = 25.6 % (commonly reported)",
}
GEN_CHUNK = 100_000  # rows generated per step (progress bar granularity)


def scaled_cardinalities(vocab_scale: float) -> tuple[int, ...]:
    """Criteo's cardinalities scaled to this machine: ``min(N, max(64, round(N * vocab_scale)))``."""
    if not 0 < vocab_scale <= 1:
        raise ValueError(f"vocab_scale={vocab_scale} is out of range: valid range is 0..1 (fraction, exclusive of 0)")
    return tuple(min(n, max(64, int(round(n * vocab_scale)))) for n in CRITEO_CARDINALITIES)


@dataclass(frozen=True)
class SyntheticSpec:
    """What defines a synthetic data set: rows, vocabulary scale, skew multiplier on the fitted exponents, the
    teacher (scalar scale ``sigma_u``; vector width ``teacher_dim``, ``grade`` and ``full_count`` of the
    frequency-graded widths, ``pair_std`` of the pair term: module docstring) and the seed. Equal specs give
    bit-identical data."""

    rows: int
    vocab_scale: float = 0.002
    skew: float = 1.0
    sigma_u: float = 0.2
    teacher_dim: int = 4
    grade: float = 1.0
    full_count: float = 1000.0
    pair_std: float = 6.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.teacher_dim <= 1024:
            raise ValueError(f"teacher_dim={self.teacher_dim} is out of range: valid range is 1..1024")
        if not 0 <= self.grade <= 4:
            raise ValueError(f"grade={self.grade} is out of range: valid range is 0..4")
        if not self.full_count > 0:
            raise ValueError(f"full_count={self.full_count} is out of range: valid range is > 0 (occurrences)")

    @property
    def cardinalities(self) -> tuple[int, ...]:
        return scaled_cardinalities(self.vocab_scale)

    @property
    def exponents(self) -> tuple[float, ...]:
        return tuple(round(s * self.skew, 6) for s in CRITEO_ZIPF)

    def key(self) -> str:
        text = repr(
            (
                2,
                self.rows,
                self.vocab_scale,
                self.skew,
                self.sigma_u,
                self.teacher_dim,
                self.grade,
                self.full_count,
                self.pair_std,
                self.seed,
            )
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CTRDataset:
    """Generated data: :class:`CTRData` plus each row's true click probability (the planted model's) and each
    id's teacher width ``k_v`` (global row order: feature 0's ids, then feature 1's, ...)."""

    data: CTRData
    probability: np.ndarray
    spec: SyntheticSpec
    teacher_dims: np.ndarray | None = None


def teacher_dims(spec: SyntheticSpec) -> list[np.ndarray]:
    """Per feature, the teacher width ``k`` of each *rank* (1 = hottest first): module docstring's ``k_v``."""
    out = []
    for n, s in zip(spec.cardinalities, spec.exponents):
        expected = spec.rows * zipf_probabilities(n, s)
        k = np.floor(spec.teacher_dim * np.minimum(1.0, expected / spec.full_count) ** spec.grade)
        out.append(np.clip(k, 0, spec.teacher_dim).astype(np.int64))
    return out


class _Teacher:
    def __init__(self, spec: SyntheticSpec, rng: np.random.Generator, perms: list[np.ndarray]) -> None:
        cards = spec.cardinalities
        self.u = [rng.normal(0, spec.sigma_u, n).astype(np.float32) for n in cards]
        self.width = []  # per feature, k of each id (ids are permuted ranks)
        self.t = []
        for f, k_rank in enumerate(teacher_dims(spec)):
            k = np.empty_like(k_rank)
            k[perms[f]] = k_rank  # id perms[f][r] has rank r
            t = rng.standard_normal((cards[f], spec.teacher_dim), dtype=np.float32)
            t[np.arange(spec.teacher_dim)[None, :] >= k[:, None]] = 0.0
            self.width.append(k)
            self.t.append(t)
        self.w = rng.normal(0, 0.15, NUM_DENSE).astype(np.float32)
        self.bias = 0.0
        self.scale = 1.0  # s^2: multiplies the pair term

    def pair(self, sparse: np.ndarray) -> np.ndarray:
        """``sum_{f<g} <t_f, t_g>`` of every row at s = 1: [B]."""
        t = np.stack([self.t[f][sparse[:, f]] for f in range(sparse.shape[1])], axis=1)  # [B, F, K]
        s = t.sum(axis=1)  # [B, K]
        return 0.5 * (np.einsum("bk,bk->b", s, s) - np.einsum("bfk,bfk->b", t, t))

    def logit(self, dense: np.ndarray, sparse: np.ndarray) -> np.ndarray:
        first = sum(self.u[f][sparse[:, f]] for f in range(sparse.shape[1]))
        return dense @ self.w + self.bias + first + self.scale * self.pair(sparse)


def _calibrate(teacher: _Teacher, spec: SyntheticSpec, pilot: np.ndarray, dense: np.ndarray) -> None:
    """Set ``s^2`` so the pair term's std on the pilot is ``pair_std``, then the bias so the mean CTR is
    :data:`CRITEO_CTR` (bisection on the pilot's mean probability)."""
    std = float(np.std(teacher.pair(pilot)))
    teacher.scale = spec.pair_std / std if std > 0 else 0.0
    logit = teacher.logit(dense, pilot)
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.mean(1 / (1 + np.exp(-(logit + mid)))) < CRITEO_CTR else (lo, mid)
    teacher.bias = 0.5 * (lo + hi)


def generate(spec: SyntheticSpec, *, progress: Callable[[int, int], None] | None = None) -> CTRDataset:
    """Generate ``spec.rows`` rows (module docstring); ``progress(done, total)`` after each block of rows."""
    if spec.rows < 2:
        raise ValueError(f"rows={spec.rows} is out of range: valid range is >= 2")
    rng = np.random.default_rng(spec.seed)
    cards, exps = spec.cardinalities, spec.exponents
    draws = [zipf_sampler(n, s) for n, s in zip(cards, exps)]
    perms = [rng.permutation(n) for n in cards]
    teacher = _Teacher(spec, rng, perms)
    pilot_rng = np.random.default_rng(spec.seed + 7_919)
    pilot = np.stack([perms[f][draws[f](pilot_rng, 20_000)] for f in range(len(cards))], axis=1)
    _calibrate(teacher, spec, pilot, pilot_rng.standard_normal((20_000, NUM_DENSE)).astype(np.float32))
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
    return CTRDataset(data, prob, spec, np.concatenate(teacher.width))


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
                arrays = {k: z[k] for k in ("label", "dense", "sparse", "probability", "cards", "teacher_dims")}
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
        return CTRDataset(data, arrays["probability"], spec, arrays["teacher_dims"])
    made = generate(spec, progress=progress)
    with atomic_write(path, "wb") as f:
        np.savez(
            f,
            label=made.data.label,
            dense=made.data.dense,
            sparse=made.data.sparse,
            probability=made.probability,
            teacher_dims=made.teacher_dims,
            cards=np.array(spec.cardinalities),
        )
    log.info("cached %s (%.1f MB)", path, path.stat().st_size / 1e6)
    return made


def expected_counts(spec: SyntheticSpec) -> list[np.ndarray]:
    """Per feature, the expected number of occurrences of each rank (1 = hottest) in ``spec.rows`` rows."""
    return [spec.rows * zipf_probabilities(n, s) for n, s in zip(spec.cardinalities, spec.exponents)]


def total_rows(cards: tuple[int, ...]) -> int:
    return int(math.fsum(cards))


def statistics_rows(spec: SyntheticSpec) -> list[tuple[str, str, str, str, str, str]]:
    """One row per field: (field, Criteo's cardinality, cardinality used, Zipf exponent used, teacher widths
    k of the hottest and the median id), then the click rate; the sources are :data:`SOURCES`."""
    widths = teacher_dims(spec)
    rows = []
    for f, (n, m, s) in enumerate(zip(CRITEO_CARDINALITIES, spec.cardinalities, spec.exponents)):
        k = widths[f]
        rows.append((f"C{f + 1}", f"{n:,}", f"{m:,}", f"{s:g}", str(int(k[0])), str(int(k[(k.size - 1) // 2]))))
    rows.append(("click rate", f"{CRITEO_CTR:g}", f"{CRITEO_CTR:g}", "", "", ""))
    return rows


def estimate_bytes(spec: SyntheticSpec) -> int:
    """Peak bytes of :func:`generate` (closed form): the teacher (``u``, ``t``: ids x (1 + K) float32, widths and
    permutations int64 x 2, inverse CDFs float64 and their ``zipf_probabilities`` temporaries x 2), the output
    arrays (rows x (26 int64 + 13 + 2 float32)) and one block's temporaries (block x F x K float32 x 2)."""
    ids = total_rows(spec.cardinalities)
    largest = max(spec.cardinalities)
    teacher = ids * (4 * (1 + spec.teacher_dim) + 8 * 2 + 8) + largest * 8 * 2
    out = spec.rows * (26 * 8 + NUM_DENSE * 4 + 2 * 4)
    block = min(spec.rows, GEN_CHUNK) * 26 * spec.teacher_dim * 4 * 2
    return int(teacher + out + block)
