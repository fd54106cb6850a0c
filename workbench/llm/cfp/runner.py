"""Headless runner of CFP: ``workbench run cfp --mode search --layers L --mesh AxB ... --json``.

``search``: CFP's plan (ParallelBlocks, segments, DP) beside brute force (small graphs), the Alpa-style ILP,
Alpa's objective, data parallelism and Megatron, all priced by one cost model (labelled MODEL).
``check``: the same search at a small size, then the CFP, data-parallel and Megatron plans run for real on
``gpus`` gloo processes and compared with the unsharded GPT blocks; bytes each rank sent vs the cost model's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.experiment import PlanCheck, PlanEntry, check_plans, plan_entries
from workbench.llm.cfp.search import search
from workbench.registry import Technique
from workbench.results import Result, fmt, fmt_bytes

LABEL = "MODEL"


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """A plan priced by the cost model: seconds per step, memory and bytes sent per device, fits the limit."""

    name: str
    seconds: float
    memory_bytes: int
    bytes_sent: int
    fits: bool
    search_seconds: float | None


@dataclass(frozen=True, kw_only=True)
class CfpResult(Result):
    """What ``workbench run cfp --json`` prints.

    Issue keys: operators, blocks, segments, combinations_before / combinations_after (strategy combinations of
    the per-operator space and of the block space; ``*_log10`` alongside), plan_cost (seconds per training step,
    cost MODEL), brute_force_cost (per-operator optimum; null above ``brute_force_limit``), ilp_cost, search_seconds
    (CFP: blocks + segments + DP), ilp_seconds, plan. Check mode adds max_abs_err_out, max_abs_err_grad,
    bytes_per_rank, model_bytes_per_rank (the CFP plan's; every plan's under ``checks``).
    """

    OMIT_NONE = (
        "max_abs_err_out", "max_abs_err_grad", "max_abs_err_param_grad", "bytes_per_rank", "model_bytes_per_rank",
        "checks",
    )  # fmt: skip

    technique: str = "cfp"
    label: str = LABEL
    mode: str
    model: str
    mesh: str
    gpus: int
    layers: int
    operators: int
    blocks: int
    segments: dict
    combinations_before: float
    combinations_after: float
    combinations_before_log10: float
    combinations_after_log10: float
    plan_cost: float
    plan_memory_bytes: int
    memory_limit_bytes: float
    memory_method: str
    brute_force_cost: float | None
    brute_force_blocks_cost: float | None
    ilp_cost: float | None
    ilp_exact: bool
    ilp_status: str
    alpa_cost: float | None
    search_seconds: float
    ilp_seconds: float | None
    brute_force_seconds: float | None
    profile_runs: int
    profile_runs_per_layer: int
    baselines: list[Baseline]
    speedup_vs_data_parallel: float | None
    speedup_vs_megatron: float | None
    speedup_vs_alpa: float | None
    plan: list[PlanEntry]
    max_abs_err_out: float | None = None
    max_abs_err_grad: float | None = None
    max_abs_err_param_grad: float | None = None
    bytes_per_rank: list[int] | None = None
    model_bytes_per_rank: int | None = None
    checks: list[PlanCheck] | None = None


def _pow10(x: float) -> float:
    return 10.0**x if x < 308 else math.inf


def _ratio(base, plan: float) -> float | None:
    return None if base is None or not base.fits else base.seconds / plan


def run(config: CfpConfig) -> CfpResult:
    """Search (and in check mode run) a plan. Raises ValueError for impossible settings (naming the parameter)."""
    out = search(config)
    p = out.problem
    ops = out.graph.ops
    plan = plan_entries(out)
    bases = [b for b in (out.data_parallel, out.megatron, out.alpa, out.ilp) if b is not None]
    seg = out.segments
    checks = check_plans(config, out) if config.mode == "check" else None
    cfp_check = checks[0] if checks else None
    bf_secs = out.brute_force.search_seconds if out.brute_force else None
    return CfpResult(
        mode=config.mode,
        model=config.model,
        mesh=config.mesh,
        gpus=config.gpus,
        layers=out.graph.layers,
        operators=len(ops),
        blocks=len(out.blocks.ops),
        segments={
            "period_blocks": seg.period,
            "repeats": seg.repeats,
            "unique": seg.unique,
            "unique_blocks": seg.unique_blocks,
        },  # fmt: skip
        combinations_before=_pow10(p.combinations_log10),
        combinations_after=_pow10(out.blocks.combinations_log10),
        combinations_before_log10=p.combinations_log10,
        combinations_after_log10=out.blocks.combinations_log10,
        plan_cost=out.plan_cost.seconds,
        plan_memory_bytes=out.plan_cost.memory_bytes,
        memory_limit_bytes=out.memory_limit,
        memory_method=out.dp.method,
        brute_force_cost=out.brute_force.seconds if out.brute_force else None,
        brute_force_blocks_cost=out.brute_force_blocks.seconds if out.brute_force_blocks else None,
        ilp_cost=out.ilp.seconds if out.ilp else None,
        ilp_exact=out.ilp_exact,
        ilp_status=out.ilp_status,
        alpa_cost=out.alpa.seconds if out.alpa else None,
        search_seconds=out.cfp_seconds,
        ilp_seconds=out.ilp.search_seconds if out.ilp else None,
        brute_force_seconds=bf_secs,
        profile_runs=out.profile_runs,
        profile_runs_per_layer=out.profile_runs_per_layer,
        baselines=[
            Baseline(
                name=b.name,
                seconds=b.seconds,
                memory_bytes=b.memory_bytes,
                bytes_sent=b.bytes_sent,
                fits=b.fits,
                search_seconds=b.search_seconds,
            )
            for b in bases
        ],  # fmt: skip
        speedup_vs_data_parallel=_ratio(out.data_parallel, out.plan_cost.seconds),
        speedup_vs_megatron=_ratio(out.megatron, out.plan_cost.seconds),
        speedup_vs_alpa=_ratio(out.alpa, out.plan_cost.seconds),
        plan=plan,
        max_abs_err_out=max(c.max_abs_err_out for c in checks) if checks else None,
        max_abs_err_grad=max(max(c.max_abs_err_grad, c.max_abs_err_param_grad) for c in checks) if checks else None,
        max_abs_err_param_grad=max(c.max_abs_err_param_grad for c in checks) if checks else None,
        bytes_per_rank=cfp_check.bytes_per_rank if cfp_check else None,
        model_bytes_per_rank=cfp_check.model_bytes_per_rank if cfp_check else None,
        checks=checks,
    )


def _ilp_text(r: dict[str, Any]) -> str:
    """The ILP's line: its cost and time, or why there is none (not run, infeasible, time limit)."""
    status = r.get("ilp_status", "optimal")
    if status == "not run":
        return "ILP not run"
    if r["ilp_cost"] is None:
        why = (
            "its time limit passed before it found any plan: raise ilp_time_limit_s"
            if status == "time limit"
            else status
        )
        return f"ILP: no plan ({why})"
    scope = "full depth" if r["ilp_exact"] else "tiled from fewer layers"
    proof = "optimal" if status == "optimal" else "time limit: best found, not proven optimal"
    return f"ILP {fmt(r['ilp_cost'])} in {fmt(r['ilp_seconds'])} s ({proof}, {scope})"


def format_table(result: dict[str, Any]) -> str:
    """A short text report."""
    r = result
    lines = [
        f"cfp  {r['model']}  L={r['layers']}  mesh={r['mesh']} ({r['gpus']} GPUs)  [{r['label']}: cost model]",
        f"  {r['operators']} operators -> {r['blocks']} ParallelBlocks; segments: period {r['segments']['period_blocks']}"
        f" blocks x {r['segments']['repeats']}, {r['segments']['unique']} unique; combinations "
        f"10^{r['combinations_before_log10']:.1f} -> 10^{r['combinations_after_log10']:.1f}",
        f"  profiling: {r['profile_runs']} block strategies (unique segments) vs {r['profile_runs_per_layer']} per layer",
        f"  CFP plan {fmt(r['plan_cost'])} s/step, {fmt_bytes(r['plan_memory_bytes'])} per device "
        f"(limit {fmt_bytes(r['memory_limit_bytes'])}, {r['memory_method']}), search {fmt(r['search_seconds'])} s",
        f"  brute force {fmt(r['brute_force_cost'])} (blocks {fmt(r['brute_force_blocks_cost'])}); "
        f"{_ilp_text(r)}; Alpa objective {fmt(r['alpa_cost'])}",
    ]
    for b in r["baselines"]:
        lines.append(
            f"  {b['name']:<14} {fmt(b['seconds'])} s/step  {fmt_bytes(b['memory_bytes'])}  "
            f"{'fits' if b['fits'] else 'over the memory limit'}"
        )
    for c in r.get("checks") or []:
        lines.append(
            f"  check {c['plan']:<14} out err {c['max_abs_err_out']:.2e}  grad err {c['max_abs_err_grad']:.2e}  "
            f"param grad err {c['max_abs_err_param_grad']:.2e}  bytes/rank {c['bytes_per_rank'][0]:,} "
            f"(model {c['model_bytes_per_rank']:,}{', equal' if c['bytes_match'] else ', DIFFERENT'})"
        )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="cfp",
    config=CfpConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.cfp:CfpPanel",
    notebook="notebooks/llm/cfp.ipynb",
    smoke={
        "mode": "check",
        "gpus": 2,
        "mesh": "2",
        "layers": 1,
        "hidden": 8,
        "heads": 2,
        "seq": 4,
        "batch": 2,
        "dtype": "float64",
    },  # fmt: skip
    processes=True,
)
