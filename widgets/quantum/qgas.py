"""QGAS panel: the best energy error against iteration for each searcher beside fixed ansaetze, cost (CNOTs)
against quality for every proposal, and noiseless against device-noise errors.

Everything drawn comes from ``workbench.quantum.qgas.study`` (:func:`~workbench.quantum.qgas.study.qgas_view`).
The default problem's comparison is computed (and cached) when the panel is built; other problems run behind
the "run search" button with a progress bar. This module only builds and updates figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.qgas.config import QgasViewConfig
from workbench.quantum.qgas.study import (
    CHEMICAL_ACCURACY,
    SEARCHERS,
    STUDY,
    QgasView,
    compare,
    qgas_view,
)

COLORS = {"local": "#1f77b4", "random": "#ff7f0e", "evolutionary": "#2ca02c"}
REF_COLORS = ("#7f7f7f", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#d62728")
FLOOR = 1e-12  # errors below are drawn at the floor (log axes; training reaches round-off)
MAX_REFS = 7


def _floor(x: float | None) -> float | None:
    return None if x is None else max(x, FLOOR)


class QgasPanel(Panel):
    """Problem, highlighted searcher and iteration; the search itself behind a button."""

    technique = "qgas"
    config = QgasViewConfig
    title = "QGAS: ansatz search by a proposer in the loop vs random and evolutionary search and fixed ansaetze"
    hidden = ("iterations",)
    options = {"iteration": tuple(range(1, STUDY["iterations"] + 1))}
    static_slider = ("iteration", (1, 2, 3, 4, 6, 8, 10, 12))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        # the problem the panel is built with is computed at build (default results, cached in study); others
        # behind the button
        self.requested: set[str] = {values.get("problem", QgasViewConfig().problem)}
        super().__init__(static=static, **values)
        self.action = Action(self, "run search", self._search, label="search",
                             tooltip="run every searcher on this problem (10-60 s)")  # fmt: skip
        self.button, self.progress = self.action.button, self.action.progress

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        slider = self.controls["iteration"]
        value = min(initial["iteration"], initial["iterations"])
        with self._hold():
            slider.options = list(range(1, initial["iterations"] + 1))
            slider.value = value

    # ---- figures ----------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [_curve_figure(), _cost_figure(), _noise_figure()]

    def compute(self, values: dict[str, Any]) -> QgasView:
        config = QgasViewConfig.from_dict(values)
        return qgas_view(config, compute=config.problem in self.requested)

    def draw(self, figures: list[Any], view: QgasView, values: dict[str, Any]) -> None:
        curve, cost, noise = figures
        p, c, it = view.problem, view.comparison, view.config.iteration
        unit = p.unit
        curve.layout.title.text = (
            f"{p.name}: best energy error ({unit}) vs iteration, {view.config.proposer} highlighted"
        )
        cost.layout.title.text = f"{p.name}: cost vs quality, {view.config.proposer}'s proposals up to iteration {it}"
        noise.layout.title.text = f"{p.name}: noiseless vs {c.device if c else 'device'} noise, best of each"
        if c is None:
            for fig in figures:
                fig.layout.title.text += " (not computed: press 'run search')"
                for trace in fig.data:
                    trace.x, trace.y = [], []
            return
        xs = list(range(1, view.config.iterations + 1))
        for k, name in enumerate(SEARCHERS):
            trace = curve.data[k]
            trace.x, trace.y = xs, [_floor(e) for e in c.searches[name].best_error_curve()]
            trace.line.width = 4 if name == view.config.proposer else 1.5
        for k in range(MAX_REFS):
            trace = curve.data[len(SEARCHERS) + k]
            if k < len(c.references):
                ref = c.references[k]
                trace.x, trace.y = [1, xs[-1]], [_floor(ref.error)] * 2
                trace.name, trace.showlegend = f"{ref.name} ({ref.cnots} CNOTs)", True
            else:
                trace.x, trace.y, trace.showlegend = [], [], False
        acc = curve.data[len(SEARCHERS) + MAX_REFS]
        acc.x, acc.y = ([1, xs[-1]], [CHEMICAL_ACCURACY] * 2) if p.kind == "vqe" else ([], [])
        sel = curve.data[-1]
        best_curve = c.searches[view.config.proposer].best_error_curve()
        sel.x, sel.y = ([it], [_floor(best_curve[it - 1])]) if best_curve[it - 1] is not None else ([], [])

        run = c.searches[view.config.proposer]
        noisy = c.noisy[view.config.proposer]
        shown = [r for r in run.records[:it] if r.valid]
        cost.data[0].x = [r.cnots for r in shown]
        cost.data[0].y = [_floor(r.energy_error) for r in shown]
        cost.data[0].text = [f"iteration {r.iteration + 1}, depth {r.depth}" for r in shown]
        cost.data[0].marker.color = COLORS[view.config.proposer]
        cost.data[1].x = [r.cnots for r in shown if r.iteration in noisy]
        cost.data[1].y = [_floor(noisy[r.iteration]) for r in shown if r.iteration in noisy]
        cost.data[1].text = [f"iteration {r.iteration + 1}" for r in shown if r.iteration in noisy]
        cost.data[1].marker.color = COLORS[view.config.proposer]
        cost.data[2].x, cost.data[2].y = [r.cnots for r in c.references], [_floor(r.error) for r in c.references]
        cost.data[2].text = [r.name for r in c.references]
        refs = [r for r in c.references if r.noisy_error is not None]
        cost.data[3].x, cost.data[3].y = [r.cnots for r in refs], [_floor(r.noisy_error) for r in refs]
        cost.data[3].text = [r.name for r in refs]
        rec = view.record
        cost.data[4].x, cost.data[4].y = (
            ([rec.cnots], [_floor(rec.energy_error)]) if rec is not None and rec.valid else ([], [])
        )

        names, clean, dirty = [], [], []
        for name in SEARCHERS:
            b = c.searches[name].best
            if b is not None:
                names.append(f"{name} best ({b.cnots} CNOTs)")
                clean.append(_floor(b.energy_error))
                dirty.append(_floor(c.noisy[name].get(b.iteration)))
        for r in c.references:
            names.append(f"{r.name} ({r.cnots} CNOTs)")
            clean.append(_floor(r.error))
            dirty.append(_floor(r.noisy_error))
        noise.data[0].x, noise.data[0].y = names, clean
        noise.data[1].x, noise.data[1].y = names, dirty

    def notes(self, view: QgasView, values: dict[str, Any]) -> str:
        if view.comparison is None:
            return f"{html.escape(view.problem.description)}: search not run yet (press 'run search')"
        rec, best, p = view.record, view.best, view.problem
        run = view.comparison.searches[view.config.proposer]
        text = f"{view.config.proposer}, iteration {view.config.iteration}: "
        if rec is not None and rec.valid:
            text += f"proposal valid, depth {rec.depth}, {rec.cnots} CNOTs, error {rec.energy_error:.2e} {p.unit}"
        elif rec is not None:
            text += f"proposal refused ({html.escape(rec.reason)}: {html.escape(rec.error[:120])})"
        if best is not None:
            text += f"; best so far <b>{best.energy_error:.2e} {p.unit}</b> ({best.cnots} CNOTs)"
        return text + f"; validity {run.valid_fraction:.0%}"

    # ---- the search behind the button -------------------------------------------------------------
    def run_search(self) -> None:
        """Compute the current problem's comparison (every searcher, references, noise) with progress."""
        self.action.run()

    def _search(self, progress: Progress) -> None:
        values = self.values()
        compare(values["problem"], iterations=values["iterations"], on_step=progress)
        self.requested.add(values["problem"])

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:-3], self.action.widget(), *box.children[-3:]])


def _curve_figure() -> go.Figure:
    """Best energy error vs iteration, one line per search."""
    curve = go.Figure(
        layout=dict(
            title="Best energy error vs iteration",
            xaxis=dict(title="iteration (proposals)", dtick=1),
            yaxis=dict(title="E_best - E_exact (floored at 1e-12)", type="log"),
            height=360,
        )
    )
    for name in SEARCHERS:
        curve.add_trace(go.Scatter(name=name, mode="lines+markers", x=[], y=[], line=dict(color=COLORS[name])))
    for k in range(MAX_REFS):
        curve.add_trace(
            go.Scatter(name="", mode="lines", x=[], y=[], line=dict(color=REF_COLORS[k], dash="dash"), showlegend=False)
        )
    curve.add_trace(
        go.Scatter(name="chemical accuracy", mode="lines", x=[], y=[], line=dict(color="black", dash="dot"))
    )
    curve.add_trace(
        go.Scatter(
            name="selected", mode="markers", x=[], y=[], marker=dict(size=14, symbol="circle-open", color="black")
        )
    )
    return curve


def _cost_figure() -> go.Figure:
    """Cost (CNOT-equivalents) vs quality of the proposals and references."""
    cost = go.Figure(
        layout=dict(
            title="Cost vs quality",
            xaxis=dict(title="CNOT-equivalents"),
            yaxis=dict(title="energy error (floored at 1e-12)", type="log"),
            height=360,
        )
    )
    cost.add_trace(go.Scatter(name="proposals, noiseless", mode="markers", x=[], y=[], text=[], marker=dict(size=9)))
    cost.add_trace(
        go.Scatter(
            name="proposals, device noise",
            mode="markers",
            x=[],
            y=[],
            text=[],
            marker=dict(size=9, symbol="circle-open"),
        )
    )
    cost.add_trace(
        go.Scatter(
            name="references, noiseless",
            mode="markers",
            x=[],
            y=[],
            text=[],
            marker=dict(size=12, symbol="star", color="#555"),
        )
    )
    cost.add_trace(
        go.Scatter(
            name="references, device noise",
            mode="markers",
            x=[],
            y=[],
            text=[],
            marker=dict(size=12, symbol="x", color="#555"),
        )
    )
    cost.add_trace(
        go.Scatter(
            name="selected iteration",
            mode="markers",
            x=[],
            y=[],
            marker=dict(size=16, symbol="circle-open", color="black"),
        )
    )
    return cost


def _noise_figure() -> go.Figure:
    """Noiseless vs device-noise energy error bars."""
    noise = go.Figure(
        layout=dict(
            title="Noiseless vs device noise",
            barmode="group",
            yaxis=dict(title="energy error (floored at 1e-12)", type="log"),
            height=360,
        )
    )
    noise.add_trace(go.Bar(name="noiseless", x=[], y=[]))
    noise.add_trace(go.Bar(name="device noise", x=[], y=[]))
    return noise
