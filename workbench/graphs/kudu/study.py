"""One launch, every strategy: the comparison the paper's argument rests on (for panels, notebook, benchmark).

:func:`strategy_sweep` counts one pattern on P real processes with pure DFS, pure BFS, the naive no-reuse
baseline and the BFS-DFS hybrid at several chunk sizes, all on one fork of the workers, and returns one flat
row per run (what the figures and tables read). Expected shape (Kudu, section on exploration): BFS needs the
fewest messages but holds whole levels; DFS holds one embedding per level but sends a message per fetch;
the hybrid sits in between and the chunk size tunes it; the naive baseline moves the most bytes.
"""

from __future__ import annotations

from typing import Any, Sequence

from workbench.graphs.enumerate import make_schedule
from workbench.graphs.graph import Graph
from workbench.graphs.kudu.count import KuduResult, count_jobs
from workbench.graphs.kudu.engine import EngineOptions
from workbench.graphs.kudu.model import Measured
from workbench.graphs.patterns import Pattern

__all__ = ["strategy_sweep", "row_of", "run_label", "DEFAULT_CHUNKS"]

DEFAULT_CHUNKS = (1, 4, 16, 64, 256, 1024, 4096)


def run_label(strategy: str, chunk_size: int) -> str:
    """``dfs``, ``bfs``, ``naive C=256`` or ``hybrid C=64``."""
    return strategy if strategy in ("dfs", "bfs") else f"{strategy} C={chunk_size}"


def row_of(result: KuduResult, *, graph: Graph, pattern: str, induced: str) -> dict[str, Any]:
    """A flat record of one run: identity, count, the measured totals and the per-edge costs."""
    o = result.options
    return {"label": run_label(o.strategy, o.chunk_size), "strategy": o.strategy, "chunk_size": o.chunk_size,
            "workers": len(result.ranks), "graph": graph.name, "pattern": pattern, "induced": induced,
            "count": result.count, "completed": result.completed, "plan": result.plan,
            "cache_bytes": o.cache, **result.totals,
            "per_rank_compute_seconds": [r.compute_seconds for r in result.ranks],
            "per_rank_lists_served": [r.fetch.lists_served for r in result.ranks],
            "measured": Measured.of(result, vertices=graph.n, edges=graph.m)}


def strategy_sweep(graph: Graph, pattern: Pattern, induced: str = "edge", *, workers: int = 2,
                   chunks: Sequence[int] = DEFAULT_CHUNKS, naive_chunks: Sequence[int] = (256,), partition: str = "hash",
                   cache_bytes: int = 1 << 16, max_embeddings: int = 4_000_000, relabel: bool = True,
                   with_dfs: bool = True, timeout_s: float = 600.0) -> list[dict[str, Any]]:
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
    jobs = [(schedule, EngineOptions(strategy=s, chunk_size=c, cache_bytes=cache_bytes, max_embeddings=max_embeddings))
            for s, c in variants]
    results = count_jobs(g, jobs, workers=workers, partition=partition, timeout_s=timeout_s)
    return [row_of(r, graph=g, pattern=pattern.label, induced=induced) for r in results]
