"""The exact memory-constrained search over ParallelBlocks: a Pareto DP with Lagrangian cost-to-go bounds.

The block DP of :mod:`workbench.llm.cfp.dp` keeps one number per frontier state. Under a memory limit the exact
problem needs, per frontier state, every plan prefix that is not dominated in (memory, seconds): a *Pareto list*.
Memory stays in exact integer bytes (no buckets, no rounding). Adding block ``j`` shifts each prefix by the block
strategy's memory and seconds; dropping a finished block from the frontier merges the lists over its axis and
keeps the Pareto front (sort by memory, keep an entry only if it is strictly cheaper than every entry before it).

The lists grow with the depth, so prefixes that cannot lead to a better plan than an incumbent ``upper`` (a
feasible plan's seconds, from the Lagrangian search) are cut. The bound is Lagrangian (derived here): for any
penalty ``lam >= 0`` and a prefix with seconds ``c`` and bytes ``m`` at frontier state ``f``, every completion
within the limit ``M`` costs at least ``G_lam(f) - lam * (M - m)``, where ``G_lam(f)`` is the least
``seconds + lam * bytes`` of the blocks after ``j`` given ``f`` (their memory is at most ``M - m``). ``G_lam``
is exact: a DP over the *reversed* block graph, whose table at each cut is over the blocks right of the cut,
joined to the left frontier through the crossing edges. Cuts never remove the optimum, so the result is exact;
``max_entries`` bounds the work (the caller then falls back to the Lagrangian plan with its certified gap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.llm.cfp.blocks import Blocks

__all__ = ["ParetoResult", "cost_to_go", "pareto_dp", "reverse_tables"]

#: relative slack of the cost cut: float sums of the bound and of a prefix may differ in the last bits
_CUT_RTOL = 1e-9


@dataclass
class ParetoResult:
    """``choice``: strategy index per block ([] when none fits or the search stopped); ``cost``: seconds (inf
    when none); ``complete``: the search ran to the end (False: stopped at ``max_entries``); ``peak_entries``:
    the largest number of Pareto entries held at once."""

    choice: list[int]
    cost: float
    complete: bool
    peak_entries: int


def reverse_tables(blocks: Blocks, penalty: float) -> list[tuple[list[int], np.ndarray]]:
    """The reversed DP: ``out[j]`` = (axes, table) after the blocks ``> j`` are processed: ``axes`` are the
    blocks right of cut ``j`` read by a block ``<= j``; ``table`` the least ``seconds + penalty * bytes`` of the
    blocks ``> j`` per strategy of those axes (edges among blocks ``> j`` included, crossing edges not)."""
    nb = len(blocks.ops)
    producers: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(nb)]  # c -> [(p, R[p, c])]
    out_edges: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(nb)]  # p -> [(c, R[p, c])]
    for c in range(nb):
        for p, _, R in blocks.in_edges[c]:
            producers[c].append((p, R))
            out_edges[p].append((c, R))
    waiting = [len({p for p, _ in producers[c]}) for c in range(nb)]
    seen_from: list[set[int]] = [set() for _ in range(nb)]
    arr = np.zeros(())
    axes: list[int] = []
    out: list[tuple[list[int], np.ndarray]] = [([], np.zeros(()))] * nb
    for k in range(nb - 1, -1, -1):
        out[k] = (list(axes), arr)
        S = len(blocks.strats[k])
        add = np.broadcast_to(blocks.cost[k] + penalty * blocks.mem[k], [1] * len(axes) + [S]).copy()
        for c, R in out_edges[k]:
            shape = [1] * (len(axes) + 1)
            shape[axes.index(c)], shape[-1] = R.shape[1], S
            add = add + R.T.reshape(shape)
        arr = arr[..., None] + add
        axes.append(k)
        for c, _ in out_edges[k]:
            seen_from[c].add(k)
        for b in list(axes):
            if len(seen_from[b]) == waiting[b] and (b != k or not producers[k]):
                a = axes.index(b)
                arr = arr.min(axis=a)
                axes.pop(a)
    return out


def cost_to_go(
    blocks: Blocks,
    j: int,
    left_axes: list[int],
    states: np.ndarray,
    tables: list[tuple[list[int], np.ndarray]],
    chunk: int = 1 << 22,
) -> np.ndarray:
    """``G[u]``: the least ``seconds + penalty * bytes`` of the blocks after ``j`` (crossing edges included) for
    frontier state ``states[u]`` (a flat index over the strategies of ``left_axes``); ``tables`` from
    :func:`reverse_tables` at that penalty. Evaluated per distinct state present, ``chunk`` numbers at a time."""
    right_axes, table = tables[j] if j + 1 < len(blocks.ops) else ([], np.zeros(()))
    uniq, inverse = np.unique(states, return_inverse=True)
    if not right_axes:
        return np.full(len(states), float(table))
    dims_l = [len(blocks.strats[b]) for b in left_axes]
    coords = np.unravel_index(uniq, dims_l) if dims_l else ()
    dims_r = list(np.shape(table))
    crossing = [
        (left_axes.index(p), r_pos, R) for r_pos, c in enumerate(right_axes) for p, _, R in blocks.in_edges[c] if p <= j
    ]
    out = np.empty(len(uniq))
    step = max(1, chunk // max(1, table.size))
    for lo in range(0, len(uniq), step):
        hi = min(len(uniq), lo + step)
        full = np.broadcast_to(table, [hi - lo] + dims_r).copy()  # [states in chunk, *right strategies]
        for l_pos, r_pos, R in crossing:
            shape = [hi - lo] + [1] * len(dims_r)
            shape[1 + r_pos] = R.shape[1]
            full += R[coords[l_pos][lo:hi]].reshape(shape)
        out[lo:hi] = full.reshape(hi - lo, -1).min(axis=1)
    return out[inverse.ravel()]


def _pareto_filter(state, mem, cost, *rest):
    """Keep, per state, the entries no other entry of that state dominates (less or equal bytes and seconds)."""
    o = np.lexsort((cost, mem, state))
    state, mem, cost, rest = state[o], mem[o], cost[o], [r[o] for r in rest]
    _, rank = np.unique(cost, return_inverse=True)
    # a running minimum of the cost rank that restarts at every state: the offset -state*(n+1) puts each state's
    # values below all earlier states' (states ascending), so the first entry of a state is always kept
    v = rank.astype(np.int64).ravel() - state * (len(cost) + 1)
    keep = np.ones(len(v), dtype=bool)
    keep[1:] = v[1:] < np.minimum.accumulate(v)[:-1]
    return (state[keep], mem[keep], cost[keep], *(r[keep] for r in rest))


def _cut(blocks, j, axes, state, mem, cost, limit, upper, bound_tables, rest_mem):
    """Which new entries can still lead to a plan within ``limit`` bytes and below ``upper`` seconds."""
    keep = mem + rest_mem[j] <= limit
    for lam, tables in bound_tables:
        if not keep.any():
            break
        g = cost_to_go(blocks, j, axes, state[keep], tables)
        keep[keep] = cost[keep] + g - lam * (limit - mem[keep]) <= upper * (1 + _CUT_RTOL)
    return keep


def pareto_dp(
    blocks: Blocks,
    memory_limit: float,
    *,
    upper: float = math.inf,
    penalties: tuple[float, ...] = (0.0,),
    max_entries: int = 2_000_000,
) -> ParetoResult:
    """The least-seconds plan over block strategies with total bytes ``<= memory_limit`` (exact).

    ``upper``: seconds of a known feasible plan (prefixes that cannot beat it are cut; inf: none known);
    ``penalties``: the Lagrangian multipliers (seconds per byte) whose cost-to-go bounds cut prefixes (0: the
    unconstrained cost-to-go); ``max_entries``: stop (``complete=False``) when more Pareto entries are held.
    """
    nb = len(blocks.ops)
    mem_b = [np.asarray(m, dtype=np.int64) for m in blocks.mem]
    least = np.array([int(m.min()) for m in mem_b], dtype=np.int64)
    rest_mem = np.concatenate([np.cumsum(least[::-1])[::-1][1:], [0]])  # least bytes of the blocks after j
    bound_tables = [(lam, reverse_tables(blocks, lam)) for lam in penalties]
    state, mem, cost = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
    dims: list[int] = []
    axes: list[int] = []
    remaining = [set(c) for c in blocks.consumers]
    hist: list[tuple[np.ndarray, np.ndarray]] = []
    peak = 1
    for j in range(nb):
        S = len(blocks.strats[j])
        add = np.broadcast_to(blocks.cost[j], dims + [S]).copy()
        for bp, _, R in blocks.in_edges[j]:
            shape = [1] * (len(dims) + 1)
            shape[axes.index(bp)], shape[-1] = R.shape[0], S
            add = add + R.reshape(shape)
        n = len(state)
        cost = (cost[:, None] + add.reshape(-1, S)[state]).ravel()  # [n * S]
        mem = (mem[:, None] + mem_b[j][None, :]).ravel()
        state = (state[:, None] * S + np.arange(S)[None, :]).ravel()
        parent, strat = np.repeat(np.arange(n), S), np.tile(np.arange(S), n)
        dims, axes = dims + [S], axes + [j]
        for bp, _, _ in blocks.in_edges[j]:
            remaining[bp].discard(j)
        done = [a for a, b in enumerate(axes) if not remaining[b]]
        if done:
            idx = np.delete(np.array(np.unravel_index(state, dims)).reshape(len(dims), -1), done, axis=0)
            dims = [d for a, d in enumerate(dims) if a not in done]
            axes = [b for a, b in enumerate(axes) if a not in done]
            state = np.ravel_multi_index(tuple(idx), dims) if dims else np.zeros(len(mem), np.int64)
        keep = _cut(blocks, j, axes, state, mem, cost, memory_limit, upper, bound_tables, rest_mem)
        state, mem, cost, parent, strat = (x[keep] for x in (state, mem, cost, parent, strat))
        if done and len(state):
            state, mem, cost, parent, strat = _pareto_filter(state, mem, cost, parent, strat)
        hist.append((parent, strat))
        peak = max(peak, len(state))
        if len(state) > max_entries:
            return ParetoResult([], math.inf, False, peak)
    if not len(cost):
        return ParetoResult([], math.inf, True, peak)
    i = int(np.argmin(cost))
    best = float(cost[i])
    choice = [0] * nb
    for j in range(nb - 1, -1, -1):
        parent, strat = hist[j]
        choice[j], i = int(strat[i]), int(parent[i])
    return ParetoResult(choice, best, True, peak)
