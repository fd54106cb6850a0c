"""Headless runner of GreedySnake.

``workbench run greedysnake --mode check --layers L --micro-batches M ... --json``: the real offloaded training
with every schedule (horizontal = ZeRO-Infinity order, vertical = the snake, vertical-overlap = the snake with
the deferred optimizer), each against plain in-memory training, bytes counted against the closed-form model,
and the step time the simulator predicts from this machine's measured rates.

``workbench run greedysnake --mode model --model gpt-65b --gpus G --json``: the MODEL at paper scale:
per-schedule throughput (tokens/s) and ``speedup_vs_horizontal``, with the LP's placement and alpha (the snake's) and
horizontal's own placement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.llm.greedysnake.claims import PAPER_SPEEDUPS
from workbench.llm.greedysnake.config import GreedySnakeConfig
from workbench.llm.greedysnake.experiment import check_run, model_point
from workbench.registry import Technique
from workbench.results import Result, fmt, fmt_bytes

__all__ = ["run", "format_table", "TECHNIQUE", "GreedySnakeResult", "ScheduleCheck", "ScheduleModel"]


@dataclass(frozen=True, kw_only=True)
class ScheduleCheck:
    """One schedule of the check: parameters vs the in-memory reference, bytes counted vs modelled."""

    name: str
    max_abs_param_diff: float
    max_rel_param_diff: float
    bit_identical: bool
    bytes_read: int
    bytes_written: int
    model_bytes_read: int
    model_bytes_written: int
    by_class: dict[str, dict[str, int]]
    model_by_class: dict[str, dict[str, int]]
    seconds: float
    modelled_seconds: float
    device_peak_bytes: int


@dataclass(frozen=True, kw_only=True)
class ScheduleModel:
    """One schedule at paper scale (MODEL)."""

    name: str
    throughput: float
    iteration_seconds: float
    speedup_vs_horizontal: float
    exposed_optimizer_seconds: float
    ssd_bytes_per_iteration: float


@dataclass(frozen=True, kw_only=True)
class GreedySnakeResult(Result):
    """What ``workbench run greedysnake --json`` prints. check mode: ``schedules`` (issue schema: name,
    max_abs_param_diff, bytes_read, bytes_written, model_bytes_read, model_bytes_written, seconds; plus the
    relative difference, the bytes by tier and class, the simulator's prediction, the device peak), the device
    budget and the measured rates. model mode: ``schedules`` with throughput and speedup_vs_horizontal (MODEL),
    the LP's choice and the paper's numbers beside ours."""

    OMIT_NONE = ("rates", "lp", "paper_speedup", "label", "budget_bytes", "min_budget_bytes", "reference")

    technique: str = "greedysnake"
    mode: str
    schedules: list[Any]
    label: str | None = None
    budget_bytes: int | None = None
    min_budget_bytes: int | None = None
    reference: str | None = None
    rates: dict[str, float] | None = None
    lp: dict[str, Any] | None = None
    paper_speedup: float | None = None


def run(config: GreedySnakeConfig) -> GreedySnakeResult:
    """Run the check (real training) or the model (paper scale) of ``config``.

    Raises ValueError naming the parameter for impossible settings (a budget below one unit and one
    micro-batch; a layer or a micro-batch that does not fit the GPU at paper scale).
    """
    if config.mode == "check":
        out = check_run(config)
        return GreedySnakeResult(
            mode="check", schedules=[ScheduleCheck(**s) for s in out["schedules"]], budget_bytes=out["budget_bytes"],
            min_budget_bytes=out["min_budget_bytes"], reference=out["reference"], rates=out["rates"],
        )  # fmt: skip
    out = model_point(config)
    return GreedySnakeResult(
        mode="model", label="MODEL", schedules=[ScheduleModel(**s) for s in out["schedules"]], lp=out["lp"],
        paper_speedup=PAPER_SPEEDUPS.get((config.model, config.gpus)),
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """A short text report."""
    lines = []
    if result["mode"] == "check":
        lines.append(f"greedysnake check: device budget {fmt_bytes(result['budget_bytes'])} "
                     f"(least possible {fmt_bytes(result['min_budget_bytes'])}); reference {result['reference']}")  # fmt: skip
        lines.append(f"{'schedule':18}{'max |dp|':>12}{'read':>12}{'model':>12}{'written':>12}{'model':>12}"
                     f"{'s':>8}{'sim s':>8}")  # fmt: skip
        for s in result["schedules"]:
            lines.append(
                f"{s['name']:18}{s['max_abs_param_diff']:>12.3g}{fmt_bytes(s['bytes_read']):>12}"
                f"{fmt_bytes(s['model_bytes_read']):>12}{fmt_bytes(s['bytes_written']):>12}"
                f"{fmt_bytes(s['model_bytes_written']):>12}{s['seconds']:>8.3f}{s['modelled_seconds']:>8.3f}"
            )
    else:
        lp = result["lp"]
        lines.append(f"greedysnake MODEL {lp['model']} on {lp['gpus']} GPU(s), global batch {lp['global_batch']}, "
                     f"LP: alpha {lp['alpha']}, SSD fractions ckpt {lp['ckpt_ssd']:.2f} para {lp['para_ssd']:.2f} "
                     f"opt {lp['opt_ssd']:.2f}")  # fmt: skip
        lines.append(f"  horizontal at its own placement ({lp['horizontal_placement']}): SSD fractions ckpt "
                     f"{lp['horizontal_ckpt_ssd']:.2f} para {lp['horizontal_para_ssd']:.2f} opt "
                     f"{lp['horizontal_opt_ssd']:.2f} gradient buffer {lp['horizontal_grad_ssd']:.2f}")  # fmt: skip
        for s in result["schedules"]:
            lines.append(f"  {s['name']:18} {fmt(s['throughput'])} tokens/s  x{s['speedup_vs_horizontal']:.2f} "
                         f"(exposed optimizer {s['exposed_optimizer_seconds']:.1f} s/iteration)")  # fmt: skip
        if result.get("paper_speedup") is not None:
            lines.append(f"  paper (arXiv 2512.17570 v1 abstract): x{result['paper_speedup']:.2f}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="greedysnake",
    config=GreedySnakeConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.greedysnake:GreedySnakePanel",
    notebook="notebooks/llm/greedysnake.ipynb",
    smoke={
        "mode": "check",
        "layers": 1,
        "hidden": 8,
        "heads": 2,
        "seq": 4,
        "vocab": 11,
        "micro_batches": 2,
        "steps": 1,
    },  # fmt: skip
    processes=False,
)
