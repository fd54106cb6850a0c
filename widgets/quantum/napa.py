"""NAPA panel: the molecule's energy curve, the native-pulse schedule, and (behind *Optimise*, or from the study's
cache) convergence and error vs schedule duration for NAPA and the gate baselines.

Everything drawn comes from ``workbench.quantum.napa`` (``study.vqe``/``baseline``/``cached``, the ansatz's
schedule, the shipped Hamiltonians); this module only builds and updates figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from widgets.base import Panel
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.hamiltonians import bond_lengths, load
from workbench.quantum.napa.study import baseline, cached, vqe
from workbench.quantum.pulse.calibrated import calibrated_natives

COLORS = {"napa": "#d62728", "hea": "#1f77b4", "uccsd": "#2ca02c"}
CHANNELS = {"d0": "#9467bd", "d1": "#8c564b", "u0-1": "#ff7f0e"}


class NapaPanel(Panel):
    """Molecule, bond length, noise, layers, optimiser, budget, progressive, trainable frequency; Optimise button."""

    technique = "napa"
    title = "NAPA: VQE with the device's native pulses (amplitude, phase, frequency, CR duration trainable)"
    hidden = ("device", "control", "target", "shots", "seed")
    options = {
        "noise_scale": (1.0, 3.0, 10.0, 30.0, 100.0),
        "budget": (20, 50, 100, 200, 400, 800),
    }
    static_slider = ("layers", (1, 2, 3))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.button = W.Button(description="Optimise", tooltip="NAPA and both gate baselines at this setting")
        self.progress = W.IntProgress(value=0, min=0, max=1, description="VQE", layout=W.Layout(width="320px"))
        self.button.on_click(lambda _: self.optimise())

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

    def compute(self, values: dict[str, Any]) -> tuple:
        config = NapaConfig.from_dict(values)
        lengths = bond_lengths(config.molecule)
        curve = [load(config.molecule, b).exact for b in lengths]
        runs = {kind: cached(kind, config) for kind in COLORS}
        natives = calibrated_natives(config.device, config.control, config.target, 3)
        ansatz = PulseAnsatz(natives, config.layers, config.trainable_frequency)
        x = np.array(runs["napa"].params) if runs["napa"] is not None else ansatz.initial(config.seed, scale=0.5)
        return config, lengths, curve, runs, ansatz.schedule(x), natives.device.dt

    def draw(self, figures: list[Any], result: tuple, values: dict[str, Any]) -> None:
        config, lengths, curve, runs, schedule, dt = result
        scan, sched, conv, dur = figures
        scan.data[0].x, scan.data[0].y = lengths, curve
        exact = load(config.molecule, config.bond_length).exact
        scan.data[1].x, scan.data[1].y = [config.bond_length], [exact]
        scan.layout.title.text = f"{config.molecule}: ground state {exact:.5f} Ha at {config.bond_length:g} A"
        n = schedule.duration
        for k, ch in enumerate(CHANNELS):
            env = np.zeros(n)
            for p in schedule.plays:
                if p.channel == ch:
                    env[p.start : p.stop] += np.abs(p.samples.detach().numpy())
            sched.data[k].x, sched.data[k].y = np.arange(n) * dt, env
        state = "trained" if runs["napa"] is not None else "initial (not trained yet)"
        sched.layout.title.text = f"NAPA schedule, {config.layers} layer(s), {state}: {n * dt:.1f} ns"
        setting = (f"{config.optimizer}, {config.budget} evaluations, "
                   f"{'progressive' if config.progressive else 'all at once'}, "
                   f"{'amp+phase+frequency' if config.trainable_frequency else 'amp+phase'}, noise {config.noise}"
                   + (f" x{config.noise_scale:g}" if config.noise == "device" else ""))  # fmt: skip
        for k, kind in enumerate(COLORS):
            run = runs[kind]
            scan.data[2 + k].x, scan.data[2 + k].y = ([config.bond_length], [run.energy]) if run else ([], [])
            conv.data[k].x = np.arange(1, len(run.trace) + 1) if run else []
            conv.data[k].y = np.abs(np.array(run.trace) - run.exact) if run else []
            dur.data[k].x, dur.data[k].y = ([run.duration_ns], [max(run.error_hartree, 1e-9)]) if run else ([], [])
        conv.layout.title.text = ("Convergence: " if runs["napa"] else "Not optimised yet (press Optimise): ") + setting

    def notes(self, result: tuple, values: dict[str, Any]) -> str:
        runs = result[3]
        if runs["napa"] is None:
            return "press <b>Optimise</b> to run NAPA and both gate baselines at this setting"
        parts = [f"{k}: {r.error_hartree * 1e3:.2f} mHa in {r.duration_ns:.0f} ns" for k, r in runs.items() if r]
        return html.escape("; ".join(parts))

    def optimise(self) -> None:
        """NAPA and both baselines at the current setting (progress bar), then redraw."""
        config = NapaConfig.from_dict(self.values())
        self.progress.max, self.progress.value = config.budget, 0

        def tick(done: int, total: int) -> None:
            self.progress.value = min(done, total)

        try:
            vqe(config, on_evaluation=tick)
            for kind in ("hea", "uccsd"):
                baseline(config, kind)
        except ValueError as exc:
            self.status.value = f'<span style="color:#b00020">&#9888; {html.escape(str(exc))}</span>'
            return
        self.redraw()

    def widget(self) -> W.Widget:
        base = super().widget()
        k = len(self.figures)
        return W.VBox([*base.children[:-k], W.HBox([self.button, self.progress]), *base.children[-k:]])
