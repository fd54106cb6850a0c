"""NAPA panel: the molecule's energy curve, the native-pulse schedule, and (behind *Optimise*, or from the study's
cache) convergence and error vs schedule duration for NAPA and the gate baselines.

Everything drawn comes from ``workbench.quantum.napa.study`` (``panel_view``: the energy curve, the cached runs
and the ansatz's schedule envelopes; ``vqe``/``baseline`` behind the button); this module only builds and updates
figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.study import KINDS, NapaView, baseline, bond_lengths, panel_view, vqe

COLORS = dict(zip(KINDS, ("#d62728", "#1f77b4", "#2ca02c")))
CHANNELS = {"d0": "#9467bd", "d1": "#8c564b", "u0-1": "#ff7f0e"}


class NapaPanel(Panel):
    """Molecule, bond length, noise, layers, optimiser, budget, progressive, trainable frequency; Optimise button."""

    technique = "napa"
    title = "NAPA: VQE with the device's native pulses (amplitude, phase, frequency, CR duration trainable)"
    hidden = ("device", "control", "target", "shots", "seed", "starts")
    options = {
        "noise_scale": (1.0, 3.0, 10.0, 30.0, 100.0),
        "budget": (20, 60, 100, 200, 400, 800),
    }
    static_slider = ("layers", (1, 2, 3))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.action = Action(self, "Optimise", self._optimise, label="VQE",
                             tooltip="NAPA and both gate baselines at this setting")  # fmt: skip
        self.button, self.progress = self.action.button, self.action.progress

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        self._bond_options(initial["molecule"], initial["bond_length"])
        self._show_noise_scale(initial["noise"])

    def adjust_controls(self, changed: str) -> None:
        if changed == "molecule":
            self._bond_options(self.controls["molecule"].value, None)
        if changed == "noise":
            self._show_noise_scale(self.controls["noise"].value)

    def _show_noise_scale(self, noise: str) -> None:
        """The noise-scale slider only where it acts: on the device's noise (``noise="device"``)."""
        self.controls["noise_scale"].layout.display = None if noise == "device" else "none"

    def _bond_options(self, molecule: str, value: float | None) -> None:
        w = self.controls["bond_length"]
        lengths = list(bond_lengths(molecule))
        pick = value if value in lengths else (0.735 if 0.735 in lengths else 1.0 if 1.0 in lengths else lengths[0])
        if isinstance(w, W.FloatSlider):  # a slider over the shipped lengths only
            new = W.SelectionSlider(options=[(f"{b:g}", b) for b in lengths], value=pick, description=w.description,
                                    continuous_update=False, style=w.style, layout=w.layout)  # fmt: skip
            self.controls["bond_length"] = new
        else:
            with self._hold():
                w.options = [(f"{b:g}", b) for b in lengths]
                w.value = pick

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        scan = go.Figure(layout=dict(title="Ground-state energy", xaxis=dict(title="bond length (A)"),
                                     yaxis=dict(title="energy (Ha)"), height=320))  # fmt: skip
        scan.add_trace(go.Scatter(name="exact (diagonalisation)", x=[], y=[], mode="lines+markers"))
        scan.add_trace(go.Scatter(name="chosen", x=[], y=[], mode="markers", marker=dict(size=12, color="black")))
        for kind in COLORS:
            scan.add_trace(go.Scatter(name=kind, x=[], y=[], mode="markers", marker=dict(color=COLORS[kind], size=9)))
        sched = go.Figure(layout=dict(title="NAPA schedule (|envelope|)", xaxis=dict(title="time (ns)"),
                                      yaxis=dict(title="amplitude"), height=320))  # fmt: skip
        for ch, color in CHANNELS.items():
            sched.add_trace(go.Scatter(name=ch, x=[], y=[], line=dict(color=color)))
        conv = go.Figure(layout=dict(title="Convergence", xaxis=dict(title="energy evaluations"),
                                     yaxis=dict(title="|E - E0| (Ha)", type="log"), height=320))  # fmt: skip
        for kind in COLORS:
            conv.add_trace(go.Scatter(name=kind, x=[], y=[], line=dict(color=COLORS[kind])))
        conv.add_hline(y=1.6e-3, line_dash="dot", annotation_text="chemical accuracy")
        dur = go.Figure(layout=dict(title="Error vs schedule duration", xaxis=dict(title="schedule (ns)"),
                                    yaxis=dict(title="|E - E0| (Ha)", type="log"), height=320))  # fmt: skip
        for kind in COLORS:
            dur.add_trace(go.Scatter(name=kind, x=[], y=[], mode="markers", marker=dict(size=12, color=COLORS[kind])))
        return [scan, sched, conv, dur]

    def compute(self, values: dict[str, Any]) -> NapaView:
        return panel_view(NapaConfig.from_dict(values))

    def draw(self, figures: list[Any], view: NapaView, values: dict[str, Any]) -> None:
        config, runs = view.config, view.runs
        scan, sched, conv, dur = figures
        scan.data[0].x, scan.data[0].y = view.bond_lengths, view.curve
        scan.data[1].x, scan.data[1].y = [config.bond_length], [view.exact]
        scan.layout.title.text = f"{config.molecule}: ground state {view.exact:.5f} Ha at {config.bond_length:g} A"
        for k, ch in enumerate(CHANNELS):
            sched.data[k].x, sched.data[k].y = view.times_ns, view.envelope(ch)
        state = "trained" if view.trained else "initial (not trained yet)"
        sched.layout.title.text = f"NAPA schedule, {config.layers} layer(s), {state}: {view.duration_ns:.1f} ns"
        setting = (f"{config.optimizer} from {config.start}, {config.budget} evaluations, "
                   f"{'progressive' if config.progressive else 'all at once'}, "
                   f"{'amp+phase+frequency' if config.trainable_frequency else 'amp+phase'}, noise {config.noise}"
                   + (f" x{config.noise_scale:g}" if config.noise == "device" else ""))  # fmt: skip
        for k, kind in enumerate(COLORS):
            run = runs[kind]
            scan.data[2 + k].x, scan.data[2 + k].y = ([config.bond_length], [run.energy]) if run else ([], [])
            conv.data[k].x = np.arange(1, len(run.trace) + 1) if run else []
            conv.data[k].y = np.abs(np.array(run.trace) - run.exact) if run else []
            dur.data[k].x, dur.data[k].y = ([run.duration_ns], [max(run.error_hartree, 1e-9)]) if run else ([], [])
        conv.layout.title.text = ("Convergence: " if view.trained else "Not optimised yet (press Optimise): ") + setting

    def notes(self, view: NapaView, values: dict[str, Any]) -> str:
        if not view.trained:
            return "press <b>Optimise</b> to run NAPA and both gate baselines at this setting"
        parts = [f"{k}: {r.error_hartree * 1e3:.2f} mHa ({r.correlation:.0%} of the correlation energy) in "
                 f"{r.duration_ns:.0f} ns" for k, r in view.runs.items() if r]  # fmt: skip
        return html.escape("; ".join(parts))

    def optimise(self) -> None:
        """NAPA and both baselines at the current setting (progress bar), then redraw."""
        self.action.run()

    def _optimise(self, progress: Progress) -> None:
        config = NapaConfig.from_dict(self.values())
        progress(0, config.budget)
        vqe(config, on_evaluation=progress)
        for kind in KINDS[1:]:
            baseline(config, kind)

    def widget(self) -> W.Widget:
        base = super().widget()
        k = len(self.figures)
        return W.VBox([*base.children[:-k], self.action.widget(), *base.children[-k:]])
