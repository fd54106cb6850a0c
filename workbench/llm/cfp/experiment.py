"""CFP's orchestration, shared by the runner and the study: real runs of plans, the Alpa comparison at paper scale
and the profile-driven search (memoised where it is a pure function of frozen arguments).

- :func:`check_plans`: the CFP, data-parallel and Megatron plans run for real on gloo processes;
- :func:`alpa_assignment`, :func:`alpa_speedup`: CFP's plan against the Alpa-objective ILP's (cost MODEL);
- :func:`profile_vs_model`: CFP's search driven by profiled block seconds (every strategy of each unique block
  run on gloo processes, CFP v1's profiling) beside the same search on the analytic cost model.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from workbench.cluster import PRESETS, ClusterSpec
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.dp import solve
from workbench.llm.cfp.execute import CheckSpec, run_check
from workbench.llm.cfp.plans import assignment_of, data_parallel, megatron
from workbench.llm.cfp.problem import evaluate
from workbench.llm.cfp.profile import calibrate_cluster, profile_blocks, profiled_blocks
from workbench.llm.cfp.search import SearchOutcome, ilp_plan, price_plan, search
from workbench.llm.gpt import GPTConfig

__all__ = [
    "PlanEntry",
    "PlanCheck",
    "plan_entries",
    "check_plans",
    "alpa_assignment",
    "alpa_speedup",
    "ProfileComparison",
    "profile_vs_model",
    "clear_caches",
]

#: the workbench's default cluster (equal to ``ClusterSpec()``)
DEFAULT_CLUSTER: ClusterSpec = PRESETS["h800-sxm-nvlink-ib"]


@dataclass(frozen=True, kw_only=True)
class PlanEntry:
    """One operator of the plan: its name, its strategy per mesh axis (index split, '-' replicate), its block."""

    op: str
    strategy: str
    block: int


@dataclass(frozen=True, kw_only=True)
class PlanCheck:
    """One plan run for real: max abs errors vs the unsharded model, bytes each rank sent, the model's bytes."""

    plan: str
    max_abs_err_out: float
    max_abs_err_grad: float
    max_abs_err_param_grad: float
    bytes_per_rank: list[int]
    model_bytes_per_rank: int
    bytes_match: bool


def strategy_text(st: tuple) -> str:
    """A strategy as text: the index each mesh axis splits, '-' where it replicates."""
    return ",".join("-" if c is None else c for c in st)


def plan_entries(out: SearchOutcome) -> list[PlanEntry]:
    """CFP's plan of ``out``, one entry per operator."""
    block_of = {i: k for k, members in enumerate(out.blocks.ops) for i in members}
    p = out.problem
    return [
        PlanEntry(op=op.name, strategy=strategy_text(p.strats[i][out.plan[i]]), block=block_of[i])
        for i, op in enumerate(out.graph.ops)
    ]


def check_plans(config: CfpConfig, out: SearchOutcome) -> list[PlanCheck]:
    """Run the CFP, data-parallel and Megatron plans (those the sizes allow) on ``config.gpus`` processes."""
    gpt = GPTConfig(
        layers=config.layers, hidden=config.hidden, heads=config.heads, seq=config.seq, vocab=2,
        ffn_mult=config.ffn_mult, dtype=config.resolved_dtype, seed=config.seed,
    )  # fmt: skip
    problem = out.problem
    plans = [("cfp", out.plan)]
    for name, fn in (("data-parallel", data_parallel), ("megatron", megatron)):
        try:
            plans.append((name, assignment_of(problem, fn(out.graph, problem.mesh.ndim), name)))
        except ValueError:
            continue
    checks = []
    for name, assign in plans:
        strategies = tuple(problem.strats[i][a] for i, a in enumerate(assign))
        spec = CheckSpec(gpt, config.batch, problem.mesh.shape, strategies, seed=config.seed)
        model_bytes = evaluate(problem, assign)[2]
        r = run_check(spec, model_bytes, timeout_s=config.timeout_s)
        checks.append(
            PlanCheck(
                plan=name, max_abs_err_out=r.max_abs_err_out, max_abs_err_grad=r.max_abs_err_grad,
                max_abs_err_param_grad=r.max_abs_err_param_grad, bytes_per_rank=r.bytes_per_rank,
                model_bytes_per_rank=r.model_bytes_per_rank,
                bytes_match=all(b == r.model_bytes_per_rank for b in r.bytes_per_rank),
            )
        )  # fmt: skip
    return checks


# ---- CFP against Alpa's ILP at paper scale (cost MODEL) --------------------------------------------------------
@functools.lru_cache(maxsize=64)
def alpa_assignment(config: CfpConfig) -> tuple[int, ...] | None:
    """The Alpa-objective ILP's plan (one layer, tiled over the depth) of ``config``. Alpa's objective has no
    compute term, so the plan does not depend on ``cluster.gpu_tflops``: callers key it with the default rate."""
    out = search(config, with_oracles=False)
    try:
        a, _, _, _ = ilp_plan(config, out.graph, out.problem, out.memory_limit, alpa=True)
    except ValueError:  # some heavy operator cannot be split on every axis: Alpa's space is empty
        return None
    return None if a is None else tuple(a)


@functools.lru_cache(maxsize=256)
def alpa_speedup(
    model: str, *, gpus: int, mesh: str, batch: int, cluster: ClusterSpec | None = None, ilp_layers: int = 1
) -> dict:
    """CFP's plan against the Alpa-objective ILP's plan (MODEL): both priced by one cost model on ``cluster``
    (seconds per training step), the limit the cluster's GPU memory. Returns ``cfp_seconds``, ``alpa_seconds``
    (None when Alpa's space is empty or infeasible), ``speedup`` (alpa / cfp), ``same_plan``, ``dp_method``
    (``unconstrained``, or ``exact`` when the memory limit binds), ``cfp_memory`` (bytes per device),
    ``alpa_memory`` and ``memory_limit`` (bytes)."""
    config = CfpConfig(
        mode="search", model=model, layers=0, gpus=gpus, mesh=mesh, batch=batch, ilp_layers=ilp_layers,
        brute_force_limit=0, ilp=False, cluster=cluster or DEFAULT_CLUSTER,
    )  # fmt: skip
    out = search(config, with_oracles=False)
    links = dataclasses.replace(
        config, cluster=dataclasses.replace(config.cluster, gpu_tflops=DEFAULT_CLUSTER.gpu_tflops)
    )
    a = alpa_assignment(links)
    alpa = None if a is None else price_plan(out.problem, "alpa", list(a), out.memory_limit)
    return {
        "cfp_seconds": out.plan_cost.seconds, "alpa_seconds": None if alpa is None else alpa.seconds,
        "speedup": None if alpa is None else alpa.seconds / out.plan_cost.seconds,
        "same_plan": a is not None and list(a) == out.plan, "dp_method": out.dp.method,
        "cfp_memory": out.plan_cost.memory_bytes, "alpa_memory": None if alpa is None else alpa.memory_bytes,
        "memory_limit": out.memory_limit,
    }  # fmt: skip


# ---- profile-driven search ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProfileComparison:
    """CFP's plan chosen on profiled block seconds vs on the cost model, at one small setting.

    ``profiled_*``: seconds per step priced with the profiled block seconds (resharding between blocks from the
    cost model, as in CFP, which profiles blocks); ``modelled_*``: priced by the cost model alone; ``same_plan``:
    both searches chose the same block strategies; ``changed_blocks``: blocks whose strategy differs;
    ``profile_runs``: block strategies run; ``profile_seconds``: wall time of the profile."""

    setting: str
    same_plan: bool
    changed_blocks: int
    blocks: int
    profiled_model_plan: float
    profiled_profile_plan: float
    modelled_model_plan: float
    modelled_profile_plan: float
    profile_runs: int
    profile_seconds: float

    @property
    def gain(self) -> float:
        """Profiled seconds of the model's plan over the profile's plan (>= 1: what profiling buys here)."""
        return self.profiled_model_plan / self.profiled_profile_plan


def _block_plan_seconds(blocks, choice: list[int]) -> float:
    cost = sum(float(blocks.cost[k][c]) for k, c in enumerate(choice))
    return cost + sum(float(R[choice[bp], k_c]) for k, k_c in enumerate(choice) for bp, _, R in blocks.in_edges[k])


@functools.lru_cache(maxsize=16)
def profile_vs_model(config: CfpConfig, repeats: int = 3) -> ProfileComparison:
    """Search ``config`` (a custom model small enough for CPU processes) twice: block seconds from the cost model,
    and from a real profile of every strategy of each unique block on ``config.gpus`` gloo processes (median of
    ``repeats``, slowest rank); price both plans both ways. Both searches run on ``config.cluster`` calibrated
    to these processes (:func:`~workbench.llm.cfp.profile.calibrate_cluster`: FLOP/s, link latency and
    bandwidth), so the model's seconds, the profile's and the modelled resharding share one unit."""
    cluster = calibrate_cluster(config.gpus, config.cluster)
    config = dataclasses.replace(config, ilp=False, brute_force_limit=0, cluster=cluster)
    out = search(config, with_oracles=False)
    prof = profile_blocks(out.problem, out.blocks, repeats=repeats, timeout_s=config.timeout_s)
    measured = profiled_blocks(out.blocks, prof)
    by_profile = solve(measured, memory_limit=out.memory_limit)
    model_choice = out.dp.choice
    changed = sum(a != b for a, b in zip(model_choice, by_profile.choice))
    return ProfileComparison(
        setting=f"{config.layers} layers, hidden {config.hidden}, seq {config.seq}, batch {config.batch}, "
        f"mesh {config.mesh}",
        same_plan=changed == 0, changed_blocks=changed, blocks=len(model_choice),
        profiled_model_plan=_block_plan_seconds(measured, model_choice),
        profiled_profile_plan=_block_plan_seconds(measured, by_profile.choice),
        modelled_model_plan=_block_plan_seconds(out.blocks, model_choice),
        modelled_profile_plan=_block_plan_seconds(out.blocks, by_profile.choice),
        profile_runs=prof.runs, profile_seconds=prof.wall_seconds,
    )  # fmt: skip


def clear_caches() -> None:
    """Empty the memoised computations."""
    for fn in (alpa_assignment, alpa_speedup, profile_vs_model):
        fn.cache_clear()
