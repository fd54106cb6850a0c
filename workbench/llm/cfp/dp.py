"""CFP's dynamic program over ParallelBlocks, with resharding costs and a memory limit.

The block graph of a transformer is a chain with residual edges, so the DP walks the blocks in topological
order keeping a *frontier*: the blocks whose outputs still have unvisited consumers. Its table is an array with
one axis per frontier block (its strategy) and one for memory used (in buckets)::

    T'[f..., t, m + mem(t)] = T[f..., m] + cost(t) + sum_{producer p of t} reshard_p[f_p, t]

after which a block whose consumers are all visited is minimised out of its axis (argmin kept for the
backtrack). For a chain this is ``DP[i][s] = min_s' DP[i-1][s'] + reshard(s' -> s) + cost(block_i, s)``; for
the residual graph the frontier holds at most two blocks. Memory: each block strategy's bytes are rounded up to
buckets of ``unit`` bytes (``unit`` = the gcd of all block memories when the limit / gcd fits in
``max_buckets``, so the DP is exact; otherwise a coarser unit, which can only refuse plans near the limit).
:func:`solve` keeps the constrained search exact at any size: when the buckets would be too many it runs the
Pareto DP of :mod:`workbench.llm.cfp.pareto` (exact bytes), seeded by a Lagrangian search.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import reduce

import numpy as np

from workbench.llm.cfp.blocks import Blocks
from workbench.llm.cfp.pareto import ParetoResult, pareto_dp

__all__ = ["DPResult", "solve_dp", "solve", "lagrangian"]


@dataclass
class DPResult:
    """``choice``: strategy index per block; ``cost``: seconds; ``feasible``; ``unit``: memory bucket bytes;
    ``exact_memory``: buckets equal bytes / gcd (no rounding); ``seconds``: search time; ``states``: the largest
    table size; ``method``: unconstrained, exact or lagrangian; ``gap_bound``: the certified relative loss to
    the constrained optimum at most (0 when exact); ``lower_bound``: seconds no plan within the limit beats;
    ``peak_entries``: Pareto entries held at once by the exact memory search (0 when it did not run)."""

    choice: list[int]
    cost: float
    feasible: bool
    unit: int
    exact_memory: bool
    seconds: float
    states: int
    method: str = "exact"
    gap_bound: float = 0.0
    lower_bound: float | None = None
    peak_entries: int = 0


def solve_dp(
    blocks: Blocks, *, memory_limit: float | None = None, max_buckets: int = 64, penalty: float = 0.0
) -> DPResult:
    """Minimise total seconds over one strategy per block subject to total memory <= ``memory_limit`` bytes.

    ``penalty``: seconds added per byte of memory (the Lagrangian form, used by :func:`solve`); the returned
    ``cost`` then includes it. Raises ValueError for a non-positive ``memory_limit``. Returns ``feasible=False``
    (and cost inf) when no plan fits.
    """
    t0 = time.perf_counter()
    nb = len(blocks.ops)
    if memory_limit is None or not math.isfinite(memory_limit):
        K, unit, exact = 0, 1, True
        memb = [np.zeros(len(s), dtype=np.int64) for s in blocks.strats]
    else:
        if memory_limit <= 0:
            raise ValueError(f"memory_limit={memory_limit!r} is out of range: valid range is > 0 bytes")
        vals = [int(v) for m in blocks.mem for v in m if v > 0]
        g = reduce(math.gcd, vals, 0) or 1
        unit = g if memory_limit / g <= max_buckets else int(math.ceil(memory_limit / max_buckets))
        exact = unit == g
        K = int(memory_limit // unit)
        memb = [-(-m // unit) for m in blocks.mem]
    arr = np.full(K + 1, np.inf)
    arr[0] = 0.0
    axes: list[int] = []
    remaining = [set(c) for c in blocks.consumers]
    log: list[tuple] = []
    states = 1
    for j in range(nb):
        S = len(blocks.strats[j])
        lead: list[int] = list(arr.shape[:-1])
        add = np.broadcast_to(blocks.cost[j] + penalty * blocks.mem[j], lead + [S]).copy()
        for bp, _, R in blocks.in_edges[j]:
            a = axes.index(bp)
            shape = [1] * (len(lead) + 1)
            shape[a], shape[-1] = R.shape[0], S
            add = add + R.reshape(shape)
        new = np.full(lead + [S, K + 1], np.inf)
        for t in range(S):
            mt = int(memb[j][t])
            if mt > K:
                continue
            new[..., t, mt:] = arr[..., : K + 1 - mt] + add[..., t, None]
        arr = new
        axes.append(j)
        log.append(("add", j))
        states = max(states, arr.size)
        for bp, _, _ in blocks.in_edges[j]:
            remaining[bp].discard(j)
        for b in list(axes):
            if not remaining[b]:
                a = axes.index(b)
                log.append(("drop", b, a, arr.argmin(axis=a)))
                arr = arr.min(axis=a)
                axes.pop(a)
    if axes:  # pragma: no cover - every block ends with no remaining consumer
        raise AssertionError(f"blocks {axes} still open at the end")
    m_star = int(arr.argmin())
    cost = float(arr[m_star])
    if not math.isfinite(cost):
        return DPResult([], math.inf, False, unit, exact, time.perf_counter() - t0, states)
    choice: dict[int, int] = {}
    m = m_star
    cur_axes: list[int] = []
    for ev in reversed(log):
        if ev[0] == "drop":
            _, b, a, idx = ev
            key = tuple(choice[x] for x in cur_axes) + (m,)
            choice[b] = int(idx[key])
            cur_axes.insert(a, b)
        else:
            j = ev[1]
            m -= int(memb[j][choice[j]])
            cur_axes.remove(j)
    return DPResult([choice[k] for k in range(nb)], cost, True, unit, exact, time.perf_counter() - t0, states)


def _plan_cost(blocks: Blocks, choice: list[int]) -> float:
    """Seconds of a block plan: block costs plus the resharding of every edge between blocks."""
    cost = float(sum(blocks.cost[k][c] for k, c in enumerate(choice)))
    return cost + sum(
        float(R[choice[bp], choice[k]]) for k in range(len(blocks.ops)) for bp, _, R in blocks.in_edges[k]
    )


def _plan_memory(blocks: Blocks, choice: list[int]) -> int:
    return sum(int(blocks.mem[k][c]) for k, c in enumerate(choice))


def lagrangian(blocks: Blocks, memory_limit: float, free: DPResult) -> tuple[DPResult, float, float]:
    """The Lagrangian search: the smallest penalty per byte (bisection) whose unconstrained optimum fits.

    Returns ``(plan, penalty, lower_bound)``: the fitting plan (``method="lagrangian"``, cost in seconds without
    the penalty; infeasible when even the least memory exceeds the limit), the penalty (seconds per byte) that
    found it, and the best dual bound ``min(seconds + penalty * bytes) - penalty * limit`` over the penalties
    tried: no plan within the limit costs less (weak duality)."""
    t0 = time.perf_counter()
    lower = -math.inf
    if sum(int(m.min()) for m in blocks.mem) > memory_limit:
        return DPResult([], math.inf, False, 1, False, time.perf_counter() - t0, free.states, "lagrangian"), 0.0, lower
    mem = _plan_memory(blocks, free.choice)
    lo, hi = 0.0, max(1e-30, free.cost / max(1, mem - memory_limit))
    lower = free.cost  # the unconstrained optimum bounds the constrained one from below
    best = None
    for _ in range(200):  # grow hi until its plan fits
        r = solve_dp(blocks, penalty=hi)
        lower = max(lower, r.cost - hi * memory_limit)
        if _plan_memory(blocks, r.choice) <= memory_limit:
            best = r
            break
        lo, hi = hi, hi * 4
    for _ in range(40):
        mid = (lo + hi) / 2
        r = solve_dp(blocks, penalty=mid)
        lower = max(lower, r.cost - mid * memory_limit)
        if _plan_memory(blocks, r.choice) <= memory_limit:
            best, hi = r, mid
        else:
            lo = mid
        if (hi - lo) <= 1e-3 * hi:
            break
    if best is None:  # pragma: no cover - the least-memory plan fits, so a large penalty finds one
        return DPResult([], math.inf, False, 1, False, time.perf_counter() - t0, free.states, "lagrangian"), hi, lower
    cost = _plan_cost(blocks, best.choice)
    gap = max(0.0, cost / lower - 1) if lower > 0 else math.inf
    res = DPResult(best.choice, cost, True, 1, False, time.perf_counter() - t0, best.states, "lagrangian", gap, lower)
    return res, hi, lower


def _pareto_rounds(
    blocks: Blocks, limit: float, incumbent: float, lower: float, penalty: float, max_entries: int
) -> tuple[ParetoResult | None, int]:
    """The exact Pareto DP with a growing cut: first every plan within ``lower * (1 + 1e-3)`` seconds (the
    Lagrangian dual bound is usually close to the optimum, so few prefixes survive), then 8x wider, up to the
    ``incumbent`` plan's seconds. A round that finds a plan below its cut has the optimum (every cheaper plan
    survived every cut). Returns (result or None when a round stopped at ``max_entries``, peak entries)."""
    eps, peak = 1e-3, 0
    while True:
        upper = min(incumbent, lower * (1 + eps)) if lower > 0 else incumbent
        par = pareto_dp(blocks, limit, upper=upper, penalties=(0.0, penalty), max_entries=max_entries)
        peak = max(peak, par.peak_entries)
        if not par.complete:
            return None, peak
        if par.choice or upper >= incumbent:
            return par, peak
        eps *= 8


def solve(
    blocks: Blocks,
    *,
    memory_limit: float | None = None,
    exact_buckets: int = 4096,
    exact: bool = True,
    max_entries: int = 2_000_000,
) -> DPResult:
    """The DP with the memory limit handled exactly, as cheaply as the sizes allow.

    1. Without the limit; if that plan fits, it is the optimum (``method="unconstrained"``).
    2. With the memory axis when ``limit / gcd`` of the block memories is at most ``exact_buckets``
       (``method="exact"``): the exact constrained optimum.
    3. Otherwise the Lagrangian search gives a fitting plan and a dual lower bound; then the Pareto DP of
       :mod:`workbench.llm.cfp.pareto` (exact bytes, cut by that plan and Lagrangian cost-to-go bounds) finds the
       exact optimum (``method="exact"``). ``exact=False``, or more than ``max_entries`` Pareto entries, keeps
       the Lagrangian plan (``method="lagrangian"``) with ``gap_bound``: its certified relative loss at most.
    """
    t0 = time.perf_counter()
    free = solve_dp(blocks)
    if memory_limit is None or not math.isfinite(memory_limit):
        free.method = "unconstrained"
        return free
    if _plan_memory(blocks, free.choice) <= memory_limit:
        free.method = "unconstrained"
        return free
    vals = [int(v) for m in blocks.mem for v in m if v > 0]
    g = reduce(math.gcd, vals, 0) or 1
    if memory_limit / g <= exact_buckets:
        res = solve_dp(blocks, memory_limit=memory_limit, max_buckets=exact_buckets)
        res.seconds = time.perf_counter() - t0
        return res
    lag, penalty, lower = lagrangian(blocks, memory_limit, free)
    if not lag.feasible or not exact:
        lag.seconds = time.perf_counter() - t0
        return lag
    par, peak = _pareto_rounds(blocks, memory_limit, lag.cost, lower, penalty, max_entries)
    if par is None:
        lag.seconds, lag.peak_entries = time.perf_counter() - t0, peak
        return lag
    # the cuts keep every prefix of a plan at least as good as the Lagrangian one, so an empty result means the
    # Lagrangian plan was already optimal (equal to within float rounding)
    choice = par.choice if par.choice else lag.choice
    cost = _plan_cost(blocks, choice)
    return DPResult(choice, cost, True, 1, True, time.perf_counter() - t0, lag.states, "exact", 0.0, cost, peak)
