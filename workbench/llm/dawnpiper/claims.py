"""DawnPiper's claims (arXiv 2505.05856 v1, 9 May 2025, abstract): up to 4x the largest trainable batch of vPipe,
up to 11x that of PipeDream, and up to 1.5x the speed of vPipe.

Our figures are the paper-scale MODEL (:mod:`~workbench.llm.dawnpiper.model`: node graphs generated from GPT
shapes, A100 cost model), each "up to" the largest ratio over the family :data:`FAMILY` of (model, stages)
settings (the paper's models and GPU counts are not readable), with where it occurs in the note. Every figure
rests on plans (DawnPiper's and its baseline's partitions with their swap/recompute choices): the searches price
a stage by every tensor live at its peak (:func:`~workbench.llm.dawnpiper.costs.live_bytes`: the forward working
set such as the LM head's logits beside the loss buffer, tensors awaiting swap-out, swapped back in or
recomputed, output gradients), so the largest micro-batch is the largest whose plan fits the device. Each measure
still returns the plan's :class:`~workbench.claims.Fit` from the independent count of
:mod:`~workbench.llm.dawnpiper.feasibility`, so a plan that did not fit would come out as such ("plan does not
fit"), whatever the ratio.

Settings: the GPU memory and the host memory a GPU's swapped tensors may fill are not readable, so both are
varied (the host memory binds the largest batch: DawnPiper swaps down to a stage's static memory); the schedule
is 1F1B, the paper's premise; the number of micro-batches M = 16 enters neither figure while M >= S (under 1F1B
stage x holds min(S - x, M) micro-batches, and the bubble (M + S - 1) scales both partitions alike), so it is not
varied; PCIe bandwidth and the effective compute rate price swaps and recomputes, so the speed-up varies them.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from workbench.claims import Assumption, Baseline, Claim, Figure, Fit
from workbench.llm.dawnpiper.config import A100, DawnpiperConfig
from workbench.llm.dawnpiper.costs import Partition
from workbench.llm.dawnpiper.experiment import PAPER_SWEEP, budget_of, graph_of
from workbench.llm.dawnpiper.feasibility import partition_fit
from workbench.llm.dawnpiper.model import max_batch, run_partitioner
from workbench.results import fmt_bytes

__all__ = ["CLAIMS", "PAPER_CLAIMS", "PAPER_VERSION", "FAMILY", "MICRO_BATCHES", "max_batch_of", "plan_at"]

PAPER_VERSION = "arXiv 2505.05856 v1, abstract"
#: the abstract's numbers (arXiv 2505.05856 v1, 9 May 2025): "up to" ratios
PAPER_CLAIMS = {"max_batch_vs_vpipe": 4.0, "max_batch_vs_pipedream": 11.0, "speedup_vs_vpipe": 1.5}
#: the (model, stages) settings an "up to" figure is the maximum over (ours: the paper's are not readable)
FAMILY = PAPER_SWEEP
#: micro-batches per iteration (M >= S: enters neither figure under 1F1B, see the module docstring)
MICRO_BATCHES = 16
SCHEDULE = "1f1b"
_EVIDENCE = (
    "tests/llm/dawnpiper/test_dawnpiper_claims.py::test_fit_counts_logits_and_loss_buffer_by_hand",
    "tests/llm/dawnpiper/test_dawnpiper_model.py::test_paper_point",
)


def _config(model: str, stages: int, memory_gb: float, host_gb: float, pcie_gbps: float, tflops: float
            ) -> DawnpiperConfig:  # fmt: skip
    cluster = dataclasses.replace(A100, gpu_memory_gb=memory_gb, host_memory_gb=host_gb * A100.gpus_per_node,
                                  pcie_bw_gbps=pcie_gbps, gpu_tflops=tflops)  # fmt: skip
    return DawnpiperConfig(mode="model", model=model, stages=stages, micro_batches=MICRO_BATCHES,
                           memory_gb=memory_gb, micro_batch=1, schedule=SCHEDULE, cluster=cluster)  # fmt: skip


def max_batch_of(name: str, model: str, stages: int, memory_gb: float, host_gb: float) -> tuple[int, Partition | None]:
    """Partitioner ``name``'s largest trainable micro-batch at a family setting (MODEL) and its partition."""
    return _largest(name, model, stages, memory_gb, host_gb)


@lru_cache(maxsize=256)
def _largest(name: str, model: str, stages: int, memory_gb: float, host_gb: float, pcie_gbps: float = 25.0,
             tflops: float = 150.0) -> tuple[int, Partition | None]:  # fmt: skip
    """Partitioner ``name``'s largest trainable micro-batch (the search's, MODEL) and its partition."""
    cfg = _config(model, stages, memory_gb, host_gb, pcie_gbps, tflops)
    return max_batch(name, lambda b: graph_of(cfg, b), stages, MICRO_BATCHES, budget_of(cfg), SCHEDULE)


@lru_cache(maxsize=256)
def plan_at(name: str, model: str, stages: int, micro_batch: int, memory_gb: float, host_gb: float,
            pcie_gbps: float = 25.0, tflops: float = 150.0) -> Partition:  # fmt: skip
    """Partitioner ``name``'s partition at ``micro_batch`` samples (MODEL)."""
    cfg = _config(model, stages, memory_gb, host_gb, pcie_gbps, tflops)
    return run_partitioner(name, graph_of(cfg, micro_batch), stages, MICRO_BATCHES, budget_of(cfg), SCHEDULE)


def _fit(model: str, plans: list[tuple[Partition, int]], memory_gb: float, tflops: float) -> Fit:
    """The worst stage over ``plans`` ((partition, its micro-batch)), by the independent live count."""
    fits = [partition_fit(graph_of(_config(model, 2, memory_gb, 125.0, 25.0, tflops), b), p, memory_gb * 1e9)
            for p, b in plans]  # fmt: skip
    return max(fits, key=lambda f: f.required / f.device_bytes)


def _fit_note(fit: Fit) -> str:
    return f"its plan needs {fmt_bytes(fit.required)} on {fit.where} of {fmt_bytes(fit.device_bytes)}"


def _max_batch_ratio(baseline: str):
    def measure(*, memory_gb: float, host_gb: float, schedule: str) -> Figure:
        del schedule  # sourced: 1F1B
        rows = []
        for model, stages in FAMILY:
            ours, ours_plan = _largest("dawnpiper", model, stages, memory_gb, host_gb)
            base, base_plan = _largest(baseline, model, stages, memory_gb, host_gb)
            ratio = ours / base if base else float("inf")
            rows.append((ratio, model, stages, ours, ours_plan, base, base_plan))
        ratio, model, stages, ours, ours_plan, base, base_plan = max(rows, key=lambda r: r[0])
        plans = [(p, b) for p, b in ((ours_plan, ours), (base_plan, base)) if p is not None]
        fit = _fit(model, plans, memory_gb, 150.0) if plans else None
        finite = [r for r in rows if r[0] != float("inf")]
        also = ""
        if ratio == float("inf") and finite:
            top = max(finite, key=lambda r: r[0])
            also = f" ({baseline} trains nothing there); largest finite ratio {top[0]:.3g}x ({top[1]}, {top[2]} stages)"
        note = (f"{model}, {stages} stages: DawnPiper micro-batch {ours}, {baseline} {base}{also}"
                + (f"; {_fit_note(fit)}" if fit else ""))  # fmt: skip
        return Figure(ratio, fit=fit, note=note)

    return measure


def _speedup(*, memory_gb: float, host_gb: float, pcie_gbps: float, tflops: float, schedule: str) -> Figure:
    """DawnPiper's iteration time over vPipe's at vPipe's largest micro-batch (both then need swap/recompute),
    the largest over the family."""
    del schedule
    rows = []
    for model, stages in FAMILY:
        b, _ = _largest("vpipe", model, stages, memory_gb, host_gb, pcie_gbps, tflops)
        if b == 0:
            continue
        v = plan_at("vpipe", model, stages, b, memory_gb, host_gb, pcie_gbps, tflops)
        d = plan_at("dawnpiper", model, stages, b, memory_gb, host_gb, pcie_gbps, tflops)
        if v.feasible and d.feasible:
            rows.append((v.iteration_s / d.iteration_s, model, stages, b, v, d))
    if not rows:
        return Figure(float("nan"), note="no setting of the family where both train")
    ratio, model, stages, b, v, d = max(rows, key=lambda r: r[0])
    fit = _fit(model, [(d, b), (v, b)], memory_gb, tflops)
    return Figure(ratio, fit=fit, note=f"{model}, {stages} stages, micro-batch {b} (vPipe's largest); {_fit_note(fit)}")


def _memory(value: float = 40.0) -> Assumption:
    return Assumption(
        name="memory_gb", value=value, choices=(40.0, 80.0), sourced=False, unit="GB",
        why="device memory per stage: the paper's GPUs are not readable; A100 40 GB (the model's default) or 80 GB",
    )  # fmt: skip


def _host() -> Assumption:
    return Assumption(
        name="host_gb", value=125.0, lo=64.0, hi=250.0, sourced=False, unit="GB per GPU",
        why="host memory a GPU's swapped tensors may fill (not readable): DGX A100 has 1 TB for 8 GPUs (125 GB); "
        "512 GB to 2 TB nodes are common. It binds the largest batch: DawnPiper swaps down to static memory",
    )  # fmt: skip


def _schedule() -> Assumption:
    return Assumption(
        name="schedule", value="1f1b", sourced=True,
        why="the paper's premise (abstract and summaries): under 1F1B early stages hold more micro-batches in flight",
    )  # fmt: skip


_VPIPE = Baseline(
    name="vPipe (MODEL: layer cuts, per-layer swap or recompute, local search)",
    why="the paper's baseline; no public code, modelled from its paper. Per-layer activation checkpointing plus "
    "offload on a refined partition is what Megatron-LM / DeepSpeed offer a practitioner today",
)
_PIPEDREAM = Baseline(
    name="PipeDream (asynchronous 1F1B, weight stashing, no swap or recompute)",
    why="the paper's baseline (msr-fiddle/pipedream's partitioner); it neither swaps nor recomputes",
    strongest=False,
    stronger="1F1B with activation checkpointing (Megatron-LM), i.e. vPipe-style per-layer recompute",
)
_PIPEDREAM_TEXT = "largest trainable micro-batch over PipeDream (up to)"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        technique="dawnpiper",
        key="max_batch_vs_vpipe",
        text="largest trainable micro-batch over vPipe (up to)",
        kind="speedup",
        paper=PAPER_CLAIMS["max_batch_vs_vpipe"],
        paper_source=PAPER_VERSION,
        unit="x",
        baseline=_VPIPE,
        assumptions=(_memory(), _host(), _schedule()),
        evidence=_EVIDENCE,
        measure=_max_batch_ratio("vpipe"),
        scale="model",
        up_to=True,
    ),
    Claim(
        technique="dawnpiper",
        key="max_batch_vs_pipedream",
        text=_PIPEDREAM_TEXT,
        kind="speedup",
        paper=PAPER_CLAIMS["max_batch_vs_pipedream"],
        paper_source=PAPER_VERSION,
        unit="x",
        baseline=_PIPEDREAM,
        assumptions=(_memory(), _host(), _schedule()),
        evidence=_EVIDENCE,
        measure=_max_batch_ratio("pipedream"),
        scale="model",
        up_to=True,
    ),
    Claim(
        technique="dawnpiper",
        key="speedup_vs_vpipe",
        text="training speed over vPipe at equal batch (up to)",
        kind="speedup",
        paper=PAPER_CLAIMS["speedup_vs_vpipe"],
        paper_source=PAPER_VERSION,
        unit="x",
        baseline=_VPIPE,
        assumptions=(
            _memory(),
            _host(),
            _schedule(),
            Assumption(
                name="pcie_gbps",
                value=25.0,
                lo=12.0,
                hi=32.0,
                sourced=False,
                unit="GB/s",
                why="host <-> GPU bandwidth pricing swaps (not readable): PCIe Gen4 x16 achieves ~25 of 32; Gen3 ~12",
            ),
            Assumption(
                name="tflops",
                value=150.0,
                lo=100.0,
                hi=200.0,
                sourced=False,
                unit="TFLOP/s",
                why="effective A100 compute (not readable): 48 % of the 312 peak, Megatron-LM-like; 32-64 % "
                "brackets published utilisations; it sizes the window that hides swaps and the recompute cost",
            ),
        ),  # fmt: skip
        evidence=_EVIDENCE,
        measure=_speedup,
        scale="model",
        up_to=True,
    ),
)
