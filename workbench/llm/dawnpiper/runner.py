"""Headless runner of DawnPiper.

``workbench run dawnpiper --mode partition --stages S --memory-gb B --json``: every partitioner (compute- and
memory-balanced, PipeDream, vPipe (MODEL), DawnPiper) on the node graph, with cuts, stage peaks, iteration time
and the largest trainable micro-batch; on small graphs (<= 30 nodes, <= 4 stages) the exhaustive optimum and
DawnPiper's gap to it (and the interval search's alone). The layer-granular peers (PipeDream, vPipe) are left out,
with the reason in ``not_run``, where the graph has fewer layers than stages; DawnPiper then runs alone.
``--mode check`` runs DawnPiper's partition as a real pipeline on S gloo processes and
reports ``max_abs_loss_diff``, the gradient difference and measured vs modelled stage peaks. ``--mode model``:
paper scale (MODEL): max batch per partitioner and throughput at equal batch, beside the paper's ratios.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.llm.dawnpiper.claims import PAPER_CLAIMS, PAPER_VERSION
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.experiment import (
    PaperPoint,
    check,
    exhaustive_gap,
    graph_of,
    max_batches,
    not_run,
    paper_point,
    partitions,
)
from workbench.llm.dawnpiper.model import MODEL_LABEL
from workbench.llm.gpt import PAPER_SHAPES
from workbench.registry import Technique
from workbench.results import Result, fmt, fmt_bytes

__all__ = ["PartitionerRow", "DawnpiperResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class PartitionerRow(Result):
    """One partitioner: cuts (unit where each later stage starts), stage peaks (bytes), iteration seconds (null
    when infeasible), largest trainable micro-batch (null in check mode, which does not search it; 4096 is the
    search's cap), search seconds."""

    name: str
    cuts: list[int]
    stage_peak_bytes: list[float]
    iteration_seconds: float | None
    feasible: bool
    max_batch: int | None
    tokens_per_second: float | None
    search_seconds: float


@dataclass(frozen=True, kw_only=True)
class DawnpiperResult(Result):
    """What ``workbench run dawnpiper --json`` prints."""

    OMIT_NONE: ClassVar[tuple[str, ...]] = (
        "exhaustive", "interval", "stages_check", "max_abs_loss_diff", "max_abs_grad_diff", "max_rel_grad_diff",
        "ratios", "check_seconds", "step_seconds", "reference_seconds", "cuts", "paper_point", "not_run",
    )  # fmt: skip

    technique: str = "dawnpiper"
    mode: str
    model: str
    label: str
    nodes: int
    stages: int
    micro_batches: int
    micro_batch: int
    memory_gb: float
    schedule: str
    partitioners: list[PartitionerRow]
    not_run: dict[str, str] | None = None
    exhaustive: dict | None = None
    interval: list[list[int]] | None = None
    cuts: list[int] | None = None
    stages_check: list[dict] | None = None
    max_abs_loss_diff: float | None = None
    max_abs_grad_diff: float | None = None
    max_rel_grad_diff: float | None = None
    check_seconds: float | None = None
    step_seconds: float | None = None
    reference_seconds: float | None = None
    paper_point: dict | None = None
    ratios: list[dict] | None = None
    paper_claims: dict | None = None


def _rows(config: DawnpiperConfig, with_max_batch: bool) -> list[PartitionerRow]:
    parts, _ = partitions(config)
    mb = max_batches(config) if with_max_batch else {}
    seq = config.seq if config.model == "traced" else PAPER_SHAPES[config.model].seq
    tokens = config.micro_batch * config.micro_batches * seq
    rows = []
    for name, p in parts.items():
        ok = p.feasible and math.isfinite(p.iteration_s)
        rows.append(
            PartitionerRow(
                name=name,
                cuts=list(p.cuts),
                stage_peak_bytes=[float(b) for b in p.stage_peak_bytes],
                iteration_seconds=p.iteration_s if ok else None,
                feasible=p.feasible,
                max_batch=int(mb[name]) if name in mb else None,
                tokens_per_second=tokens / p.iteration_s if ok else None,
                search_seconds=p.search_s,
            )
        )
    return rows


def _ratios(p: PaperPoint) -> list[dict]:
    """This setting's ratios beside the abstract's "up to" numbers (MODEL; the verdicts, over the family of
    settings and with each plan's fit on the device, are computed in :mod:`~workbench.llm.dawnpiper.claims`)."""
    mb = p.max_batch

    def ratio(a: int, b: int) -> float | None:
        return a / b if b else None

    return [
        {"claim": "max trainable batch vs vPipe", "paper": PAPER_CLAIMS["max_batch_vs_vpipe"],
         "ours": ratio(mb["dawnpiper"], mb["vpipe"])},
        {"claim": "max trainable batch vs PipeDream", "paper": PAPER_CLAIMS["max_batch_vs_pipedream"],
         "ours": ratio(mb["dawnpiper"], mb["pipedream"])},
        {"claim": "speed-up vs vPipe at equal batch", "paper": PAPER_CLAIMS["speedup_vs_vpipe"],
         "ours": p.speedup_vs_vpipe},
    ]  # fmt: skip


def run(config: DawnpiperConfig) -> DawnpiperResult:
    """Run the configured mode. Raises ValueError for impossible settings (see the config and
    :func:`~workbench.llm.dawnpiper.experiment.check_budget`); WorkerFailed / WorkerTimeout in check mode."""
    common = dict(
        mode=config.mode, model=config.model, nodes=graph_of(config).n, stages=config.stages,
        micro_batches=config.micro_batches, micro_batch=config.micro_batch, memory_gb=config.memory_gb,
        schedule=config.schedule, paper_claims=PAPER_CLAIMS, not_run=not_run(config) or None,
    )  # fmt: skip
    label = MODEL_LABEL if config.model != "traced" else "traced GPT profiled on this machine"
    if config.mode == "check":
        part, out = check(config)
        return DawnpiperResult(
            label="real pipeline on gloo processes vs single-process training",
            partitioners=_rows(config, False),
            cuts=list(part.cuts),
            stages_check=[vars(s) for s in out.stages],
            max_abs_loss_diff=out.max_abs_loss_diff,
            max_abs_grad_diff=out.max_abs_grad_diff,
            max_rel_grad_diff=out.max_rel_grad_diff,
            check_seconds=out.seconds,
            step_seconds=out.step_seconds,
            reference_seconds=out.reference_seconds,
            **common,
        )
    _, account = partitions(config)
    point = paper_point(config) if config.mode == "model" and config.model != "traced" else None
    return DawnpiperResult(
        label=label,
        partitioners=_rows(config, True),
        exhaustive=exhaustive_gap(config),
        interval=account.get("interval"),
        paper_point=point,
        ratios=_ratios(point) if point is not None else None,
        **common,
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report."""
    lines = [
        f"dawnpiper  mode={result['mode']}  model={result['model']} ({result['nodes']} nodes)  "
        f"stages={result['stages']}  M={result['micro_batches']} x {result['micro_batch']}  "
        f"memory={result['memory_gb']:g} GB  {result['schedule']}  [{result['label']}]",
        f"{'partitioner':>18} {'feasible':>8} {'iteration':>11} {'max batch':>9}  stage peaks / cuts",
    ]
    for r in result["partitioners"]:
        it = "-" if r["iteration_seconds"] is None else f"{fmt(r['iteration_seconds'])} s"
        peaks = ", ".join(fmt_bytes(b) for b in r["stage_peak_bytes"])
        lines.append(
            f"{r['name']:>18} {fmt(r['feasible']):>8} {it:>11} {fmt(r['max_batch']):>9}  {peaks} / {r['cuts']}"
        )
    for name, why in (result.get("not_run") or {}).items():
        lines.append(f"{name:>18} not run: {why}")
    if result.get("exhaustive"):
        e = result["exhaustive"]
        if e["dawnpiper_gap"] is None:
            ours = next(r for r in result["partitioners"] if r["name"] == "dawnpiper")
            lines.append(
                f"  exhaustive optimum: no partition fits (DawnPiper finds none either: {fmt(not ours['feasible'])})"
            )
        else:
            lines.append(
                f"  exhaustive optimum cuts {e['cuts']}; DawnPiper gap {e['dawnpiper_gap']:.2%} (the interval search "
                f"alone {e['interval_search_gap']:.2%}); optimum inside the theorem's interval: "
                f"{fmt(e['optimum_inside_interval'])}"
            )
    if result.get("stages_check"):
        lines.append(
            f"  pipeline vs single process: max |loss diff| {fmt(result['max_abs_loss_diff'])}, "
            f"max |grad diff| {fmt(result['max_abs_grad_diff'])}"
        )
        for s in result["stages_check"]:
            lines.append(
                f"  stage {s['stage']} units {s['units']}: measured peak {fmt_bytes(s['measured_peak_bytes'])} "
                f"(model {fmt_bytes(s['model_peak_bytes'])}), live {fmt_bytes(s['measured_live_peak_bytes'])} "
                f"(model {fmt_bytes(s['model_live_peak_no_grad_bytes'])} + output gradients "
                f"{fmt_bytes(s['model_live_peak_bytes'] - s['model_live_peak_no_grad_bytes'])}), "
                f"swapped {fmt_bytes(s['swapped_out_bytes'])} "
                f"(model {fmt_bytes(s['model_swap_bytes'])}), recomputed {s['recomputed']}"
            )
    if result.get("paper_point"):
        p = result["paper_point"]
        tps = ", ".join(f"{k} {fmt(v)}" for k, v in p["tokens_per_s"].items())
        lines.append(
            f"  MODEL at paper scale: at the equal micro-batch {p['equal_batch']} (vPipe's largest): tokens/s {tps}"
        )
        if p["compute_balanced_idle"] is not None:
            lines.append(f"  compute-balanced at its largest batch leaves {p['compute_balanced_idle']:.0%} of the budget idle "
                         "on its most idle stage")  # fmt: skip
    for v in result.get("ratios") or []:
        lines.append(f"  {v['claim']}: paper (up to, {PAPER_VERSION}) {v['paper']}x, ours here {fmt(v['ours'])}x")
    if result.get("ratios"):
        lines.append("  verdicts (every setting, with each plan's fit on the device): workbench claims dawnpiper")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="dawnpiper",
    config=DawnpiperConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.dawnpiper:DawnpiperPanel",
    notebook="notebooks/llm/dawnpiper.ipynb",
    smoke={"mode": "check", "stages": 3, "micro_batches": 4, "memory_gb": 0.00012},
    processes=True,
)
