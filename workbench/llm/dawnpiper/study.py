"""DawnPiper studies: memoised traced graphs, partitions, max-batch searches and the real check, the panel's
view and the paper-scale points. The paper's claims and their verdicts are in :mod:`~workbench.llm.dawnpiper.claims`.
:func:`clear_caches` empties every memo.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

from workbench.config import Config, param
from workbench.llm.dawnpiper.check import CheckOutcome, run_check
from workbench.llm.dawnpiper.config import A100, DawnpiperConfig
from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition, theorem_interval
from workbench.llm.dawnpiper.feasibility import partition_peaks
from workbench.llm.dawnpiper.generate import generate_graph
from workbench.llm.dawnpiper.graph import NodeGraph, static_bytes
from workbench.llm.dawnpiper.model import (
    MODEL_LABEL,
    PARTITIONERS,
    max_batch,
    paper_budget,
    paper_graph,
    run_partitioner,
)
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.dawnpiper.trace import TracedGPT, profile, trace_gpt
from workbench.llm.gpt import PAPER_SHAPES

__all__ = [
    "traced",
    "graph_of",
    "budget_of",
    "check_budget",
    "partitions",
    "exhaustive_of",
    "max_batches",
    "check",
    "DawnpiperView",
    "dawnpiper_view",
    "theorem_sweep",
    "theorem_sweep_slice",
    "PaperPoint",
    "stage_fit_rows",
    "paper_point",
    "paper_points",
    "PAPER_SWEEP",
    "clear_caches",
]

EXHAUSTIVE_MAX_UNITS, EXHAUSTIVE_MAX_STAGES = 30, 4


@lru_cache(maxsize=8)
def traced(config: DawnpiperConfig) -> tuple[TracedGPT, NodeGraph]:
    """The traced and profiled GPT of ``config`` (memoised on the GPT's parameters and micro-batch)."""
    return _traced(config.gpt(), config.micro_batch)


@lru_cache(maxsize=8)
def _traced(gpt, micro_batch: int) -> tuple[TracedGPT, NodeGraph]:
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


def _cache(config: DawnpiperConfig, graph: NodeGraph, hw: StageBudget) -> StageCache:
    return StageCache(graph, config.stages, config.micro_batches, hw, config.schedule)


@lru_cache(maxsize=64)
def partitions(config: DawnpiperConfig) -> tuple[dict[str, Partition], dict]:
    """Every partitioner at the configured micro-batch, and DawnPiper's search account."""
    graph, hw = graph_of(config), budget_of(config)
    check_budget(config, graph, hw)
    out = {}
    account: dict = {}
    for name in PARTITIONERS:
        if name == "dawnpiper":
            out[name], account = dawnpiper_partition(_cache(config, graph, hw))
        else:
            out[name] = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
    return out, account


@lru_cache(maxsize=32)
def exhaustive_of(config: DawnpiperConfig) -> Partition | None:
    """The exhaustive optimum on small graphs (<= 30 units, <= 4 stages), else None."""
    graph, hw = graph_of(config), budget_of(config)
    if graph.n > EXHAUSTIVE_MAX_UNITS or config.stages > EXHAUSTIVE_MAX_STAGES:
        return None
    return exhaustive(_cache(config, graph, hw))


@lru_cache(maxsize=64)
def max_batches(config: DawnpiperConfig, cap: int = 4096) -> dict[str, int]:
    """Largest trainable micro-batch per partitioner (MODEL when the graph is generated or scaled)."""
    hw = budget_of(config)
    out = {}
    for name in PARTITIONERS:
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
    part, _ = dawnpiper_partition(_cache(config, graph, hw))
    outcome = run_check(
        t, graph, part, schedule=config.schedule, micro_batches=config.micro_batches, data_seed=config.seed + 1,
        timeout_s=config.timeout_s,
    )  # fmt: skip
    return part, outcome


@dataclass(frozen=True, kw_only=True)
class DawnpiperView:
    """What the panel draws: per partitioner its stage peaks (GB), budget, iteration time, feasibility, cuts."""

    names: tuple[str, ...]
    stage_peak_gb: tuple[tuple[float, ...], ...]
    stage_act_gb: tuple[tuple[float, ...], ...]
    iteration_s: tuple[float, ...]
    feasible: tuple[bool, ...]
    cuts: tuple[tuple[int, ...], ...]
    budget_gb: float
    units: int
    interval: tuple[tuple[int, int], ...]
    label: str


@lru_cache(maxsize=256)
def dawnpiper_view(config: DawnpiperConfig) -> DawnpiperView:
    parts, account = partitions(config)
    names = tuple(parts)
    return DawnpiperView(
        names=names,
        stage_peak_gb=tuple(tuple(b / 1e9 for b in parts[n].stage_peak_bytes) for n in names),
        stage_act_gb=tuple(tuple(s.in_flight * s.act_bytes / 1e9 for s in parts[n].stages) for n in names),
        iteration_s=tuple(parts[n].iteration_s for n in names),
        feasible=tuple(parts[n].feasible for n in names),
        cuts=tuple(parts[n].cuts for n in names),
        budget_gb=config.memory_gb,
        units=graph_of(config).n,
        interval=tuple(tuple(i) for i in account.get("interval", [])),
        label=MODEL_LABEL if config.model != "traced" else "traced GPT, profiled on this CPU",
    )


def exhaustive_gap(config: DawnpiperConfig) -> dict | None:
    """DawnPiper against the exhaustive optimum (same cost model): relative gap and the theorem's check."""
    best = exhaustive_of(config)
    if best is None:
        return None
    parts, account = partitions(config)
    ours = parts["dawnpiper"]
    gap = (ours.iteration_s / best.iteration_s - 1.0) if math.isfinite(best.iteration_s) else None
    return {
        "cuts": list(best.cuts),
        "iteration_seconds": best.iteration_s,
        "feasible": best.feasible,
        "search_seconds": best.search_s,
        "dawnpiper_gap": gap,
        "optimum_inside_interval": _inside_theorem(_cache(config, graph_of(config), budget_of(config)), best, account),
    }


def _inside_theorem(cache: StageCache, best: Partition, account: dict) -> bool | None:
    """Whether an optimal partition lies in the theorem's interval as stated (no widening): the optimum over
    cuts inside the interval equals the unrestricted one. None when nothing fits (no optimum to place)."""
    if not account.get("compute_cuts"):
        return True
    if not best.feasible:
        return None
    interval = theorem_interval(tuple(account["compute_cuts"]), tuple(account["memory_cuts"]), cache.graph.n, 0)
    restricted = exhaustive(cache, interval)
    return bool(restricted.feasible and restricted.iteration_s <= best.iteration_s * (1 + 1e-12))


def _sweep(graph: NodeGraph, hw_of, stage_counts, budgets_gb, micro_batches: int, schedule: str) -> list[dict]:
    rows = []
    for stages in stage_counts:
        for budget in budgets_gb:
            hw = hw_of(budget)
            cache = StageCache(graph, stages, micro_batches, hw, schedule)
            ours, account = dawnpiper_partition(cache)
            best = exhaustive(cache)
            rows.append({
                "stages": stages, "budget_gb": budget, "optimum_feasible": best.feasible,
                "dawnpiper_feasible": ours.feasible,
                "gap": ours.iteration_s / best.iteration_s - 1.0 if best.feasible and ours.feasible else None,
                "optimum_inside_interval": _inside_theorem(cache, best, account),
                "slack": account["slack"], "dawnpiper_cuts": list(ours.cuts), "optimum_cuts": list(best.cuts),
            })  # fmt: skip
    return rows


def theorem_sweep(config: DawnpiperConfig, stage_counts=(2, 3, 4), budgets_gb=(1.0, 2e-4, 1.5e-4, 1.2e-4, 1e-4, 9e-5)
                  ) -> list[dict]:  # fmt: skip
    """DawnPiper against the exhaustive oracle on ``config``'s traced graph over stage counts and budgets: whether
    an optimal partition lies inside the theorem's interval (our reading, as stated), DawnPiper's gap, the slack
    its search needed. Budgets below the static memory are left out."""
    graph = graph_of(config)

    def hw_of(budget: float) -> StageBudget:
        return budget_of(dataclasses.replace(config, memory_gb=budget))

    static = static_bytes(graph, hw_of(1.0).state_bytes_per_param)
    budgets = [b for b in budgets_gb if b * 1e9 >= max(static.sum() / max(stage_counts), static.max())]
    return _sweep(graph, hw_of, stage_counts, budgets, config.micro_batches, config.schedule)


def theorem_sweep_slice(
    model: str = "gpt-1.3b", micro_batch: int = 16, stage_counts=(2, 3, 4), budgets_gb=(4.0, 3.0, 2.5, 2.0),
    micro_batches: int = 8,
) -> list[dict]:  # fmt: skip
    """The same check on a 2-block slice of a paper-scale GPT (MODEL: its widths, vocabulary and sequence, so the
    embedding and LM head weigh as at scale; 26 nodes, small enough for the oracle), on A100 hardware."""
    shape = dataclasses.replace(PAPER_SHAPES[model], layers=2)
    c = DawnpiperConfig().cluster
    graph = generate_graph(shape, micro_batch, flops_per_s=c.gpu_tflops * 1e12, hbm_bytes_per_s=c.hbm_bw_gbps * 1e9)

    def hw_of(budget: float) -> StageBudget:
        return paper_budget(budget, c, c.host_memory_gb / c.gpus_per_node)

    return _sweep(graph, hw_of, stage_counts, budgets_gb, micro_batches, "1f1b")


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


@lru_cache(maxsize=64)
def paper_point(config: DawnpiperConfig) -> PaperPoint:
    """The paper-scale account of ``config`` (its model, stages, micro-batches, budget, schedule, cluster)."""
    if config.model == "traced":
        raise ValueError("model='traced' has no paper-scale point: valid models are " + ", ".join(PAPER_SHAPES))
    hw = budget_of(config)
    check_budget(config, graph_of(config, 1), hw)
    mb = max_batches(config)
    equal = max(mb["vpipe"], 1)
    graph = graph_of(config, equal)
    iters: dict[str, float | None] = {}
    tps: dict[str, float | None] = {}
    tokens = equal * config.micro_batches * PAPER_SHAPES[config.model].seq
    for name in PARTITIONERS:
        part = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
        ok = part.feasible and math.isfinite(part.iteration_s)
        iters[name] = part.iteration_s if ok else None
        tps[name] = tokens / part.iteration_s if ok else None
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


def stage_fit_rows(config: DawnpiperConfig, name: str, micro_batch: int) -> list[dict]:
    """Partitioner ``name``'s plan at ``micro_batch`` (MODEL), per stage: the cost model's peak (saved tensors
    only) and the independent count of every tensor live at the stage's peak
    (:func:`~workbench.llm.dawnpiper.feasibility.stage_peak`), in GB, against the device."""
    hw = budget_of(config)
    graph = graph_of(config, micro_batch)
    part = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
    return [
        {"partitioner": name, "micro-batch": micro_batch, "stage": s.stage, "model peak GB": s.peak_bytes / 1e9,
         "live peak GB": pk.total / 1e9, "device GB": config.memory_gb, "fits": pk.total <= hw.memory_bytes,
         "at": pk.phase}
        for s, pk in zip(part.stages, partition_peaks(graph, part), strict=True)
    ]  # fmt: skip


def clear_caches() -> None:
    for fn in (traced, _traced, _paper_graph, partitions, exhaustive_of, max_batches, check, dawnpiper_view,
               paper_point):  # fmt: skip
        fn.cache_clear()


# ---------------------------------------------------------------------------------------------- the panel's view


@dataclass(frozen=True, kw_only=True)
class DawnpiperViewConfig(Config):
    """The panel's controls: a paper-scale GPT (MODEL), stages, memory budget, micro-batches and their size."""

    model: str = param("gpt-1.3b", choices=tuple(PAPER_SHAPES), help="paper-scale GPT (node graph from its shape)")
    stages: int = param(4, lo=2, hi=16, unit="stages", help="pipeline stages S")
    memory_gb: float = param(40.0, lo=8.0, hi=80.0, unit="GB", label="memory budget", help="memory per stage")
    micro_batches: int = param(8, lo=1, hi=64, unit="micro-batches", help="micro-batches M")
    micro_batch: int = param(16, lo=1, hi=256, unit="samples", help="samples per micro-batch")
    schedule: str = param("1f1b", choices=("1f1b", "gpipe"), help="pipeline schedule")
    pcie_gbps: float = param(
        25.0, lo=1.0, hi=64.0, unit="GB/s", label="PCIe bandwidth", help="host <-> GPU, prices swaps"
    )

    def full(self) -> DawnpiperConfig:
        return DawnpiperConfig(
            mode="partition", model=self.model, stages=self.stages, memory_gb=self.memory_gb,
            micro_batches=self.micro_batches, micro_batch=self.micro_batch, schedule=self.schedule,
            cluster=dataclasses.replace(A100, pcie_bw_gbps=self.pcie_gbps),
        )  # fmt: skip


def panel_view(view: DawnpiperViewConfig) -> DawnpiperView:
    """The panel's view at paper scale (memoised through :func:`dawnpiper_view`)."""
    return dawnpiper_view(view.full())
