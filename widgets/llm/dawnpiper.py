"""DawnPiper panel: per-stage peak memory of every partitioner against the budget, and iteration time (MODEL at
paper scale). Draws :func:`workbench.llm.dawnpiper.study.panel_view`; the study memoises every partition."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from widgets.base import Panel
from workbench.llm.dawnpiper.study import DawnpiperView, DawnpiperViewConfig, panel_view

COLORS = {
    "compute-balanced": "#ff7f0e",
    "memory-balanced": "#2ca02c",
    "pipedream": "#d62728",
    "vpipe": "#9467bd",
    "dawnpiper": "#1f77b4",
}


class DawnpiperPanel(Panel):
    """Move the model size, stages, memory budget and micro-batches; see where each partitioner runs out."""

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
