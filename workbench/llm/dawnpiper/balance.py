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

from workbench.llm.dawnpiper.costs import Hardware, Partition, StageCache, in_flight
from workbench.llm.dawnpiper.graph import NodeGraph

__all__ = ["activation_table", "min_max_cuts", "balance_by_time", "balance_by_size", "memory_cost_table"]


def activation_table(graph: NodeGraph) -> np.ndarray:
    """``A[i, j]``: activation bytes per micro-batch of a stage of units [i, j) (values with a saver inside).

    A value counts once if any of its savers s_1 < ... < s_m lies in [i, j): the savers inside form a run of the
    sorted list, so ``[run non-empty] = #savers inside - #adjacent pairs inside`` and the table is a 1-D prefix
    sum minus a 2-D dominance sum over adjacent saver pairs. (n+1, n+1) float64.
    """
    if "A" in graph._cache:
        return graph._cache["A"]
    n = graph.n
    points = np.zeros(n + 1)
    pairs = np.zeros((n + 1, n + 1))
    for v, savers in enumerate(graph.value_savers):
        w = float(graph.value_bytes[v])
        for s in savers:
            points[s] += w
        for s, t in zip(savers, savers[1:], strict=False):
            pairs[s, t] += w
    prefix = np.concatenate([[0.0], np.cumsum(points[:n])])
    # dominance: D[i, j] = sum of pairs (s, t) with s >= i and t < j
    d = np.cumsum(pairs[::-1], axis=0)[::-1]  # rows: s >= i
    d = np.concatenate([np.zeros((n + 1, 1)), np.cumsum(d, axis=1)[:, :n]], axis=1)  # cols: t < j
    table = prefix[None, :] - prefix[:, None] - d
    graph._cache["A"] = table
    return table


def memory_cost_table(graph: NodeGraph, stages: int, micro_batches: int, hw: Hardware, schedule: str) -> list:
    """Per stage x: the (n+1, n+1) table of ``static_x + k_x * act`` of stage [i, j) (no swap or recompute)."""
    act = activation_table(graph)
    pprefix = np.concatenate([[0.0], np.cumsum(graph.param_bytes / graph.param_elem_bytes)])
    params = pprefix[None, :] - pprefix[:, None]
    out = []
    for x in range(stages):
        k = in_flight(schedule, x, stages, micro_batches)
        static = params * hw.state_bytes_per_param
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
    arg = []
    for x in range(1, S):
        nxt = np.full(n + 1, inf)
        choice = np.zeros(n + 1, dtype=int)
        ends = range(x + 1, n + 1)
        for j in ends:
            if j < n and not ok[j]:
                continue
            if x == S - 1 and j != n:
                continue
            i = np.arange(x, j)
            vals = np.maximum(best[i], costs[x][i, j])
            k = int(np.argmin(vals))
            nxt[j], choice[j] = vals[k], i[k]
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
