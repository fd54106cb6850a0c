"""CFP study: memoised searches, sweeps and views for the panel and the notebook (the paper's claims and their
computed verdicts are in :mod:`workbench.llm.cfp.claims`).

Everything here is cached by its (frozen) arguments; :func:`clear_caches` empties the caches.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

from workbench.cluster import PRESETS, ClusterSpec
from workbench.config import Config, param
from workbench.llm.cfp import experiment
from workbench.llm.cfp.blocks import build_blocks, segments
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.dp import solve
from workbench.llm.cfp.experiment import (
    PlanCheck,
    PlanEntry,
    ProfileComparison,
    alpa_speedup,
    check_plans,
    plan_entries,
    profile_vs_model,
)
from workbench.llm.cfp.graph import PAPER_MODELS, gpt_graph, graph_for
from workbench.llm.cfp.ilp import solve_ilp
from workbench.llm.cfp.model import MODEL_LABEL, PAPER_SETTING, PaperRow, paper_row
from workbench.llm.cfp.problem import build_problem
from workbench.llm.cfp.profile import profile_blocks
from workbench.llm.cfp.reference import brute_force_ops
from workbench.llm.cfp.search import search
from workbench.llm.cfp.sharding import parse_mesh
from workbench.llm.gpt import GPTShape

__all__ = [
    "CfpViewConfig",
    "PanelView",
    "panel_view",
    "search_time_sweep",
    "profile_sweep",
    "paper_rows",
    "check_small",
    "block_optimality",
    "alpa_speedup",
    "CheckView",
    "MEMORY_CASES",
    "memory_limit_loss",
    "PROFILE_SETTINGS",
    "profile_config",
    "profile_vs_model_rows",
    "clear_caches",
]

FAMILY_MODEL = {"gpt": "gpt-6.7b", "llama": "llama-7b", "moe": "moe-16e"}
#: the workbench's default cluster (equal to ``ClusterSpec()``); the toy clusters below vary it
_DEFAULT: ClusterSpec = PRESETS["h800-sxm-nvlink-ib"]


@dataclass(frozen=True, kw_only=True)
class CfpViewConfig(Config):
    """What the panel varies: the model, its depth, the GPUs and the mesh, the batch, the memory limit."""

    model: str = param("gpt-1.3b", choices=tuple(PAPER_MODELS), label="model", help="paper-scale model shape")
    layers: int = param(0, lo=0, hi=96, unit="layers", label="layers", help="transformer layers (0: the model's own)")
    gpus: int = param(8, lo=1, hi=64, unit="GPUs", label="GPUs", help="devices")
    mesh_rows: int = param(
        2, lo=1, hi=64, label="mesh rows", help="mesh shape rows x (gpus / rows); 1: a 1-D mesh; must divide gpus"
    )
    batch: int = param(8, lo=1, hi=512, unit="sequences", label="batch", help="global batch (sequences of 2048)")
    memory_gb: float = param(80.0, lo=1.0, hi=1000.0, unit="GB", label="memory limit", help="per-device memory")
    ilp: bool = param(False, label="ILP and Alpa", help="also solve the ILP (one layer, tiled): slower")

    def check_combination(self) -> None:
        if self.gpus % self.mesh_rows:
            raise ValueError(
                f"mesh_rows={self.mesh_rows} does not divide gpus={self.gpus}: valid values are the divisors of "
                f"{self.gpus}"
            )

    @property
    def mesh(self) -> str:
        return str(self.gpus) if self.mesh_rows == 1 else f"{self.mesh_rows}x{self.gpus // self.mesh_rows}"


@dataclass(frozen=True)
class PanelView:
    """What the panel draws: plan costs, combinations and profiling runs vs depth, the plan of one layer."""

    config: CfpViewConfig
    mesh: str
    plans: list[dict]
    layers_axis: list[int]
    combos_before: list[float]
    combos_after: list[float]
    profile_unique: list[int]
    profile_per_layer: list[int]
    layer_ops: list[str]
    layer_strategies: list[list[str]]
    search_seconds: float
    method: str
    label: str = MODEL_LABEL


def _cfp_config(vc: CfpViewConfig, *, ilp: bool) -> CfpConfig:
    return CfpConfig(
        mode="search", model=vc.model, layers=vc.layers, gpus=vc.gpus, mesh=vc.mesh, batch=vc.batch,
        memory_gb=vc.memory_gb, ilp=ilp, ilp_layers=1, brute_force_limit=0,
    )  # fmt: skip


@functools.lru_cache(maxsize=256)
def panel_view(vc: CfpViewConfig) -> PanelView:
    """Search the view's setting (memoised). Raises ValueError for impossible settings."""
    out = search(_cfp_config(vc, ilp=vc.ilp))
    plans = []
    for p in (out.plan_cost, out.ilp, out.alpa, out.megatron, out.data_parallel):
        if p is not None:
            plans.append({"name": p.name, "seconds": p.seconds, "memory": p.memory_bytes, "fits": p.fits})
    # strategy combinations and profiling runs grow with depth as (input) + L x (one layer): exact, the layers
    # are identical; taken from the searched graph's first and second layer
    prob, blocks = out.problem, out.blocks
    L = out.graph.layers
    per_op = [math.log10(len(s)) for s in prob.strats]
    layer_of = [op.layer for op in out.graph.ops]
    layer_before = sum(v for v, la in zip(per_op, layer_of) if la == 0)
    in_before = sum(v for v, la in zip(per_op, layer_of) if la < 0)
    per_block = [math.log10(len(s)) for s in blocks.strats]
    blayer = [out.graph.ops[m[0]].layer for m in blocks.ops]
    layer_after = sum(v for v, la in zip(per_block, blayer) if la == 0)
    in_after = sum(v for v, la in zip(per_block, blayer) if la < 0)
    unique_runs = out.profile_runs
    layer_runs = sum(len(s) for s, la in zip(blocks.strats, blayer) if la == 0)
    axis = sorted({1, 2, 4, 8, 16, 32, 64, 96, L})
    layer0 = [i for i, la in enumerate(layer_of) if la == 0]
    strategies = [["-" if c is None else c for c in prob.strats[i][out.plan[i]]] for i in layer0]
    return PanelView(
        vc, vc.mesh, plans, axis, [in_before + n * layer_before for n in axis], [in_after + n * layer_after for n in axis],
        [unique_runs] * len(axis), [n * layer_runs + 1 for n in axis],
        [out.graph.ops[i].name.split(".")[-1] for i in layer0], strategies, out.cfp_seconds, out.dp.method,
    )  # fmt: skip


@functools.lru_cache(maxsize=16)
def search_time_sweep(
    layers: tuple[int, ...] = (1, 2, 4, 8, 16), mesh: str = "3", brute_force_max: int = 300_000, model: str = ""
) -> list[dict]:
    """CFP (blocks + segments + DP), the ILP (full depth, HiGHS) and brute force over per-operator strategies
    (when its space is at most ``brute_force_max``) on GPT graphs of growing depth: toy sizes by default (hidden
    6, 3 heads, sequence 4, batch 2, MLP width 6: few strategies per operator, so brute force can run at one
    layer, on a cluster where splitting pays), or the paper-scale ``model`` (one sequence per device, the
    default cluster)."""
    rows = []
    m = parse_mesh(mesh)
    toy = _DEFAULT.replace(gpu_tflops=0.001, intra_node_latency_us=0.0, intra_node_bw_gbps=0.5)
    cluster = _DEFAULT if model else toy
    for L in layers:
        if model:
            graph = graph_for(model, batch=m.size, layers=L)
        else:
            graph = gpt_graph(GPTShape(layers=L, hidden=6, heads=3, seq=4, vocab=2, ffn_mult=1), batch=2)
        problem = build_problem(graph, m, cluster, itemsize=2)
        t0 = time.perf_counter()
        blocks = build_blocks(problem)
        segments(blocks)
        dp = solve(blocks, memory_limit=cluster.memory_bytes)
        cfp_s = time.perf_counter() - t0
        ilp = solve_ilp(problem, memory_limit=cluster.memory_bytes)
        n = math.prod(len(s) for s in problem.strats)
        bf = brute_force_ops(problem, max_combinations=brute_force_max) if n <= brute_force_max else None
        rows.append({
            "layers": L, "operators": len(problem.graph.ops), "cfp_seconds": cfp_s, "ilp_seconds": ilp.seconds,
            "brute_force_seconds": bf.seconds if bf else None, "cfp_cost": dp.cost, "ilp_cost": ilp.cost,
            "brute_force_cost": bf.cost if bf else None, "combinations_log10": problem.combinations_log10,
        })  # fmt: skip
    return rows


@functools.lru_cache(maxsize=8)
def profile_sweep(layers: tuple[int, ...] = (1, 2, 4), mesh: str = "2", hidden: int = 32) -> list[dict]:
    """Real profiling (gloo processes) of GPT graphs of growing depth: block strategies run and wall seconds,
    beside what profiling every layer would run."""
    m = parse_mesh(mesh)
    rows = []
    for L in layers:
        shape = GPTShape(layers=L, hidden=hidden, heads=4, seq=16, vocab=2)
        problem = build_problem(gpt_graph(shape, batch=2 * m.size), m, _DEFAULT, itemsize=4)
        blocks = build_blocks(problem)
        prof = profile_blocks(problem, blocks, repeats=2)
        rows.append({
            "layers": L, "runs": prof.runs, "wall_seconds": prof.wall_seconds,
            "runs_per_layer_profiling": sum(len(s) for s in blocks.strats),
        })  # fmt: skip
    return rows


@functools.lru_cache(maxsize=8)
def paper_rows(gpus: int = PAPER_SETTING["gpus"], mesh: str = PAPER_SETTING["mesh"], batch: int = 16) -> list[PaperRow]:
    """GPT-6.7B, LLaMA-7B and the MoE stack at paper scale (MODEL)."""
    return [paper_row(FAMILY_MODEL[f], gpus=gpus, mesh=mesh, batch=batch)[0] for f in ("gpt", "llama", "moe")]


#: a toy cluster on which splitting pays at toy sizes (slow compute, no latency), so CFP's plan communicates
TOY_CLUSTER = {"gpu_tflops": 0.001, "intra_node_latency_us": 0.0, "inter_node_latency_us": 0.0}


@functools.lru_cache(maxsize=4)
def check_small(gpus: int = 4, mesh: str = "2x2", seed: int = 0) -> CheckView:
    """A real check run (CFP, data-parallel and Megatron plans on ``gpus`` gloo processes, fp64), the plan
    searched on :data:`TOY_CLUSTER`."""
    config = CfpConfig(
        mode="check", gpus=gpus, mesh=mesh, layers=2, hidden=8, heads=2, seq=4, batch=4, dtype="float64",
        seed=seed, ilp=False, cluster=TOY_CLUSTER,
    )  # fmt: skip
    out = search(config)
    return CheckView(plan_entries(out), check_plans(config, out))


@functools.lru_cache(maxsize=4)
def block_optimality(meshes: tuple[str, ...] = ("2", "4", "2x2", "2x3"), fractions: tuple[float, ...] = (1.0, 0.25)):
    """CFP's block DP against the exact per-operator ILP on a 2-layer toy GPT (hidden 24, 6 heads, sequence 6,
    batch 12) on several meshes and clusters, without a memory limit (fraction 1) and with the limit at
    ``least + fraction * (most - least)`` bytes: the relative gap ``DP / ILP - 1`` of each case."""
    clusters = {"slow compute": _DEFAULT.replace(gpu_tflops=0.001, intra_node_latency_us=0.0, intra_node_bw_gbps=0.5),
                "slow links": _DEFAULT.replace(gpu_tflops=0.01, intra_node_latency_us=0.1, intra_node_bw_gbps=0.05),
                "default": _DEFAULT}  # fmt: skip
    shape = GPTShape(layers=2, hidden=24, heads=6, seq=6, vocab=2, ffn_mult=2)
    rows = []
    for mesh in meshes:
        for cname, cluster in clusters.items():
            problem = build_problem(gpt_graph(shape, batch=12), parse_mesh(mesh), cluster, itemsize=4)
            blocks = build_blocks(problem)
            least, most = sum(int(m.min()) for m in problem.mem), sum(int(m.max()) for m in problem.mem)
            for f in fractions:
                limit = None if f >= 1 else least + int(f * (most - least))
                dp = solve(blocks, memory_limit=limit, exact_buckets=20_000)
                ilp = solve_ilp(problem, memory_limit=limit)
                rows.append({"mesh": mesh, "cluster": cname, "memory": "none" if limit is None else f"{f:g} of range",
                             "dp_method": dp.method, "gap": dp.cost / ilp.cost - 1})  # fmt: skip
    return rows


@dataclass(frozen=True)
class CheckView:
    """A real check run: CFP's plan (one entry per operator) and each plan's errors and bytes on gloo processes."""

    plan: list[PlanEntry]
    checks: list[PlanCheck]

    @property
    def max_abs_err_out(self) -> float:
        return max(c.max_abs_err_out for c in self.checks)

    @property
    def max_abs_err_grad(self) -> float:
        return max(max(c.max_abs_err_grad, c.max_abs_err_param_grad) for c in self.checks)


#: paper-scale cases where the memory limit binds: (model, mesh, device GB) on 16 GPUs, 16 sequences
MEMORY_CASES = (
    ("gpt-6.7b", "2x8", 40.0),
    ("llama-7b", "16", 80.0),
    ("llama-7b", "2x8", 40.0),
    ("moe-16e", "2x8", 40.0),
)


@functools.lru_cache(maxsize=8)
def memory_limit_loss(cases: tuple[tuple[str, str, float], ...] = MEMORY_CASES, batch: int = 16) -> list[dict]:
    """The block search under a binding memory limit (MODEL): the Lagrangian plan (the old fallback) against the
    exact constrained optimum, per case: seconds of each, the Lagrangian's loss and its certified bound, the
    exact search's seconds and Pareto entries, and the per-operator ILP's seconds on one layer tiled (a
    reference, not an oracle: tiling makes it a plan, not a bound)."""
    rows = []
    for model, mesh, gb in cases:
        config = CfpConfig(
            mode="search", model=model, layers=0, gpus=PAPER_SETTING["gpus"], mesh=mesh, batch=batch, ilp=False,
            brute_force_limit=0, cluster=_DEFAULT.replace(gpu_memory_gb=gb),
        )  # fmt: skip
        out = search(config, with_oracles=False)
        t0 = time.perf_counter()
        lag = solve(out.blocks, memory_limit=out.memory_limit, exact=False)
        lag_s = time.perf_counter() - t0
        ex = out.dp
        rows.append({
            "model": model, "mesh": mesh, "memory_gb": gb, "method": ex.method, "lagrangian_seconds": lag.cost,
            "exact_seconds": ex.cost, "loss": lag.cost / ex.cost - 1, "gap_bound": lag.gap_bound,
            "lagrangian_search_s": lag_s, "exact_search_s": ex.seconds, "pareto_entries": ex.peak_entries,
        })  # fmt: skip
    return rows


#: the small settings whose plans are searched on profiled costs and on the cost model (custom GPT, gloo)
PROFILE_SETTINGS = (
    {"layers": 2, "hidden": 32, "heads": 4, "seq": 16, "batch": 8, "gpus": 2, "mesh": "2"},
    {"layers": 2, "hidden": 64, "heads": 4, "seq": 32, "batch": 8, "gpus": 4, "mesh": "2x2"},
    {"layers": 2, "hidden": 64, "heads": 8, "seq": 16, "batch": 4, "gpus": 4, "mesh": "4"},
)


def profile_config(setting: dict, cluster: ClusterSpec = _DEFAULT) -> CfpConfig:
    """The search config of one :data:`PROFILE_SETTINGS` entry, float32 on ``cluster``."""
    return CfpConfig(mode="search", dtype="float32", ilp=False, brute_force_limit=0, cluster=cluster, **setting)


def profile_vs_model_rows(settings: tuple[int, ...] = (0, 1, 2), repeats: int = 3) -> list[ProfileComparison]:
    """Plans chosen by profiled block seconds vs by the cost model, at :data:`PROFILE_SETTINGS` (real gloo
    profiles, memoised in :mod:`~workbench.llm.cfp.experiment`)."""
    return [profile_vs_model(profile_config(PROFILE_SETTINGS[i]), repeats) for i in settings]


def clear_caches() -> None:
    """Empty every memoised view and sweep."""
    for fn in (panel_view, search_time_sweep, profile_sweep, paper_rows, check_small, block_optimality,
               memory_limit_loss):  # fmt: skip
        fn.cache_clear()
    experiment.clear_caches()
