"""The panel's and the notebook's views of FIITED: the panel's sweep, the analytic schedule and frequency curves,
dimensions by frequency, the exactness report and table rows. Runs and sweeps come from
:mod:`workbench.recsys.fiited.experiment` (the orchestration the runner shares); the claims and their verdicts
live in :mod:`workbench.recsys.fiited.claims`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.recsys.fiited import experiment
from workbench.recsys.fiited.config import FiitedConfig, FiitedViewConfig
from workbench.recsys.fiited.experiment import Sweep, settings_of, sweep
from workbench.recsys.fiited.train import check_budget, fiited_floor
from workbench.recsys.fiited.utility import Schedule, schedule_curve
from workbench.recsys.fiited.vhpi import served_memory
from workbench.recsys.synthetic import SyntheticSpec, expected_counts

__all__ = [
    "panel_config",
    "panel_sweep",
    "remember_sweep",
    "fiited_view",
    "FiitedView",
    "dims_by_frequency",
    "exactness_report",
    "sweep_markdown_rows",
    "clear_caches",
    "PANEL_BUDGETS",
    "PANEL_SEEDS",
]

PANEL_BUDGETS = (0.02, 0.1, 0.5)
PANEL_SEEDS = (0, 1, 2)
PANEL_VOCAB_SCALE = 0.0002  # the benchmark's data: few enough ids per row that the full table learns
PANEL_BATCH = 256
PANEL_LR = 0.02  # the benchmark's learning rate (benchmarks/recsys/fiited_sweep.py's docstring says why)


# ---- the panel's view ---------------------------------------------------------------------------------------
def panel_config(view: FiitedViewConfig) -> FiitedConfig:
    """The training config behind a panel view: the benchmark's synthetic data (vocabulary scale), batch and
    learning rate, defaults otherwise."""
    return FiitedConfig(
        rows=view.rows,
        vocab_scale=PANEL_VOCAB_SCALE,
        batch_size=PANEL_BATCH,
        lr=PANEL_LR,
        baselines="none",
        skew=view.skew,
        schedule=view.schedule,
        warmup=view.warmup,
        interval=view.interval,
        budget_fraction=view.budget_fraction,
    )


_SWEEPS: dict[FiitedConfig, Sweep] = {}


def panel_sweep(view: FiitedViewConfig, *, on_run: Callable[[], None] | None = None) -> Sweep:
    """Train (or recall) the panel's sweep at ``view``: :data:`PANEL_BUDGETS` x :data:`PANEL_SEEDS`."""
    config = panel_config(view)
    key = config.replace(budget_fraction=0.5)
    if key not in _SWEEPS:
        _SWEEPS[key] = sweep(config, budgets=PANEL_BUDGETS, seeds=PANEL_SEEDS, on_run=on_run)
    return _SWEEPS[key]


def remember_sweep(view: FiitedViewConfig, result: Sweep) -> None:
    """Make a sweep computed elsewhere (a notebook, with its own budgets and seeds, on
    ``panel_config(view)``) what the panel shows for ``view``'s data set and schedule."""
    config = panel_config(view)
    _SWEEPS[config.replace(budget_fraction=0.5)] = result


@dataclass(frozen=True)
class FiitedView:
    """One redraw: the cached sweep (None when not yet run), the schedule curve, the expected id frequencies per
    rank of the hottest features, FIITED's dims at the cached budget nearest the chosen one, and the floor."""

    view: FiitedViewConfig
    sweep: Sweep | None
    schedule_steps: np.ndarray
    schedule_budget: np.ndarray
    ranks: list[np.ndarray]
    counts: list[np.ndarray]
    features: list[str]
    dims: np.ndarray | None
    freq: np.ndarray | None
    dims_budget: float | None
    floor_fraction: float


def fiited_view(values: Mapping[str, Any] | FiitedViewConfig) -> FiitedView:
    """What the panel draws at ``values`` (cheap: analytic curves and cached runs only)."""
    view = values if isinstance(values, FiitedViewConfig) else FiitedViewConfig.from_dict(values)
    part = _fiited_view(view)
    config = panel_config(view)
    cached = _SWEEPS.get(config.replace(budget_fraction=0.5))
    if cached is None:
        return part
    nearest = min(cached.budgets, key=lambda x: abs(x - view.budget_fraction))
    run = cached.runs["fiited", nearest, cached.seeds[0]]
    return dataclasses.replace(part, sweep=cached, dims=run.dims, freq=run.freq, dims_budget=nearest)


@functools.lru_cache(maxsize=64)
def _fiited_view(view: FiitedViewConfig) -> FiitedView:
    """The analytic part of the view (no sweep)."""
    config = panel_config(view)
    spec = SyntheticSpec(rows=view.rows, vocab_scale=config.vocab_scale, skew=view.skew, seed=config.seed)
    cards = spec.cardinalities
    rows_total = int(sum(cards))
    settings = settings_of(config)
    check_budget(rows_total, settings, view.budget_fraction, len(cards))
    floor, _ = fiited_floor(rows_total, settings, len(cards))
    n_train = int(round(view.rows * (1 - config.test_fraction) * (1 - config.val_fraction)))
    steps = max(1, math.ceil(n_train / config.batch_size))  # pruning runs within the first epoch
    sched = Schedule(
        total_steps=steps,
        warmup=int(round(view.warmup * steps)),
        interval=view.interval,
        kind=view.schedule,
        ramp=config.ramp,
    )
    full_table = rows_total * config.dim * 4
    served_full = served_memory(
        live_chunks=rows_total * (config.dim // config.chunk),
        ids=rows_total,
        n_chunks=config.dim // config.chunk,
        chunk=config.chunk,
        load_factor=config.load_factor,
        default_bytes=len(cards) * config.dim * 4 if config.min_chunks == 0 else 0,
    ).total_bytes
    t, b = schedule_curve(sched, served_full, int(view.budget_fraction * full_table))
    full = full_table
    counts = expected_counts(spec)
    hottest = sorted(range(len(cards)), key=lambda f: -cards[f])[:3]
    ranks = [np.unique(np.geomspace(1, cards[f], 200).astype(np.int64)) for f in hottest]
    return FiitedView(
        view,
        None,
        t,
        b / full,
        ranks,
        [counts[f][r - 1] for f, r in zip(hottest, ranks)],
        [f"C{f + 1} ({cards[f]:,} ids)" for f in hottest],
        None,
        None,
        None,
        floor / (rows_total * config.dim * 4),
    )


def dims_by_frequency(dims: np.ndarray, freq: np.ndarray, bins: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Mean dimension per log-spaced frequency bin: (bin centre counts, mean dims); ids never seen in bin 0."""
    edges = np.concatenate([[0, 1], np.unique(np.geomspace(1, max(2, freq.max() + 1), bins).astype(np.int64))[1:]])
    which = np.clip(np.searchsorted(edges, freq, side="right") - 1, 0, edges.size - 2)
    centre, mean = [], []
    for i in range(edges.size - 1):
        sel = which == i
        if sel.any():
            centre.append(float(freq[sel].mean()))
            mean.append(float(dims[sel].mean()))
    return np.array(centre), np.array(mean)


def clear_caches() -> None:
    """Forget every memo: data sets, runs (:func:`experiment.clear_caches`), sweeps, views."""
    _fiited_view.cache_clear()
    experiment.clear_caches()
    _SWEEPS.clear()


def exactness_report(n: int = 37, dim: int = 12, chunk: int = 4, seed: int = 0) -> dict[str, float]:
    """Max |chunked - dense| of outputs and gradients with nothing pruned, vs ``nn.Embedding`` and
    ``nn.EmbeddingBag`` (sum), on an awkward size (odd ids, d = 3 chunks). The references use sparse gradients
    (as the chunked table does); ``EmbeddingBag gradient (dense-gradient module)`` compares with the dense-gradient
    module, whose backward adds an id's repeated rows in another order (last-bit differences)."""
    import torch
    from torch import nn

    from workbench.recsys.fiited.chunked import ChunkedEmbedding

    gen = torch.Generator().manual_seed(seed)
    keys = np.arange(n, dtype=np.int64) * 1_000_003 + 17
    init = torch.randn(n, dim, generator=gen)
    out: dict[str, float] = {}
    for kind in ("Embedding", "EmbeddingBag", "EmbeddingBag (dense-gradient module)"):
        ce = ChunkedEmbedding(keys, dim=dim, chunk=chunk, init=init, by_feature=False)
        sparse = "dense" not in kind
        ref = (
            nn.Embedding(n, dim, sparse=True)
            if kind == "Embedding"
            else nn.EmbeddingBag(n, dim, mode="sum", sparse=sparse)
        )
        ref.weight.data.copy_(init)
        idx = torch.randint(0, n, (61,), generator=gen)
        if kind == "Embedding":
            a, b = ce(keys[idx.numpy()]), ref(idx)
        else:
            offsets = torch.tensor([0, 4, 4, 19, 40])
            a, b = ce.bag(keys[idx.numpy()], offsets), ref(idx, offsets)
        g = torch.randn(b.shape, generator=gen)
        (a * g).sum().backward()
        (b * g).sum().backward()
        pool = ce.table.weight.grad.to_dense()
        mine = pool[ce.table.physical(ce.table.lookup(keys))].reshape(n, dim)
        theirs = ref.weight.grad.to_dense() if ref.weight.grad.is_sparse else ref.weight.grad
        if sparse:
            out[f"{kind} output"] = float((a - b).detach().abs().max())
        out[f"{kind} gradient"] = float((mine - theirs).abs().max())
    return out


def sweep_markdown_rows(result: Sweep) -> list[tuple[str, ...]]:
    """(method, budget, bytes / full, AUC mean +- CI, AUC - full paired, log-loss mean +- CI) rows."""
    rows: list[tuple[str, ...]] = []
    for m in result.methods:
        for i, b in enumerate(result.budgets):
            if m == "full" and i:
                continue
            a, ll, d = result.auc[m][i], result.logloss[m][i], result.diff[m][i]
            over = " (over budget)" if m != "full" and result.over_budget(m, i) else ""
            rows.append(
                (
                    m,
                    "1" if m == "full" else f"{b:g}",
                    f"{result.bytes[m][i] / result.full_bytes:.4f}{over}",
                    f"{a[0]:.4f} ± {a[1]:.4f}",
                    "" if m == "full" else f"{d.mean:+.4f} ± {d.half_width:.4f}",
                    f"{ll[0]:.4f} ± {ll[1]:.4f}",
                )
            )
    return rows
