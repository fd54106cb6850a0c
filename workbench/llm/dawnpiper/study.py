"""DawnPiper views for the panel and the notebook: the panel's per-stage view, the theorem and gap sweeps against
the exhaustive oracle (on the traced GPT, a 2-block slice of a paper-scale GPT, and a seeded family of random
graphs), and the per-stage fit of a plan. The orchestration they read (memoised graphs, partitions, max-batch
searches, paper points) is :mod:`~workbench.llm.dawnpiper.experiment`; the claims and their verdicts are in
:mod:`~workbench.llm.dawnpiper.claims`; the view configs in :mod:`~workbench.llm.dawnpiper.config`.
:func:`clear_caches` empties every memo.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workbench.cluster import ClusterSpec
from workbench.llm.dawnpiper import experiment
from workbench.llm.dawnpiper.config import DawnpiperConfig, DawnpiperViewConfig
from workbench.llm.dawnpiper.costs import StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.experiment import (
    budget_of,
    graph_of,
    optimum_inside_interval,
    partitions,
)
from workbench.llm.dawnpiper.feasibility import partition_peaks
from workbench.llm.dawnpiper.generate import generate_graph, random_graph
from workbench.llm.dawnpiper.graph import NodeGraph, activation_table, static_bytes
from workbench.llm.dawnpiper.model import MODEL_LABEL, paper_budget, run_partitioner
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.gpt import PAPER_SHAPES

__all__ = [
    "DawnpiperView",
    "dawnpiper_view",
    "panel_view",
    "theorem_sweep",
    "theorem_sweep_slice",
    "GapRow",
    "gap_family",
    "stage_fit_rows",
    "clear_caches",
]


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
    """Every partitioner's stage peaks (every tensor live at the peak), saved activations, time and cuts."""
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


def panel_view(view: DawnpiperViewConfig) -> DawnpiperView:
    """The panel's view at paper scale (memoised through :func:`dawnpiper_view`)."""
    return dawnpiper_view(view.full())


def _sweep(graph: NodeGraph, hw_of: Callable[[float], StageBudget], stage_counts: Sequence[int],
           budgets_gb: Sequence[float], micro_batches: int, schedule: str) -> list[dict]:  # fmt: skip
    rows = []
    for stages in stage_counts:
        for budget in budgets_gb:
            cache = StageCache(graph, stages, micro_batches, hw_of(budget), schedule)
            ours, account = dawnpiper_partition(cache)
            best = exhaustive(cache)
            ok = best.feasible and ours.feasible
            rows.append({
                "stages": stages, "budget_gb": budget, "optimum_feasible": best.feasible,
                "dawnpiper_feasible": ours.feasible,
                "gap": ours.iteration_s / best.iteration_s - 1.0 if ok else None,
                "interval_search_gap": account["interval_iteration_s"] / best.iteration_s - 1.0 if ok else None,
                "optimum_inside_interval": optimum_inside_interval(cache, best, account),
                "dawnpiper_cuts": list(ours.cuts), "optimum_cuts": list(best.cuts),
            })  # fmt: skip
    return rows


def theorem_sweep(config: DawnpiperConfig, stage_counts: Sequence[int] = (2, 3, 4),
                  budgets_gb: Sequence[float] = (1.0, 2e-4, 1.5e-4, 1.2e-4, 1e-4, 9e-5)) -> list[dict]:  # fmt: skip
    """DawnPiper against the exhaustive oracle on ``config``'s traced graph over stage counts and budgets: whether
    an optimal partition lies inside the theorem's interval (our reading, as stated), DawnPiper's gap and the
    interval search's own gap (before the exact refinement). Budgets below the static memory are left out."""
    graph = graph_of(config)

    def hw_of(budget: float) -> StageBudget:
        return budget_of(dataclasses.replace(config, memory_gb=budget))

    static = static_bytes(graph, hw_of(1.0).state_bytes_per_param)
    budgets = [b for b in budgets_gb if b * 1e9 >= max(static.sum() / max(stage_counts), static.max())]
    return _sweep(graph, hw_of, stage_counts, budgets, config.micro_batches, config.schedule)


def theorem_sweep_slice(
    model: str = "gpt-1.3b", micro_batch: int = 8, stage_counts: Sequence[int] = (2, 3, 4),
    budgets_gb: Sequence[float] = (7.0, 6.0, 5.0, 4.5, 4.0), micro_batches: int = 8,
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
class GapRow:
    """One random setting: the graph's seed and units, stages S, micro-batches M, budget (bytes), PCIe (GB/s);
    whether the oracle finds a partition that fits and DawnPiper does; DawnPiper's relative gap in iteration
    time to the oracle and the interval search's alone (None when nothing fits; inf when the interval search
    finds nothing that fits where the oracle does)."""

    seed: int
    units: int
    stages: int
    micro_batches: int
    budget_bytes: float
    pcie_gbps: float
    optimum_feasible: bool
    dawnpiper_feasible: bool
    gap: float | None
    interval_search_gap: float | None


#: the budget levels of the random family: static memory per stage plus this share of all activations
FAMILY_BUDGET_SHARES = (0.3, 0.6, 1.0)


@lru_cache(maxsize=8)
def gap_family(seeds: int = 60, first_seed: int = 0) -> tuple[GapRow, ...]:
    """DawnPiper against the exhaustive oracle on a seeded family of random graphs
    (:func:`~workbench.llm.dawnpiper.generate.random_graph`: 8-14 units, random costs), 2-4 stages, S..7
    micro-batches under 1F1B, three budgets each (:data:`FAMILY_BUDGET_SHARES`) and a PCIe bandwidth of 1, 10 or
    100 KB/s (so swaps cost time and recompute competes). ``seeds`` graphs from ``first_seed``."""
    rows = []
    for seed in range(first_seed, first_seed + seeds):
        rng = np.random.default_rng(1000 + seed)
        graph = random_graph(seed, int(rng.integers(8, 15)))
        S = int(rng.integers(2, 5))
        M = int(rng.integers(S, 8))
        static = static_bytes(graph, 32)
        acts = float(activation_table(graph)[0, graph.n])
        for share in FAMILY_BUDGET_SHARES:
            budget = max(static.sum() / S, static.max()) + share * acts
            pcie = float(rng.choice([1e-6, 1e-5, 1e-4]))
            cluster = ClusterSpec(pcie_bw_gbps=pcie, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0)
            hw = StageBudget(memory_bytes=budget, cluster=cluster, state_bytes_per_param=32, weight_bytes_per_param=8)
            best = exhaustive(StageCache(graph, S, M, hw, "1f1b"))
            ours, account = dawnpiper_partition(StageCache(graph, S, M, hw, "1f1b"))
            ok = best.feasible
            rows.append(GapRow(
                seed=seed, units=graph.n, stages=S, micro_batches=M, budget_bytes=budget, pcie_gbps=pcie,
                optimum_feasible=best.feasible, dawnpiper_feasible=ours.feasible,
                gap=ours.iteration_s / best.iteration_s - 1.0 if ok else None,
                interval_search_gap=account["interval_iteration_s"] / best.iteration_s - 1.0 if ok else None,
            ))  # fmt: skip
    return tuple(rows)


def stage_fit_rows(config: DawnpiperConfig, name: str, micro_batch: int) -> list[dict]:
    """Partitioner ``name``'s plan at ``micro_batch`` (MODEL), per stage: the cost model's peak (every tensor live
    at the peak), its saved tensors alone, and the independent count of
    :func:`~workbench.llm.dawnpiper.feasibility.stage_peak`, in GB, against the device."""
    hw = budget_of(config)
    graph = graph_of(config, micro_batch)
    part = run_partitioner(name, graph, config.stages, config.micro_batches, hw, config.schedule)
    return [
        {"partitioner": name, "micro-batch": micro_batch, "stage": s.stage, "saved peak GB": s.saved_peak_bytes / 1e9,
         "model peak GB": s.peak_bytes / 1e9, "live peak GB": pk.total / 1e9, "device GB": config.memory_gb,
         "fits": pk.total <= hw.memory_bytes, "at": pk.phase}
        for s, pk in zip(part.stages, partition_peaks(graph, part), strict=True)
    ]  # fmt: skip


def clear_caches() -> None:
    """Empty every memo: the study's and the experiment's."""
    experiment.clear_caches()
    for fn in (dawnpiper_view, gap_family):
        fn.cache_clear()
