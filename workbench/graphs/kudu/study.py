"""Kudu's study layer: one launch, every strategy, and what the panel and notebook draw from it.

:func:`strategy_sweep` counts one pattern on P real processes with pure DFS, pure BFS, the naive no-reuse
baseline and the BFS-DFS hybrid at several chunk sizes, all on one fork of the workers, and returns one flat
row per run (what the figures and tables read). Expected shape (Kudu, section on exploration): BFS needs the
fewest messages but holds whole levels; DFS holds one embedding per level but sends a message per fetch;
the hybrid sits in between and the chunk size tunes it; the naive baseline moves the most bytes.

On top of the rows: :func:`measure` (the sweep of one :class:`~.config.KuduConfig` setting, memoised per
setting and resolved data directory; :func:`measured_rows` looks it up without running, :func:`clear_caches`
forgets), :func:`pick` (the four runs compared at one chunk size), :func:`headline_ratios` (the ratios the paper's
argument predicts; the claims themselves are in :mod:`workbench.graphs.kudu.claims`), :func:`projections` / :func:`scaling_projections` (the paper-scale model on a
:class:`~workbench.cluster.ClusterSpec`), :func:`kudu_view` (one panel redraw) and :func:`check_counts` (every
P against the single-process engine).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.cluster import ClusterSpec
from workbench.data.registry import data_dir as resolve_data_dir
from workbench.graphs.enumerate import count, make_schedule
from workbench.graphs.graph import Graph
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.count import KuduResult, count_jobs
from workbench.graphs.kudu.engine import EngineOptions
from workbench.graphs.kudu.model import Measured, Projection, cluster_summary, project_all
from workbench.graphs.loaders import load_graph
from workbench.graphs.patterns import Pattern, parse_pattern

__all__ = [
    "strategy_sweep",
    "row_of",
    "run_label",
    "DEFAULT_CHUNKS",
    "CHUNKS",
    "STRATEGY_ORDER",
    "setting_key",
    "measure",
    "measured_rows",
    "clear_caches",
    "pick",
    "projections",
    "scaling_projections",
    "headline_ratios",
    "KuduView",
    "kudu_view",
    "check_counts",
    "cluster_summary",
]

DEFAULT_CHUNKS = (1, 4, 16, 64, 256, 1024, 4096)
#: chunk sizes one panel measurement runs (hybrid and naive each)
CHUNKS = (1, 4, 16, 64, 256, 1024)
#: the order in which the four compared runs are drawn
STRATEGY_ORDER = ("dfs", "bfs", "naive", "hybrid")


def run_label(strategy: str, chunk_size: int) -> str:
    """``dfs``, ``bfs``, ``naive C=256`` or ``hybrid C=64``."""
    return strategy if strategy in ("dfs", "bfs") else f"{strategy} C={chunk_size}"


def row_of(result: KuduResult, *, graph: Graph, pattern: str, induced: str) -> dict[str, Any]:
    """A flat record of one run: identity, count, the measured totals and the per-edge costs."""
    o = result.options
    return {
        "label": run_label(o.strategy, o.chunk_size),
        "strategy": o.strategy,
        "chunk_size": o.chunk_size,
        "workers": len(result.ranks),
        "graph": graph.name,
        "pattern": pattern,
        "induced": induced,
        "count": result.count,
        "completed": result.completed,
        "plan": result.plan,
        "cache_bytes": o.cache,
        **result.totals,
        "per_rank_compute_seconds": [r.compute_seconds for r in result.ranks],
        "per_rank_lists_served": [r.fetch.lists_served for r in result.ranks],
        "measured": Measured.of(result, vertices=graph.n, edges=graph.m),
    }


def strategy_sweep(
    graph: Graph,
    pattern: Pattern,
    induced: str = "edge",
    *,
    workers: int = 2,
    chunks: Sequence[int] = DEFAULT_CHUNKS,
    naive_chunks: Sequence[int] = (256,),
    partition: str = "hash",
    cache_bytes: int = 1 << 16,
    max_embeddings: int = 4_000_000,
    relabel: bool = True,
    with_dfs: bool = True,
    timeout_s: float = 600.0,
) -> list[dict[str, Any]]:
    """Rows for ``dfs``, ``bfs``, ``naive C=c`` for each ``c`` in ``naive_chunks`` and ``hybrid C=c`` for each
    ``c`` in ``chunks``.

    One launch of ``workers`` processes runs them all (same schedule, same partition); ``with_dfs=False`` leaves
    out pure DFS (one fetch round per remote list: minutes on graphs of 10^5 edges). A BFS that exceeds
    ``max_embeddings`` live embeddings on a rank is reported with ``completed=False`` (its count partial).
    """
    g = graph.by_degree() if relabel else graph
    schedule = make_schedule(pattern, induced, graph=g)
    variants = [("dfs", 1)] if with_dfs else []
    variants += [("bfs", 1), *(("naive", int(c)) for c in naive_chunks), *(("hybrid", int(c)) for c in chunks)]
    jobs = [
        (schedule, EngineOptions(strategy=s, chunk_size=c, cache_bytes=cache_bytes, max_embeddings=max_embeddings))
        for s, c in variants
    ]
    results = count_jobs(g, jobs, workers=workers, partition=partition, timeout_s=timeout_s)
    return [row_of(r, graph=g, pattern=pattern.label, induced=induced) for r in results]


# ---------------------------------------------------------------------------------------------- memoised runs
class _Memo:
    """A bounded, thread-safe map of measured settings (oldest dropped first)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[tuple, tuple[dict[str, Any], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[dict[str, Any], ...] | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key: tuple, rows: tuple[dict[str, Any], ...]) -> None:
        with self._lock:
            self._items[key] = rows
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_MEASURED = _Memo(maxsize=64)


def setting_key(config: KuduConfig, chunks: Sequence[int] = CHUNKS) -> tuple:
    """What a measurement depends on: graph, pattern, induced, P, partition, cache, the resolved data directory,
    the chunk sizes and the embedding guard (the chunk size, strategy and model parameters only pick and price
    its rows)."""
    return (
        config.graph,
        config.pattern,
        config.induced,
        config.workers,
        config.partition,
        config.cache_kb,
        str(resolve_data_dir(config.data_dir or None)),
        tuple(int(c) for c in chunks),
        config.max_embeddings,
    )


def measure(config: KuduConfig, chunks: Sequence[int] = CHUNKS) -> tuple[dict[str, Any], ...]:
    """Real runs (one launch of ``config.workers`` processes) of every strategy, hybrid and naive at every chunk
    size of ``chunks``; memoised per :func:`setting_key`."""
    key = setting_key(config, chunks)
    rows = _MEASURED.get(key)
    if rows is None:
        g = load_graph(config.graph, data_dir=key[6])
        rows = tuple(
            strategy_sweep(
                g,
                parse_pattern(config.pattern),
                config.induced,
                workers=config.workers,
                chunks=key[7],
                naive_chunks=key[7],
                partition=config.partition,
                cache_bytes=config.cache_kb * 1024,
                max_embeddings=config.max_embeddings,
                timeout_s=config.timeout_s,
            )
        )
        _MEASURED.put(key, rows)
    return rows


def measured_rows(config: KuduConfig, chunks: Sequence[int] = CHUNKS) -> tuple[dict[str, Any], ...] | None:
    """The rows of :func:`measure` if this setting was measured already, else None (nothing runs)."""
    return _MEASURED.get(setting_key(config, chunks))


def clear_caches() -> None:
    """Forget every memoised measurement."""
    _MEASURED.clear()


# ---------------------------------------------------------------------------------------------- views of rows
def pick(rows: Sequence[dict[str, Any]], chunk: int) -> list[dict[str, Any]]:
    """The four runs compared at chunk size ``chunk``: dfs, bfs, naive C=chunk, hybrid C=chunk (in that order;
    the nearest measured chunk size when ``chunk`` was not measured)."""
    out = []
    for strategy in STRATEGY_ORDER:
        same = [r for r in rows if r["strategy"] == strategy]
        if strategy in ("naive", "hybrid"):
            same = sorted(same, key=lambda r: (r["chunk_size"] != chunk, abs(r["chunk_size"] - chunk)))
        if same:
            out.append(same[0])
    return out


def projections(
    rows: Sequence[dict[str, Any]], chunk: int, edges: float, cluster: ClusterSpec, machines: int
) -> list[Projection]:
    """Model of the four compared runs on ``edges`` edges and ``machines`` nodes of ``cluster``, then the
    replicated design (runs with one process are left out: they fetch nothing)."""
    return project_all([r["measured"] for r in pick(rows, chunk) if r["workers"] >= 2], edges, cluster, machines)


def scaling_projections(
    rows: Sequence[dict[str, Any]], chunk: int, edges: float, cluster: ClusterSpec, machines: Sequence[int]
) -> dict[str, list[Projection]]:
    """:func:`projections` at each machine count: ``strategy -> [Projection per machine count]``."""
    series: dict[str, list[Projection]] = {}
    for m in machines:
        for p in projections(rows, chunk, edges, cluster, int(m)):
            series.setdefault(p.strategy, []).append(p)
    return series


def headline_ratios(rows: Sequence[dict[str, Any]], chunk: int) -> dict[str, float]:
    """Ratios the paper's argument predicts, from measured rows: naive/hybrid bytes, DFS/hybrid messages,
    BFS/hybrid peak embeddings, DFS/hybrid seconds (each > 1 when the claim holds)."""
    by = {r["strategy"]: r for r in pick(rows, chunk)}
    h = by["hybrid"]

    def ratio(a: float, b: float) -> float:
        return a / b if b else float("inf") if a else 1.0

    return {
        "naive_over_hybrid_bytes": ratio(by["naive"]["bytes"], h["bytes"]),
        "dfs_over_hybrid_messages": ratio(by["dfs"]["messages"], h["messages"]),
        "bfs_over_hybrid_peak_embeddings": ratio(by["bfs"]["peak_embeddings"], h["peak_embeddings"]),
        "dfs_over_hybrid_seconds": ratio(by["dfs"]["seconds"], h["seconds"]),
    }


@dataclass(frozen=True)
class KuduView:
    """One panel redraw: the measured rows of the setting (None: not measured yet), the four compared runs, the
    headline ratios and the model (empty without a run on P >= 2)."""

    config: KuduConfig
    rows: tuple[dict[str, Any], ...] | None
    chosen: tuple[dict[str, Any], ...]
    ratios: dict[str, float] | None
    projections: tuple[Projection, ...]

    @property
    def chunk(self) -> int:
        return self.config.chunk_size

    @property
    def strategy(self) -> str:
        return self.config.strategy

    @property
    def cluster(self) -> ClusterSpec:
        return self.config.cluster

    @property
    def machines(self) -> int:
        return self.config.model_machines

    @property
    def edges(self) -> float:
        return self.config.model_edges


def kudu_view(config: KuduConfig) -> KuduView:
    """The view of ``config`` from its memoised measurement (nothing runs: see :func:`measure`)."""
    rows = measured_rows(config)
    if rows is None:
        return KuduView(config, None, (), None, ())
    chunk = config.chunk_size
    projs = tuple(projections(rows, chunk, config.model_edges, config.cluster, config.model_machines))
    return KuduView(config, rows, tuple(pick(rows, chunk)), headline_ratios(rows, chunk), projs)


def check_counts(
    graph: Graph, patterns: Sequence[str], workers: Sequence[int], *, chunk_size: int = 16
) -> list[dict[str, Any]]:
    """Every pattern edge- and vertex-induced, counted on each P of ``workers`` (one launch per P) and by the
    single-process engine: rows ``{"pattern", "induced", "reference", "counts": {P: count}, "equal"}``."""
    g = graph.by_degree()
    schedules = [
        (name, induced, make_schedule(parse_pattern(name), induced, graph=g))
        for name in patterns
        for induced in ("edge", "vertex")
    ]
    reference = [count(g, parse_pattern(name), induced).count for name, induced, _ in schedules]
    by_p = {
        p: count_jobs(g, [(s, EngineOptions(chunk_size=chunk_size)) for _, _, s in schedules], workers=p)
        for p in workers
    }
    rows = []
    for j, (name, induced, _) in enumerate(schedules):
        counts = {p: by_p[p][j].count for p in workers}
        rows.append(
            {
                "pattern": name,
                "induced": induced,
                "reference": reference[j],
                "counts": counts,
                "equal": all(c == reference[j] for c in counts.values()),
            }
        )
    return rows
