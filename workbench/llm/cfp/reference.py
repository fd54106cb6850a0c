"""Brute force: the slow, obvious oracles of the DP and the ILP on small graphs.

- :func:`brute_force_ops`: every combination of per-operator strategies (the full space the ILP searches);
- :func:`brute_force_blocks`: every combination of block strategies (the space the DP searches).
Both keep the cheapest plan whose memory fits; ties keep the first found. Both refuse spaces larger than
``max_combinations``.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

from workbench.llm.cfp.blocks import Blocks
from workbench.llm.cfp.problem import Problem, evaluate

__all__ = ["BruteResult", "brute_force_ops", "brute_force_blocks"]


@dataclass
class BruteResult:
    assignment: list[int]
    cost: float
    combinations: int
    seconds: float


def _check(n: int, max_combinations: int) -> None:
    if n > max_combinations:
        raise ValueError(
            f"the space has {n:,} combinations, above max_combinations={max_combinations:,}: use a smaller graph"
        )


def brute_force_ops(
    problem: Problem, *, memory_limit: float | None = None, max_combinations: int = 2_000_000
) -> BruteResult:
    """The optimum over all per-operator strategy combinations (ops enumerated in order)."""
    t0 = time.perf_counter()
    sizes = [len(s) for s in problem.strats]
    n = math.prod(sizes)
    _check(n, max_combinations)
    limit = math.inf if memory_limit is None else memory_limit
    best, best_a = math.inf, []
    for a in itertools.product(*(range(k) for k in sizes)):
        secs, mem, _ = evaluate(problem, list(a))
        if mem <= limit and secs < best:
            best, best_a = secs, list(a)
    return BruteResult(best_a, best, n, time.perf_counter() - t0)


def brute_force_blocks(
    problem: Problem, blocks: Blocks, *, memory_limit: float | None = None, max_combinations: int = 2_000_000
) -> BruteResult:
    """The optimum over all block-strategy combinations, priced per operator by :func:`evaluate`."""
    t0 = time.perf_counter()
    sizes = [len(s) for s in blocks.strats]
    n = math.prod(sizes)
    _check(n, max_combinations)
    limit = math.inf if memory_limit is None else memory_limit
    best, best_a = math.inf, []
    for c in itertools.product(*(range(k) for k in sizes)):
        a = blocks.expand(list(c), len(problem.graph.ops))
        secs, mem, _ = evaluate(problem, a)
        if mem <= limit and secs < best:
            best, best_a = secs, a
    return BruteResult(best_a, best, n, time.perf_counter() - t0)
