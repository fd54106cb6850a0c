"""TopGen panel: the device's topology cut into fragments and stitched, the scored sub-circuit candidates, the
ansatz's depth and CNOTs on the device beside a hardware-efficient ansatz, and (behind the Train button, with
a progress bar; cached) the QNN's accuracy with and without device noise beside the baselines.

Everything drawn comes from ``workbench.quantum.topgen.study`` (``panel_view``, ``cached_task``); this module
only builds and updates figures.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.quantum.device import get_device
from workbench.quantum.topgen.config import TopgenViewConfig
from workbench.quantum.topgen.model import LABEL
from workbench.quantum.topgen.study import (
    PanelView,
    cached_task,
    default_task_config,
    panel_devices,
    panel_view,
    warm_panel,
)

PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
METHODS = ("topgen", "hea", "quantumnas")
METHOD_COLORS = {"topgen": "#d62728", "hea": "#7f7f7f", "quantumnas": "#1f77b4"}


class TopgenPanel(Panel):
    """Device, width, fragment size, ansatz depth and task; topology, candidates, cost and accuracy."""

    technique = "topgen"
    title = "TopGen: topology-aware ansatz generation on a device's coupling map"
    config = TopgenViewConfig
    static_slider = ("fragment_size", (1, 2, 3, 4))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        device = self.controls["device"]
        with self._hold():
            current = device.value
            device.options = list(panel_devices())
            device.value = current
        self.action = Action(
            self,
            "Train (QNN task)",
            self._train,
            label="train",
            tooltip="train TopGen, HEA and QuantumNAS-style QNNs and evaluate under noise",
        )
        self.train_button, self.progress, self.stage = self.action.button, self.action.progress, self.action.stage

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        if not self.static:  # the live sliders redraw from memory; a report draws one setting
            try:
                warm_panel(TopgenViewConfig.from_dict(initial))
            except ValueError:
                pass  # shown by the first redraw

    def adjust_controls(self, changed: str) -> None:
        """A narrower device clamps the width, a narrower ansatz the fragment size."""
        if changed in ("device", "qubits"):
            width = device_qubits(self.controls["device"].value)
            if self.controls["qubits"].value > width:
                self.controls["qubits"].value = max(4, width)
            if self.controls["fragment_size"].value > self.controls["qubits"].value:
                self.controls["fragment_size"].value = self.controls["qubits"].value

    # ---- figures ------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        topo = go.Figure(
            layout=dict(
                title="Device topology: fragments and stitches",
                height=380,
                xaxis=dict(visible=False),
                yaxis=dict(visible=False, scaleanchor="x"),
                legend=dict(orientation="h", y=-0.1),
            )
        )
        topo.add_trace(go.Scatter(x=[], y=[], mode="lines", name="coupling edge", line=dict(color="#bbb", width=2)))
        topo.add_trace(
            go.Scatter(x=[], y=[], mode="lines", name="stitch (cx)", line=dict(color="#d62728", width=4, dash="dash"))
        )
        topo.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers+text",
                name="qubit",
                text=[],
                textposition="middle center",
                marker=dict(size=26),
            )
        )
        cands = go.Figure(
            layout=dict(
                title="Sub-circuit candidates per fragment shape",
                height=360,
                xaxis=dict(title="expressibility KL to Haar (nats, lower = more expressive)", type="log"),
                yaxis=dict(title="entangling capability (Meyer-Wallach)", range=[-0.05, 1.05]),
                legend=dict(orientation="h", y=-0.3),
            )
        )
        cands.add_trace(
            go.Scatter(x=[], y=[], mode="markers", name="candidate", text=[], marker=dict(color="#999", size=8))
        )
        cands.add_trace(
            go.Scatter(
                x=[], y=[], mode="markers", name="chosen", text=[], marker=dict(color="#d62728", size=14, symbol="star")
            )
        )
        cost = go.Figure(
            layout=dict(
                title="Ansatz on the device (transpiled)",
                height=340,
                barmode="group",
                yaxis=dict(title="count"),
                legend=dict(orientation="h", y=-0.2),
            )
        )
        for name in ("depth", "CNOTs", "SWAPs"):
            cost.add_trace(go.Bar(x=["topgen", "hea"], y=[0, 0], name=name))
        acc = go.Figure(
            layout=dict(
                title="QNN test accuracy",
                height=340,
                barmode="group",
                yaxis=dict(title="accuracy", range=[0, 1]),
                legend=dict(orientation="h", y=-0.2),
            )
        )
        acc.add_trace(go.Bar(x=list(METHODS), y=[0, 0, 0], name="noiseless"))
        acc.add_trace(go.Bar(x=list(METHODS), y=[0, 0, 0], name="device noise (mean of snapshots)"))
        return [topo, cands, cost, acc]

    def compute(self, values: dict[str, Any]) -> PanelView:
        return panel_view(TopgenViewConfig.from_dict(values))

    def draw(self, figures: list[Any], view: PanelView, values: dict[str, Any]) -> None:
        topo, cands, cost, acc = figures
        pos = view.positions
        ex, ey = [], []
        for a, b in view.edges:
            ex += [pos[a][0], pos[b][0], None]
            ey += [pos[a][1], pos[b][1], None]
        sx, sy = [], []
        for a, b in view.stitches:
            sx += [pos[a][0], pos[b][0], None]
            sy += [pos[a][1], pos[b][1], None]
        where = {v: i for i, f in enumerate(view.fragments) for v in f}
        topo.data[0].x, topo.data[0].y = ex, ey
        topo.data[1].x, topo.data[1].y = sx, sy
        topo.data[2].x = [pos[v][0] for v in view.nodes]
        topo.data[2].y = [pos[v][1] for v in view.nodes]
        topo.data[2].text = [str(v) for v in view.nodes]
        topo.data[2].marker.color = [PALETTE[where[v] % len(PALETTE)] if v in where else "#eee" for v in view.nodes]
        topo.layout.title.text = (
            f"{values['device']}: {len(view.fragments)} fragments of at most {values['fragment_size']} qubits, "
            f"{len(view.stitches)} stitches"
        )
        plain = [c for c in view.candidates if not c[3]]
        chosen = [c for c in view.candidates if c[3]]
        cands.data[0].x, cands.data[0].y, cands.data[0].text = (
            [c[0] for c in plain],
            [c[1] for c in plain],
            [c[2] for c in plain],
        )
        cands.data[1].x, cands.data[1].y, cands.data[1].text = (
            [c[0] for c in chosen],
            [c[1] for c in chosen],
            [c[2] for c in chosen],
        )
        cands.layout.title.text = f"Sub-circuit candidates ({len(view.candidates)}), chosen: " + "; ".join(
            dict.fromkeys(c[2] for c in chosen)
        )
        for i, key in enumerate((0, 1, 2)):
            cost.data[i].y = [view.cost["topgen"][key], view.cost["hea"][key]]
        cost.layout.title.text = (
            f"{values['blocks']} block(s) on {values['device']}: TopGen {view.cost['topgen'][1]} CNOTs "
            f"({LABEL} {view.cx_model}), HEA {view.cost['hea'][1]}"
        )
        if view.trained is None:
            acc.data[0].y = acc.data[1].y = [0, 0, 0]
            acc.layout.title.text = f"{view.task}: not trained for this setting yet (press Train)"
        else:
            t = view.trained
            ms = {"topgen": t.topgen, **t.baselines}
            acc.data[0].y = [ms[m].accuracy_noiseless for m in METHODS]
            acc.data[1].y = [ms[m].accuracy for m in METHODS]
            acc.layout.title.text = f"{view.task} test accuracy, noise of {', '.join(t.snapshots)}"

    def notes(self, view: PanelView, values: dict[str, Any]) -> str:
        return (
            f"TopGen ansatz: depth <b>{view.cost['topgen'][0]}</b>, <b>{view.cost['topgen'][1]}</b> CNOTs, "
            f"{view.cost['topgen'][2]} SWAPs; hardware-efficient: depth {view.cost['hea'][0]}, "
            f"{view.cost['hea'][1]} CNOTs ({view.cost['hea'][2]} SWAPs routed)"
        )

    # ---- training on demand ---------------------------------------------------------------------------
    def train(self) -> None:
        """Run (or load) the QNN task for the current setting with a progress bar, then redraw."""
        self.action.run()

    def _train(self, progress: Progress) -> None:
        config = default_task_config(TopgenViewConfig.from_dict(self.values()))
        cached_task(config, compute=True, progress=lambda fraction, stage: progress(fraction, label=stage))

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:2], self.action.widget(), *box.children[2:]])


def device_qubits(name: str) -> int:
    """Qubits of a device (for notebook text and the width control): a control's device name, resolved here."""
    return get_device(name).num_qubits
