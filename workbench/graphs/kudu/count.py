"""``count_distributed``: count a pattern with Kudu on P real processes and gather what they measured.

The graph is relabelled by degree (as the single-process engine does), the schedule (matching order and
symmetry-breaking restrictions) is chosen once in the parent with :func:`workbench.graphs.enumerate.make_schedule`
and handed to every rank, the graph is cut by :class:`.partition.Partition`, and
:func:`workbench.distributed.run_workers` forks P gloo processes; each keeps only its own rows
(:meth:`LocalGraph.extract`) and runs :func:`.engine.mine`. Counts are summed; counters are reported per
rank and in total.

Example::

    >>> from workbench.graphs.loaders import load_graph
    >>> from workbench.graphs.patterns import parse_pattern
    >>> count_distributed(load_graph("karate"), parse_pattern("triangle"), "edge", workers=2).count
    45
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from workbench.distributed.comm import Comm
from workbench.distributed.launch import run_workers
from workbench.graphs.enumerate import Schedule, make_schedule
from workbench.graphs.graph import Graph
from workbench.graphs.kudu import sets
from workbench.graphs.kudu.engine import EngineOptions, LevelPlan, RankResult, Strategy, mine
from workbench.graphs.kudu.partition import LocalGraph, Partition, Scheme
from workbench.graphs.patterns import Pattern

__all__ = ["KuduResult", "count_distributed", "count_jobs", "summarise"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KuduResult:
    """A distributed count with its measurements.

    count: the pattern count (each subgraph once); completed: False if a rank exceeded ``max_embeddings``
    (the count is then partial); ranks: each rank's :class:`RankResult`; totals: :func:`summarise` of them;
    plan: the schedule text; partition: its description; launch_seconds: wall time of the whole call
    (forking, rendezvous, extraction, mining); seconds: the slowest rank's mining time.
    """

    count: int
    completed: bool
    ranks: tuple[RankResult, ...]
    totals: dict[str, Any]
    plan: str
    partition: str
    options: EngineOptions
    seconds: float
    launch_seconds: float


def _worker(
    rank: int, world: int, comm: Comm, graph: Graph, partition: Partition, jobs: list[tuple[LevelPlan, EngineOptions]]
) -> list[RankResult]:
    local = LocalGraph.extract(graph, partition, rank)
    del graph  # from here on this rank sees only its own rows
    return [mine(local, comm, plan, options) for plan, options in jobs]


def summarise(ranks: tuple[RankResult, ...] | list[RankResult]) -> dict[str, Any]:
    """Totals over ranks: messages, bytes, lists, hit rate, peaks (max over ranks), times (max over ranks)."""
    f = [r.fetch for r in ranks]
    lookups = sum(x.lookups for x in f)
    hits = sum(x.cache_hits for x in f)
    uses = sum(x.remote_uses for x in f)
    fetched = sum(x.lists_fetched for x in f)
    request_bytes = sum(x.request_bytes for x in f)
    response_bytes = sum(x.response_bytes for x in f)
    rounds = max((x.rounds for x in f), default=0)
    size = len(ranks)
    header_bytes = rounds * size * (size - 1) * 16  # one (2,) int64 slice to each peer per rank and round
    compute = [r.compute_seconds for r in ranks]
    return {
        "messages": sum(x.request_messages + x.response_messages for x in f),
        "header_messages": sum(x.header_messages for x in f),
        "rounds": rounds,
        "bytes": request_bytes + response_bytes,
        "request_bytes": request_bytes,
        "response_bytes": response_bytes,
        "header_bytes": header_bytes,
        "remote_uses": uses,
        "lists_fetched": fetched,
        "entries_fetched": sum(x.entries_fetched for x in f),
        "cache_lookups": lookups,
        "cache_hits": hits,
        "cache_hit_rate": hits / lookups if lookups else 0.0,
        "reuse_rate": 1.0 - fetched / uses if uses else 0.0,
        "cache_peak_bytes": max((x.cache_peak_bytes for x in f), default=0),
        "peak_embeddings": max((r.peak_embeddings for r in ranks), default=0),
        "peak_set_bytes": max((r.peak_set_bytes for r in ranks), default=0),
        "partition_bytes": max((r.partition_bytes for r in ranks), default=0),
        "embeddings": sum(r.embeddings for r in ranks),
        "chunks": sum(r.chunks for r in ranks),
        "compute_seconds": max(compute, default=0.0),
        "compute_seconds_total": sum(compute),
        "sync_seconds": max((x.sync_seconds for x in f), default=0.0),
        "wait_seconds": max((x.wait_seconds for x in f), default=0.0),
        "idle_seconds": max((x.idle_seconds for x in f), default=0.0),
        "seconds": max((r.total_seconds for r in ranks), default=0.0),
        "load_imbalance": max(compute) / (sum(compute) / size) if size and sum(compute) > 0 else 1.0,
    }


def count_distributed(
    graph: Graph,
    pattern: Pattern,
    induced: Literal["edge", "vertex"] = "edge",
    *,
    workers: int = 2,
    strategy: Strategy = "hybrid",
    chunk_size: int = 256,
    partition: Scheme = "hash",
    cache_bytes: int = 1 << 20,
    max_embeddings: int = 4_000_000,
    schedule: Schedule | None = None,
    relabel: bool = True,
    timeout_s: float = 600.0,
) -> KuduResult:
    """Count ``pattern`` (edge- or vertex-induced) in ``graph`` with Kudu on ``workers`` forked processes.

    Args:
        graph: any :class:`Graph` (relabelled by degree first unless ``relabel=False``).
        pattern: a connected, unlabelled :class:`Pattern`.
        induced: ``"edge"`` or ``"vertex"``.
        workers: P, real processes (gloo), 1..64.
        strategy: ``hybrid``, ``dfs``, ``bfs`` or ``naive`` (see :mod:`.engine`).
        chunk_size: embeddings per chunk (hybrid and naive).
        partition: ``hash`` or ``range`` (see :mod:`.partition`).
        cache_bytes: LRU capacity per rank for remote lists (0: no cache; naive never caches).
        max_embeddings: live embeddings per rank before the run is abandoned (``completed=False``).
        schedule: the matching order and restrictions (default: :func:`make_schedule` on the graph).
        timeout_s: wall-clock limit of the whole run (seconds).

    Returns:
        :class:`KuduResult` (``.count``, ``.totals`` with messages, bytes, hit rate, peaks and times).

    Raises:
        ValueError: bad arguments or a labelled pattern; TimeoutError past ``timeout_s``.
    """
    if induced not in ("edge", "vertex"):
        raise ValueError(f"induced={induced!r} is not allowed: valid values are 'edge', 'vertex'")
    options = EngineOptions(
        strategy=strategy, chunk_size=chunk_size, cache_bytes=cache_bytes, max_embeddings=max_embeddings
    )
    g = graph.by_degree() if relabel else graph
    if schedule is None:
        schedule = make_schedule(pattern, induced, graph=g)
    elif schedule.induced != induced or schedule.pattern != pattern:
        raise ValueError("schedule does not belong to this pattern and induced mode")
    return count_jobs(g, [(schedule, options)], workers=workers, partition=partition, timeout_s=timeout_s)[0]


def count_jobs(
    graph: Graph,
    jobs: list[tuple[Schedule, EngineOptions]],
    *,
    workers: int,
    partition: Scheme = "hash",
    timeout_s: float = 600.0,
) -> list[KuduResult]:
    """Run several counts on one launch of ``workers`` processes (one fork and rendezvous for all of them).

    ``graph`` is used as given (relabel it with :meth:`Graph.by_degree` first for speed); each job is a
    schedule and its :class:`EngineOptions`. Returns one :class:`KuduResult` per job, in order; their
    ``launch_seconds`` is the whole launch's wall time.
    """
    start = time.perf_counter()
    plans = [(LevelPlan.of(schedule), options) for schedule, options in jobs]
    part = Partition.build(graph, workers, partition)
    sets.warm()  # compile once here; the forked workers inherit the machine code
    log.info("kudu: %d job(s) on %s, P=%d", len(plans), graph.name, workers)
    per_rank = run_workers(
        _worker,
        workers,
        graph,
        part,
        plans,
        timeout_s=timeout_s,
        oom_hint="try a smaller max_embeddings or chunk_size, strategy='hybrid', or fewer workers",
    )
    wall = time.perf_counter() - start
    out = []
    for i, (plan, options) in enumerate(plans):
        ranks = tuple(r[i] for r in per_rank)
        totals = summarise(ranks)
        out.append(
            KuduResult(
                count=sum(r.count for r in ranks),
                completed=all(r.completed for r in ranks),
                ranks=ranks,
                totals=totals,
                plan=plan.text,
                partition=part.describe(),
                options=options,
                seconds=totals["seconds"],
                launch_seconds=wall,
            )
        )
    return out
