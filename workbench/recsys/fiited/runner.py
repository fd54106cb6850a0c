"""Headless runner of FIITED: ``workbench run fiited --rows N --budget-fraction f --epochs E --json``.

One FIITED training run of a DLRM at the budget, and (``--baselines all``) the full table and every baseline at
the same budget, on the same data, seed and network. Keys of the issue's schema: auc, logloss, embedding_bytes
(FIITED's served table: live chunk weights + the VHPI keys and pointers of the ids that keep a chunk + the shared
default vectors), baseline_bytes (the full table), baselines (name, auc, embedding_bytes; plus logloss).
``memory.training`` is what training held at its peak (the warm-up's full-size pool and Adagrad state, the free
list, keys, pointers, utility EMAs), reported apart from the served bytes.

Before anything large is allocated the run is sized (:func:`workbench.recsys.fiited.experiment.estimate_run_bytes`)
and refused with the estimate and the available memory in one line (ValueError: exit 2) when it cannot fit. A
run estimated over two seconds shows a progress bar on stderr (data generation, then each method's steps).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.memory import require
from workbench.recsys.fiited.config import FiitedConfig
from workbench.recsys.fiited.experiment import data_split, estimate_run_bytes, run_method, spec_of
from workbench.recsys.fiited.train import METHODS
from workbench.recsys.synthetic import SOURCES, statistics_rows
from workbench.registry import Technique
from workbench.results import Result, fmt_bytes

#: rows x methods above which a run shows a progress bar (about two seconds of work on this machine)
PROGRESS_ROWS = 50_000


@dataclass(frozen=True, kw_only=True)
class BaselineResult:
    name: str
    auc: float
    logloss: float
    embedding_bytes: int


@dataclass(frozen=True, kw_only=True)
class MemoryResult:
    """FIITED's table as counted. Served: live chunks, weight, pointer, key and default-vector bytes, ids that keep
    a chunk and ids served by their feature's default. Training (apart): the pool tensor's real bytes now,
    whether the counter equals the pool's occupancy, the Adagrad state, the free list, and ``training`` (the
    peak: warm-up pool and state at full size, training-time keys and pointers, free list, utility EMAs)."""

    live_chunks: int
    weight_bytes: int
    pointer_bytes: int
    key_bytes: int
    default_bytes: int
    served_ids: int
    zero_chunk_ids: int
    optimizer_bytes: int
    free_list_bytes: int
    pool_tensor_bytes: int
    counter_matches_pool: bool
    peak_pool_bytes: int
    budget_bytes: int
    training: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class FiitedResult(Result):
    """What ``workbench run fiited --json`` prints (field order = JSON key order)."""

    technique: str = "fiited"
    auc: float
    logloss: float
    embedding_bytes: int
    baseline_bytes: int
    baselines: tuple[BaselineResult, ...]
    reduction: float
    dataset: str
    train_rows: int
    test_rows: int
    val_rows: int
    ids: int
    oracle_auc: float | None
    note: str
    epochs_run: int
    best_epoch: int
    statistics: tuple[tuple[str, ...], ...]
    memory: MemoryResult
    mean_dim: float
    dim_histogram: dict[str, int]
    regrown_chunks: int
    train_seconds: float


def progress_bar(config: FiitedConfig, methods: int) -> Any:
    """A tqdm bar on stderr for big runs (None for small ones)."""
    if config.dataset != "synthetic" or config.rows * methods < PROGRESS_ROWS:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=0, desc="fiited", unit="step", file=sys.stderr, leave=False)


def _progress(bar: Any, what: str) -> Any:
    if bar is None:
        return None

    def update(done: int, total: int) -> None:
        if bar.desc != what or bar.total != total:
            bar.reset(total=total)
            bar.set_description(what, refresh=False)
        bar.n = done
        bar.refresh()

    return update


def _memory(e: dict[str, Any]) -> MemoryResult:
    return MemoryResult(**{f.name: e[f.name] for f in dataclasses.fields(MemoryResult)})


def run(config: FiitedConfig) -> FiitedResult:
    """Train FIITED (and the baselines) as ``config`` says. Raises ValueError for a run that cannot fit in
    memory, a budget below FIITED's least table, a corrupt dataset file; FileNotFoundError for an absent sample."""
    require(
        estimate_run_bytes(config),
        what=f"fiited --rows {config.rows} --vocab-scale {config.vocab_scale:g}",
        hint="lower --vocab-scale (ids per feature) or --rows",
    )
    methods = [m for m in METHODS[1:] if config.baselines == "all"]
    bar = progress_bar(config, 1 + len(methods))
    try:
        split = data_split(config, progress=_progress(bar, "generating rows"))
        fi = run_method(config, "fiited", progress=_progress(bar, "training fiited"))
        baselines = []
        for m in methods:
            c = config.replace(budget_fraction=1.0) if m == "full" else config
            r = run_method(c, m, progress=_progress(bar, f"training {m}"))
            baselines.append(BaselineResult(name=m, auc=r.auc, logloss=r.logloss, embedding_bytes=r.embedding_bytes))
    finally:
        if bar is not None:
            bar.close()
    rows = int(sum(split.train.cardinalities))
    full = rows * config.dim * 4
    values, counts = np.unique(fi.dims, return_counts=True)
    note = (
        "shared sample: far too small for accuracy claims (smoke test only)"
        if split.small_sample
        else "synthetic Criteo-shaped data with planted labels; oracle_auc is the planted model's own AUC"
    )
    stats = tuple(statistics_rows(spec_of(config))) if not split.small_sample else ()
    return FiitedResult(
        auc=fi.auc,
        logloss=fi.logloss,
        embedding_bytes=fi.embedding_bytes,
        baseline_bytes=full,
        baselines=tuple(baselines),
        reduction=full / fi.embedding_bytes,
        dataset=split.source,
        train_rows=split.train.rows,
        test_rows=split.test.rows,
        val_rows=0 if split.val is None else split.val.rows,
        ids=rows,
        oracle_auc=split.oracle_auc,
        note=note,
        epochs_run=fi.epochs_run,
        best_epoch=fi.best_epoch,
        statistics=stats,
        memory=_memory(fi.extra),
        mean_dim=float(fi.dims.mean()),
        dim_histogram={str(int(v)): int(c) for v, c in zip(values, counts)},
        regrown_chunks=int(fi.extra.get("regrown", 0)),
        train_seconds=fi.seconds,
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    m = result["memory"]
    t = m["training"]
    lines = [
        f"fiited  {result['dataset']}: {result['train_rows']:,} train / {result['val_rows']:,} validation / "
        f"{result['test_rows']:,} test rows, {result['ids']:,} ids  ({result['note']})",
        f"  FIITED   AUC {result['auc']:.4f}  log-loss {result['logloss']:.4f}  served table "
        f"{fmt_bytes(result['embedding_bytes'])} = {result['reduction']:.2f}x smaller than full "
        f"{fmt_bytes(result['baseline_bytes'])}; mean dim {result['mean_dim']:.1f}; dims {result['dim_histogram']}; "
        f"epoch {result['best_epoch']} of {result['epochs_run']} kept (early stopping)",
        f"  served   {m['live_chunks']:,} chunks {fmt_bytes(m['weight_bytes'])} + keys {fmt_bytes(m['key_bytes'])} + "
        f"pointers {fmt_bytes(m['pointer_bytes'])} ({m['served_ids']:,} ids) + default vectors "
        f"{fmt_bytes(m['default_bytes'])} ({m['zero_chunk_ids']:,} ids read them)",
        f"  training peak {fmt_bytes(t['peak_bytes'])}: pool {fmt_bytes(t['peak_pool_bytes'])} + Adagrad "
        f"{fmt_bytes(t['peak_optimizer_bytes'])} + keys {fmt_bytes(t['key_bytes'])} + pointers "
        f"{fmt_bytes(t['pointer_bytes'])} + free list {fmt_bytes(t['free_list_bytes'])} + utility "
        f"{fmt_bytes(t['utility_bytes'])}; pool now {fmt_bytes(m['pool_tensor_bytes'])} "
        f"(counter == pool: {m['counter_matches_pool']})",
    ]
    if result["oracle_auc"] is not None:
        lines.append(f"  planted model's AUC (ceiling) {result['oracle_auc']:.4f}")
    for b in result["baselines"]:
        lines.append(
            f"  {b['name']:10s} AUC {b['auc']:.4f}  log-loss {b['logloss']:.4f}  table "
            f"{fmt_bytes(b['embedding_bytes'])}"
        )
    if result["statistics"]:
        lines.append("  data: field, Criteo's cardinality, used, Zipf s, teacher width (hottest, median id)")
        lines.extend("    " + "  ".join(row) for row in result["statistics"])
        lines.extend(f"  source of {k}: {v}" for k, v in SOURCES.items())
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="fiited",
    config=FiitedConfig,
    run=run,
    format_table=format_table,
    panel="widgets.recsys.fiited:FiitedPanel",
    notebook="notebooks/recsys/fiited.ipynb",
    smoke={"rows": 3000, "vocab_scale": 0.0005, "batch_size": 256, "interval": 3},
)
