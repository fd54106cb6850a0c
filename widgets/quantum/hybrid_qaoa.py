"""Hybrid-QAOA panel: the instance, the two mixers as played, and (behind the *Train both* button, or from the
study's cache) both ansaetze's training traces and cut distributions.

Everything drawn comes from ``workbench.quantum.hybrid_qaoa.study`` (``graph_view``, ``mixer_view``,
``cached_comparison`` and ``compare``); this module only builds and updates figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.device import pulse_device_names
from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
from workbench.quantum.hybrid_qaoa.study import (
    Comparison,
    MixerView,
    cached_comparison,
    compare,
    graph_view,
    mixer_view,
)

COLORS = {"gate": "#1f77b4", "hybrid": "#d62728"}


@dataclass(frozen=True)
class HybridQaoaPanelView:
    """What the panel draws at one setting: the instance (``graph_view``), the two mixers (``mixer_view``) and the
    training comparison if computed (``cached_comparison``; None: press *Train both*)."""

    config: HybridQaoaConfig
    graph: dict[str, Any]
    mixer: MixerView
    comparison: Comparison | None


class HybridQaoaPanel(Panel):
    """Graph (edge list or generator), p, device, hybrid mixer duration, noise; training on a button."""

    technique = "hybrid-qaoa"
    title = "Hybrid gate-pulse QAOA: gate cost layer + one trainable pulse per qubit as the mixer"
    hidden = ("budget", "grid", "seed", "optimization_level")
    options = {"mixer_dt": (16, 24, 32, 48, 64, 96, 128, 160, 224, 320)}
    static_slider = ("mixer_dt", (32, 64, 128, 160))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.action = Action(self, "Train both", self._train, label="train",
                             tooltip="COBYLA on both ansaetze, equal budgets")  # fmt: skip
        self.train_button, self.progress = self.action.button, self.action.progress

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        device = self.controls["device"]
        device.options = list(pulse_device_names())  # only devices with Hamiltonian data
        device.value = initial["device"]  # (setting the options resets the value)

    def config_of(self, values: dict[str, Any]) -> HybridQaoaConfig:
        return HybridQaoaConfig.from_dict(values)

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        graph = go.Figure(layout=dict(title="Instance and an optimal cut", height=320, showlegend=False,
                                      xaxis=dict(visible=False), yaxis=dict(visible=False)))  # fmt: skip
        graph.add_trace(go.Scatter(x=[], y=[], mode="lines", line=dict(color="#999"), hoverinfo="skip"))
        graph.add_trace(go.Scatter(x=[], y=[], mode="markers+text", marker=dict(size=26), textfont=dict(color="white")))
        mixer = go.Figure(layout=dict(title="Mixer pulses (|envelope|) per layer", height=320,
                                      xaxis=dict(title="time (ns)"), yaxis=dict(title="amplitude")))  # fmt: skip
        mixer.add_trace(go.Scatter(name="gate: sx rz sx (calibrated)", x=[], y=[], line=dict(color=COLORS["gate"])))
        mixer.add_trace(
            go.Scatter(name="hybrid: one DRAG (rotation pi/2)", x=[], y=[], line=dict(color=COLORS["hybrid"]))
        )
        mixer.add_trace(go.Scatter(name="coherence left exp(-t/T2)", x=[], y=[], yaxis="y2", line=dict(dash="dot")))
        mixer.update_layout(
            yaxis2=dict(overlaying="y", side="right", range=[0.99, 1.0005], title="coherence", tickformat=".3f"),
            legend=dict(orientation="h", y=-0.3),
        )
        traces = go.Figure(layout=dict(title="Training (press Train both)", height=320,
                                       xaxis=dict(title="COBYLA evaluations"),
                                       yaxis=dict(title="best approximation ratio")))  # fmt: skip
        for kind in ("gate", "hybrid"):
            traces.add_trace(go.Scatter(name=kind, x=[], y=[], line=dict(color=COLORS[kind])))
        dist = go.Figure(layout=dict(title="Cut value distribution at the best parameters", height=320,
                                     xaxis=dict(title="cut value"), yaxis=dict(title="probability"), barmode="group"))  # fmt: skip
        for kind in ("gate", "hybrid"):
            dist.add_trace(go.Bar(name=kind, x=[], y=[], marker_color=COLORS[kind]))
        return [graph, mixer, traces, dist]

    def compute(self, values: dict[str, Any]) -> HybridQaoaPanelView:
        config = self.config_of(values)
        return HybridQaoaPanelView(config, graph_view(config.graph), mixer_view(config), cached_comparison(config))

    def draw(self, figures: list[Any], view: HybridQaoaPanelView, values: dict[str, Any]) -> None:
        config, g, m, comp = view.config, view.graph, view.mixer, view.comparison
        graph, mixer, traces, dist = figures
        ex, ey = [], []
        for u, v in g["edges"]:
            ex += [g["x"][u], g["x"][v], None]
            ey += [g["y"][u], g["y"][v], None]
        graph.data[0].x, graph.data[0].y = ex, ey
        graph.data[1].x, graph.data[1].y = g["x"], g["y"]
        graph.data[1].text = [str(i) for i in range(len(g["x"]))]
        graph.data[1].marker.color = ["#2ca02c" if s else "#9467bd" for s in g["side"]]
        graph.layout.title.text = f"{config.graph}: optimum cut {g['optimum']:g}"
        layers = config.p
        tg = np.concatenate([m.t_gate + k * m.mixer_ns_gate for k in range(layers)])
        th = np.concatenate([m.t_hybrid + k * m.mixer_ns_hybrid for k in range(layers)])
        mixer.data[0].x, mixer.data[0].y = tg, np.tile(m.env_gate, layers)
        mixer.data[1].x, mixer.data[1].y = th, np.tile(m.env_hybrid, layers)
        t = np.linspace(0, layers * m.mixer_ns_gate, 50)
        mixer.data[2].x, mixer.data[2].y = t, np.exp(-t / m.t2_ns) if np.isfinite(m.t2_ns) else np.ones_like(t)
        mixer.layout.title.text = (
            f"{layers} mixer layer(s): gate {layers * m.mixer_ns_gate:.1f} ns, hybrid {layers * m.mixer_ns_hybrid:.1f} ns"
            + ("" if m.reachable else " (too short for a pi/2 rotation at amplitude 1)")
        )
        if comp is None:
            for fig in (traces, dist):
                for trace in fig.data:
                    trace.x, trace.y = [], []
            traces.layout.title.text = "Training: not run for this setting yet (press Train both)"
            return
        for k, kind in enumerate(("gate", "hybrid")):
            y = getattr(comp, f"trace_{kind}")
            traces.data[k].x, traces.data[k].y = np.arange(1, len(y) + 1), y
            d = getattr(comp, f"cut_distribution_{kind}")
            dist.data[k].x, dist.data[k].y = list(d), list(d.values())
        traces.layout.title.text = (
            f"Training: gate {comp.approx_ratio_gate:.3f}, hybrid {comp.approx_ratio_hybrid:.3f} ({comp.gain:+.1%})"
        )

    def notes(self, view: HybridQaoaPanelView, values: dict[str, Any]) -> str:
        comp = view.comparison
        if comp is None:
            return "training not run for this setting: press <b>Train both</b>"
        return html.escape(
            f"approximation ratio gate {comp.approx_ratio_gate:.4f}, hybrid {comp.approx_ratio_hybrid:.4f} "
            f"({comp.gain:+.2%}); mixer {comp.mixer_ns_gate:.1f} -> {comp.mixer_ns_hybrid:.1f} ns"
        )

    def train(self) -> None:
        """Train both ansaetze at the current setting (progress bar), then redraw."""
        self.action.run()

    def _train(self, progress: Progress) -> None:
        config = self.config_of(self.values())
        progress(0, config.grid**2 + 2 * config.budget)
        compare(config, on_evaluation=lambda done, total: progress(done))

    def widget(self) -> W.Widget:
        base = super().widget()
        k = len(self.figures)
        return W.VBox([*base.children[:-k], self.action.widget(), *base.children[-k:]])
