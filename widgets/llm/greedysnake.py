"""GreedySnake panel (MODEL at paper scale): offload traffic vs micro-batches, throughput vs global batch with the
roofline, exposed optimizer time vs the deferred fraction alpha, and the LP's placement.

Every number comes from ``workbench.llm.greedysnake.study.panel_view`` (closed forms, the steady-state model and
a memoised LP); this module only builds and updates figures.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from widgets.base import Panel
from workbench.llm.greedysnake.config import ViewConfig
from workbench.llm.greedysnake.schedule import SCHEDULES
from workbench.llm.greedysnake.study import panel_view

CLASSES = ("weights", "gradients", "optimizer", "checkpoints")
COLORS = {"horizontal": "#d62728", "vertical": "#1f77b4", "vertical-overlap": "#2ca02c", "roofline": "#7f7f7f"}
CLASS_COLORS = {"weights": "#1f77b4", "gradients": "#ff7f0e", "optimizer": "#2ca02c", "checkpoints": "#9467bd"}


class GreedySnakePanel(Panel):
    """Move the model, GPUs, micro-batches, host memory, SSD and PCIe bandwidth and alpha; see the MODEL."""

    technique = "greedysnake"
    config = ViewConfig
    title = "GreedySnake (MODEL): horizontal (ZeRO-Infinity) vs vertical snake scheduling on A100 + NVMe"
    options = {"micro_batches": (1, 2, 4, 8, 16, 32, 64, 128), "micro_batch": (1, 2, 4, 8)}
    static_slider = ("micro_batches", (1, 4, 16, 64))

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        traffic = go.Figure(layout=dict(title="MODEL: SSD + host bytes per iteration vs micro-batches M", height=380,
                                        xaxis=dict(title="micro-batches per GPU M", type="log"),
                                        yaxis=dict(title="bytes per iteration", type="log")))  # fmt: skip
        for name, dash in (("horizontal", "solid"), ("vertical", "dash")):
            for cls in CLASSES:
                traffic.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name=f"{name}: {cls}",
                                             line=dict(color=CLASS_COLORS[cls], dash=dash)))  # fmt: skip
        traffic.add_trace(go.Scatter(x=[], y=[], mode="lines", name="current M", line=dict(color="black", dash="dot")))
        thr = go.Figure(layout=dict(title="MODEL: throughput vs global batch, beside the roofline", height=380,
                                    xaxis=dict(title="global batch (samples)", type="log"),
                                    yaxis=dict(title="tokens/s", type="log")))  # fmt: skip
        for name in (*SCHEDULES, "roofline"):
            thr.add_trace(go.Scatter(x=[], y=[], mode="lines+markers" if name != "roofline" else "lines", name=name,
                                     line=dict(color=COLORS[name], dash="dot" if name == "roofline" else "solid")))  # fmt: skip
        thr.add_trace(go.Scatter(x=[], y=[], mode="markers", name="current setting",
                                 marker=dict(color="black", size=11, symbol="x")))  # fmt: skip
        opt = go.Figure(layout=dict(title="MODEL: exposed optimizer time vs deferred fraction alpha", height=340,
                                    xaxis=dict(title="alpha"), yaxis=dict(title="seconds per iteration")))  # fmt: skip
        opt.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="vertical-overlap",
                                 line=dict(color=COLORS["vertical-overlap"])))  # fmt: skip
        opt.add_trace(go.Scatter(x=[], y=[], mode="lines", name="horizontal (ZeRO-Infinity)",
                                 line=dict(color=COLORS["horizontal"], dash="dash")))  # fmt: skip
        opt.add_trace(go.Scatter(x=[], y=[], mode="markers", name="current alpha", marker=dict(color="black", size=11)))
        lp = go.Figure(layout=dict(title="MODEL: LP placement (fraction on SSD, rest in DRAM) and GPU memory use", height=320,
                                   yaxis=dict(title="fraction", range=[0, 1.05])))  # fmt: skip
        lp.add_trace(go.Bar(x=["checkpoints", "fp16 parameters", "optimizer states"], y=[0, 0, 0],
                            name="snake (its LP): on SSD"))  # fmt: skip
        lp.add_trace(go.Bar(x=["checkpoints", "fp16 parameters", "optimizer states", "fp32 gradient buffer"],
                            y=[0, 0, 0, 0], name="horizontal (its own placement): on SSD"))  # fmt: skip
        lp.add_trace(go.Bar(x=["GPU memory used"], y=[0], name="one layer + one micro-batch / GPU memory"))
        return [traffic, thr, opt, lp]

    def compute(self, values: dict[str, Any]) -> Any:
        return panel_view(ViewConfig.from_dict(values))

    def draw(self, figures: list[Any], result: Any, values: dict[str, Any]) -> None:
        traffic, thr, opt, lp = figures
        ms = result["ms"]
        i = 0
        top = 1.0
        for name in ("horizontal", "vertical"):
            for cls in CLASSES:
                ys = [max(v, 1.0) for v in result["traffic"][name][cls]]
                traffic.data[i].x, traffic.data[i].y = ms, ys
                top = max(top, *ys)
                i += 1
        traffic.data[i].x, traffic.data[i].y = [values["micro_batches"]] * 2, [1.0, top]
        t = result["throughput"]
        for k, name in enumerate((*SCHEDULES, "roofline")):
            thr.data[k].x, thr.data[k].y = t["global_batch"], t[name]
        gb = values["micro_batches"] * values["micro_batch"] * values["gpus"]
        thr.data[4].x = [gb] * 3
        thr.data[4].y = [result["point"][n]["throughput"] for n in SCHEDULES]
        opt.data[0].x, opt.data[0].y = result["alphas"], result["exposed"]
        opt.data[1].x, opt.data[1].y = [0, max(result["alphas"])], [result["horizontal_exposed"]] * 2
        k = min(range(len(result["alphas"])), key=lambda j: abs(result["alphas"][j] - values["alpha"]))
        opt.data[2].x, opt.data[2].y = [result["alphas"][k]], [result["exposed"][k]]
        p = result["lp"].placement
        lp.data[0].y = [p.ckpt_ssd, p.para_ssd, p.opt_ssd]
        h = result["horizontal_placement"]
        lp.data[1].y = [h.ckpt_ssd, h.para_ssd, h.opt_ssd, h.grad_ssd]
        lp.data[1].name = f"horizontal ({result['horizontal_placement_label']}): on SSD"
        lp.data[2].y = [result["device_fraction"]]
        lp.layout.title.text = f"MODEL: LP placement (fraction on SSD), LP's alpha = {result['lp'].alpha:g}"

    def notes(self, result: Any, values: dict[str, Any]) -> str:
        return f"MODEL speed-up of vertical-overlap over horizontal at this setting: {result['speedup']:.2f}x"
