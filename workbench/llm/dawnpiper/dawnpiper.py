"""DawnPiper's partitioner: the partition theorem's interval, binary partitioning, and the per-tensor choice of
swap or recompute (arXiv 2505.05856 v1; the theorem and the algorithm are not readable there, so the form below is
our reading, labelled as such in the notebook), followed by an exact refinement.

1. **Interval** (the theorem as we read it): the optimal start of stage x lies between the compute-balanced
   and the memory-balanced partitions' starts of stage x: ``lo_x = min(c_x, m_x)``, ``hi_x = max(c_x, m_x)``,
   widened by ``slack`` units each side (0: the theorem as stated). :func:`theorem_interval`.
2. **Binary partitioning** (:func:`interval_search`): stages [x0, x1) over units [a, b) are split at the middle
   stage xm; its start c is found by binary search inside the interval for the point where the left half's best
   time stops being below the right half's, each half solved the same way (memoised); the two candidates around
   the crossing (and ``window`` more each side) are compared and the best kept.
3. **Exact refinement** (:func:`exact_cuts`): the theorem is our reading and the binary search assumes the halves'
   times are monotone in the cut, which swap and recompute costs break (a stage that must swap gets slower in
   steps), so steps 1-2 alone can miss the optimum by far (a 5,933 % gap was found). Their bottleneck time is an
   upper bound U for a branch-and-bound min-max dynamic program over *every* cut position:
   ``best[x][j] = min_i max(best[x-1][i], T_x(i, j))``, where a pair (i, j) is priced only when its lower bound
   ``max(best[x-1][i], compute(i, j))`` is at most U and at most the best found for j so far (a stage's time is
   never below its compute ``sum t_f + t_b``). The result's bottleneck time, hence its iteration time, equals the
   exhaustive optimum under the same cost model (tested on a seeded family of random graphs); among partitions of
   equal time the peak tie-break is the DP's (lexicographic), which may differ from the oracle's.
   When steps 1-2 find nothing that fits, U is taken from :func:`greedy_feasible_cuts` (each stage as long as it
   fits); when that finds nothing either, the setting is reported infeasible (exact when a sub-range of a stage
   that fits also fits, which holds for static and saved bytes; see the function).
4. Every stage is priced with :func:`~workbench.llm.dawnpiper.costs.plan_stage`: memory under the schedule and,
   when it overflows, the cost model's swap-or-recompute choice per tensor.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from workbench.llm.dawnpiper.balance import balance_by_size, balance_by_time
from workbench.llm.dawnpiper.costs import Partition, StageCache

__all__ = [
    "theorem_interval",
    "cut_positions",
    "interval_search",
    "greedy_feasible_cuts",
    "exact_cuts",
    "dawnpiper_partition",
    "inside",
]


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


def cut_positions(n: int, allowed: np.ndarray | None = None) -> np.ndarray:
    """``ok[p]`` (n + 1 booleans): whether a stage may start at unit p (1..n-1; all of them when ``allowed`` is
    None, else only those listed)."""
    ok = np.zeros(n + 1, dtype=bool)
    ok[1:n] = True
    if allowed is not None:
        ok[:] = False
        ok[np.asarray(allowed, dtype=int)] = True
        ok[0] = ok[n] = False
    return ok


def dawnpiper_partition(
    cache: StageCache,
    *,
    slack: int = 0,
    window: int = 1,
    allowed: np.ndarray | None = None,
    name: str = "dawnpiper",
    exact: bool = True,
) -> tuple[Partition, dict]:
    """DawnPiper's partition under ``cache``'s setting; returns it and the search's account: the interval, the
    compute- and memory-balanced cuts, the slack used, the interval search's own cuts and iteration seconds
    (``interval_cuts``, ``interval_iteration_s``), and stage evaluations. ``allowed`` restricts the cut positions
    (e.g. :func:`~workbench.llm.dawnpiper.graph.layer_cuts` + 1: the same search at layer granularity);
    ``exact=False`` stops after the interval search (steps 1-2 of the module docstring, no optimality bound).
    """
    start = time.perf_counter()
    before = cache.evaluations
    part, account = interval_search(cache, slack=slack, window=window, allowed=allowed, name=name)
    account["interval_cuts"] = list(part.cuts)
    account["interval_iteration_s"] = part.iteration_s
    if exact and cache.stages > 1:
        ok = cut_positions(cache.graph.n, allowed)
        upper = part.bottleneck_s
        if not math.isfinite(upper):
            greedy = greedy_feasible_cuts(cache, ok)
            if greedy is not None:
                upper = cache.partition(name, greedy).bottleneck_s
        cuts = exact_cuts(cache, ok, upper)
        if cuts is not None:
            part = cache.partition(name, cuts)
    account["evaluations"] = cache.evaluations - before
    return cache.partition(name, part.cuts, time.perf_counter() - start), account


def interval_search(
    cache: StageCache, *, slack: int, window: int = 1, allowed: np.ndarray | None = None, name: str = "dawnpiper"
) -> tuple[Partition, dict]:
    """Steps 1-2 of the module docstring at one ``slack``: the theorem's interval and binary partitioning."""
    start = time.perf_counter()
    graph, S = cache.graph, cache.stages
    n = graph.n
    ok = cut_positions(n, allowed)
    if S == 1:
        return cache.partition(name, (), time.perf_counter() - start), {
            "interval": [], "compute_cuts": [], "memory_cuts": [], "evaluations": 1, "slack": slack,
        }  # fmt: skip
    before = cache.evaluations
    compute_cuts = balance_by_time(graph, cache, allowed).cuts
    memory_cuts = balance_by_size(graph, cache, allowed).cuts
    interval = theorem_interval(compute_cuts, memory_cuts, n, slack)
    cuts = _binary_partition(cache, interval, ok, window)
    account = {
        "interval": [list(i) for i in interval],
        "compute_cuts": list(compute_cuts),
        "memory_cuts": list(memory_cuts),
        "evaluations": cache.evaluations - before,
        "slack": slack,
    }
    return cache.partition(name, cuts, time.perf_counter() - start), account


def _binary_partition(cache: StageCache, interval: list[tuple[int, int]], ok: np.ndarray, window: int) -> tuple:
    """Binary partitioning inside ``interval`` (step 2): the cuts it settles on."""
    count = np.concatenate([[0], np.cumsum(ok)])  # count[p] = allowed positions < p

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

    return solve(0, cache.stages, 0, cache.graph.n)[2]


def greedy_feasible_cuts(cache: StageCache, ok: np.ndarray) -> tuple[int, ...] | None:
    """A partition that fits, or None: each stage in turn takes the longest run of units from where the previous
    one ended that fits (leaving enough positions for the stages after it), found by bisection.

    If every sub-range of a stage that fits also fits (true of static and saved bytes; the greedy swap choice and
    the live count keep it on every case tested), None means that no partition fits: by induction the greedy
    stage x ends at or after the x-th cut of any partition that fits.
    """
    n, S = cache.graph.n, cache.stages
    positions = [int(p) for p in np.nonzero(ok)[0]]
    start, cuts = 0, []
    for x in range(S - 1):
        # stage x may end at any allowed position after its start leaving S - x - 2 more after it; the longest
        # that fits, by bisection (a shorter stage fits when a longer one does)
        ends = [p for p in positions if p > start]
        ends = ends[: len(ends) - (S - x - 2)] if S - x - 2 > 0 else ends
        if not ends or not cache.plan(start, ends[0], x).feasible:
            return None
        lo, hi = 0, len(ends)  # ends[lo] fits; ends[hi] (if any) does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if cache.plan(start, ends[mid], x).feasible else (lo, mid)
        start = ends[lo]
        cuts.append(start)
    return tuple(cuts) if cache.plan(start, n, S - 1).feasible else None


def exact_cuts(cache: StageCache, ok: np.ndarray, upper: float = math.inf) -> tuple[int, ...] | None:
    """The cuts of a partition with the smallest bottleneck stage time (hence iteration time) among those whose
    bottleneck is at most ``upper`` seconds, by the branch-and-bound DP of the module docstring (step 3); None
    when none is (or ``upper`` is not finite: the caller bounds the search first). Stage ``x`` may start at p
    only where ``ok[p]``.
    """
    if not math.isfinite(upper):
        return None
    n, S = cache.graph.n, cache.stages
    prefix = np.concatenate([[0.0], np.cumsum(cache.graph.compute_s)])
    count = np.concatenate([[0], np.cumsum(ok)])  # count[p] = allowed positions < p
    prev_t = np.full(n + 1, math.inf)
    prev_t[0] = 0.0
    prev_p = np.zeros(n + 1)
    back: list[dict[int, int]] = []
    for x in range(S):
        after = S - x - 1  # stages after this one
        if after:  # stage x ends at an allowed position with `after - 1` more allowed ones beyond it
            ends = [j for j in range(1, n) if ok[j] and count[n] - count[j + 1] >= after - 1]
        else:
            ends = [n]
        starts = np.nonzero(prev_t <= upper)[0]
        ends_a = np.asarray(ends, dtype=np.int64)
        if after:  # the rest cannot be faster than its compute spread over the stages after this one
            ends_a = ends_a[prefix[n] - prefix[ends_a] <= after * upper]
        # lower bounds of every (start, end) pair: (starts, ends)
        bound = np.maximum(prev_t[starts][:, None], prefix[ends_a][None, :] - prefix[starts][:, None])
        bound[starts[:, None] >= ends_a[None, :]] = math.inf
        cur_t, cur_p = np.full(n + 1, math.inf), np.zeros(n + 1)
        choice: dict[int, int] = {}
        for col in np.nonzero((bound <= upper).any(axis=0))[0]:
            j = int(ends_a[col])
            for k in np.argsort(bound[:, col], kind="stable"):
                if bound[k, col] > min(cur_t[j], upper):
                    break
                i = int(starts[k])
                plan = cache.plan(i, j, x)
                t, p = max(prev_t[i], plan.time_s), max(prev_p[i], plan.peak_bytes)
                if t <= upper and (t, p) < (cur_t[j], cur_p[j]):
                    cur_t[j], cur_p[j], choice[j] = t, p, i
        back.append(choice)
        prev_t, prev_p = cur_t, cur_p
    if not math.isfinite(prev_t[n]):
        return None
    cuts, j = [], n
    for choice in reversed(back[1:]):
        j = choice[j]
        cuts.append(j)
    return tuple(reversed(cuts))


def inside(cuts: tuple[int, ...], interval: list[tuple[int, int]]) -> bool:
    """True when every cut lies in its interval (the theorem's claim, checked against the exhaustive optimum)."""
    return all(lo <= c <= hi for c, (lo, hi) in zip(cuts, interval, strict=True))
