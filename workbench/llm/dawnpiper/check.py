"""The real check: a partition run as a pipeline on P gloo processes, against single-process training.

The reference is :func:`~workbench.llm.gpt.build_gpt` trained in one process with the same micro-batches
(gradients accumulated in order, each micro-batch loss divided by M), so the pipeline must give the same losses
and gradients; in fp64 they agree to rounding (the sums over a value's consumers may associate differently when
they sit in different stages). The measured per-stage peak of saved-tensor bytes is compared with the model's
``k_x * act_x`` of the same plan (swap and recompute included), and the measured peak of everything the stage
keeps (the ledger's live count: saved tensors, the forward working set with the received and sent values and the
logits beside the loss's buffer, tensors swapped back in or recomputed) with the model's live peak without output
gradients (:func:`~workbench.llm.dawnpiper.costs.live_bytes` with ``gradients=False``, plus the other
micro-batches' saved tensors). Both pairs are equal to the byte (tested); the model's full live peak adds the
gradient of each unit's output during its backward, which the ledger does not see.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from workbench.distributed.launch import run_workers
from workbench.llm.dawnpiper.costs import Partition, StagePlan, live_bytes
from workbench.llm.dawnpiper.graph import NodeGraph
from workbench.llm.dawnpiper.pipeline import PipeSpec, pipeline_worker
from workbench.llm.dawnpiper.trace import TracedGPT
from workbench.llm.gpt import build_gpt, lm_loss, random_tokens

__all__ = ["StageCheck", "CheckOutcome", "reference_step", "run_check"]


@dataclass(frozen=True, kw_only=True)
class StageCheck:
    """One stage: measured and modelled peak of saved tensors (bytes; equal), measured peak of everything live
    (bytes, weights and optimizer state excluded: saved tensors, the forward working set, tensors swapped back in
    or recomputed), the model's live peak (with output gradients) and without them (the part the ledger counts:
    equal to the measured), torch's own count of the stage's allocated bytes at their peak (None: not asked; it
    also sees gradients, the parameters' ``.grad``, communication buffers and temporaries, so it is at least the
    measured live peak), swapped and recomputed, bytes sent."""

    stage: int
    units: list[int]
    measured_peak_bytes: int
    model_peak_bytes: int
    measured_live_peak_bytes: int
    model_live_peak_bytes: int
    model_live_peak_no_grad_bytes: int
    torch_peak_bytes: int | None
    swap_values: int
    recompute_values: int
    swapped_out_bytes: int
    model_swap_bytes: int
    recomputed: int
    bytes_sent: int


@dataclass(frozen=True, kw_only=True)
class CheckOutcome:
    """The pipeline against single-process training: exactness, per-stage memory, the whole run's seconds
    (process start included), the pipeline step's seconds (slowest stage, from a common barrier) and the
    single-process step's."""

    schedule: str
    stages: tuple[StageCheck, ...]
    max_abs_loss_diff: float
    max_abs_grad_diff: float
    max_rel_grad_diff: float
    loss: float
    seconds: float
    step_seconds: float
    reference_seconds: float


def reference_step(
    traced: TracedGPT, micro_batches: int, data_seed: int, repeats: int = 3
) -> tuple[list[float], dict, float]:
    """Single-process training of the same GPT on the same micro-batches: losses, gradients, and the fastest of
    ``repeats`` step times (a fresh model each time; the first pays one-off costs). One intra-op thread, as each
    pipeline stage process runs (like for like; on a busy machine more threads can be far slower)."""
    best = float("inf")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        losses, model, best = _reference_runs(traced, micro_batches, data_seed, repeats)
    finally:
        torch.set_num_threads(threads)
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    return losses, grads, best


def _reference_runs(traced: TracedGPT, micro_batches: int, data_seed: int, repeats: int) -> tuple[list, Any, float]:
    best = float("inf")
    for _ in range(repeats):
        model = build_gpt(traced.config)
        tokens, targets = random_tokens(traced.config, traced.micro_batch * micro_batches, seed=data_seed)
        start = time.perf_counter()
        losses = []
        for tok, tgt in zip(tokens.chunk(micro_batches), targets.chunk(micro_batches), strict=True):
            loss = lm_loss(model(tok), tgt)
            (loss / micro_batches).backward()
            losses.append(float(loss.detach()))
        best = min(best, time.perf_counter() - start)
    return losses, model, best


def _live_no_grad(graph: NodeGraph, plan: StagePlan) -> int:
    """The model's live peak of ``plan`` without output gradients, weights and optimizer state (bytes)."""
    live = live_bytes(graph, plan.start, plan.stop, plan.swap, plan.recompute, gradients=False)
    return int(round((plan.in_flight - 1) * plan.act_bytes + live))


def run_check(
    traced: TracedGPT,
    graph: NodeGraph,
    partition: Partition,
    *,
    schedule: str,
    micro_batches: int,
    data_seed: int = 1,
    timeout_s: float = 120.0,
    torch_memory: bool = False,
) -> CheckOutcome:
    """Run ``partition`` (its cuts and its swap/recompute plan) on ``len(partition.stages)`` processes
    (``torch_memory``: each stage also counts its allocations with torch's profiler, which slows it).

    Raises WorkerFailed / WorkerTimeout (see :func:`~workbench.distributed.launch.run_workers`).
    """
    spec = PipeSpec(
        cuts=partition.cuts,
        schedule=schedule,
        micro_batches=micro_batches,
        data_seed=data_seed,
        swap=tuple(s.swap for s in partition.stages),
        recompute=tuple(s.recompute for s in partition.stages),
        torch_memory=torch_memory,
    )
    S = len(partition.stages)
    start = time.perf_counter()
    results = run_workers(
        pipeline_worker, S, traced, graph, spec, timeout_s=timeout_s,
        oom_hint="try a smaller setting (fewer micro-batches, a smaller model or fewer stages)",
    )  # fmt: skip
    seconds = time.perf_counter() - start
    ref_losses, ref_grads, ref_seconds = reference_step(traced, micro_batches, data_seed)
    losses = results[-1]["losses"]
    loss_diff = max(abs(a - b) for a, b in zip(losses, ref_losses, strict=True))
    grads = {k: v for r in results for k, v in r["grads"].items()}
    if set(grads) != set(ref_grads):
        raise RuntimeError(f"pipeline gradients cover {sorted(set(ref_grads) - set(grads))} incompletely")
    abs_diff = max(float((grads[k] - ref_grads[k]).abs().max()) for k in ref_grads)
    scale = max(float(g.abs().max()) for g in ref_grads.values())
    stages = []
    for r, plan in zip(results, partition.stages, strict=True):
        stages.append(
            StageCheck(
                stage=r["stage"],
                units=[plan.start, plan.stop],
                measured_peak_bytes=int(r["peak_bytes"]),
                model_peak_bytes=int(plan.in_flight * plan.act_bytes),
                measured_live_peak_bytes=int(r["live_peak_bytes"]),
                model_live_peak_bytes=int(round(plan.peak_bytes - plan.static_bytes)),
                model_live_peak_no_grad_bytes=_live_no_grad(graph, plan),
                torch_peak_bytes=r.get("torch_peak_bytes"),
                swap_values=len(plan.swap),
                recompute_values=len(plan.recompute),
                swapped_out_bytes=int(r["swapped_out_bytes"]),
                model_swap_bytes=int(plan.swap_bytes * micro_batches),
                recomputed=int(r["recomputed"]),
                bytes_sent=int(r["bytes_sent"]),
            )
        )
    return CheckOutcome(
        schedule=schedule,
        stages=tuple(stages),
        max_abs_loss_diff=loss_diff,
        max_abs_grad_diff=abs_diff,
        max_rel_grad_diff=abs_diff / scale if scale else abs_diff,
        loss=sum(ref_losses) / len(ref_losses),
        seconds=seconds,
        step_seconds=max(r["step_seconds"] for r in results),
        reference_seconds=ref_seconds,
    )
