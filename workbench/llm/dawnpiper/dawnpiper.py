"""DawnPiper's partitioner: the partition theorem's interval, binary partitioning, and the per-tensor choice of
swap or recompute (arXiv 2505.05856 v1; the theorem and the algorithm are not readable there, so the form below is
our reading, labelled as such in the notebook).

1. **Interval** (the theorem as we read it): the optimal start of stage x lies between the compute-balanced
   and the memory-balanced partitions' starts of stage x: ``lo_x = min(c_x, m_x)``, ``hi_x = max(c_x, m_x)``,
   widened by ``slack`` units each side (0: the theorem as stated). :func:`theorem_interval`.
2. **Binary partitioning**: stages [x0, x1) over units [a, b) are split at the middle stage xm; its start c is
   found by binary search inside the interval for the point where the left half's best time stops being below
   the right half's (left time grows with c, right time shrinks), each half solved the same way (memoised);
   the two candidates around the crossing (and ``window`` more each side) are compared and the best kept.
3. Every stage is priced with :func:`~workbench.llm.dawnpiper.costs.plan_stage`: memory under the schedule and,
   when it overflows, the cost model's swap-or-recompute choice per tensor.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from workbench.llm.dawnpiper.balance import balance_by_size, balance_by_time
from workbench.llm.dawnpiper.costs import Partition, StageCache

__all__ = ["theorem_interval", "dawnpiper_partition"]


def theorem_interval(
    compute_cuts: tuple[int, ...], memory_cuts: tuple[int, ...], n: int, slack: int = 0
) -> list[tuple[int, int]]:
    """Per cut x: ``(lo, hi)`` inclusive, between the compute- and memory-balanced cuts, widened by ``slack``."""
    out = []
    for x, (c, m) in enumerate(zip(compute_cuts, memory_cuts, strict=True)):
        lo = max(x + 1, min(c, m) - slack)
        hi = min(n - (len(compute_cuts) - x), max(c, m) + slack)
        out.append((lo, max(lo, hi)))
    return out


def dawnpiper_partition(
    cache: StageCache, *, slack: int = 0, window: int = 1, allowed: np.ndarray | None = None, name: str = "dawnpiper"
) -> tuple[Partition, dict]:
    """DawnPiper's partition under ``cache``'s setting; returns it and the search's account (the interval, the
    compute- and memory-balanced cuts, the slack used, stage evaluations). ``allowed`` restricts the cut
    positions (e.g. :func:`~workbench.llm.dawnpiper.graph.layer_cuts` + 1: the same search at layer granularity).

    When nothing inside the interval fits in memory the interval is widened (slack 1, 2, 4, ... units) until a
    partition fits or the interval covers every position: the theorem is our reading, so the search does not
    stake feasibility on it.
    """
    while True:
        part, account = _search(cache, slack=slack, window=window, allowed=allowed, name=name)
        if part.feasible or slack >= cache.graph.n:
            return part, account
        slack = max(1, 2 * slack)


def _search(
    cache: StageCache, *, slack: int, window: int, allowed: np.ndarray | None, name: str
) -> tuple[Partition, dict]:
    start = time.perf_counter()
    graph, S = cache.graph, cache.stages
    n = graph.n
    ok = np.zeros(n + 1, dtype=bool)
    ok[1:n] = True
    if allowed is not None:
        ok[:] = False
        ok[np.asarray(allowed, dtype=int)] = True
        ok[0] = ok[n] = False
    count = np.concatenate([[0], np.cumsum(ok)])  # count[p] = allowed positions < p
    if S == 1:
        return cache.partition(name, (), time.perf_counter() - start), {
            "interval": [], "compute_cuts": [], "memory_cuts": [], "evaluations": 1, "slack": slack,
        }  # fmt: skip
    before = cache.evaluations
    compute_cuts = balance_by_time(graph, cache, allowed).cuts
    memory_cuts = balance_by_size(graph, cache, allowed).cuts
    interval = theorem_interval(compute_cuts, memory_cuts, n, slack)

    @functools.cache
    def solve(x0: int, x1: int, a: int, b: int) -> tuple[float, float, tuple[int, ...]]:
        """Best (time, peak, cuts) of stages [x0, x1) over units [a, b)."""
        if x1 - x0 == 1:
            plan = cache.plan(a, b, x0)
            return plan.time_s, plan.peak_bytes, ()
        xm = (x0 + x1) // 2
        lo, hi = interval[xm - 1]

        def legal(p: int) -> bool:  # enough allowed cut positions remain on both sides of p
            return bool(ok[p]) and count[p] - count[a + 1] >= xm - x0 - 1 and count[b] - count[p + 1] >= x1 - xm - 1

        positions = [p for p in range(a + 1, b) if legal(p)]
        if not positions:
            return math.inf, math.inf, tuple(range(a + 1, a + x1 - x0))
        cands = [p for p in positions if lo <= p <= hi]
        if not cands:  # the interval lies outside what this sub-problem allows: take the nearest legal cut
            cands = [min(positions, key=lambda p: (abs(p - lo), p))]

        def halves(c: int) -> tuple[tuple, tuple]:
            return solve(x0, xm, a, c), solve(xm, x1, c, b)

        # binary search: the first candidate whose left half is no faster than its right half
        left, right = 0, len(cands) - 1
        while left < right:
            mid = (left + right) // 2
            l_part, r_part = halves(cands[mid])
            if (l_part[0], l_part[1]) >= (r_part[0], r_part[1]):
                right = mid
            else:
                left = mid + 1
        best = None
        for c in cands[max(0, left - 1 - window) : left + window + 1]:
            l_part, r_part = halves(c)
            key = (max(l_part[0], r_part[0]), max(l_part[1], r_part[1]))
            if best is None or key < best[0]:
                best = (key, (*l_part[2], c, *r_part[2]))
        return best[0][0], best[0][1], best[1]

    _, _, cuts = solve(0, S, 0, n)
    account = {
        "interval": [list(i) for i in interval],
        "compute_cuts": list(compute_cuts),
        "memory_cuts": list(memory_cuts),
        "evaluations": cache.evaluations - before,
        "slack": slack,
    }
    return cache.partition(name, cuts, time.perf_counter() - start), account


def inside(cuts: tuple[int, ...], interval: list[tuple[int, int]]) -> bool:
    """True when every cut lies in its interval (the theorem's claim, checked against the exhaustive optimum)."""
    return all(lo <= c <= hi for c, (lo, hi) in zip(cuts, interval, strict=True))
