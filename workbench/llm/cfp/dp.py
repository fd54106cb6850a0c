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
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import reduce

import numpy as np

from workbench.llm.cfp.blocks import Blocks

__all__ = ["DPResult", "solve_dp", "solve"]


@dataclass
class DPResult:
    """``choice``: strategy index per block; ``cost``: seconds; ``feasible``; ``unit``: memory bucket bytes;
    ``exact_memory``: buckets equal bytes / gcd (no rounding); ``seconds``: search time; ``states``: the largest
    table size."""

    choice: list[int]
    cost: float
    feasible: bool
    unit: int
    exact_memory: bool
    seconds: float
    states: int
    method: str = "exact"


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


def solve(blocks: Blocks, *, memory_limit: float | None = None, exact_buckets: int = 4096) -> DPResult:
    """The DP with the memory limit handled as cheaply as exactness allows.

    1. Without the limit; if that plan fits, it is the optimum (``method="unconstrained"``).
    2. With the memory axis when ``limit / gcd`` of the block memories is at most ``exact_buckets``
       (``method="exact"``): the exact constrained optimum.
    3. Otherwise a Lagrangian search: the smallest penalty per byte (bisection) whose unconstrained optimum fits
       (``method="lagrangian"``; feasible, not proven optimal).
    """
    t0 = time.perf_counter()
    free = solve_dp(blocks)
    if memory_limit is None or not math.isfinite(memory_limit):
        free.method = "unconstrained"
        return free
    mem = sum(int(blocks.mem[k][c]) for k, c in enumerate(free.choice))
    if mem <= memory_limit:
        free.method = "unconstrained"
        return free
    vals = [int(v) for m in blocks.mem for v in m if v > 0]
    g = reduce(math.gcd, vals, 0) or 1
    if memory_limit / g <= exact_buckets:
        res = solve_dp(blocks, memory_limit=memory_limit, max_buckets=exact_buckets)
        res.seconds = time.perf_counter() - t0
        return res
    least = sum(int(m.min()) for m in blocks.mem)
    if least > memory_limit:
        return DPResult([], math.inf, False, 1, False, time.perf_counter() - t0, free.states, "lagrangian")
    lo, hi = 0.0, max(1e-30, free.cost / max(1, mem - memory_limit))
    best = None
    for _ in range(200):  # grow hi until its plan fits
        r = solve_dp(blocks, penalty=hi)
        if sum(int(blocks.mem[k][c]) for k, c in enumerate(r.choice)) <= memory_limit:
            best = r
            break
        lo, hi = hi, hi * 4
    for _ in range(40):
        mid = (lo + hi) / 2
        r = solve_dp(blocks, penalty=mid)
        if sum(int(blocks.mem[k][c]) for k, c in enumerate(r.choice)) <= memory_limit:
            best, hi = r, mid
        else:
            lo = mid
    if best is None:  # pragma: no cover - the least-memory plan fits, so a large penalty finds one
        return DPResult([], math.inf, False, 1, False, time.perf_counter() - t0, free.states, "lagrangian")
    cost = float(sum(blocks.cost[k][c] for k, c in enumerate(best.choice)))
    cost += sum(
        float(R[best.choice[bp], best.choice[k]]) for k in range(len(blocks.ops)) for bp, _, R in blocks.in_edges[k]
    )
    return DPResult(best.choice, cost, True, 1, False, time.perf_counter() - t0, best.states, "lagrangian")
