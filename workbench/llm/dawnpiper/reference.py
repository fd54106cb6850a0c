"""The oracle: every placement of S - 1 cuts among n - 1 positions, judged by the same cost model
(:class:`~workbench.llm.dawnpiper.costs.StageCache`: memory per schedule, swap or recompute per tensor).

``C(n - 1, S - 1)`` partitions: 2,300 for 26 units and 4 stages. Refused above :data:`MAX_PARTITIONS`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence

from workbench.llm.dawnpiper.costs import Partition, StageCache

__all__ = ["MAX_PARTITIONS", "exhaustive"]

MAX_PARTITIONS = 200_000


def exhaustive(cache: StageCache, bounds: Sequence[tuple[int, int]] | None = None) -> Partition:
    """The partition with the smallest iteration time (ties: fewest stage bytes at peak, then first in order);
    with ``bounds`` ((lo, hi) inclusive per cut) only partitions whose cuts lie inside them.

    Raises ValueError when there are more than :data:`MAX_PARTITIONS` partitions or more stages than units.
    """
    n, S = cache.graph.n, cache.stages
    if S > n:
        raise ValueError(f"stages={S} is more than the graph's {n} units: valid stages are 1..{n}")
    count = math.comb(n - 1, S - 1)
    if count > MAX_PARTITIONS:
        raise ValueError(
            f"exhaustive search over {count:,} partitions ({n} units, {S} stages) is above {MAX_PARTITIONS:,}: "
            "use a smaller graph (<= 30 units) or fewer stages (<= 4)"
        )
    start = time.perf_counter()
    best_key, best_cuts = None, None
    for cuts in itertools.combinations(range(1, n), S - 1):
        if bounds is not None and any(not lo <= c <= hi for c, (lo, hi) in zip(cuts, bounds, strict=True)):
            continue
        edges = (0, *cuts, n)
        worst = 0.0
        for x in range(S):
            worst = max(worst, cache.time(edges[x], edges[x + 1], x))
            if best_key is not None and worst > best_key[0]:
                break
        else:
            peak = max(cache.plan(edges[x], edges[x + 1], x).peak_bytes for x in range(S))
            key = (worst, peak)
            if best_key is None or key < best_key:
                best_key, best_cuts = key, cuts
    if best_cuts is None:
        raise ValueError(f"bounds={bounds} admit no partition of {n} units into {S} stages")
    return cache.partition("exhaustive", best_cuts, time.perf_counter() - start)
