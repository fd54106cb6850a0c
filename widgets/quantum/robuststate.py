"""RobustState panel: fidelity vs machine executions per training method on a device snapshot (the cached
default study), the cost MODEL per step, and the machine's coherent-error draw; training of the chosen setting
behind a button with a progress bar.

Everything drawn comes from ``workbench.quantum.robuststate.study``: :func:`panel_view` (cached study curves
for the case, executions per step and steps within the budget, the error draw; memoised) and
:func:`train` / :func:`trained_run` (the button's run, memoised there); this module only builds and updates
figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from workbench.quantum.robuststate.config import RobustStateViewConfig
from workbench.quantum.robuststate.study import PanelView, RunRecord, panel_view, train, trained_run

COLORS = {
    "robuststate": "#d62728",
    "unaware": "#7f7f7f",
    "parameter-shift": "#1f77b4",
    "spsa": "#2ca02c",
    "bo": "#9467bd",
}
LABELS = {
    "robuststate": "RobustState",
    "unaware": "noise-unaware",
    "parameter-shift": "parameter shift",
    "spsa": "SPSA",
    "bo": "Bayesian opt.",
}
MACHINE_METHODS = ("robuststate", "parameter-shift", "spsa", "bo")


@dataclass(frozen=True)
class RobustStatePanelView:
    """What the panel draws at one setting: the view config, the study's ``panel_view`` (cached curves, cost
    MODEL, the error draw) and the run of this setting if trained (``trained_run``; None: not trained yet)."""

    config: RobustStateViewConfig
    view: PanelView
    mine: RunRecord | None


class RobustStatePanel(Panel):
    """Device, target, width, method, coherent-error strength, shots, budget; train on a button."""

    technique = "robuststate"
    config = RobustStateViewConfig
    title = "RobustState: fidelity on a noisy machine vs machine executions (simulated device snapshots)"
    static_slider = ("device", ("fake_geneva", "fake_hanoi", "fake_lagos", "fake_nairobi", "fake_perth"))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.action = Action(
            self,
            "train this setting",
            self._train,
            label="training",
            button_style="primary",
            tooltip="pre-train noiselessly, then fine-tune on the machine with the chosen method and budget",
        )
        self.train_button, self.progress = self.action.button, self.action.progress
        super().__init__(static=static, **values)

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        curves = go.Figure()
        for m in MACHINE_METHODS:
            curves.add_trace(go.Scatter(x=[], y=[], mode="lines", name=LABELS[m], line=dict(color=COLORS[m], width=2)))
        curves.add_trace(
            go.Scatter(
                x=[], y=[], mode="lines", name="noise-unaware (deployed)", line=dict(color="#7f7f7f", dash="dash")
            )
        )
        curves.add_trace(
            go.Scatter(x=[], y=[], mode="lines+markers", name="your run", line=dict(color="black", width=3))
        )
        curves.update_layout(height=420, yaxis_title="true state fidelity on the machine")
        curves.update_xaxes(title_text="machine executions (circuits x shots)", type="log")

        cost = make_subplots(
            rows=1, cols=2, subplot_titles=("executions per step (MODEL)", "steps within the budget (MODEL)")
        )
        cost.add_trace(go.Bar(x=[], y=[], marker_color=[], showlegend=False), row=1, col=1)
        cost.add_trace(go.Bar(x=[], y=[], marker_color=[], showlegend=False), row=1, col=2)
        cost.update_yaxes(type="log", row=1, col=1)
        cost.update_layout(height=360)

        machine = make_subplots(
            rows=1,
            cols=3,
            subplot_titles=("over-rotation per qubit (%)", "detuning per qubit (kHz)", "ZZ per edge (rad)"),
        )
        for col in (1, 2, 3):
            machine.add_trace(go.Bar(x=[], y=[], marker_color="#ff7f0e", showlegend=False), row=1, col=col)
        machine.update_layout(height=340)
        return [curves, cost, machine]

    def compute(self, values: dict[str, Any]) -> RobustStatePanelView:
        cfg = RobustStateViewConfig.from_dict(values)
        view = panel_view(cfg.device, cfg.target, cfg.qubits, cfg.coherent_strength, cfg.shots, cfg.budget, 16)
        return RobustStatePanelView(cfg, view, trained_run(cfg.run_config()))

    def draw(self, figures: list[Any], result: RobustStatePanelView, values: dict[str, Any]) -> None:
        cfg, view, mine = result.config, result.view, result.mine
        curves, cost, machine = figures
        for i, m in enumerate(MACHINE_METHODS):
            x, y = view.curves.get(m, ([], []))
            curves.data[i].x = [max(e, 1) for e in x]
            curves.data[i].y = y
            curves.data[i].line.width = 4 if m == cfg.method else 1.5
        top = max(cfg.budget, 10)
        curves.data[4].x = [1, top] if view.unaware is not None else []
        curves.data[4].y = [view.unaware, view.unaware] if view.unaware is not None else []
        if mine is not None:
            curves.data[5].x = [max(e, 1) for e in mine.trace.executions]
            curves.data[5].y = mine.trace.fidelity
        else:
            curves.data[5].x, curves.data[5].y = [], []
        cached = "cached default study (strength 1, 256 shots, 16 settings)" if view.curves else "no cached study"
        curves.layout.title.text = (
            f"{cfg.target.upper()} on {cfg.qubits} qubits of {cfg.device} (qubits {list(view.layout)}): {cached}; "
            f"budget {cfg.budget:,}"
        )
        names = [LABELS[m] for m in MACHINE_METHODS]
        colors = [COLORS[m] if m == cfg.method else "#c7c7c7" for m in MACHINE_METHODS]
        cost.data[0].x, cost.data[0].y = names, [view.cost[m] for m in MACHINE_METHODS]
        cost.data[1].x, cost.data[1].y = names, [view.steps[m] for m in MACHINE_METHODS]
        cost.data[0].marker.color = cost.data[1].marker.color = colors
        cost.layout.title.text = (
            f"MODEL: cost per step at {cfg.shots} shots x 16 settings; chosen: {LABELS[cfg.method]}"
        )
        qubits = [f"q{q}" for q in range(cfg.qubits)]
        machine.data[0].x, machine.data[0].y = qubits, view.over_rotation
        machine.data[1].x, machine.data[1].y = qubits, view.detuning_khz
        machine.data[2].x, machine.data[2].y = view.zz_edges, view.zz
        machine.layout.title.text = (
            f"the machine's coherent errors (seeded draw x {cfg.coherent_strength:g}) on {cfg.device}"
        )

    def notes(self, result: RobustStatePanelView, values: dict[str, Any]) -> str:
        view, mine = result.view, result.mine
        ratio = view.cost["parameter-shift"] / max(view.cost["robuststate"], 1)
        text = f"parameter shift costs {ratio:.0f}x RobustState per step (MODEL)"
        if mine is not None:
            text += (
                f"; your run: fidelity {mine.before.fidelity:.3f} -> {mine.after.fidelity:.3f}, coherent error "
                f"{mine.before.coherent_error:.3f} -> {mine.after.coherent_error:.3f} in {mine.executions:,} executions"
            )
        elif not view.curves:
            text += "; no cached study for this case: press 'train this setting'"
        return html.escape(text)

    def train(self) -> None:
        """Train the current setting (memoised in the study) with a progress bar, then redraw."""
        self.action.run()

    def _train(self, progress: Progress) -> None:
        train(RobustStateViewConfig.from_dict(self.values()).run_config(), progress=progress)

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:-4], self.action.widget(), *box.children[-4:]])
