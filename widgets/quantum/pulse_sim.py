"""Pulse-sim panel: play one pulse on a transmon of a real device and watch it act.

Everything drawn comes from ``workbench.quantum.pulse_sim.study`` (:func:`pulse_view`: the trajectory of the
pulse from |0>, :func:`rabi_curve`: final populations over the amplitude). Controls that do not apply to the
chosen shape (DRAG beta, flat width) hide themselves. This module only builds and updates figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from widgets.base import Panel
from workbench.quantum.device import pulse_device_names
from workbench.quantum.pulse_sim.config import PulseSimConfig
from workbench.quantum.pulse_sim.study import PulseView, calibration_notes, pulse_view, rabi_curve

LEVEL_COLORS = ("#1f77b4", "#d62728", "#2ca02c")


@dataclass(frozen=True)
class PulseSimPanelView:
    """What the panel draws at one setting: the pulse's simulation (``pulse_view``) and the Rabi curve of its shape
    (``rabi_curve``: amplitudes, final P(1), final P(2))."""

    pulse: PulseView
    rabi_amps: np.ndarray
    rabi_p1: np.ndarray
    rabi_p2: np.ndarray


class PulseSimPanel(Panel):
    """Device, qubit, levels, shape, amplitude, duration, sigma, DRAG beta, width, phase, detuning, noise."""

    technique = "pulse-sim"
    title = "Transmon pulse simulator: one pulse on a real device's qubit (rotating frame, torch)"
    hidden = ("mode", "target", "substeps", "tolerance")
    options = {
        "amp": tuple(np.round(np.linspace(0.0, 1.0, 101), 2)) + (0.17, 0.084),
        "duration": (32, 48, 64, 96, 128, 160, 192, 256, 320, 480, 640, 960, 1280),
        "sigma": (4.0, 8.0, 16.0, 24.0, 32.0, 40.0, 64.0, 96.0, 128.0),
        "beta": tuple(np.round(np.arange(-3.0, 3.01, 0.25), 2)) + (1.06,),
        "width": (0.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0),
        "phase": tuple(np.round(np.linspace(-3.14, 3.14, 17), 3)) + (0.0,),
        "detuning_mhz": (-50.0, -20.0, -10.0, -5.0, -2.0, -1.0, 0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0),
        "noise_scale": (0.0, 1.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
    }
    static_slider = ("amp", (0.04, 0.08, 0.12, 0.17, 0.25, 0.34))

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        device = self.controls["device"]
        device.options = list(pulse_device_names())  # only devices with Hamiltonian data
        device.value = initial["device"]  # (setting the options resets the value)
        self._show_shape_controls(initial["shape"])

    def adjust_controls(self, changed: str) -> None:
        if changed == "shape":
            self._show_shape_controls(self.controls["shape"].value)

    def _show_shape_controls(self, shape: str) -> None:
        self.controls["beta"].layout.display = None if shape == "drag" else "none"
        self.controls["width"].layout.display = None if shape == "gaussian_square" else "none"
        self.controls["sigma"].layout.display = "none" if shape == "constant" else None

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        env = go.Figure(layout=dict(title="Envelope", xaxis=dict(title="time (ns)"), yaxis=dict(title="amplitude"),
                                    height=300))  # fmt: skip
        env.add_trace(go.Scatter(name="I (in phase)", x=[], y=[], line=dict(shape="hv")))
        env.add_trace(go.Scatter(name="Q (quadrature)", x=[], y=[], line=dict(shape="hv")))
        pops = go.Figure(layout=dict(title="Populations during the pulse", xaxis=dict(title="time (ns)"),
                                     yaxis=dict(title="population", range=[-0.02, 1.02]), height=300))  # fmt: skip
        for k in range(3):
            pops.add_trace(go.Scatter(name=f"|{k}>", x=[], y=[], line=dict(color=LEVEL_COLORS[k])))
        rabi = go.Figure(layout=dict(title="Rabi: final populations vs amplitude (no relaxation)", xaxis=dict(title="amplitude"),
                                     yaxis=dict(title="population", range=[-0.02, 1.02]), height=300))  # fmt: skip
        rabi.add_trace(go.Scatter(name="P(1)", x=[], y=[], line=dict(color=LEVEL_COLORS[1])))
        rabi.add_trace(go.Scatter(name="P(2) (leakage)", x=[], y=[], line=dict(color=LEVEL_COLORS[2])))
        rabi.add_trace(go.Scatter(name="this pulse", x=[], y=[], mode="markers", marker=dict(size=11, color="black")))
        bloch = go.Figure(layout=dict(title="Bloch vector (qubit levels)", xaxis=dict(title="time (ns)"),
                                      yaxis=dict(title="component", range=[-1.05, 1.05]), height=300))  # fmt: skip
        for name in ("x", "y", "z"):
            bloch.add_trace(go.Scatter(name=name, x=[], y=[]))
        return [env, pops, rabi, bloch]

    def compute(self, values: dict[str, Any]) -> PulseSimPanelView:
        config = PulseSimConfig.from_dict({**values, "mode": "pulse"})
        return PulseSimPanelView(pulse_view(config), *rabi_curve(config))

    def draw(self, figures: list[Any], result: PulseSimPanelView, values: dict[str, Any]) -> None:
        view, amps, p1, p2 = result.pulse, result.rabi_amps, result.rabi_p1, result.rabi_p2
        env, pops, rabi, bloch = figures
        t_samples = view.times_ns[:-1]
        env.data[0].x, env.data[0].y = t_samples, view.envelope.real
        env.data[1].x, env.data[1].y = t_samples, view.envelope.imag
        levels = view.populations.shape[0]
        for k in range(3):
            pops.data[k].x = view.times_ns if k < levels else []
            pops.data[k].y = view.populations[k] if k < levels else []
        rabi.data[0].x, rabi.data[0].y = amps, p1
        rabi.data[1].x, rabi.data[1].y = (amps, p2) if levels == 3 else ([], [])
        rabi.data[2].x, rabi.data[2].y = [values["amp"]], [view.p1]
        for k in range(3):
            bloch.data[k].x, bloch.data[k].y = view.times_ns, view.bloch[k]
        pops.layout.title.text = (
            f"Populations: {view.device.name} qubit {view.device.qubits[0]}, {view.duration_ns:.1f} ns"
            + (f", T1/T2 / {values['noise_scale']:g}" if values["noise_scale"] else "")
        )

    def notes(self, result: PulseSimPanelView, values: dict[str, Any]) -> str:
        view = result.pulse
        text = (
            f"rotation {view.rotation_deg:.1f} deg; P(1) {view.p1:.4f}, leakage P(2) {view.p2:.2e}; "
            f"as an X gate: fidelity {view.fidelity_x:.5f}, as SX: {view.fidelity_sx:.5f}; "
            f"{view.substeps.substeps} sub-steps per dt"
        )
        config = PulseSimConfig.from_dict(values)
        return text + "".join(f"<br><b>warning:</b> {html.escape(w)}" for w in calibration_notes(config))
