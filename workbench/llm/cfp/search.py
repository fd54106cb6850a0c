"""One search: CFP (ParallelBlocks, segments, DP) beside its oracles and baselines, on one graph and mesh.

Every plan is priced by the same :func:`~workbench.llm.cfp.problem.evaluate` (cost model seconds per training
step, memory per device, bytes per device); at paper scale this is a MODEL. "Alpa" is the same ILP with
Alpa's objective (communication and resharding only: compute costs zero) and no replicated computation of
heavy operators (recalled from Alpa, OSDI'22 sec. 4.2), its plan then priced with compute included.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from workbench.llm.cfp.blocks import Blocks, Segments, build_blocks, segments
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.dp import DPResult, solve
from workbench.llm.cfp.graph import Graph, gpt_graph, graph_for
from workbench.llm.cfp.ilp import solve_ilp
from workbench.llm.cfp.plans import assignment_of, data_parallel, megatron
from workbench.llm.cfp.problem import Problem, build_problem, evaluate
from workbench.llm.cfp.reference import brute_force_blocks, brute_force_ops
from workbench.llm.gpt import GPTShape

__all__ = ["graph_of", "PlanCost", "SearchOutcome", "search", "tile", "price_plan", "ilp_plan"]


def graph_of(config: CfpConfig, layers: int | None = None) -> Graph:
    """The graph ``config`` describes (``layers`` overrides the depth)."""
    if config.model == "custom":
        shape = GPTShape(
            layers=config.layers, hidden=config.hidden, heads=config.heads, seq=config.seq, vocab=2,
            ffn_mult=config.ffn_mult,
        )  # fmt: skip
        return gpt_graph(shape, batch=config.batch, layers=layers)
    return graph_for(config.model, batch=config.batch, layers=layers or (config.layers or None))


@dataclass(frozen=True)
class PlanCost:
    """A plan priced by the cost model: seconds per step, bytes per device held and sent, fits the memory limit."""

    name: str
    seconds: float
    memory_bytes: int
    bytes_sent: int
    fits: bool
    search_seconds: float | None = None


def tile(full: Graph, small: Graph, small_assign: list[int], small_problem: Problem, problem: Problem) -> list[int]:
    """Repeat the plan of a shallower graph over every layer of ``full`` (layer i takes layer min(i, Ls-1))."""
    by_name = {op.name: small_problem.strats[i][small_assign[i]] for i, op in enumerate(small.ops)}
    out = []
    for i, op in enumerate(full.ops):
        name = op.name
        if op.layer >= small.layers:
            name = f"l{small.layers - 1}." + name.split(".", 1)[1]
        out.append(problem.strats[i].index(by_name[name]))
    return out


@dataclass
class SearchOutcome:
    """Everything one search produced (the runner's JSON and the study's views are built from it)."""

    graph: Graph
    problem: Problem
    blocks: Blocks
    segments: Segments
    dp: DPResult
    plan: list[int]
    plan_cost: PlanCost
    cfp_seconds: float
    brute_force: PlanCost | None
    brute_force_blocks: PlanCost | None
    ilp: PlanCost | None
    ilp_exact: bool
    alpa: PlanCost | None
    data_parallel: PlanCost | None
    megatron: PlanCost | None
    memory_limit: float
    ilp_status: str = "not run"

    @property
    def profile_runs(self) -> int:
        """Block strategies a profiler must run: one per strategy of each *unique* block."""
        seen = {}
        for h, s in zip(self.blocks.hashes, self.blocks.strats):
            seen[h] = len(s)
        return sum(seen.values())

    @property
    def profile_runs_per_layer(self) -> int:
        """What profiling every block of every layer would run (no segment reuse)."""
        return sum(len(s) for s in self.blocks.strats)


def price_plan(problem: Problem, name: str, assign: list[int], limit: float, secs: float | None = None) -> PlanCost:
    """``assign`` priced by the cost model, labelled ``name``; feasible when its memory fits ``limit``."""
    s, mem, nb = evaluate(problem, assign)
    return PlanCost(name, s, mem, nb, mem <= limit, secs)


def ilp_plan(config: CfpConfig, graph: Graph, problem: Problem, limit: float, *, alpa: bool):
    """The ILP oracle's plan (Alpa's when ``alpa``), solved on ``config.ilp_layers`` layers and tiled to the full
    graph: ``(assignment or None if infeasible or timed out without a plan, seconds, solved on the full graph,
    status)``; status as :class:`~workbench.llm.cfp.ilp.ILPResult`'s."""
    L = graph.layers
    Lr = L if config.ilp_layers in (0,) or config.ilp_layers >= L else config.ilp_layers
    small = graph if Lr == L else graph_of(config, Lr)
    if alpa or Lr != L:
        sp = build_problem(
            small, problem.mesh, config.cluster, itemsize=config.itemsize, compute=not alpa,
            allow_replicated_compute=not alpa,
        )  # fmt: skip
    else:
        sp = problem
    t0 = time.perf_counter()
    res = solve_ilp(sp, memory_limit=limit * Lr / L, time_limit=config.ilp_time_limit_s)
    secs = time.perf_counter() - t0
    if not res.feasible:
        return None, secs, Lr == L, res.status
    assign = res.assignment if sp is problem else tile(graph, small, res.assignment, sp, problem)
    return assign, secs, Lr == L, res.status


def _limit_text(config: CfpConfig) -> str:
    """The memory limit as the user set it: memory_gb, or the cluster's device memory when memory_gb is 0."""
    if config.memory_gb:
        return f"memory_gb={config.memory_gb:g}"
    return f"cluster.gpu_memory_gb={config.cluster.gpu_memory_gb:g} (the device's memory; memory_gb=0)"


def search(config: CfpConfig, *, with_oracles: bool = True) -> SearchOutcome:
    """Price the graph, build blocks and segments, run the DP, then the oracles and baselines.

    Raises ValueError when no plan fits the memory limit; a baseline the sizes do not allow (or an empty Alpa
    space) is reported as None."""
    graph = graph_of(config)
    mesh = config.mesh_shape
    limit = config.memory_limit_bytes
    problem = build_problem(graph, mesh, config.cluster, itemsize=config.itemsize)
    t0 = time.perf_counter()
    blocks = build_blocks(problem)
    segs = segments(blocks)
    dp = solve(blocks, memory_limit=limit)
    cfp_seconds = time.perf_counter() - t0
    if not dp.feasible:
        raise ValueError(
            f"{_limit_text(config)} leaves no feasible plan: even the least memory per device exceeds "
            f"{limit / 1e9:.3g} GB; raise the limit, add gpus or shrink the model/batch"
        )
    plan = blocks.expand(dp.choice, len(graph.ops))
    plan_cost = price_plan(problem, "cfp", plan, limit, cfp_seconds)
    bf = bfb = ilp = alpa = None
    ilp_exact, ilp_status = False, "not run"
    if with_oracles and config.brute_force_limit:
        if math.prod(len(s) for s in problem.strats) <= config.brute_force_limit:
            r = brute_force_ops(problem, memory_limit=limit, max_combinations=config.brute_force_limit)
            bf = price_plan(problem, "brute-force", r.assignment, limit, r.seconds) if r.assignment else None
        if math.prod(len(s) for s in blocks.strats) <= config.brute_force_limit:
            r = brute_force_blocks(problem, blocks, memory_limit=limit, max_combinations=config.brute_force_limit)
            bfb = price_plan(problem, "brute-force-blocks", r.assignment, limit, r.seconds) if r.assignment else None
    if with_oracles and config.ilp:
        a, secs, ilp_exact, ilp_status = ilp_plan(config, graph, problem, limit, alpa=False)
        ilp = price_plan(problem, "ilp", a, limit, secs) if a else None
        try:
            a, secs, _, _ = ilp_plan(config, graph, problem, limit, alpa=True)
        except ValueError:  # some heavy operator cannot be split on every axis: Alpa's space is empty
            a, secs = None, 0.0
        alpa = price_plan(problem, "alpa", a, limit, secs) if a else None
    base = {}
    for name, fn in (("data-parallel", data_parallel), ("megatron", megatron)):
        try:
            base[name] = price_plan(problem, name, assignment_of(problem, fn(graph, mesh.ndim), name), limit)
        except ValueError:
            base[name] = None
    return SearchOutcome(
        graph, problem, blocks, segs, dp, plan, plan_cost, cfp_seconds, bf, bfb, ilp, ilp_exact, alpa,
        base["data-parallel"], base["megatron"], limit, ilp_status,
    )  # fmt: skip
