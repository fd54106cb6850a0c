"""QuEst panel: a trained graph transformer predicts a circuit's PST on a real device snapshot, live, next to its
two baselines; qiskit-aer simulates the same points on demand.

Everything drawn comes from ``workbench.quantum.quest.study``: :func:`~workbench.quantum.quest.study.quest_view`
(placements, the device's effective noise and all three models' predictions along the noise-scale and width
sweeps, memoised) and :func:`~workbench.quantum.quest.study.simulate_points` (qiskit-aer, memoised per point);
this module only builds and updates figures. aer's points stay for every setting the panel has simulated.
Figures: (a) PST vs noise scale and vs width, (b) predicted vs true PST on the checkpoint's held-out test set,
(c) training curves, (d) the device's coupling map coloured by its (effective) error rates.
"""

from __future__ import annotations

import math
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from widgets.quantum.quest_figures import (
    MODEL_COLORS,
    MODEL_DASH,
    MODEL_LABELS,
    fill_heldout_scatter,
    fill_training_curves,
    heldout_scatter_figure,
    label_colors,
    training_curves_figure,
)
from workbench.quantum.device import get_device
from workbench.quantum.quest.net import MODELS
from workbench.quantum.quest.study import (
    SCALES,
    PointKey,
    QuestView,
    QuestViewConfig,
    coupler_errors,
    depth_options,
    device_choices,
    device_layout,
    qubit_values,
    quest_view,
    simulate_points,
    width_range,
)

EDGE_BINS = 6


#: the device map's two colourbars (couplers, qubits) side by side under the map, never over each other
COLORBAR_BELOW = dict(orientation="h", xanchor="left", y=-0.02, yanchor="top", len=0.42, thickness=12)


def _sweep_figure() -> go.Figure:
    """Predicted PST vs noise scale (left) and vs width (right): each model, aer's points and the current setting
    (empty traces; the panel fills them)."""
    sweep = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.06,
        subplot_titles=("vs noise scale (at the chosen width)", "vs width (at the chosen scale)"),
    )
    for col in (1, 2):
        for m in MODELS:
            sweep.add_trace(
                go.Scatter(
                    x=[],
                    y=[],
                    mode="lines+markers",
                    name=MODEL_LABELS[m] + (" (predicted)" if m == "transformer" else " (baseline)"),
                    legendgroup=m,
                    showlegend=col == 1,
                    marker=dict(size=5),
                    line=dict(color=MODEL_COLORS[m], dash=MODEL_DASH[m], width=3 if m == "transformer" else 2),
                    hovertemplate="%{x}: predicted PST %{y:.3f}<extra>" + MODEL_LABELS[m] + "</extra>",
                ),
                row=1,
                col=col,
            )
        sweep.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers",
                name="qiskit-aer (simulated)",
                legendgroup="aer",
                showlegend=col == 1,
                marker=dict(symbol="x", size=10, color="black"),
                hovertemplate="%{x}: simulated PST %{y:.3f}<extra>qiskit-aer</extra>",
            ),
            row=1,
            col=col,
        )
        sweep.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers",
                name="current setting",
                legendgroup="current",
                showlegend=col == 1,
                hoverinfo="skip",
                marker=dict(symbol="circle-open", size=16, color="#d62728", line=dict(width=2)),
            ),
            row=1,
            col=col,
        )
    sweep.update_xaxes(
        title_text="noise scale (x gate and readout errors)",
        type="log",
        tickvals=list(SCALES),
        ticktext=[f"{s:g}" for s in SCALES],
        row=1,
        col=1,
    )
    sweep.update_xaxes(title_text="width (qubits)", dtick=1, row=1, col=2)
    sweep.update_yaxes(title_text="PST  P(0...0) after U U^-1", range=[-0.02, 1.04], row=1, col=1)
    sweep.update_layout(title="Predicted PST", height=420, legend=dict(orientation="h", y=-0.22), margin=dict(t=80))
    return sweep


def _device_figure() -> go.Figure:
    """The device's coupling map: edges binned by two-qubit error, the circuit's pairs, couplers, qubits and the
    circuit's qubits circled (empty traces; the panel fills them)."""
    device = go.Figure(
        layout=dict(
            height=460,
            xaxis=dict(visible=False),
            plot_bgcolor="white",
            yaxis=dict(visible=False, scaleanchor="x"),
            showlegend=False,
            margin=dict(t=70, l=10, r=10, b=90),
        )
    )
    for color in pc.sample_colorscale("Reds", [0.3 + 0.7 * i / (EDGE_BINS - 1) for i in range(EDGE_BINS)]):
        device.add_trace(go.Scatter(x=[], y=[], mode="lines", line=dict(color=color, width=7), hoverinfo="skip"))
    device.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="lines",
            line=dict(color="black", width=2.5),
            hoverinfo="skip",
            name="used by the circuit's two-qubit gates",
        )
    )
    device.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="markers",
            hovertemplate="%{text}<extra></extra>",
            text=[],
            marker=dict(
                size=9,
                color=[],
                colorscale="Reds",
                symbol="diamond",
                colorbar=dict(title=dict(text="2q error", side="top"), **COLORBAR_BELOW, x=0),
            ),
        )
    )
    device.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="markers+text",
            text=[],
            hovertext=[],
            hoverinfo="text",
            textfont=dict(size=10),
            marker=dict(
                size=24,
                color=[],
                line=dict(color="#333", width=1),
                colorbar=dict(title=dict(text="", side="top"), **COLORBAR_BELOW, x=0.55),
            ),
        )
    )
    device.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="markers+text",
            text=[],
            textposition="top center",
            hoverinfo="skip",
            textfont=dict(size=11, color="black"),
            marker=dict(symbol="circle-open", size=34, color="black", line=dict(width=3)),
        )
    )
    return device


class QuestPanel(Panel):
    """Device, noise, family, width, depth, seed; predicted PST live, aer on a button; test scatter, training
    curves and the device's coupling map."""

    technique = "quest"
    config = QuestViewConfig
    title = "QuEst: predicted PST (graph transformer vs two baselines) on real device snapshots, qiskit-aer on demand"
    hidden = ("checkpoint",)
    static_slider = ("noise_scale", (0.25, 0.5, 1.0, 2.0, 4.0))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.simulated: dict[PointKey, float] = {}  # points simulated in this panel (shown as aer markers)
        self._depth_memory = {"random": 40, "algorithm": 1}
        self.action = Action(
            self,
            "simulate with qiskit-aer",
            self._simulate,
            label="aer",
            button_style="primary",
            tooltip="density-matrix PST of every point on the curves (memoised)",
        )
        self.simulate_button, self.progress = self.action.button, self.action.progress
        family = values.get("family", QuestViewConfig.__dataclass_fields__["family"].default)
        self.options = {"noise_scale": SCALES, "depth": depth_options(family)}
        super().__init__(static=static, **values)

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        devices = list(device_choices())
        self.controls["device"].options = devices if initial["device"] in devices else [*devices, initial["device"]]
        self.controls["device"].value = initial["device"]
        self._set_ranges(initial["device"], initial["family"], keep=initial["width"])
        self.controls["depth"].description = self._depth_label(initial["family"])

    # ---- dependent controls ---------------------------------------------------------------------------------
    @staticmethod
    def _depth_label(family: str) -> str:
        return "depth (gates)" if family == "random" else "depth (mirror reps)"

    def _set_ranges(self, device: str, family: str, keep: int | None = None) -> None:
        """Width slider over the family's widths on ``device`` (``keep``: widen it to hold that start value, so
        a bad notebook parameter shows in the status line instead of being moved silently)."""
        lo, hi = width_range(family, get_device(device).num_qubits)  # a control's name: the panel's boundary
        width = self.controls["width"]
        if keep is not None:
            lo, hi = min(lo, keep), max(hi, keep)
        if hi >= width.min:  # ipywidgets refuses min > max at every step
            width.max, width.min = hi, lo
        else:
            width.min, width.max = lo, hi

    def adjust_controls(self, changed: str) -> None:
        values = self.values()
        if changed == "family":
            kind = "random" if values["family"] == "random" else "algorithm"
            depth = self.controls["depth"]
            if list(depth.options) != list(depth_options(values["family"])):
                self._depth_memory["algorithm" if kind == "random" else "random"] = depth.value
                depth.options = depth_options(values["family"])
                depth.value = self._depth_memory[kind]
            depth.description = self._depth_label(values["family"])
        self._set_ranges(values["device"], values["family"])

    # ---- figures --------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [_sweep_figure(), heldout_scatter_figure(), training_curves_figure(), _device_figure()]

    def compute(self, values: dict[str, Any]) -> QuestView:
        return quest_view(QuestViewConfig.from_dict(values))

    def draw(self, figures: list[Any], view: QuestView, values: dict[str, Any]) -> None:
        sweep, scatter, curves, device = figures
        c = view.config
        per_col = len(MODELS) + 2
        for col, (xs, preds, keys) in enumerate(
            ((view.scales, view.by_scale, view.scale_keys), (view.widths, view.by_width, view.width_keys))
        ):
            for i, m in enumerate(MODELS):
                sweep.data[col * per_col + i].x, sweep.data[col * per_col + i].y = list(xs), preds[m].tolist()
            done = [(x, self.simulated[k]) for x, k in zip(xs, keys) if k in self.simulated]
            aer = sweep.data[col * per_col + len(MODELS)]
            aer.x, aer.y = [x for x, _ in done], [y for _, y in done]
            here = sweep.data[col * per_col + len(MODELS) + 1]
            here.x, here.y = [c.noise_scale if col == 0 else c.width], [view.current["transformer"]]
        noise = "calibrated" if c.noise_model == "calibrated" else f"randomized draw (seed {c.seed})"
        name = c.family.upper() if c.family != "random" else "a random circuit"
        depth = "" if c.family == "random" else f"depth {c.depth}, "
        sweep.layout.title.text = (
            f"Predicted PST of {name} (width {c.width}, {depth}{view.placement.gates} gates) "
            f"on {c.device}, {noise} noise x{c.noise_scale:g}"
        )
        fill_heldout_scatter(scatter, view.checkpoint, highlight=c.family)
        fill_training_curves(curves, view.checkpoint)
        self._draw_device(device, view, values)

    def _draw_device(self, fig: Any, view: QuestView, values: dict[str, Any]) -> None:
        c, cal, placed = view.config, view.device, view.placement
        pos = device_layout(c.resolved_device())
        pairs, err = coupler_errors(cal)
        # errors span decades (a dead coupler reports 1): colour by log10, ticks in plain numbers
        log_err = np.log10(np.maximum(err, 1e-6))
        lo, hi = (float(log_err.min()), float(log_err.max())) if len(err) else (-3.0, -1.0)
        hi = max(hi, lo + 0.3)
        bins = np.clip(((log_err - lo) / (hi - lo) * EDGE_BINS).astype(int), 0, EDGE_BINS - 1)

        def segments(edges: list[tuple[int, int]]) -> tuple[list, list]:
            xs, ys = [], []
            for a, b in edges:
                xs += [pos[a, 0], pos[b, 0], None]
                ys += [pos[a, 1], pos[b, 1], None]
            return xs, ys

        for k in range(EDGE_BINS):
            fig.data[k].x, fig.data[k].y = segments([p for p, b in zip(pairs, bins) if b == k])
        fig.data[EDGE_BINS].x, fig.data[EDGE_BINS].y = segments(list(placed.cx_pairs))
        mids = fig.data[EDGE_BINS + 1]
        mids.x = [(pos[a, 0] + pos[b, 0]) / 2 for a, b in pairs]
        mids.y = [(pos[a, 1] + pos[b, 1]) / 2 for a, b in pairs]
        mids.text = [f"Q{a}-Q{b}: two-qubit gate error {e:.2e}" for (a, b), e in zip(pairs, err)]
        mids.marker.color, mids.marker.cmin, mids.marker.cmax = log_err.tolist(), lo, hi
        ticks = [
            t
            for t in (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0)
            if lo - 0.05 <= math.log10(t) <= hi + 0.05
        ]
        mids.marker.colorbar.tickvals = [math.log10(t) for t in ticks]
        mids.marker.colorbar.ticktext = [f"{t:g}" for t in ticks]
        size = 26 if cal.num_qubits <= 7 else 20 if cal.num_qubits <= 16 else 16 if cal.num_qubits <= 28 else 9

        sx = {g.qubits[0]: g.error for g in cal.gates if g.name == "sx" and len(g.qubits) == 1}
        wire = {q: i for i, q in enumerate(placed.physical)}
        nodes = fig.data[EDGE_BINS + 2]
        nodes.x, nodes.y, nodes.marker.size = pos[:, 0].tolist(), pos[:, 1].tolist(), size
        nodes.text = [str(q) for q in range(cal.num_qubits)] if size > 9 else []  # small dots: numbers on hover
        nodes.hovertext = [
            f"Q{q}: T1 {cal.t1[q] * 1e6:.0f} us, T2 {cal.t2[q] * 1e6:.0f} us<br>"
            f"readout P(1|0) {cal.readout_p01[q]:.3f}, P(0|1) {cal.readout_p10[q]:.3f}<br>sx error {sx.get(q, 0.0):.2e}"
            + (f"<br><b>circuit qubit {wire[q]}</b>" if q in wire else "")
            for q in range(cal.num_qubits)
        ]
        shade = qubit_values(cal, values["qubit_color"])
        scale, title = ("Viridis", "T1 (us)") if values["qubit_color"] == "T1" else ("YlOrRd", "readout error")
        nodes.marker.color, nodes.marker.colorscale, nodes.marker.colorbar.title.text = shade, scale, title
        nodes.textfont.color = label_colors(shade, scale)
        rings = fig.data[EDGE_BINS + 3]
        rings.x, rings.y = [pos[q, 0] for q in placed.physical], [pos[q, 1] for q in placed.physical]
        rings.marker.size, rings.marker.line.width = size + 10, 3 if size > 9 else 2
        rings.text = [f"c{i}" for i in range(len(placed.physical))]
        noise = "as calibrated" if c.noise_model == "calibrated" else f"randomized draw, seed {c.seed}"
        fig.layout.title.text = (
            f"{c.device} ({noise}, errors x{c.noise_scale:g}): qubits by {values['qubit_color']}, "
            f"couplers by two-qubit gate error;<br>circled: qubits c0..c{len(placed.physical) - 1} of the "
            "circuit, black: its two-qubit couplers"
        )

    def notes(self, view: QuestView, values: dict[str, Any]) -> str:
        c, p, now = view.config, view.placement, view.current
        text = (
            f"{c.family} width {c.width} on qubits {list(p.physical)} of {c.device}: {p.gates} gates ({p.cx} two-qubit); "
            f"predicted PST <b>{now['transformer']:.3f}</b> (global MLP {now['global']:.3f}, Liu MLP "
            f"{now['liu']:.3f})"
        )
        if view.current_key in self.simulated:
            text += f"; qiskit-aer <b>{self.simulated[view.current_key]:.3f}</b>"
        n, rmse = view.rmse_vs(self.simulated)
        if n:
            text += f" &middot; transformer RMSE vs aer on {n} points: <b>{rmse:.3f}</b>"
        largest = max(view.checkpoint.test.get("gates", [0]) or [0])
        if p.gates > largest:
            text += (
                f' &middot; <span style="color:#b35900">{p.gates} gates: beyond the test set\'s largest circuit '
                f"({largest} gates), an extrapolation</span>"
            )
        return text

    # ---- aer on demand ----------------------------------------------------------------------------------------
    def simulate(self) -> None:
        """Simulate every point of the current curves with qiskit-aer (memoised), with a progress bar; redraw."""
        self.action.run()

    def _simulate(self, progress: Progress) -> None:
        view = self.compute(self.values())
        todo = [k for k in view.keys if k not in self.simulated]
        progress(0, len(todo))
        self.simulated.update(simulate_points(todo, on_step=progress))

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:3], self.action.widget(), *box.children[3:]])

    def static_figures(self) -> list[go.Figure]:
        """Slider frames only on the figures that depend on the noise scale (the sweep and the device map)."""
        figures = super().static_figures()
        for i in (1, 2):
            figures[i] = go.Figure(self.figures[i])
        sweep = figures[0]  # its slider goes below the legend
        if sweep.layout.sliders:
            sweep.update_layout(height=sweep.layout.height + 90, margin=dict(b=170))
            sweep.layout.sliders[0].update(y=-0.42, pad=dict(t=0))
        return figures
