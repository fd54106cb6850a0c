"""The orchestration of DawnPiper shared by the runner (``workbench run dawnpiper``) and the study (panel,
notebook): memoised traced graphs, paper-scale graphs and budgets, every partitioner's partition (the
layer-granular peers only where they can cut the graph), the exhaustive optimum and DawnPiper's gap to it,
max-batch searches, paper-scale points and the real pipeline check. :func:`clear_caches` empties every memo.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from workbench.llm.dawnpiper.check import CheckOutcome, run_check
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition, theorem_interval
from workbench.llm.dawnpiper.graph import NodeGraph, static_bytes
from workbench.llm.dawnpiper.model import (
    MODEL_LABEL,
    PARTITIONERS,
    cannot_cut,
    max_batch,
    paper_budget,
    paper_graph,
    run_partitioner,
)
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.dawnpiper.trace import TracedGPT, profile, trace_gpt
from workbench.llm.gpt import PAPER_SHAPES, GPTConfig

__all__ = [
    "EXHAUSTIVE_MAX_UNITS",
    "EXHAUSTIVE_MAX_STAGES",
    "traced",
    "graph_of",
    "budget_of",
    "check_budget",
    "stage_cache",
    "not_run",
    "partitions",
    "exhaustive_of",
    "exhaustive_gap",
    "optimum_inside_interval",
    "max_batches",
    "check",
    "PaperPoint",
    "paper_point",
    "PAPER_SWEEP",
    "paper_points",
    "clear_caches",
]

EXHAUSTIVE_MAX_UNITS, EXHAUSTIVE_MAX_STAGES = 30, 4


@lru_cache(maxsize=8)
def traced(config: DawnpiperConfig) -> tuple[TracedGPT, NodeGraph]:
    """The traced and profiled GPT of ``config`` (memoised on the GPT's parameters and micro-batch)."""
    return _traced(config.gpt(), config.micro_batch)


@lru_cache(maxsize=8)
def _traced(gpt: GPTConfig, micro_batch: int) -> tuple[TracedGPT, NodeGraph]:
    t = trace_gpt(gpt, micro_batch)
    return t, profile(t)


def graph_of(config: DawnpiperConfig, micro_batch: int | None = None) -> NodeGraph:
    """The node graph the partitioners see: traced (scaled to ``micro_batch``) or generated at paper scale."""
    b = micro_batch or config.micro_batch
    if config.model == "traced":
        g = traced(config)[1]
        return g if b == g.micro_batch else g.scaled(b)
    return _paper_graph(config.model, b, config.cluster.gpu_tflops, config.cluster.hbm_bw_gbps)


@lru_cache(maxsize=256)
def _paper_graph(model: str, b: int, tflops: float, hbm: float) -> NodeGraph:
    return paper_graph(model, b, tflops, hbm)


def budget_of(config: DawnpiperConfig) -> StageBudget:
    """A stage's budget: ``memory_gb`` and a GPU's share of the host memory on the cluster (whose PCIe and NVLink
    price swaps and stage links); state bytes by precision."""
    c = config.cluster
    host = c.host_memory_gb / c.gpus_per_node
    if config.model == "traced":
        elem = 8 if config.dtype == "float64" else 4
        return StageBudget(
            memory_bytes=config.memory_gb * 1e9, cluster=c, state_bytes_per_param=4.0 * elem,
            weight_bytes_per_param=float(elem), host_bytes=host * 1e9,
        )  # fmt: skip
    return paper_budget(config.memory_gb, c, host)


def check_budget(config: DawnpiperConfig, graph: NodeGraph, hw: StageBudget) -> None:
    """Refuse a budget no partition can meet: the weights and optimizer state alone exceed S budgets, or one
    node's do (a stage holds at least one node). Raises ValueError naming memory_gb."""
    per_unit = static_bytes(graph, hw.state_bytes_per_param)
    need = max(float(per_unit.sum()) / config.stages, float(per_unit.max()))
    if hw.memory_bytes < need:
        raise ValueError(
            f"memory_gb={config.memory_gb:g} is below what one micro-batch needs: weights, gradients and optimizer "
            f"state alone take {per_unit.sum() / 1e9:.4g} GB over stages={config.stages} (largest node "
            f"{per_unit.max() / 1e9:.4g} GB), so valid memory_gb is >= {need / 1e9:.4g}"
        )


def stage_cache(config: DawnpiperConfig, graph: NodeGraph, hw: StageBudget) -> StageCache:
    """A fresh stage-plan cache of ``config``'s stages, micro-batches and schedule over ``graph``."""
    return StageCache(graph, config.stages, config.micro_batches, hw, config.schedule)


def not_run(config: DawnpiperConfig) -> dict[str, str]:
    """The partitioners left out at ``config`` and why (the layer-granular peers where the graph has too few
    layer boundaries for ``stages``); DawnPiper and the node-granular balanced partitions always run."""
    graph = graph_of(config)
    out = {}
    for name in PARTITIONERS:
        reason = cannot_cut(name, graph, config.stages)
        if reason is not None:
            out[name] = reason
    return out


@lru_cache(maxsize=64)
def partitions(config: DawnpiperConfig) -> tuple[dict[str, Partition], dict]:
    """Every partitioner that can cut the graph (see :func:`not_run`) at the configured micro-batch, and
    DawnPiper's search account."""
    graph, hw = graph_of(config), budget_of(config)
    check_budget(config, graph, hw)
    skip = not_run(config)
    out = {}
    account: dict = {}
    for name in PARTITIONERS:
        if name in skip:
            continue
        if name == "dawnpiper":
            out[name], account = dawnpiper_partition(stage_cache(config, graph, hw))
        else:
            out[name] = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
    return out, account


@lru_cache(maxsize=32)
def exhaustive_of(config: DawnpiperConfig) -> Partition | None:
    """The exhaustive optimum on small graphs (<= 30 units, <= 4 stages), else None."""
    graph, hw = graph_of(config), budget_of(config)
    if graph.n > EXHAUSTIVE_MAX_UNITS or config.stages > EXHAUSTIVE_MAX_STAGES:
        return None
    return exhaustive(stage_cache(config, graph, hw))


def exhaustive_gap(config: DawnpiperConfig) -> dict | None:
    """DawnPiper against the exhaustive optimum (same cost model): its relative gap, the gap of the interval
    search alone (before the exact refinement), and the theorem's check. None above the oracle's limits."""
    best = exhaustive_of(config)
    if best is None:
        return None
    parts, account = partitions(config)
    ours = parts["dawnpiper"]
    ok = best.feasible and math.isfinite(best.iteration_s)
    return {
        "cuts": list(best.cuts),
        "iteration_seconds": best.iteration_s,
        "feasible": best.feasible,
        "search_seconds": best.search_s,
        "dawnpiper_gap": ours.iteration_s / best.iteration_s - 1.0 if ok else None,
        "interval_search_gap": account["interval_iteration_s"] / best.iteration_s - 1.0 if ok else None,
        "optimum_inside_interval": optimum_inside_interval(
            stage_cache(config, graph_of(config), budget_of(config)), best, account
        ),
    }


def optimum_inside_interval(cache: StageCache, best: Partition, account: dict) -> bool | None:
    """Whether an optimal partition lies in the theorem's interval as stated (no widening): the optimum over
    cuts inside the interval equals the unrestricted one. None when nothing fits (no optimum to place)."""
    if not account.get("compute_cuts"):
        return True
    if not best.feasible:
        return None
    interval = theorem_interval(tuple(account["compute_cuts"]), tuple(account["memory_cuts"]), cache.graph.n, 0)
    restricted = exhaustive(cache, interval)
    return bool(restricted.feasible and restricted.iteration_s <= best.iteration_s * (1 + 1e-12))


@lru_cache(maxsize=64)
def max_batches(config: DawnpiperConfig, cap: int = 4096) -> dict[str, int]:
    """Largest trainable micro-batch per partitioner that can cut the graph (MODEL when the graph is generated
    or scaled); a plan fits when every tensor live at each stage's peak does (see :mod:`costs`)."""
    hw = budget_of(config)
    skip = not_run(config)
    out = {}
    for name in PARTITIONERS:
        if name in skip:
            continue
        out[name] = max_batch(
            name, lambda b: graph_of(config, b), config.stages, config.micro_batches, hw, config.schedule, cap
        )[0]
    return out


@lru_cache(maxsize=8)
def check(config: DawnpiperConfig) -> tuple[Partition, CheckOutcome]:
    """DawnPiper's partition of the traced GPT run for real on ``stages`` processes."""
    t, graph = traced(config)
    hw = budget_of(config)
    check_budget(config, graph, hw)
    part, _ = dawnpiper_partition(stage_cache(config, graph, hw))
    outcome = run_check(
        t, graph, part, schedule=config.schedule, micro_batches=config.micro_batches, data_seed=config.seed + 1,
        timeout_s=config.timeout_s,
    )  # fmt: skip
    return part, outcome


@dataclass(frozen=True, kw_only=True)
class PaperPoint:
    """One paper-scale setting (MODEL): every partitioner's largest micro-batch; iteration time and throughput at
    an equal micro-batch (vPipe's largest, where both it and DawnPiper train under the most memory pressure); the
    speed-up over vPipe there; and the share of the budget the compute-balanced partition leaves idle on its most
    idle stage at its own largest batch (the paper's motivation: over 40 %)."""

    model: str
    stages: int
    micro_batches: int
    memory_gb: float
    max_batch: dict[str, int]
    equal_batch: int
    iteration_s: dict[str, float | None]
    tokens_per_s: dict[str, float | None]
    speedup_vs_vpipe: float | None
    compute_balanced_idle: float | None
    max_batch_layer_cuts: int
    iteration_layer_cuts_s: float | None
    label: str = MODEL_LABEL


def _at_equal_batch(config: DawnpiperConfig, graph: NodeGraph, hw: StageBudget, batch: int
                    ) -> tuple[dict[str, float | None], dict[str, float | None]]:  # fmt: skip
    """Iteration seconds and tokens per second of every partitioner at ``batch`` (None: does not fit)."""
    iters: dict[str, float | None] = {}
    tps: dict[str, float | None] = {}
    tokens = batch * config.micro_batches * PAPER_SHAPES[config.model].seq
    for name in PARTITIONERS:
        part = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
        ok = part.feasible and math.isfinite(part.iteration_s)
        iters[name] = part.iteration_s if ok else None
        tps[name] = tokens / part.iteration_s if ok else None
    return iters, tps


@lru_cache(maxsize=64)
def paper_point(config: DawnpiperConfig) -> PaperPoint:
    """The paper-scale account of ``config`` (its model, stages, micro-batches, budget, schedule, cluster)."""
    if config.model == "traced":
        raise ValueError("model='traced' has no paper-scale point: valid models are " + ", ".join(PAPER_SHAPES))
    hw = budget_of(config)
    check_budget(config, graph_of(config, 1), hw)
    if "vpipe" in not_run(config):
        raise ValueError(f"stages={config.stages} is too many for the paper-scale point, which compares with vPipe: "
                         f"vPipe {not_run(config)['vpipe']}")  # fmt: skip
    mb = max_batches(config)
    equal = max(mb["vpipe"], 1)
    graph = graph_of(config, equal)
    iters, tps = _at_equal_batch(config, graph, hw, equal)
    speedup = iters["vpipe"] / iters["dawnpiper"] if iters["vpipe"] and iters["dawnpiper"] else None
    # the fine-grained premise: the same search with cuts between layers only
    layer_max = max_batch(
        "dawnpiper-layer", lambda b: graph_of(config, b), config.stages, config.micro_batches, hw, config.schedule
    )[0]
    layer = run_partitioner("dawnpiper-layer", graph, config.stages, config.micro_batches, hw, config.schedule)
    idle = None
    if mb["compute-balanced"]:
        part = run_partitioner("compute-balanced", graph_of(config, mb["compute-balanced"]), config.stages,
                               config.micro_batches, hw, config.schedule)  # fmt: skip
        idle = 1.0 - min(part.stage_peak_bytes) / hw.memory_bytes
    return PaperPoint(
        model=config.model, stages=config.stages, micro_batches=config.micro_batches, memory_gb=config.memory_gb,
        max_batch=mb, equal_batch=equal, iteration_s=iters, tokens_per_s=tps, speedup_vs_vpipe=speedup,
        compute_balanced_idle=idle, max_batch_layer_cuts=layer_max,
        iteration_layer_cuts_s=layer.iteration_s if layer.feasible else None,
    )  # fmt: skip


#: the paper-scale settings an "up to" claim is the maximum over (the paper's models and GPU counts are not
#: readable: GPT shapes on 4 and 8 A100s)
PAPER_SWEEP = (("gpt-1.3b", 4), ("gpt-6.7b", 4), ("gpt-6.7b", 8), ("gpt-13b", 8))


def paper_points(settings=PAPER_SWEEP, *, micro_batches: int = 16, memory_gb: float = 40.0) -> list[PaperPoint]:
    """:func:`paper_point` over ``settings`` ((model, stages) pairs), memoised."""
    return [
        paper_point(
            DawnpiperConfig(
                mode="model", model=m, stages=s, micro_batches=micro_batches, memory_gb=memory_gb, micro_batch=1
            )
        )  # fmt: skip
        for m, s in settings
    ]


def clear_caches() -> None:
    """Empty every memo of this module."""
    for fn in (traced, _traced, _paper_graph, partitions, exhaustive_of, max_batches, check, paper_point):
        fn.cache_clear()
