"""A counting session on one graph: plan choice by the cost model, the shrinkage recursion, memoised
sub-counts shared across patterns (application-wide reuse), and the vertex-induced transform.

:class:`Miner` relabels the graph by degree once, measures its statistics once, and then answers
``count(pattern, induced, engine)``:

- ``engine="decompose"`` (DwarvesGraph): for each pattern the cost model ranks every decomposition
  (:func:`.decompose.decompositions`) and every plain enumeration order, the cheapest runs; shrinkage
  patterns recurse; vertex-induced counts come from edge-induced counts of the supergraphs
  (:mod:`.induced`). Every sub-count is memoised by canonical form, so motif sets reuse them.
- ``engine="enumerate"``: plain enumeration of the pattern itself (vertex-induced with anti-edges).

Unlabelled cliques (triangle, 4-clique, ...) have no decomposition; the decomposition engine counts them,
and every clique shrinkage, with the dedicated kernels of :mod:`.cliques` over the degree-oriented DAG.

Every executed kernel is logged as a :class:`Step` (plan, predicted and measured seconds, compile seconds).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Literal

from workbench.graphs.cliques import MAX_FORWARD, CliqueIndex, count_cliques
from workbench.graphs.cliques import warm as warm_cliques
from workbench.graphs.compiler import KernelPlan, generate_source
from workbench.graphs.cost_model import GraphStats, plan_cost, predict_seconds, sample_seconds
from workbench.graphs.decompose import Decomposition, decompositions
from workbench.graphs.decompose import cutting_sets as cutting_sets_of
from workbench.graphs.enumerate import Schedule, connected_orders, schedule_plan, symmetry_restrictions
from workbench.graphs.graph import Graph
from workbench.graphs.induced import supergraphs
from workbench.graphs.kernels import compile_plan, precompile, run_kernel
from workbench.graphs.patterns import Pattern, motifs

__all__ = ["Miner", "PlanChoice", "Step", "CountResult"]

log = logging.getLogger(__name__)
Engine = Literal["decompose", "enumerate"]


@dataclass(frozen=True)
class PlanChoice:
    """A candidate way to compute inj(pattern): plain enumeration, a decomposition, or the clique kernel.

    ``units``: the cost model's work units of its own kernel; ``total_units`` adds the shrinkage patterns
    not yet counted in this session. A ``"clique"`` choice runs :func:`.cliques.count_cliques`; its
    ``kernel`` is the clique's plain enumeration plan, kept only as the cost model's (pessimistic) proxy.
    """

    pattern: Pattern
    kind: Literal["enumerate", "decompose", "clique"]
    kernel: KernelPlan
    units: float
    total_units: float
    schedule: Schedule | None = None
    decomposition: Decomposition | None = None

    def describe(self) -> str:
        if self.kind == "clique":
            return f"clique: {self.pattern.k}-clique kernel over the degree-oriented DAG (bitsets)"
        if self.schedule is not None:
            return f"enumerate: {self.schedule.describe()}"
        return f"decompose: {self.decomposition.describe()}"


@dataclass(frozen=True)
class Step:
    """One kernel run: which pattern, how, predicted vs measured seconds, compile seconds, its result."""

    pattern: str
    plan: str
    inj: int
    seconds: float
    predicted_seconds: float
    compile_seconds: float


@dataclass
class CountResult:
    """The count of a pattern, with its plan and the session steps it took.

    ``seconds``: wall time of the count without compiling and planning (kernels plus Python glue);
    ``compile_seconds``: numba compile or disk-cache loads; ``plan_seconds``: cost-model plan search.
    """

    pattern: Pattern
    induced: str
    engine: str
    count: int
    plan: str
    seconds: float
    compile_seconds: float
    predicted_seconds: float
    steps: list[Step] = field(default_factory=list)
    plan_seconds: float = 0.0


class Miner:
    """Pattern counting on one graph (see module docstring).

    Args:
        graph: any :class:`Graph`; it is relabelled by degree internally (counts do not change).
        workers: threads per kernel.
        cost_model: ``"stats"`` (degree statistics only) or ``"sample"`` (degree statistics shortlist the
            3 best plans, which are then compiled and timed on a sample of roots).
        ordered: pass True when ``graph`` is already :meth:`Graph.by_degree`.
    """

    def __init__(
        self,
        graph: Graph,
        *,
        workers: int = 1,
        cost_model: Literal["stats", "sample"] = "stats",
        ordered: bool = False,
        cache_dir: str | None = None,
    ):
        if cost_model not in ("stats", "sample"):
            raise ValueError(f"cost_model={cost_model!r} is not allowed: valid values are 'stats', 'sample'")
        self.graph = graph if ordered else graph.by_degree()
        self.workers = workers
        self.cost_model = cost_model
        self.cache_dir = cache_dir
        self._stats: GraphStats | None = None
        self._inj: dict[tuple, int] = {}
        self._plan: dict[tuple, PlanChoice] = {}
        self.steps: list[Step] = []
        self.plan_seconds = 0.0  # spent in plan searches (outermost calls)
        self.precompile_seconds = 0.0
        self._planning = 0
        self._schedules: dict[tuple, Schedule] = {}
        self._cliques: CliqueIndex | None = None

    @property
    def stats(self) -> GraphStats:
        """Degree statistics of the graph (measured on first use: single-candidate patterns never need them)."""
        if self._stats is None:
            self._stats = GraphStats.of(self.graph)
        return self._stats

    @stats.setter
    def stats(self, value: GraphStats) -> None:
        self._stats = value

    @property
    def clique_index(self) -> CliqueIndex:
        """The degree-oriented DAG the clique kernels read (built on first use, once per session)."""
        if self._cliques is None:
            self._cliques = CliqueIndex.of(self.graph)
        return self._cliques

    # ---- planning -----------------------------------------------------------------------------------
    def enumeration_choices(self, pattern: Pattern, *, cost: bool = True) -> list[PlanChoice]:
        """Plain enumeration with every (greedy) connected matching order whose kernel differs, cheapest first
        (orders that generate the same code, e.g. of a clique, are one candidate). ``cost=False`` leaves the
        units NaN (no graph statistics needed)."""
        plans: dict[str, tuple[Schedule, KernelPlan]] = {}
        for order in connected_orders(pattern, greedy=True):
            s = Schedule(pattern, order, "edge", symmetry_restrictions(pattern, order))
            plan = schedule_plan(s)
            plans.setdefault(generate_source(plan)[0], (s, plan))
        out = []
        for s, plan in plans.values():
            units = plan_cost(plan, self.stats) if cost else float("nan")
            out.append(PlanChoice(pattern, "enumerate", plan, units, units, schedule=s))
        return sorted(out, key=lambda c: c.total_units) if cost else out

    def candidates(self, pattern: Pattern, *, decompose: bool = True) -> list[PlanChoice]:
        """Every candidate plan for inj(pattern), cheapest (by the degree-statistics model, shrinkage
        patterns included) first."""
        out = self.enumeration_choices(pattern)[:3]
        if decompose:
            for d in decompositions(pattern, lambda plan: plan_cost(plan, self.stats)):
                units = plan_cost(d.kernel, self.stats)
                extra = sum(self._future_units(q) for q, _ in d.shrinkages)
                out.append(PlanChoice(pattern, "decompose", d.kernel, units, units + extra, decomposition=d))
        return sorted(out, key=lambda c: c.total_units)

    def _future_units(self, pattern: Pattern) -> float:
        """Units still to spend on inj(pattern): 0 when memoised, else its best plan's total."""
        if pattern.canonical in self._inj or (pattern.k <= 2 and pattern.labels is None):
            return 0.0
        choice = self.plan(pattern)
        if choice.total_units != choice.total_units:  # chosen without the model (single candidate): cost it now
            # (a clique: its plain enumeration's cost, an upper bound on the clique kernel's)
            return plan_cost(choice.kernel, self.stats)
        return choice.total_units

    def plan(self, pattern: Pattern) -> PlanChoice:
        """The chosen plan for inj(pattern) (memoised per canonical form)."""
        key = pattern.canonical
        if key not in self._plan:
            self._planning += 1
            start = time.perf_counter()
            try:
                self._plan[key] = self._choose(pattern)
            finally:
                self._planning -= 1
                if not self._planning:
                    self.plan_seconds += time.perf_counter() - start
        return self._plan[key]

    def _choose(self, pattern: Pattern) -> PlanChoice:
        """Cheapest candidate by the degree-statistics model, or (cost_model="sample") by timing the best
        three on a sample of roots (their compile time is not part of the estimate). An unlabelled clique
        takes the clique kernel (unless a forward list is too long for it); another pattern with a single
        possible kernel is planned without the model."""
        if self._clique_kernel_fits(pattern):
            return PlanChoice(pattern, "clique", _clique_proxy(pattern), float("nan"), float("nan"))
        if not cutting_sets_of(pattern):
            single = self.enumeration_choices(pattern, cost=False)
            if len(single) == 1:
                return single[0]
        cands = self.candidates(pattern)
        if self.cost_model == "sample" and self.graph.n > 0:
            timed = []
            for c in cands[:3]:
                kernel = compile_plan(c.kernel, self.cache_dir)
                secs = sample_seconds(kernel, self.graph, workers=self.workers)
                timed.append((secs + predict_seconds(c.total_units - c.units), c))
            return min(timed, key=lambda t: t[0])[1]
        return cands[0]

    def _clique_kernel_fits(self, pattern: Pattern) -> bool:
        """Whether ``pattern`` is an unlabelled k-clique (k >= 3) the clique kernels can count here."""
        k = pattern.k
        if pattern.labels is not None or k < 3 or pattern.m != k * (k - 1) // 2:
            return False
        # a forward list is never longer than the row: build the index here only for graphs with huge hubs
        return k == 3 or self.graph.max_degree <= MAX_FORWARD or self.clique_index.max_forward <= MAX_FORWARD

    # ---- counting -------------------------------------------------------------------------------------
    def _run_clique(self, k: int) -> tuple[int, float, float]:
        """k-cliques by :func:`.cliques.count_cliques`: (count, seconds, compile/load seconds)."""
        comp = warm_cliques()
        start = time.perf_counter()
        total = count_cliques(self.graph, k, workers=self.workers, index=self.clique_index)
        return total, time.perf_counter() - start, comp

    def _run(self, choice: PlanChoice) -> tuple[int, float, float]:
        kernel = compile_plan(choice.kernel, self.cache_dir)
        start = time.perf_counter()
        total = run_kernel(kernel, self.graph, workers=self.workers)
        return total, time.perf_counter() - start, kernel.compile_seconds

    def inj(self, pattern: Pattern) -> int:
        """Injective homomorphisms of ``pattern`` into the graph (memoised)."""
        key = pattern.canonical
        if key in self._inj:
            return self._inj[key]
        g = self.graph
        if pattern.labels is None and pattern.k == 1:
            value = g.n
        elif pattern.labels is None and pattern.k == 2:
            value = 2 * g.m
        else:
            value = self.inj_with(self.plan(pattern))
        self._inj[key] = value
        return value

    def inj_with(self, choice: PlanChoice) -> int:
        """inj(choice.pattern) computed with this particular plan (shrinkages with the session's plans);
        not memoised, so every candidate can be checked against the others."""
        pattern = choice.pattern
        if choice.kind == "clique":
            raw, secs, comp = self._run_clique(pattern.k)
            value = raw * math.factorial(pattern.k)  # every ordering of a clique's vertices is an embedding
        elif choice.kind == "enumerate":
            raw, secs, comp = self._run(choice)
            value = raw * pattern.n_automorphisms
        else:
            d = choice.decomposition
            assert d is not None  # a decompose choice carries its decomposition
            sub = sum(mult * self.inj(q) for q, mult in d.shrinkages)
            raw, secs, comp = self._run(choice)
            value = raw * d.symmetry - sub
        predicted = predict_seconds(choice.units) if choice.units == choice.units else float("nan")
        self.steps.append(Step(pattern.label, choice.describe(), value, secs, predicted, comp))
        log.debug("inj(%s) = %d by %s in %.3f s", pattern.label, value, choice.describe(), secs)
        return value

    def count(self, pattern: Pattern, induced: str = "edge", engine: Engine = "decompose") -> CountResult:
        """The edge- or vertex-induced count of ``pattern`` (see :mod:`.patterns` for the conventions)."""
        if induced not in ("edge", "vertex"):
            raise ValueError(f"induced={induced!r} is not allowed: valid values are 'edge', 'vertex'")
        if engine not in ("decompose", "enumerate"):
            raise ValueError(f"engine={engine!r} is not allowed: valid values are 'decompose', 'enumerate'")
        first = len(self.steps)
        plan0, pre0 = self.plan_seconds, self.precompile_seconds
        start = time.perf_counter()
        if engine == "enumerate" or pattern.labels is not None and induced == "vertex":
            value, plan = self._enumerate(pattern, induced)
        elif induced == "edge":
            value = self.inj(pattern) // pattern.n_automorphisms
            plan = self.plan(pattern).describe() if pattern.k > 2 else "closed form (n or m)"
        else:
            parts = supergraphs(pattern)
            value = sum(coef * (self.inj(q) // q.n_automorphisms) for q, coef in parts)
            plan = (
                "V = "
                + " ".join(f"{coef:+d}*E({q.label})" for q, coef in parts)
                + f"; E({pattern.label}) by {self.plan(pattern).describe() if pattern.k > 2 else 'closed form'}"
            )
        steps = self.steps[first:]
        wall = time.perf_counter() - start
        comp = sum(s.compile_seconds for s in steps) + self.precompile_seconds - pre0
        planning = self.plan_seconds - plan0
        predicted = sum(s.predicted_seconds for s in steps if s.predicted_seconds == s.predicted_seconds)
        return CountResult(
            pattern, induced, engine, value, plan, max(wall - comp - planning, 0.0), comp, predicted, steps, planning
        )

    def enumeration_schedule(self, pattern: Pattern, induced: str) -> Schedule:
        """The plain-enumeration schedule of the ``enumerate`` engine: the cheapest greedy order by the
        model (no statistics needed when every order generates the same kernel, e.g. cliques)."""
        key = (pattern.canonical, pattern.edges, induced)
        if key not in self._schedules:
            start = time.perf_counter()
            scheds: dict[str, Schedule] = {}
            for o in connected_orders(pattern, greedy=True):
                s = Schedule(pattern, o, induced, symmetry_restrictions(pattern, o))
                scheds.setdefault(generate_source(schedule_plan(s))[0], s)
            options = list(scheds.values())
            self._schedules[key] = (
                options[0] if len(options) == 1 else min(options, key=lambda s: plan_cost(schedule_plan(s), self.stats))
            )
            self.plan_seconds += time.perf_counter() - start
        return self._schedules[key]

    def _enumerate(self, pattern: Pattern, induced: str) -> tuple[int, str]:
        if pattern.k == 1 and pattern.labels is None:
            return self.graph.n, "closed form (n)"
        best = self.enumeration_schedule(pattern, induced)
        plan = schedule_plan(best)
        kernel = compile_plan(plan, self.cache_dir)
        start = time.perf_counter()
        value = run_kernel(kernel, self.graph, workers=self.workers)
        secs = time.perf_counter() - start
        predicted = predict_seconds(plan_cost(plan, self.stats)) if self._stats is not None else float("nan")
        self.steps.append(
            Step(
                pattern.label,
                f"enumerate: {best.describe()}",
                value * pattern.n_automorphisms,
                secs,
                predicted,
                kernel.compile_seconds,
            )
        )
        return value, f"enumerate: {best.describe()}"

    def needed_plans(
        self, patterns: list[Pattern], induced: str = "edge", engine: Engine = "decompose"
    ) -> list[KernelPlan]:
        """Kernel plans that counting ``patterns`` with ``engine`` will run (shrinkages and supergraphs
        included), for :meth:`prepare`; sub-counts the session already has are left out, and so are cliques
        counted by the clique kernel (compiled with its module, see :meth:`prepare`)."""
        if engine == "enumerate":
            return [schedule_plan(self.enumeration_schedule(p, induced)) for p in patterns if p.k > 1]
        todo = list(patterns)
        if induced == "vertex":
            todo = [q for p in patterns for q, _ in supergraphs(p)]
        seen: set = set()
        plans = []
        while todo:
            p = todo.pop()
            if p.canonical in seen or p.canonical in self._inj or (p.labels is None and p.k <= 2):
                continue
            seen.add(p.canonical)
            choice = self.plan(p)
            if choice.kind == "clique":
                continue
            plans.append(choice.kernel)
            if choice.decomposition is not None:
                todo += [q for q, _ in choice.decomposition.shrinkages]
        return plans

    def prepare(
        self,
        patterns: list[Pattern],
        induced: str = "edge",
        engine: Engine = "decompose",
        *,
        processes: int | None = None,
    ) -> float:
        """Plan every pattern and compile all kernels on ``processes`` (default ``workers``) processes
        before counting (the clique kernels too, when a plan uses them); returns the compile wall seconds
        (0 when everything is cached)."""
        plans = self.needed_plans(patterns, induced, engine)
        seconds = precompile(plans, processes=processes or self.workers, cache_dir=self.cache_dir)
        if any(c.kind == "clique" for c in self._plan.values()):
            seconds += warm_cliques()
        self.precompile_seconds += seconds
        return seconds

    def motif_counts(self, k: int, induced: str = "vertex", engine: Engine = "decompose") -> list[CountResult]:
        """Counts of every connected k-vertex pattern (:func:`.patterns.motifs`), in motif order; all kernels
        are planned and compiled first (in parallel on ``workers`` processes)."""
        self.prepare(list(motifs(k)), induced, engine)
        return [self.count(p, induced, engine) for p in motifs(k)]


@functools.lru_cache(maxsize=16)
def _clique_proxy(pattern: Pattern) -> KernelPlan:
    """The plain enumeration plan of a clique (every order gives the same kernel): the cost model's proxy
    for the clique kernel."""
    order = connected_orders(pattern, greedy=True)[0]
    return schedule_plan(Schedule(pattern, order, "edge", symmetry_restrictions(pattern, order)))
