"""PipeDream's partitioner (Narayanan et al., SOSP 2019; ``msr-fiddle/pipedream``,
``optimizer/optimizer_graph_hierarchical.py``), for a straight pipeline of one GPU per stage.

PipeDream profiles per layer and cuts between layers; its dynamic program minimises the slowest stage,
``max(compute of the stage, communication at its boundaries)`` (``A[j][m] = min_i max(A[i][m-1], 2 C_i,
T(i..j))`` with no replication here). A stage must fit in memory with PipeDream's asynchronous 1F1B, which stashes
one weight version per micro-batch in flight (``schedule="pipedream"`` in :mod:`costs`); PipeDream neither swaps
nor recomputes.
"""

from __future__ import annotations

import time

import numpy as np

from workbench.llm.dawnpiper.balance import memory_cost_table, min_max_cuts
from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache
from workbench.llm.dawnpiper.graph import NodeGraph, layer_cuts

__all__ = ["pipedream_partition"]


def pipedream_partition(graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget) -> Partition:
    """PipeDream's layer-granular partition, judged under its own schedule (weight stashing, no swap/recompute).

    When no layer-granular partition fits in memory the compute-optimal one is returned, infeasible.
    """
    start = time.perf_counter()
    n = graph.n
    allowed = layer_cuts(graph) + 1
    prefix = np.concatenate([[0.0], np.cumsum(graph.compute_s)])
    compute = prefix[None, :] - prefix[:, None]
    comm = np.zeros(n + 1)
    comm[1:n] = hw.link_latency_s + graph.crossing_bytes / hw.link_bytes_per_s
    times = np.maximum(compute, np.maximum(comm[:, None], comm[None, :]))
    memory = memory_cost_table(graph, stages, micro_batches, hw, "pipedream")
    tables = [np.where(m <= hw.memory_bytes, times, np.inf) for m in memory]
    cuts = min_max_cuts(tables, n, allowed)
    if not np.isfinite(max(tables[x][a, b] for x, (a, b) in enumerate(zip((0, *cuts), (*cuts, n), strict=True)))):
        cuts = min_max_cuts([times] * stages, n, allowed)
    cache = StageCache(graph, stages, micro_batches, hw, "pipedream", optimize=False)
    return cache.partition("pipedream", cuts, time.perf_counter() - start)
