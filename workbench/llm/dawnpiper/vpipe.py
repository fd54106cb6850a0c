"""vPipe (Zhao et al., "vPipe: A Virtualized Acceleration System for Achieving Efficient and Scalable Pipeline
Parallel DNN Training", IEEE TPDS; venue and year recalled, not checked here), MODELLED from its paper's
description: vPipe has no public code.

What we take from the description: layer-granular partitions; per-layer memory management (a layer is swapped
to host or recomputed from its input, chosen by cost); a partition refined by moving layers between neighbouring
stages (a Kernighan-Lin style local search) from a compute-balanced start, under 1F1B. Everything else (its
online planner, its swap scheduling) is simplified to the cost model of :mod:`costs`.
"""

from __future__ import annotations

import time

from workbench.llm.dawnpiper.balance import balance_by_time
from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache
from workbench.llm.dawnpiper.graph import NodeGraph, layer_cuts

__all__ = ["vpipe_partition"]


def _key(part: Partition) -> tuple[float, float]:
    return (part.iteration_s, max(part.stage_peak_bytes))


def vpipe_partition(
    graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget, schedule: str = "1f1b"
) -> Partition:
    """vPipe's partition (MODEL): layer cuts, per-layer swap/recompute, local moves of one layer at a time."""
    start = time.perf_counter()
    allowed = layer_cuts(graph) + 1
    cache = StageCache(graph, stages, micro_batches, hw, schedule, optimize=True, granularity="layer")
    best = balance_by_time(graph, cache, allowed)
    positions = list(allowed)
    improved = True
    while improved:
        improved = False
        for x in range(stages - 1):
            for step in (-1, 1):
                cuts = list(best.cuts)
                i = positions.index(cuts[x]) + step
                if not 0 <= i < len(positions):
                    continue
                cuts[x] = int(positions[i])
                if (x > 0 and cuts[x] <= cuts[x - 1]) or (x < stages - 2 and cuts[x] >= cuts[x + 1]):
                    continue
                candidate = cache.partition("vpipe", cuts)
                if _key(candidate) < _key(best):
                    best, improved = candidate, True
    return cache.partition("vpipe", best.cuts, time.perf_counter() - start)
