"""Headless runner of FIITED: ``workbench run fiited --rows N --budget-fraction f --epochs E --json``.

One FIITED training run of a DLRM at the budget, and (``--baselines all``) the full table and every baseline at
the same budget, on the same data, seed and network. Keys of the issue's schema: auc, logloss, embedding_bytes
(FIITED's table: live chunk weights + VHPI pointers), baseline_bytes (the full table), baselines (name, auc,
embedding_bytes; plus logloss).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.recsys.fiited.config import FiitedConfig
from workbench.recsys.fiited.study import data_split, run_method
from workbench.recsys.fiited.train import METHODS
from workbench.registry import Technique
from workbench.results import Result, fmt_bytes


@dataclass(frozen=True, kw_only=True)
class BaselineResult:
    name: str
    auc: float
    logloss: float
    embedding_bytes: int


@dataclass(frozen=True, kw_only=True)
class MemoryResult:
    """FIITED's table as counted: live chunks, weight, pointer, optimizer-state and key bytes, the pool tensor's
    real bytes, whether the counter equals the pool's occupancy, peak pool bytes during training."""

    live_chunks: int
    weight_bytes: int
    pointer_bytes: int
    optimizer_bytes: int
    key_bytes: int
    pool_tensor_bytes: int
    counter_matches_pool: bool
    peak_pool_bytes: int
    budget_bytes: int


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
    ids: int
    oracle_auc: float | None
    note: str
    memory: MemoryResult
    mean_dim: float
    dim_histogram: dict[str, int]
    regrown_chunks: int
    train_seconds: float


def run(config: FiitedConfig) -> FiitedResult:
    """Train FIITED (and the baselines) as ``config`` says. Raises ValueError for a budget below one chunk per
    row, a corrupt dataset file; FileNotFoundError for an absent sample."""
    split = data_split(config)
    fi = run_method(config, "fiited")
    baselines = []
    if config.baselines == "all":
        for m in METHODS[1:]:
            r = run_method(config.replace(budget_fraction=1.0) if m == "full" else config, m)
            baselines.append(BaselineResult(name=m, auc=r.auc, logloss=r.logloss, embedding_bytes=r.embedding_bytes))
    rows = int(sum(split.train.cardinalities))
    full = rows * config.dim * 4
    e = fi.extra
    values, counts = np.unique(fi.dims, return_counts=True)
    note = (
        "shared sample: far too small for accuracy claims (smoke test only)"
        if split.small_sample
        else "synthetic Criteo-shaped data with planted labels; oracle_auc is the planted model's own AUC"
    )
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
        ids=rows,
        oracle_auc=split.oracle_auc,
        note=note,
        memory=MemoryResult(
            live_chunks=e["live_chunks"],
            weight_bytes=e["weight_bytes"],
            pointer_bytes=e["pointer_bytes"],
            optimizer_bytes=e["optimizer_bytes"],
            key_bytes=e["key_bytes"],
            pool_tensor_bytes=e["pool_tensor_bytes"],
            counter_matches_pool=e["counter_matches_pool"],
            peak_pool_bytes=e["peak_pool_bytes"],
            budget_bytes=e["budget_bytes"],
        ),
        mean_dim=float(fi.dims.mean()),
        dim_histogram={str(int(v)): int(c) for v, c in zip(values, counts)},
        regrown_chunks=int(e.get("regrown", 0)),
        train_seconds=fi.seconds,
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    m = result["memory"]
    lines = [
        f"fiited  {result['dataset']}: {result['train_rows']:,} train / {result['test_rows']:,} test rows, "
        f"{result['ids']:,} ids  ({result['note']})",
        f"  FIITED   AUC {result['auc']:.4f}  log-loss {result['logloss']:.4f}  table {fmt_bytes(result['embedding_bytes'])}"
        f" = {result['reduction']:.2f}x smaller than full {fmt_bytes(result['baseline_bytes'])}; mean dim "
        f"{result['mean_dim']:.1f}; dims {result['dim_histogram']}",
        f"  memory   {m['live_chunks']:,} live chunks, weights {fmt_bytes(m['weight_bytes'])}, pointers "
        f"{fmt_bytes(m['pointer_bytes'])}, Adagrad state {fmt_bytes(m['optimizer_bytes'])}, keys "
        f"{fmt_bytes(m['key_bytes'])} (apart); pool tensor {fmt_bytes(m['pool_tensor_bytes'])} "
        f"(counter == pool: {m['counter_matches_pool']}); peak {fmt_bytes(m['peak_pool_bytes'])}",
    ]
    if result["oracle_auc"] is not None:
        lines.append(f"  planted model's AUC (ceiling) {result['oracle_auc']:.4f}")
    for b in result["baselines"]:
        lines.append(
            f"  {b['name']:10s} AUC {b['auc']:.4f}  log-loss {b['logloss']:.4f}  table "
            f"{fmt_bytes(b['embedding_bytes'])}"
        )
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
