"""FIITED panel: memory vs AUC (cached sweeps, with the chosen budget marked), FIITED's dimension per id against
its frequency, the pruning schedule, and the data's skew; training runs behind a button with a progress bar.

Every number drawn comes from ``workbench.recsys.fiited.study`` (``fiited_view``, ``panel_sweep``); this module
only builds and updates figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from widgets.live_figure import side_by_side
from workbench.recsys.fiited.config import FiitedViewConfig
from workbench.recsys.fiited.study import (
    PANEL_BUDGETS,
    PANEL_SEEDS,
    FiitedView,
    dims_by_frequency,
    fiited_view,
    panel_sweep,
)
from workbench.recsys.fiited.train import METHODS

COLORS = {
    "fiited": "#d62728",
    "full": "#000000",
    "uniform": "#1f77b4",
    "row-prune": "#2ca02c",
    "mixed-dim": "#9467bd",
    "hashing": "#8c564b",
    "elem-prune": "#ff7f0e",
}


class FiitedPanel(Panel):
    """Move the budget, the skew, the rows and the schedule; run the sweep for the current data set."""

    technique = "fiited"
    title = "FIITED: per-vector embedding dimension pruning, memory vs AUC"
    config = FiitedViewConfig
    options = {
        "rows": (10_000, 20_000, 40_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000),
        "skew": (0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0),
    }
    static_slider = ("budget_fraction", PANEL_BUDGETS)

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.action = Action(
            self,
            "Run sweep",
            self._sweep,
            total=len(PANEL_BUDGETS) * len(PANEL_SEEDS) * len(METHODS),
            label="runs",
            tooltip="train every method at every budget and seed for the current data set and schedule (cached)",
        )
        self.run_button, self.progress = self.action.button, self.action.progress

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        curve = go.Figure(
            layout=dict(
                title="Memory vs AUC: press 'Run sweep' (cached runs only)",
                height=380,
                xaxis=dict(title="embedding bytes / full table", type="log"),
                yaxis=dict(title="test AUC (mean, 95 % CI over seeds)"),
                legend=dict(orientation="h", y=-0.25),
            )
        )
        for m in METHODS:
            curve.add_trace(
                go.Scatter(
                    x=[],
                    y=[],
                    mode="lines+markers",
                    name=m,
                    line=dict(color=COLORS[m]),
                    error_y=dict(type="data", array=[], visible=True),
                )
            )
        curve.add_trace(go.Scatter(x=[], y=[], mode="lines", name="budget", line=dict(color="#999", dash="dot")))
        dims = go.Figure(
            layout=dict(
                title="FIITED: dimension per id vs its frequency",
                height=340,
                xaxis=dict(title="occurrences in training data", type="log"),
                yaxis=dict(title="mean dimension kept"),
                showlegend=False,
            )
        )
        dims.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", line=dict(color=COLORS["fiited"])))
        hist = go.Figure(
            layout=dict(
                title="FIITED: histogram of dimensions",
                height=300,
                showlegend=False,
                xaxis=dict(title="dimension", type="category"),
                yaxis=dict(title="ids"),
            )
        )
        hist.add_trace(go.Bar(x=[], y=[], marker=dict(color=COLORS["fiited"])))
        sched = go.Figure(
            layout=dict(
                title="Pruning schedule: chunk budget per step",
                height=300,
                showlegend=False,
                xaxis=dict(title="training step"),
                yaxis=dict(title="live chunks / full", range=[0, 1.05]),
            )
        )
        sched.add_trace(go.Scatter(x=[], y=[], mode="lines", line=dict(color=COLORS["fiited"], shape="hv")))
        skew = go.Figure(
            layout=dict(
                title="Data: expected occurrences per id rank (largest features)",
                height=320,
                xaxis=dict(title="rank", type="log"),
                yaxis=dict(title="occurrences", type="log"),
                legend=dict(orientation="h", y=-0.3),
            )
        )
        for _ in range(3):
            skew.add_trace(go.Scatter(x=[], y=[], mode="lines"))
        return [curve, dims, hist, sched, skew]

    def compute(self, values: dict[str, Any]) -> FiitedView:
        return fiited_view(values)

    def draw(self, figures: list[Any], view: FiitedView, values: dict[str, Any]) -> None:
        curve, dims, hist, sched, skew = figures
        sw = view.sweep
        lo_auc, hi_auc = 0.5, 1.0
        if sw is not None:
            aucs = []
            for i, m in enumerate(METHODS):
                if m not in sw.auc:
                    curve.data[i].x, curve.data[i].y, curve.data[i].error_y.array = [], [], []
                    continue
                x = sw.bytes[m] / sw.full_bytes
                curve.data[i].x, curve.data[i].y = x, sw.auc[m][:, 0]
                curve.data[i].error_y.array = sw.auc[m][:, 1]
                aucs.extend(sw.auc[m][:, 0])
            lo_auc, hi_auc = float(np.nanmin(aucs)) - 0.01, float(np.nanmax(aucs)) + 0.01
            curve.layout.title.text = (
                f"Memory vs AUC, {view.view.rows:,} rows, skew {view.view.skew:g}, "
                f"{len(sw.seeds)} seeds" + (f" (planted model: {sw.oracle_auc:.3f})" if sw.oracle_auc else "")
            )
        else:
            for i in range(len(METHODS)):
                curve.data[i].x, curve.data[i].y, curve.data[i].error_y.array = [], [], []
            curve.layout.title.text = (
                f"Memory vs AUC at {view.view.rows:,} rows, skew {view.view.skew:g}, "
                f"{view.view.schedule}: not run yet: press 'Run sweep'"
            )
        b = view.view.budget_fraction
        curve.data[-1].x, curve.data[-1].y = [b, b], [lo_auc, hi_auc]
        curve.data[-1].name = f"budget {b:g}"
        if view.dims is not None:
            x, y = dims_by_frequency(view.dims, view.freq)
            dims.data[0].x, dims.data[0].y = np.maximum(x, 0.5), y
            values_, counts = np.unique(view.dims, return_counts=True)
            hist.data[0].x, hist.data[0].y = [str(int(v)) for v in values_], counts
            dims.layout.title.text = f"FIITED at budget {view.dims_budget:g}: mean dimension per id vs frequency"
            hist.layout.title.text = f"FIITED at budget {view.dims_budget:g}: histogram of dimensions"
        else:
            dims.data[0].x = dims.data[0].y = hist.data[0].x = hist.data[0].y = []
            dims.layout.title.text = "FIITED: dimension per id vs frequency (run the sweep)"
            hist.layout.title.text = "FIITED: histogram of dimensions (run the sweep)"
        sched.data[0].x, sched.data[0].y = view.schedule_steps, view.schedule_budget
        sched.layout.title.text = (
            f"Pruning schedule ({view.view.schedule}, warm-up {view.view.warmup:g}, every "
            f"{view.view.interval} steps) to budget {b:g}"
        )
        for i in range(3):
            skew.data[i].x, skew.data[i].y = view.ranks[i], view.counts[i]
            skew.data[i].name = view.features[i]

    def notes(self, view: FiitedView, values: dict[str, Any]) -> str:
        text = (
            f"<small>least budget (ids may drop to their feature's default vector): {view.floor_fraction:.4f} of "
            "the full table; FIITED's bytes are its served table (chunks, keys, pointers, default vectors); curves "
            "are real training runs (cached), schedule and skew are computed</small>"
        )
        if view.sweep is not None:
            sw = view.sweep
            i = int(np.argmin([abs(x - view.view.budget_fraction) for x in sw.budgets]))
            fi, full = sw.auc["fiited"][i], sw.auc.get("full", np.full((len(sw.budgets), 2), np.nan))[i]
            text += (
                f"<br>at budget {sw.budgets[i]:g}: FIITED AUC {fi[0]:.4f} &plusmn; {fi[1]:.4f}, full table "
                f"{full[0]:.4f} &plusmn; {full[1]:.4f}"
            )
        return text

    def run_sweep(self) -> None:
        """Train the sweep for the current view (memoised in the study) and redraw."""
        self.action.run()

    def _sweep(self, progress: Progress) -> None:
        panel_sweep(FiitedViewConfig.from_dict(self.values()), on_run=progress.advance)

    def widget(self) -> W.Widget:
        header = W.HTML(f"<b>{html.escape(self.title)}</b>")
        controls = W.Box(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        return W.VBox(
            [
                header,
                controls,
                self.action.widget(),
                self.status,
                self.views[0],
                side_by_side(self.figures[1], self.figures[2]),
                side_by_side(self.figures[3], self.figures[4]),
            ]
        )


# ---- figures and tables for the notebook (drawing only; numbers come from the study) --------------------------
def curve_figure(sweep: Any, metric: str = "auc", *, title: str = "") -> go.Figure:
    """Memory vs ``metric`` ('auc' or 'logloss') per method, mean with 95 % CI over seeds."""
    fig = go.Figure(
        layout=dict(
            title=title,
            height=420,
            xaxis=dict(title="embedding bytes / full table", type="log"),
            yaxis=dict(title=f"test {'AUC' if metric == 'auc' else 'log-loss'} (95 % CI)"),
            legend=dict(orientation="h", y=-0.2),
        )
    )
    data = sweep.auc if metric == "auc" else sweep.logloss
    for m in sweep.methods:
        fig.add_trace(
            go.Scatter(
                x=sweep.bytes[m] / sweep.full_bytes,
                y=data[m][:, 0],
                mode="lines+markers",
                name=m,
                line=dict(color=COLORS[m]),
                error_y=dict(type="data", array=data[m][:, 1]),
            )
        )
    if metric == "auc" and sweep.oracle_auc:
        fig.add_hline(
            y=sweep.oracle_auc,
            line=dict(dash="dot", color="#999"),
            annotation_text=f"planted model {sweep.oracle_auc:.3f}",
        )
    return fig


def uniform_figure(curve: Any, *, title: str = "") -> go.Figure:
    """AUC of uniform tables against their width (mean with 95 % CI), the full table and the planted model."""
    fig = go.Figure(
        layout=dict(
            title=title,
            height=380,
            xaxis=dict(title="floats per id (uniform table)", type="log"),
            yaxis=dict(title="test AUC (95 % CI)"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=list(curve.widths),
            y=curve.auc[:, 0],
            error_y=dict(type="data", array=curve.auc[:, 1]),
            mode="lines+markers",
            name="uniform",
            line=dict(color=COLORS["uniform"]),
        )
    )
    fig.add_hline(y=curve.full_auc, line=dict(color=COLORS["full"]), annotation_text=f"full {curve.full_auc:.3f}")
    if curve.oracle_auc:
        fig.add_hline(
            y=curve.oracle_auc, line=dict(dash="dot", color="#999"), annotation_text=f"planted {curve.oracle_auc:.3f}"
        )
    return fig


def dims_figure(runs: dict[str, Any], *, title: str = "") -> go.Figure:
    """Mean dimension per id against its training frequency, one line per run (e.g. FIITED, mixed-dim)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            height=380,
            xaxis=dict(title="occurrences in training data (+0.5)", type="log"),
            yaxis=dict(title="mean dimension kept"),
        )
    )
    for name, run in runs.items():
        x, y = dims_by_frequency(run.dims, run.freq)
        fig.add_trace(
            go.Scatter(x=x + 0.5, y=y, mode="lines+markers", name=name, line=dict(color=COLORS.get(name, "#444")))
        )
    return fig


def markdown_table(headers: tuple[str, ...], rows: list[tuple]) -> str:
    """A Markdown table of already formatted cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)
