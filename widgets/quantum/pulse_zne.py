"""Pulse-ZNE panel: E(lambda) under folding and stretching, the zero-noise extrapolation, errors before/after.

Everything drawn comes from ``workbench.quantum.pulse_zne.study`` (``cached_sweep``: a precomputed sweep of one
noise setting; ``zne_view``: the extrapolation at the chosen factors; ``sweep``: the heavy run, behind the
*Compute sweep* button with a progress bar). This module only builds and updates figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.extrapolation import EXTRAPOLATIONS
from workbench.quantum.pulse_zne.study import (
    FOLD_GRID,
    STRETCH_GRID,
    ZneOutcome,
    cached_sweep,
    calibration_notes,
    sweep,
    zne_view,
)

COLORS = {"folding": "#1f77b4", "stretching": "#d62728"}


@dataclass(frozen=True)
class PulseZnePanelView:
    """What the panel draws at one setting: the config and the extrapolation of its cached sweep (``zne_view``;
    None: no sweep for this noise scale yet, press *Compute sweep*)."""

    config: PulseZneConfig
    zne: ZneOutcome | None


class PulseZnePanel(Panel):
    """Noise scale, scale factors, extrapolation, folding vs stretching; the sweep behind a button."""

    technique = "pulse-zne"
    title = "Pulse ZNE on a NAPA H2 ansatz: folding S(S^R S)^k vs stretching, extrapolated to zero noise"
    hidden = (
        "molecule",
        "bond_length",
        "device",
        "qubit",
        "target",
        "readout",
        "layers",
        "budget",
        "true_fidelity",
        "gate_baseline",
    )
    options = {
        "noise_scale": (10.0, 30.0, 100.0),
        "scale_factors": ("1,3", "1,3,5", "1,3,5,7"),
    }
    static_slider = ("noise_scale", (10.0, 30.0, 100.0))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.action = Action(
            self, "Compute sweep", self._sweep, label="sweep", tooltip="E(lambda) for this noise scale"
        )
        self.compute_button, self.progress = self.action.button, self.action.progress

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        curve = go.Figure(layout=dict(title="E(lambda) and its extrapolation", height=360,
                                      xaxis=dict(title="noise scale factor lambda"),
                                      yaxis=dict(title="energy (Ha)")))  # fmt: skip
        for m in ("folding", "stretching"):
            curve.add_trace(go.Scatter(name=f"{m} (noisy)", x=[], y=[], mode="markers+lines",
                                       line=dict(color=COLORS[m])))  # fmt: skip
            curve.add_trace(go.Scatter(name=f"{m} (noiseless)", x=[], y=[], mode="lines",
                                       line=dict(color=COLORS[m], dash="dot")))  # fmt: skip
        curve.add_trace(go.Scatter(name="exact E0", x=[], y=[], mode="lines", line=dict(color="black", dash="dash")))
        curve.add_trace(go.Scatter(name="extrapolated", x=[], y=[], mode="markers",
                                   marker=dict(size=13, symbol="star", color="#2ca02c")))  # fmt: skip
        bars = go.Figure(layout=dict(title="|E - E_exact| before and after ZNE", height=360,
                                     yaxis=dict(title="error (Ha)", type="log")))  # fmt: skip
        bars.add_trace(go.Bar(name="error", x=[], y=[]))
        return [curve, bars]

    def compute(self, values: dict[str, Any]) -> PulseZnePanelView:
        config = PulseZneConfig.from_dict(values)
        data = cached_sweep(config)
        return PulseZnePanelView(config, zne_view(config, data) if data is not None else None)

    def draw(self, figures: list[Any], result: PulseZnePanelView, values: dict[str, Any]) -> None:
        config, view = result.config, result.zne
        curve, bars = figures
        if view is None:
            for fig in (curve, bars):
                for trace in fig.data:
                    trace.x, trace.y = [], []
            curve.layout.title.text = f"T1/T2 / {config.noise_scale:g}: not computed yet (press Compute sweep)"
            bars.layout.title.text = f"{config.method}, {config.scale_factors}, {config.extrapolation}: no sweep"
            return
        for k, m in enumerate(("folding", "stretching")):
            c = view.curve[m]
            curve.data[2 * k].x, curve.data[2 * k].y = c["scale_factors"], c["noisy"]
            curve.data[2 * k + 1].x, curve.data[2 * k + 1].y = c["scale_factors"], c["noiseless"]
        top = max(max(FOLD_GRID), max(STRETCH_GRID))
        curve.data[4].x, curve.data[4].y = [0, top], [view.exact, view.exact]
        curve.data[5].x, curve.data[5].y = [0], [view.mitigated]
        curve.layout.title.text = (
            f"T1/T2 / {config.noise_scale:g}: {view.method} at {','.join(f'{v:g}' for v in view.scale_factors)}, "
            f"{view.extrapolation} -> {view.mitigated:.4f} Ha (exact {view.exact:.4f})"
        )
        names = ["unmitigated", *EXTRAPOLATIONS]
        ys = [view.unmitigated_error, *(view.all_methods[n] for n in EXTRAPOLATIONS)]
        bars.data[0].x, bars.data[0].y = names, [max(y, 1e-6) if np.isfinite(y) else None for y in ys]
        bars.data[0].marker.color = ["#7f7f7f", *("#2ca02c" if n == view.extrapolation else "#9edae5"
                                                  for n in EXTRAPOLATIONS)]  # fmt: skip
        bars.layout.title.text = (
            f"|E - E_exact|: {view.unmitigated_error:.4f} -> {view.mitigated_error:.4f} Ha "
            f"({view.reduction:.1%} reduction; paper 54.1% average)"
        )

    def notes(self, result: PulseZnePanelView, values: dict[str, Any]) -> str:
        view = result.zne
        if view is None:
            return "no cached sweep for this noise scale: press <b>Compute sweep</b>"
        text = html.escape(
            f"reduction {view.reduction:.1%} ({view.method}, {view.extrapolation}); trained noiseless energy "
            f"{view.trained_noiseless:.4f} Ha is the floor ZNE can reach (exact {view.exact:.4f}); the scaling's "
            f"coherent bias without noise (dotted lines): {view.coherent_bias * 1e3:+.1f} mHa at lambda = "
            f"{view.scale_factors[-1]:g}"
        )
        if view.fallback:
            text += f"<br><b>warning:</b> {html.escape(view.fallback)}"
        return text + "".join(f"<br><b>warning:</b> {html.escape(w)}" for w in calibration_notes(result.config))

    def run_sweep(self) -> None:
        """Compute the sweep at the current noise scale (progress bar), then redraw."""
        self.action.run()

    def _sweep(self, progress: Progress) -> None:
        sweep(PulseZneConfig.from_dict(self.values()), on_point=progress)

    def widget(self) -> W.Widget:
        base = super().widget()
        n = len(self.figures)
        return W.VBox([*base.children[:-n], self.action.widget(), *base.children[-n:]])
