"""Plain pattern enumeration: matching order + symmetry-breaking restrictions + sorted-set intersections.

This is the baseline engine (AutoMine/GraphPi-style) and the fallback for patterns that do not decompose
(cliques). A :class:`Schedule` fixes

- ``order``: the pattern vertices in matching order (every prefix connected);
- ``restrictions``: pairs ``(a, b)`` meaning ``phi(a) > phi(b)``, generated from the automorphism group
  (Grochow & Kellis, RECOMB 2007: fix the first vertex of a non-trivial orbit below its orbit, recurse on
  the stabiliser), so every subgraph is found exactly once and ``count = inj / |Aut(p)|`` without dividing;
- per level: the *parents* (earlier vertices adjacent to it: intersect their neighbour lists), the *anti*
  vertices (vertex-induced only: earlier non-adjacent ones, subtract their lists), the bounds from the
  restrictions, and the earlier vertices it must differ from.

:meth:`Schedule.candidates` computes one level's candidate set from any neighbour-list accessor; that is
the whole semantics, used by :func:`count_reference` (pure Python) and meant for engines that fetch
neighbour lists themselves (a distributed engine passes its remote-fetching accessor). :func:`count`
runs the same schedule as a compiled numba loop nest (:mod:`.compiler`).

Example::

    >>> from workbench.graphs.generators import grid
    >>> from workbench.graphs.patterns import parse_pattern
    >>> count(grid(3, 3), parse_pattern("4-cycle")).count
    4
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.graphs.compiler import Bind, KernelPlan, describe_plan
from workbench.graphs.cost_model import GraphStats, plan_cost
from workbench.graphs.graph import Graph
from workbench.graphs.kernels import compile_plan, run_kernel
from workbench.graphs.patterns import Pattern

__all__ = [
    "Schedule",
    "EnumerationResult",
    "symmetry_restrictions",
    "connected_orders",
    "make_schedule",
    "enumeration_cost",
    "count",
    "count_reference",
    "schedule_plan",
]

Induced = Literal["edge", "vertex"]


def symmetry_restrictions(pattern: Pattern, order: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Restrictions ``(a, b)`` = ``phi(a) > phi(b)`` that keep one embedding per automorphism orbit.

    For each vertex ``v`` in matching order: every other vertex ``w`` of v's orbit under the current group
    gets ``phi(v) > phi(w)``; the group becomes v's stabiliser. ``w`` always comes after ``v`` in ``order``
    (earlier vertices are fixed by the stabiliser), so each restriction is an upper bound on a later level.
    """
    group = list(pattern.automorphisms)
    out = []
    for v in order:
        for w in sorted({s[v] for s in group} - {v}):
            out.append((v, w))
        group = [s for s in group if s[v] == v]
    return tuple(out)


def connected_orders(pattern: Pattern, *, greedy: bool = False) -> list[tuple[int, ...]]:
    """Vertex orders whose prefixes induce connected subpatterns.

    ``greedy=True`` keeps only "most constrained first" orders (each next vertex has the most bound
    neighbours, ties broken every way; the first vertex has the highest degree): far fewer candidates for
    6- and 7-vertex patterns, and they contain the cheapest orders in practice (AutoMine/Peregrine's rule).
    """
    if not greedy:
        return [
            order
            for order in itertools.permutations(range(pattern.k))
            if all(any(pattern.has_edge(order[i], order[j]) for j in range(i)) for i in range(1, pattern.k))
        ]
    top = max(pattern.degree(v) for v in range(pattern.k))
    out: list[tuple[int, ...]] = []

    def grow(order: tuple[int, ...]) -> None:
        if len(order) == pattern.k:
            out.append(order)
            return
        links = {v: sum(pattern.has_edge(v, u) for u in order) for v in range(pattern.k) if v not in order}
        best = max(links.values())
        for v, n in links.items():
            if n == best:
                grow(order + (v,))

    for v in range(pattern.k):
        if pattern.degree(v) == top:
            grow((v,))
    return out


@dataclass(frozen=True)
class Schedule:
    """A matching order with restrictions for ``pattern`` (see module docstring)."""

    pattern: Pattern
    order: tuple[int, ...]
    induced: Induced = "edge"
    restrictions: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if sorted(self.order) != list(range(self.pattern.k)):
            raise ValueError(f"order {self.order} is not a permutation of the pattern's vertices")
        if self.induced not in ("edge", "vertex"):
            raise ValueError(f"induced={self.induced!r} is not allowed: valid values are 'edge', 'vertex'")

    @property
    def k(self) -> int:
        return self.pattern.k

    def parents(self, level: int) -> tuple[int, ...]:
        """Earlier levels adjacent to ``level`` (positions in ``order``)."""
        v = self.order[level]
        return tuple(j for j in range(level) if self.pattern.has_edge(v, self.order[j]))

    def anti(self, level: int) -> tuple[int, ...]:
        """Earlier levels that must not be adjacent (vertex-induced only)."""
        if self.induced == "edge":
            return ()
        v = self.order[level]
        return tuple(j for j in range(level) if not self.pattern.has_edge(v, self.order[j]))

    @functools.cached_property
    def _pos(self) -> dict[int, int]:
        return {v: i for i, v in enumerate(self.order)}

    def upper(self, level: int) -> tuple[int, ...]:
        """Earlier levels j with ``emb[level] < emb[j]``."""
        pos = self._pos
        return tuple(sorted(pos[a] for a, b in self.restrictions if pos[b] == level and pos[a] < level))

    def lower(self, level: int) -> tuple[int, ...]:
        """Earlier levels j with ``emb[level] > emb[j]``."""
        pos = self._pos
        return tuple(sorted(pos[b] for a, b in self.restrictions if pos[a] == level and pos[b] < level))

    def distinct(self, level: int) -> tuple[int, ...]:
        """Earlier levels whose vertex could fall in the candidate set and must be excluded."""
        implied = set(self.parents(level)) | set(self.upper(level)) | set(self.lower(level))
        return tuple(j for j in range(level) if j not in implied)

    def candidates(self, level: int, emb: Sequence[int], neighbors: Callable[[int], np.ndarray]) -> np.ndarray:
        """Sorted candidates for ``emb[level]`` given ``emb[:level]`` (data vertices) and a neighbour accessor.

        Level 0 has no parents; callers choose its vertices (all of them, or a partition's share).
        """
        parents = self.parents(level)
        if not parents:
            raise ValueError("level 0 has no candidate set: iterate the root vertices directly")
        cand = neighbors(emb[parents[0]])
        for j in parents[1:]:
            cand = np.intersect1d(cand, neighbors(emb[j]), assume_unique=True)
        for j in self.anti(level):
            cand = np.setdiff1d(cand, neighbors(emb[j]), assume_unique=True)
        hi = min((emb[j] for j in self.upper(level)), default=None)
        lo = max((emb[j] for j in self.lower(level)), default=None)
        if hi is not None:
            cand = cand[cand < hi]
        if lo is not None:
            cand = cand[cand > lo]
        if self.pattern.labels is not None:
            raise ValueError("candidates(): labelled patterns need the labels array; use count()")
        drop = [emb[j] for j in self.distinct(level)]
        return cand[~np.isin(cand, drop)] if drop else cand

    def binds(self) -> tuple[Bind, ...]:
        """The schedule as compiler binds (pattern vertices, not positions)."""
        o = self.order
        lab = self.pattern.labels
        return tuple(
            Bind(
                vertex=o[i],
                parents=tuple(o[j] for j in self.parents(i)),
                anti=tuple(o[j] for j in self.anti(i)),
                lower=tuple(o[j] for j in self.lower(i)),
                upper=tuple(o[j] for j in self.upper(i)),
                distinct=tuple(o[j] for j in self.distinct(i)),
                label=lab[o[i]] if lab else -1,
            )
            for i in range(self.k)
        )

    def describe(self) -> str:
        r = ", ".join(f"v{a}>v{b}" for a, b in self.restrictions)
        return f"order {list(self.order)}" + (f", restrictions {r}" if r else "") + f", {self.induced}-induced"


def schedule_plan(schedule: Schedule, *, hoist: bool = True) -> KernelPlan:
    return KernelPlan(cut=schedule.binds(), hoist=hoist)


def enumeration_cost(stats: GraphStats, schedule: Schedule) -> float:
    """Work units (:func:`.cost_model.plan_cost`) of ``schedule`` run as a plain enumeration."""
    return plan_cost(schedule_plan(schedule), stats)


def make_schedule(
    pattern: Pattern, induced: Induced = "edge", *, graph: Graph | None = None, order: Sequence[int] | None = None
) -> Schedule:
    """A schedule for ``pattern``: the given ``order``, or the cheapest connected order by the degree-statistics
    cost model on ``graph`` (without a graph: highest pattern degree first, then most parents)."""
    if order is not None:
        order = tuple(order)
        return Schedule(pattern, order, induced, symmetry_restrictions(pattern, order))
    orders = connected_orders(pattern, greedy=True)
    if graph is None:

        def key(o):
            return tuple(-len([j for j in range(i) if pattern.has_edge(o[i], o[j])]) for i in range(len(o)))

        best = min(orders, key=lambda o: (-pattern.degree(o[0]), key(o)))
        return Schedule(pattern, best, induced, symmetry_restrictions(pattern, best))
    stats = GraphStats.of(graph)
    scheds = [Schedule(pattern, o, induced, symmetry_restrictions(pattern, o)) for o in orders]
    return min(scheds, key=lambda s: (enumeration_cost(stats, s), s.order))


@dataclass(frozen=True)
class EnumerationResult:
    """Count of ``schedule.pattern`` (each subgraph once), with timing and the plan text."""

    count: int
    schedule: Schedule
    seconds: float
    compile_seconds: float
    plan: str


def count(
    graph: Graph,
    pattern: Pattern,
    induced: Induced = "edge",
    *,
    workers: int = 1,
    schedule: Schedule | None = None,
    hoist: bool = True,
) -> EnumerationResult:
    """Count ``pattern`` in ``graph`` by compiled enumeration (edge- or vertex-induced; see :mod:`.patterns`).

    ``graph`` should be degree-ordered (:meth:`Graph.by_degree`) for speed; the count does not depend on it.
    Labelled patterns match ``graph.labels``.
    """
    if pattern.labels is not None and graph.labels is None:
        raise ValueError("pattern has labels but the graph has none")
    schedule = schedule or make_schedule(pattern, induced, graph=graph)
    kernel = compile_plan(schedule_plan(schedule, hoist=hoist))
    start = time.perf_counter()
    total = run_kernel(kernel, graph, workers=workers)
    return EnumerationResult(
        total,
        schedule,
        time.perf_counter() - start,
        kernel.compile_seconds,
        f"{describe_plan(schedule_plan(schedule))} ({schedule.describe()})",
    )


def count_reference(graph: Graph, schedule: Schedule, roots: Sequence[int] | None = None) -> int:
    """The same count by a pure-Python depth-first walk over :meth:`Schedule.candidates` (slow; for tests
    and as the semantics other engines must reproduce)."""
    labels = schedule.pattern.labels

    def ok(level: int, v: int) -> bool:
        return labels is None or graph.labels[v] == labels[schedule.order[level]]

    def walk(emb: list[int]) -> int:
        level = len(emb)
        if level == schedule.k:
            return 1
        cands = (
            schedule.candidates(level, emb, graph.neighbors)
            if labels is None
            else _labelled(schedule, level, emb, graph)
        )
        return sum(walk(emb + [int(v)]) for v in cands if ok(level, int(v)))

    return sum(walk([int(r)]) for r in (range(graph.n) if roots is None else roots) if ok(0, int(r)))


def _labelled(schedule: Schedule, level: int, emb: list[int], graph: Graph) -> np.ndarray:
    plain = Schedule(
        Pattern(schedule.k, schedule.pattern.edges), schedule.order, schedule.induced, schedule.restrictions
    )
    return plain.candidates(level, emb, graph.neighbors)
