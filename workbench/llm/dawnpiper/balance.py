"""Compute-balanced and memory-balanced partitions: the two ends of DawnPiper's interval, and the peers'
partitioners (torchgpipe's ``balance_by_time`` and ``balance_by_size``).

Both minimise the largest per-stage cost over contiguous partitions, exactly, by dynamic programming
(``best[x][j] = min_i max(best[x-1][i], cost_x(i, j))``; torchgpipe solves the time case with Barany and
Grinberg's block-partition heuristic, the exact optimum is never worse). Costs:

- compute: ``sum (t_f + t_b)`` of the stage's units (``balance_by_time``);
- memory: the stage's peak under the schedule, ``static_x + k_x * act_x`` (see :mod:`costs`) with no swap or
  recompute. Under GPipe every stage holds all M micro-batches, which is torchgpipe's ``balance_by_size``; under
  1F1B the in-flight count ``k_x`` makes it position-aware, as DawnPiper's observation asks.
"""

from __future__ import annotations

import time

import numpy as np

from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache, in_flight
from workbench.llm.dawnpiper.graph import NodeGraph, activation_table, static_bytes

__all__ = ["activation_table", "min_max_cuts", "balance_by_time", "balance_by_size", "memory_cost_table"]


def memory_cost_table(graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget, schedule: str) -> list:
    """Per stage x: the (n+1, n+1) table of ``static_x + k_x * act`` of stage [i, j) (no swap or recompute)."""
    act = activation_table(graph)
    pprefix = np.concatenate([[0.0], np.cumsum(graph.param_bytes / graph.param_elem_bytes)])
    params = pprefix[None, :] - pprefix[:, None]
    sprefix = np.concatenate([[0.0], np.cumsum(static_bytes(graph, hw.state_bytes_per_param))])
    state = sprefix[None, :] - sprefix[:, None]
    out = []
    for x in range(stages):
        k = in_flight(schedule, x, stages, micro_batches)
        static = state
        if schedule == "pipedream":
            static = static + (k - 1) * params * hw.weight_bytes_per_param
        out.append(static + k * act)
    return out


def min_max_cuts(costs: list[np.ndarray], n: int, allowed: np.ndarray | None = None) -> tuple[int, ...]:
    """Cuts minimising ``max_x costs[x][start_x, stop_x]`` over contiguous partitions of n units into
    ``len(costs)`` non-empty stages; ``allowed`` (optional) lists the cut positions that may be used.

    Raises ValueError when there are more stages than positions allow.
    """
    S = len(costs)
    ok = np.zeros(n + 1, dtype=bool)
    ok[1:n] = True
    if allowed is not None:
        ok[:] = False
        ok[np.asarray(allowed, dtype=int)] = True
        ok[0] = ok[n] = False
    if S - 1 > int(ok.sum()):
        raise ValueError(f"stages={S} is more than the {int(ok.sum()) + 1} stages the graph's cut positions allow")
    inf = np.inf
    best = np.full(n + 1, inf)
    best[1:] = costs[0][0, 1:]
    best[~ok] = inf
    best[n] = costs[0][0, n] if S == 1 else inf
    i_idx = np.arange(n + 1)
    arg = []
    for x in range(1, S):
        # candidates[i, j] = max(best up to cut i, cost of stage x over [i, j)), only for x <= i < j
        cand = np.maximum(best[:, None], costs[x])
        cand[(i_idx[:, None] >= i_idx[None, :]) | (i_idx[:, None] < x)] = inf
        choice = np.argmin(cand, axis=0)
        nxt = cand[choice, i_idx]
        allowed_end = ok.copy() if x < S - 1 else np.zeros(n + 1, dtype=bool)
        allowed_end[n] = x == S - 1
        nxt[~allowed_end] = inf
        arg.append(choice)
        best = nxt
    cuts = []
    j = n
    for choice in reversed(arg):
        j = int(choice[j])
        cuts.append(j)
    return tuple(reversed(cuts))


def balance_by_time(graph: NodeGraph, cache: StageCache, allowed: np.ndarray | None = None) -> Partition:
    """The compute-balanced partition (min-max ``t_f + t_b``), judged by ``cache`` (its schedule and memory)."""
    start = time.perf_counter()
    prefix = np.concatenate([[0.0], np.cumsum(graph.compute_s)])
    table = prefix[None, :] - prefix[:, None]
    cuts = min_max_cuts([table] * cache.stages, graph.n, allowed)
    return cache.partition("compute-balanced", cuts, time.perf_counter() - start)


def balance_by_size(graph: NodeGraph, cache: StageCache, allowed: np.ndarray | None = None) -> Partition:
    """The memory-balanced partition (min-max stage peak under ``cache``'s schedule, no swap or recompute)."""
    start = time.perf_counter()
    tables = memory_cost_table(graph, cache.stages, cache.micro_batches, cache.hw, cache.schedule)
    cuts = min_max_cuts(tables, graph.n, allowed)
    return cache.partition("memory-balanced", cuts, time.perf_counter() - start)
