"""Devices panel: how GHZ/QFT fidelity falls with width, depth and noise scale on a real device snapshot, our
torch simulator and qiskit-aer side by side.

Everything drawn comes from ``workbench.quantum.devices.study`` (:func:`~workbench.quantum.devices.study.devices_view`:
memoised sweeps of transpiled mirror circuits). Our simulator redraws live; qiskit-aer runs the same points behind
the "run qiskit-aer" button with a progress bar, and its markers stay for every setting it has computed. This
module only builds and updates figures.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.calibration import device_names
from workbench.quantum.devices.config import DevicesConfig
from workbench.quantum.devices.study import DevicesView, FidelityPoint, SweepKey, devices_view, run_aer_sweeps

COLORS = {"state": "#1f77b4", "hellinger": "#ff7f0e"}


class DevicesPanel(Panel):
    """Device, circuit family, width, depth, noise model and scale; fidelity curves, aer on a button."""

    technique = "devices"
    title = "Noise on real device snapshots: fidelity of GHZ / QFT mirror circuits (ours live, qiskit-aer on demand)"
    #: the live panel stops at 6 qubits and depth 6 (a 7-qubit, depth-8 point costs seconds on 2 cores);
    #: ``workbench run devices --mode fidelity`` goes to 8 and 8
    options = {
        "noise_scale": (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0),
        "width": (2, 3, 4, 5, 6),
        "depth": (1, 2, 3, 4, 5, 6),
    }
    hidden = ("mode", "min_qubits", "max_qubits", "coupling", "engine", "seed")
    static_slider = ("noise_scale", (0.5, 1.0, 2.0, 4.0, 8.0))

    def panel_defaults(self) -> dict[str, Any]:
        return {"mode": "fidelity", "device": "fake_jakarta", "width": 4, "depth": 3}

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.aer_keys: set[SweepKey] = set()  # settings for which aer has run in this panel
        super().__init__(static=static, **values)
        device = self.controls["device"]
        with self._hold():
            current = device.value
            device.options = list(device_names())  # 'all' is for the list mode only
            device.value = current
        self.action = Action(self, "run qiskit-aer", self._run_aer, total=3, label="aer",
                             tooltip="simulate the same points with qiskit-aer")  # fmt: skip
        self.aer_button, self.progress = self.action.button, self.action.progress

    # ---- figures ----------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        figures = []
        for title, axis in (
            ("vs width (qubits), at the chosen depth", "width (qubits)"),
            ("vs depth (repetitions U (U^dag U)^(d-1)), at the chosen width", "depth"),
            ("vs noise scale, at the chosen width and depth", "noise scale (x rates)"),
        ):
            fig = go.Figure(
                layout=dict(
                    title=f"Fidelity {title}",
                    xaxis=dict(title=axis, dtick=None if axis.startswith("noise") else 1),
                    yaxis=dict(title="fidelity", range=[0, 1.02]),
                    height=330,
                    legend=dict(orientation="h", y=-0.3),
                )
            )
            for kind, label in (
                ("state", "state fidelity <psi|rho|psi>"),
                ("hellinger", "Hellinger fidelity (with readout)"),
            ):
                fig.add_trace(
                    go.Scatter(name=f"ours: {label}", mode="lines+markers", x=[], y=[], line=dict(color=COLORS[kind]))
                )
            for kind in ("state", "hellinger"):
                fig.add_trace(
                    go.Scatter(
                        name=f"aer: {kind}",
                        mode="markers",
                        x=[],
                        y=[],
                        marker=dict(symbol="x", size=11, color=COLORS[kind]),
                    )
                )
            figures.append(fig)
        return figures

    @staticmethod
    def config_of(values: dict[str, Any]) -> DevicesConfig:
        return DevicesConfig.from_dict({**values, "mode": "fidelity"})

    def compute(self, values: dict[str, Any]) -> DevicesView:
        config = self.config_of(values)
        return devices_view(config, with_aer=SweepKey.of(config) in self.aer_keys)

    def draw(self, figures: list[Any], view: DevicesView, values: dict[str, Any]) -> None:
        for fig, xs, ours, aer in zip(figures, view.xs, view.ours, view.aer or (None,) * len(figures)):
            fig.data[0].x, fig.data[0].y = xs, [p.state_fidelity for p in ours]
            fig.data[1].x, fig.data[1].y = xs, [p.hellinger_fidelity for p in ours]
            if aer is not None:
                fig.data[2].x, fig.data[2].y = xs, [p.state_fidelity for p in aer]
                fig.data[3].x, fig.data[3].y = xs, [p.hellinger_fidelity for p in aer]
            else:
                fig.data[2].x = fig.data[2].y = fig.data[3].x = fig.data[3].y = []
        c = view.config
        figures[
            0
        ].layout.title.text = (
            f"Fidelity vs width: {c.family.upper()} on {c.device}, depth {c.depth}, {c.noise_model} x{c.noise_scale:g}"
        )

    def notes(self, view: DevicesView, values: dict[str, Any]) -> str:
        point = view.ours[1][-1]
        text = (
            f"{view.config.family.upper()} width {point.width}, depth {point.depth} on {view.config.device}: "
            f"{point.num_gates} gates ({point.two_qubit_gates} two-qubit) after transpilation; state fidelity "
            f"<b>{point.state_fidelity:.4f}</b>, Hellinger <b>{point.hellinger_fidelity:.4f}</b> (ours)"
        )
        if view.aer is not None:
            text += f" &middot; aer agrees to <b>{view.max_abs_diff_vs_aer:.1e}</b>"
        return text

    # ---- aer on demand ------------------------------------------------------------------------------
    def run_aer(self) -> None:
        """Run qiskit-aer on the current points (progress: width, depth and scale sweeps), then redraw."""
        self.action.run()

    def _run_aer(self, progress: Progress) -> None:
        config = self.config_of(self.values())
        run_aer_sweeps(config, on_step=progress)
        self.aer_keys.add(SweepKey.of(config))

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:3], self.action.widget(), *box.children[3:]])


# ---- figures for the notebook ---------------------------------------------------------------------------
def devices_figure(devices: list[dict[str, Any]]) -> go.Figure:
    """Every device snapshot: median two-qubit error vs median T1, marker size ~ qubits, colour = 2q gate."""
    fig = go.Figure(
        layout=dict(
            title="Device snapshots (qiskit-ibm-runtime fake backends): median errors",
            xaxis=dict(title="median T1 (us)", type="log"),
            yaxis=dict(title="median two-qubit gate error", type="log"),
            height=420,
        )
    )
    palette = {"cx": "#1f77b4", "ecr": "#d62728", "cz": "#2ca02c", None: "#7f7f7f"}
    for gate in ("cx", "ecr", "cz"):
        rows = [d for d in devices if d["two_qubit_gate"] == gate and d["median_error_2q"]]
        fig.add_trace(
            go.Scatter(
                name=f"{gate} devices",
                mode="markers",
                x=[d["median_t1_us"] for d in rows],
                y=[d["median_error_2q"] for d in rows],
                text=[d["name"] for d in rows],
                customdata=[[d["num_qubits"], d["median_readout_error"], d["calibration_date"][:10]] for d in rows],
                marker=dict(size=[6 + 3 * d["num_qubits"] ** 0.5 for d in rows], color=palette[gate], opacity=0.7),
                hovertemplate="%{text}: %{customdata[0]} qubits, T1 %{x:.0f} us, 2q error %{y:.2e}, readout "
                "%{customdata[1]:.3f}, calibrated %{customdata[2]}<extra></extra>",
            )
        )
    return fig


def sweep_figure(
    curves: dict[str, list[FidelityPoint]],
    *,
    x: str,
    title: str,
    xs: dict[str, list[float]] | None = None,
    kind: str = "state",
) -> go.Figure:
    """One line per device (``curves[device]``): ``kind`` fidelity ('state' or 'hellinger') against ``x``
    ('width', 'depth', or 'scale' with the x values in ``xs[device]``)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title={"width": "width (qubits)", "depth": "depth", "scale": "noise scale (x rates)"}[x]),
            yaxis=dict(title=f"{'state' if kind == 'state' else 'Hellinger'} fidelity", range=[0, 1.02]),
            height=380,
        )
    )
    for device, points in curves.items():
        xv = xs[device] if xs is not None else [getattr(p, x) for p in points]
        fig.add_trace(
            go.Scatter(
                name=device,
                mode="lines+markers",
                x=xv,
                y=[p.state_fidelity if kind == "state" else p.hellinger_fidelity for p in points],
                customdata=[[p.num_gates, p.two_qubit_gates] for p in points],
                hovertemplate="%{y:.4f} (%{customdata[0]} gates, %{customdata[1]} two-qubit)",
            )
        )
    return fig
