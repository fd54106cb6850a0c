"""Redox panel: record sizes and chunks, the served order of Redox beside RandomSampler and block shuffle (the
strongest fair baseline: the same K chunks, chunks in a random order), per-batch label KL along the epoch, the
P-process serving split, the storage MODEL at paper scale (over the PyTorch DataLoader and over block shuffle),
and (behind a button) a real cold run of every loader on generated files.

Every number drawn comes from ``workbench.llm.redox.study`` (``order_view``, ``model_view``, ``measured``; all
memoised there); this module only builds and updates figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.loaders import LOADERS
from workbench.llm.redox.model import PAPER_SPEEDUP
from workbench.llm.redox.study import ORDER_NAMES, ModelView, OrderView, measured, model_view, order_view

COLORS = {
    "redox": "#d62728",
    "random-sampler": "#1f77b4",
    "random-files": "#1f77b4",
    "random-files-workers": "#aec7e8",
    "random-packed": "#17becf",
    "random-packed-os": "#9edae5",
    "random-packed-direct": "#bcbd22",
    "block-shuffle": "#2ca02c",
    "ffcv-quasi-random": "#9467bd",
    "sequential": "#7f7f7f",
    "imagenet-1k": "#1f77b4",
    "imagenet-21k": "#d62728",
    "librispeech": "#2ca02c",
}
DATASETS = ("imagenet-1k", "imagenet-21k", "librispeech")


@dataclass(frozen=True)
class RedoxPanelView:
    """What the panel draws live at one setting: the validated config, the served orders (``order_view``) and the
    storage MODEL at paper scale (``model_view``)."""

    config: RedoxConfig
    orders: OrderView
    model: ModelView


class RedoxPanel(Panel):
    """Move the dataset shape, chunk size, K, processes and storage kind; see what each loader serves."""

    technique = "redox"
    title = "Redox: serve any unconsumed record of K resident chunks, read each chunk once"
    options = {
        "records": (101, 250, 500, 1000, 2000, 5000),
        "record_kb": (1.0, 4.0, 16.0, 32.0, 110.0),
        "chunk_kb": (64.0, 128.0, 256.0, 512.0, 1024.0, 4096.0),
        "resident": (1, 2, 4, 8, 16, 64, 1024),
        "workers": (1, 2, 3, 4, 8),
        "batch": (8, 16, 32, 64, 128),
        "classes": (2, 10, 100),
        "seed": (0, 1, 2, 3),
    }
    hidden = ("mode", "root", "source", "timeout_s", "cold", "generate")
    static_slider = ("resident", (1, 4, 16, 1024))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.action = Action(
            self,
            "Run on real files (cold)",
            self._run_real,
            done=self._draw_real,
            total=len(LOADERS) + 2,
            label="run",
            tooltip="generate the dataset, read it cold with every loader, run the P-process protocol",
        )
        self.run_button, self.progress = self.action.button, self.action.progress

    # ---- figures ------------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        sizes = go.Figure(
            layout=dict(
                title="Record sizes",
                height=320,
                xaxis=dict(title="record size (KB)"),
                yaxis=dict(title="records"),
                bargap=0.05,
                showlegend=False,
            )
        )
        sizes.add_trace(go.Histogram(x=[], nbinsx=40, marker=dict(color="#888")))
        order = go.Figure(
            layout=dict(
                title="Served order vs disk order",
                height=380,
                xaxis=dict(title="serving position"),
                yaxis=dict(title="record id (disk order)"),
            )
        )
        for name in ("random-sampler", "block-shuffle", "redox"):
            order.add_trace(
                go.Scattergl(
                    x=[], y=[], mode="markers", name=name, marker=dict(size=3, color=COLORS[name], opacity=0.7)
                )
            )
        kl = go.Figure(
            layout=dict(
                title="Per-batch label KL to uniform",
                height=340,
                xaxis=dict(title="batch"),
                yaxis=dict(title="KL (nats)"),
            )
        )
        for name in ORDER_NAMES:
            kl.add_trace(go.Scatter(x=[], y=[], mode="lines", name=name, line=dict(color=COLORS[name], width=1.5)))
        dist = go.Figure(
            layout=dict(
                title="P processes: records owned and served remotely",
                height=320,
                barmode="group",
                xaxis=dict(title="rank", type="category"),
                yaxis=dict(title="records"),
            )
        )
        dist.add_trace(go.Bar(x=[], y=[], name="owned (chunks dealt round-robin)", marker=dict(color="#1f77b4")))
        dist.add_trace(go.Bar(x=[], y=[], name="received from peers (remote prefetch)", marker=dict(color="#d62728")))
        model = go.Figure(
            layout=dict(
                title="MODEL: end-to-end speed-up over the PyTorch DataLoader (solid) and block shuffle (dotted)",
                height=360,
                xaxis=dict(title="GPUs", type="log"),
                yaxis=dict(title="speed-up (MODEL)"),
            )
        )
        for name in DATASETS:
            model.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name=name, line=dict(color=COLORS[name])))
        for name in DATASETS:
            model.add_trace(
                go.Scatter(
                    x=[], y=[], mode="lines", name=f"{name} vs block shuffle", line=dict(color=COLORS[name], dash="dot")
                )
            )
        model.add_trace(
            go.Scatter(
                x=[], y=[], mode="lines", name=f"paper: up to {PAPER_SPEEDUP}x", line=dict(color="#444", dash="dash")
            )
        )
        real = make_subplots(
            rows=1,
            cols=3,
            subplot_titles=("read amplification (measured)", "records/s (measured)", "first batch (s, measured)"),
        )
        for col in (1, 2, 3):
            real.add_trace(go.Bar(x=[], y=[], marker=dict(color=[]), showlegend=False), row=1, col=col)
        real.update_yaxes(type="log", row=1, col=1)
        real.update_layout(title="Real cold run: press 'Run on real files'", height=340)
        return [sizes, order, kl, dist, model, real]

    def compute(self, values: dict[str, Any]) -> RedoxPanelView:
        config = RedoxConfig.from_dict(values)  # bad combinations (chunk smaller than a record) raise here
        return RedoxPanelView(config, order_view(values), model_view(config.storage, config.chunk_kb))

    def draw(self, figures: list[Any], result: RedoxPanelView, values: dict[str, Any]) -> None:
        view, mv, config = result.orders, result.model, result.config
        sizes, order, kl, dist, model, _ = figures
        sizes.data[0].x = view.sizes / 1024
        chunk = view.chunk_bytes / 1024
        sizes.layout.shapes = [
            dict(type="line", x0=chunk, x1=chunk, y0=0, y1=1, yref="paper", line=dict(color="#d62728", dash="dash"))
        ]
        sizes.layout.title.text = (
            f"{config.records} records ({config.sizes}, mean {view.sizes.mean() / 1024:.3g} KB) in "
            f"{int(view.chunk_of.max()) + 1} chunks of <= {chunk:g} KB (dashed)"
        )
        n = len(view.sizes)
        pos = np.arange(n)
        for trace in order.data:
            trace.x, trace.y = pos, view.orders[trace.name]
        r = view.randomness
        order.layout.title.text = (
            f"Served order, K={config.resident}: Spearman with disk order Redox {r['redox'].disk_order_spearman:+.3f}"
            f", block shuffle {r['block-shuffle'].disk_order_spearman:+.3f}; chunk-mate spread Redox "
            f"{r['redox'].chunkmate_spread:.3f} (full shuffle 0.289); {view.redirected_share:.0%} of Redox requests "
            "redirected"
        )
        for trace in kl.data:
            y = view.batch_kl[trace.name]
            trace.x, trace.y = np.arange(len(y)), y
        kl.layout.title.text = (
            f"Per-batch label KL ({config.classes} classes, {config.layout}): Redox {r['redox'].label_kl:.3f} "
            f"(last 10%: {r['redox'].label_kl_tail:.3f}) vs RandomSampler {r['random-sampler'].label_kl:.3f}"
        )
        ranks = [str(k) for k in range(config.workers)]
        dist.data[0].x, dist.data[0].y = ranks, view.owned
        dist.data[1].x, dist.data[1].y = ranks, view.remote
        dist.layout.title.text = (
            f"{config.workers} processes, batch {config.batch} each: {view.steps} steps, "
            f"{sum(view.remote)} records served away from their owner"
        )
        for k, name in enumerate(DATASETS):
            model.data[k].x, model.data[k].y = mv.gpus, mv.speedup[name]
            model.data[len(DATASETS) + k].x = mv.gpus
            model.data[len(DATASETS) + k].y = mv.speedup_vs_block_shuffle[name]
        model.data[-1].x, model.data[-1].y = [mv.gpus[0], mv.gpus[-1]], [PAPER_SPEEDUP, PAPER_SPEEDUP]
        model.layout.title.text = (
            f"MODEL on {mv.storage}: Redox over the PyTorch DataLoader (solid) and over block shuffle (dotted)"
        )

    def notes(self, result: RedoxPanelView, values: dict[str, Any]) -> str:
        mv = result.model
        best = max(float(v.max()) for v in mv.speedup.values())
        block = max(float(v.max()) for v in mv.speedup_vs_block_shuffle.values())
        return (
            f"<small>live views: served orders computed by the loaders' own functions (nothing read); "
            f"MODEL at paper scale on {html.escape(mv.storage)}: up to <b>{best:.2f}x</b> over the PyTorch "
            f"DataLoader (paper: up to {PAPER_SPEEDUP}x), up to <b>{block:.2f}x</b> over block shuffle (the "
            "strongest fair baseline: it reads each chunk once too)</small>"
        )

    # ---- heavy: the real run -----------------------------------------------------------------------------------
    def run_real(self):
        """The real cold run at the current values (memoised in study); fills the last figure."""
        return self.action.run()[1]

    def _run_real(self, progress: Progress) -> tuple[RedoxConfig, dict[str, Any]]:
        config = RedoxConfig.from_dict(self.values())
        return config, measured(config, progress=lambda done, total, what: progress(done, label=what)).to_json()

    def _draw_real(self, run: tuple[RedoxConfig, dict[str, Any]]) -> None:
        config, result = run
        fig = self.figures[5]
        names = [r["name"] for r in result["loaders"]]
        colors = [COLORS.get(n, "#888") for n in names]
        with fig.batch_update():
            fig.data[0].x, fig.data[0].y = names, [r["read_amplification"] for r in result["loaders"]]
            fig.data[1].x, fig.data[1].y = names, [r["items_per_s"] for r in result["loaders"]]
            fig.data[2].x, fig.data[2].y = names, [r["time_to_first_batch_s"] for r in result["loaders"]]
            fig.data[0].marker.color = fig.data[1].marker.color = fig.data[2].marker.color = colors
            fig.layout.title.text = (
                f"Real cold run, {config.records} records, K={config.resident}: exactly once "
                f"{str(result['exactly_once']).lower()}, chunks read once {str(result['chunks_read_once']).lower()} "
                f"(bytes from {result['bytes_source']})"
            )

    def widget(self) -> W.Widget:
        base = super().widget()
        children = list(base.children)
        return W.VBox([*children[:-1], self.action.widget(), children[-1]])
