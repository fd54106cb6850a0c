"""DawnPiper panel: per-stage peak memory of every partitioner against the budget, and iteration time (MODEL at
paper scale). Draws :func:`workbench.llm.dawnpiper.study.panel_view`; the study memoises every partition."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from widgets.base import Panel
from workbench.llm.dawnpiper.config import DawnpiperViewConfig
from workbench.llm.dawnpiper.study import DawnpiperView, panel_view

COLORS = {
    "compute-balanced": "#ff7f0e",
    "memory-balanced": "#2ca02c",
    "pipedream": "#d62728",
    "vpipe": "#9467bd",
    "dawnpiper": "#1f77b4",
}


class DawnpiperPanel(Panel):
    """Move the model size, stages, memory budget, micro-batches and PCIe bandwidth; see where each partitioner runs
    out of memory and what swapping costs."""

    technique = "dawnpiper"
    title = "DawnPiper: per-stage memory and iteration time of five partitioners (MODEL, A100)"
    config = DawnpiperViewConfig
    static_slider = ("stages", (2, 4, 8))

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        mem = go.Figure(
            layout=dict(
                title="Peak memory per stage (MODEL)", barmode="group", height=360,
                xaxis=dict(title="stage"), yaxis=dict(title="peak memory (GB)"),
            )
        )  # fmt: skip
        for name, color in COLORS.items():
            mem.add_trace(go.Bar(x=[], y=[], name=name, marker_color=color))
        mem.add_trace(go.Scatter(x=[], y=[], mode="lines", name="budget", line=dict(color="black", dash="dash")))
        it = go.Figure(
            layout=dict(
                title="Iteration time (MODEL; missing bar: does not fit)", height=320,
                xaxis=dict(title="partitioner"), yaxis=dict(title="seconds per iteration"),
            )
        )  # fmt: skip
        it.add_trace(go.Bar(x=[], y=[], marker_color=list(COLORS.values()), name="iteration time"))
        return [mem, it]

    def compute(self, values: dict[str, Any]) -> DawnpiperView:
        return panel_view(DawnpiperViewConfig.from_dict(values))

    def draw(self, figures: list[Any], result: DawnpiperView, values: dict[str, Any]) -> None:
        mem, it = figures
        stages = list(range(len(result.stage_peak_gb[0])))
        for i in range(len(result.names)):
            mem.data[i].x = stages
            mem.data[i].y = list(result.stage_peak_gb[i])
        mem.data[len(result.names)].x = [-0.5, len(stages) - 0.5]
        mem.data[len(result.names)].y = [result.budget_gb, result.budget_gb]
        it.data[0].x = list(result.names)
        it.data[0].y = [t if math.isfinite(t) else None for t in result.iteration_s]

    def notes(self, result: DawnpiperView, values: dict[str, Any]) -> str:
        fits = [n for n, ok in zip(result.names, result.feasible, strict=True) if ok]
        return f"{result.units} nodes; fits the budget: {', '.join(fits) or 'none'}. {result.label}"


def check_figure(stages_check: list[dict], title: str = "Measured vs modelled activation peak per stage") -> go.Figure:
    """Grouped bars: the saved-tensor peak measured in each real stage process beside the model's k_x * act_x."""
    fig = go.Figure(
        layout=dict(
            title=title,
            barmode="group",
            height=340,
            xaxis=dict(title="stage"),
            yaxis=dict(title="saved-tensor bytes at peak"),
        )  # fmt: skip
    )
    x = [s["stage"] for s in stages_check]
    fig.add_trace(go.Bar(x=x, y=[s["measured_peak_bytes"] for s in stages_check], name="measured (real pipeline)"))
    fig.add_trace(go.Bar(x=x, y=[s["model_peak_bytes"] for s in stages_check], name="model"))
    fig.add_trace(go.Bar(x=x, y=[s["swapped_out_bytes"] for s in stages_check], name="swapped to host (measured)"))
    return fig


def max_batch_figure(points: list[Any], title: str = "Largest trainable micro-batch (MODEL, A100 40 GB)") -> go.Figure:
    """Grouped bars per paper-scale setting: each partitioner's largest micro-batch (log axis; 0 = cannot train)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            barmode="group",
            height=380,
            xaxis=dict(title="model, stages"),
            yaxis=dict(title="micro-batch (samples)", type="log"),
        )  # fmt: skip
    )
    x = [f"{p.model}, S={p.stages}" for p in points]
    for name, color in COLORS.items():
        fig.add_trace(go.Bar(x=x, y=[p.max_batch[name] or None for p in points], name=name, marker_color=color))
    return fig


def markdown_table(rows: list[dict], columns: list[str] | None = None) -> Any:
    """A Markdown table of ``rows`` (dicts) for a notebook cell; numbers through :func:`workbench.results.fmt`."""
    from IPython.display import Markdown

    from workbench.results import fmt

    columns = columns or list(rows[0]) if rows else []

    def cell(v: Any) -> str:
        text = v if isinstance(v, str) else str(v) if isinstance(v, (list, tuple, dict)) else fmt(v)
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows]
    return Markdown("\n".join(lines))
