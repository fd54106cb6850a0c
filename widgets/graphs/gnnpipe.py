"""GNNPipe panel: bytes per epoch vs depth (closed form = counted), stale edges per chunk order, the staleness
schedule, the paper-scale MODEL, and accuracy curves of real runs.

Everything but the accuracy curves is a fast view of :func:`workbench.graphs.gnnpipe.study.gnnpipe_view`
(memoised halos and closed forms). The curves come from runs memoised in the study; a setting not run yet waits
for the **Run** button (full-graph, graph-parallel, GNNPipe, GNNPipe K = 1 and the hybrid of S stages x G
graph-parallel ranks on P real processes), whose progress bar counts the five trainings.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.graphs.gnnpipe.claims import PAPER_FIGURES
from workbench.graphs.gnnpipe.config import GnnpipeConfig
from workbench.graphs.gnnpipe.model import MODEL_LABEL
from workbench.graphs.gnnpipe.study import CrossoverRow, GnnpipeView, check, gnnpipe_view

COLORS = {
    "full": "#2ca02c",
    "graph-parallel": "#d62728",
    "gnnpipe": "#1f77b4",
    "gnnpipe-k1": "#9467bd",
    "hybrid": "#17becf",
    "fixed": "#ff7f0e",
    "shuffled": "#1f77b4",
    "alternate": "#8c564b",
}
LABELS = {
    "full": "full-graph (1 process)",
    "graph-parallel": "graph parallel",
    "gnnpipe": "GNNPipe",
    "gnnpipe-k1": "GNNPipe K = 1",
    "hybrid": "hybrid S x G (K = 1)",
}


def accuracy_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Test accuracy vs epoch (real runs)",
            xaxis=dict(title="epoch"),
            yaxis=dict(title="test accuracy", range=[0, 1]),
            height=340,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    for name in LABELS:
        fig.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="lines+markers",
                name=LABELS[name],
                line=dict(color=COLORS[name], dash="dot" if name in ("gnnpipe-k1", "hybrid") else None),
            )
        )
    return fig


def bytes_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Bytes per epoch vs depth (closed form = counted)",
            height=340,
            xaxis=dict(title="layers L", type="log"),
            yaxis=dict(title="bytes per epoch", type="log"),
            yaxis2=dict(title="GP / GNNPipe", overlaying="y", side="right"),
            legend=dict(orientation="h", y=-0.25),
        )
    )
    fig.add_trace(
        go.Scatter(x=[], y=[], mode="lines+markers", name="graph parallel", line=dict(color=COLORS["graph-parallel"]))
    )
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="GNNPipe", line=dict(color=COLORS["gnnpipe"])))
    fig.add_trace(
        go.Scatter(
            x=[], y=[], mode="lines", name="ratio (right axis)", yaxis="y2", line=dict(color="black", dash="dash")
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="markers",
            name="this L",
            marker=dict(symbol="circle-open", size=16, color="black", line=dict(width=2)),
        )
    )
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="hybrid S x G", line=dict(color=COLORS["hybrid"])))
    return fig


def stale_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Edges read from history per epoch",
            height=320,
            xaxis=dict(title="epoch"),
            yaxis=dict(title="share of edges", rangemode="tozero"),
            legend=dict(orientation="h", y=-0.25),
        )
    )
    for order in ("fixed", "shuffled", "alternate"):
        fig.add_trace(go.Scatter(x=[], y=[], mode="lines", name=order, line=dict(color=COLORS[order])))
    return fig


def schedule_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Schedule: age of the historical embeddings read",
            height=300,
            xaxis=dict(title="epoch"),
            yaxis=dict(title="age (epochs)", rangemode="tozero"),
            legend=dict(orientation="h", y=-0.3),
        )
    )
    fig.add_trace(go.Bar(x=[], y=[], name="warm-up (one chunk, exact)", marker_color="#2ca02c"))
    fig.add_trace(go.Bar(x=[], y=[], name="pipelined: history age", marker_color="#1f77b4"))
    fig.add_trace(go.Bar(x=[], y=[], name="pipelined: no history (edges dropped)", marker_color="#c7c7c7"))
    return fig


def model_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title=MODEL_LABEL,
            height=360,
            xaxis=dict(title="layers L", type="log"),
            yaxis=dict(title="graph parallel / GNNPipe", type="log"),
            legend=dict(orientation="h", y=-0.3),
        )
    )
    for part, dash in (("metis-like", None), ("random", "dot")):
        for key, color in (("volume_ratio", "#1f77b4"), ("overhead_ratio", "#ff7f0e"), ("time_ratio", "#2ca02c")):
            fig.add_trace(
                go.Scatter(
                    x=[],
                    y=[],
                    mode="lines+markers",
                    name=f"{key.split('_')[0]} ({part})",
                    line=dict(color=color, dash=dash),
                )
            )
    for value, text in (
        (PAPER_FIGURES["v2"]["volume"][0], "paper v2 volume 22.89x"),
        (PAPER_FIGURES["v2"]["overhead"][0], "paper overhead 27.21x"),
        (PAPER_FIGURES["v2"]["time"][0], "paper time 2.45x"),
    ):
        fig.add_hline(y=value, line=dict(color="grey", dash="dash", width=1), annotation_text=text)
    return fig


def draw_accuracy(fig: Any, view: GnnpipeView) -> None:
    c = view.config
    setting = (
        f"{c.dataset}, {c.model} L={c.layers} d={c.hidden}, P={c.workers}, K={c.chunks} ({c.chunk_order}), "
        f"staleness {c.staleness}, warm-up {c.warmup}, stale gradients {c.stale_gradients}, {c.partition}"
    )
    for trace, name in zip(fig.data, LABELS):
        run = view.runs[name] if view.runs else None
        trace.x = run.curves["epoch"] if run else []
        trace.y = run.curves["test"] if run else []
    fig.layout.title.text = (
        f"Test accuracy vs epoch (real runs): {setting}" if view.runs else f"not run yet ({setting}): press Run"
    )


def draw_bytes(fig: Any, view: GnnpipeView) -> None:
    rows = view.bytes_rows
    xs = [r["layers"] for r in rows]
    fig.data[0].x, fig.data[0].y = xs, [r["graph-parallel"] for r in rows]
    fig.data[1].x, fig.data[1].y = xs, [r["gnnpipe"] for r in rows]
    fig.data[2].x, fig.data[2].y = xs, [r["ratio"] for r in rows]
    fig.data[4].x, fig.data[4].y = xs, [r["hybrid"] for r in rows]
    fig.data[4].name = f"hybrid {view.config.hybrid_stages} x {view.config.workers // view.config.hybrid_stages}"
    sel = [r for r in rows if r["layers"] == view.config.layers]
    fig.data[3].x = [view.config.layers] * 2 if sel else []
    fig.data[3].y = [sel[0]["graph-parallel"], sel[0]["gnnpipe"]] if sel else []
    c = view.config
    fig.layout.title.text = (
        f"Bytes per epoch vs depth on {c.dataset} (n = {view.n:,}), P = {c.workers}, "
        f"{c.partition} halo {rows[0]['halo']:,}, {c.model} d = {c.hidden}, {c.dtype}"
    )


def draw_stale(fig: Any, view: GnnpipeView) -> None:
    for trace, order in zip(fig.data, ("fixed", "shuffled", "alternate")):
        s = view.stale[order]
        trace.y = s["per_epoch"]
        trace.x = list(range(len(s["per_epoch"])))
        trace.line.width = 4 if order == view.config.chunk_order else 1.5
        trace.name = f"{order} (always stale {s['always']:.1%})"
    fig.layout.title.text = (
        f"Edges read from history per epoch, K = {view.config.chunks} "
        f"({view.stale['fixed']['cross']:.1%} of edges cross chunks)"
    )


def draw_schedule(fig: Any, view: GnnpipeView) -> None:
    sch = view.schedule
    warm = [(e, 0.2) for e, w in zip(sch["epoch"], sch["warmup"]) if w]
    aged = [(e, a) for e, a, w in zip(sch["epoch"], sch["age"], sch["warmup"]) if not w and a is not None]
    none = [(e, 0.2) for e, a, w in zip(sch["epoch"], sch["age"], sch["warmup"]) if not w and a is None]
    for trace, pts in zip(fig.data, (warm, aged, none)):
        trace.x = [p[0] for p in pts]
        trace.y = [p[1] for p in pts]
    c = view.config
    fig.layout.title.text = (
        f"Schedule over {c.epochs} epochs: warm-up {c.warmup}, staleness bound {c.staleness} "
        f"(history refreshed every {c.staleness} epoch(s))"
        if c.staleness
        else f"Schedule over {c.epochs} epochs: warm-up {c.warmup}, no history"
    )


def draw_model(fig: Any, view: GnnpipeView) -> None:
    i = 0
    for part in ("metis-like", "random"):
        rows = [r for r in view.paper if r["partition"] == part]
        for key in ("volume_ratio", "overhead_ratio", "time_ratio"):
            fig.data[i].x = [r["layers"] for r in rows]
            fig.data[i].y = [r[key] for r in rows]
            i += 1
    c = view.config
    loc = view.paper[0]["locality"] if view.paper else float("nan")
    fig.layout.title.text = (
        f"MODEL (not measured): {c.paper_graph} on {c.gpus} GPUs, {c.model} d = {c.hidden}, "
        f"K = {c.chunks}; METIS-like halo = random x {loc:.3f} (measured on {c.dataset})"
    )


class GnnpipePanel(Panel):
    """Dataset, depth, workers, chunks, order, staleness, warm-up; press Run for real runs of a new setting."""

    technique = "gnnpipe"
    title = "GNNPipe: layer-pipelined deep GNN training vs graph parallelism (real gloo runs; MODEL at paper scale)"
    options = {
        "layers": (2, 4, 8, 16, 32, 64),
        "hidden": (16, 32, 64, 128, 256),
        "workers": (1, 2, 3, 4, 8),
        "stages": (0, 1, 2, 3, 4),
        "chunks": (1, 2, 4, 8, 16, 32),
        "staleness": (0, 1, 2, 4),
        "warmup": (0, 5, 10, 20, 50),
        "epochs": (20, 50, 100, 200),
        "gpus": (2, 4, 8, 16),
        "seed": (0, 1, 2),
    }
    hidden = ("mode", "lr", "weight_decay", "dropout", "alpha", "lam", "eval_every", "timeout_s", "data_dir")
    static_slider = ("layers", (4, 8, 16, 32, 64))

    def panel_defaults(self) -> dict[str, Any]:
        return {"layers": 8, "hidden": 16, "workers": 2, "chunks": 4, "epochs": 50, "warmup": 5}

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.action = Action(
            self,
            "Run (real, P processes)",
            self._run,
            total=5,
            label="runs",
            button_style="primary",
            tooltip="train full-graph, graph-parallel, GNNPipe, GNNPipe K = 1 and the hybrid for real",
        )
        self.run_button, self.progress = self.action.button, self.action.progress
        super().__init__(static=static, **values)

    def config_of(self, values: dict[str, Any] | None = None) -> GnnpipeConfig:
        return GnnpipeConfig.from_dict(self.values() if values is None else values)

    def run_now(self) -> None:
        """Train the current setting for real (memoised in the study), advancing the progress bar, then redraw; an
        error shows in the status line and is raised."""
        self.action.run()

    def _run(self, progress: Progress) -> None:
        check(self.config_of(), progress=progress)

    def _run_clicked(self) -> None:
        self.action.click()

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [accuracy_figure(), bytes_figure(), stale_figure(), schedule_figure(), model_figure()]

    def compute(self, values: dict[str, Any]) -> GnnpipeView:
        return gnnpipe_view(self.config_of(values))

    def draw(self, figures: list[Any], view: GnnpipeView, values: dict[str, Any]) -> None:
        acc, byt, stale, sched, model = figures
        draw_accuracy(acc, view)
        draw_bytes(byt, view)
        draw_stale(stale, view)
        draw_schedule(sched, view)
        draw_model(model, view)

    def notes(self, view: GnnpipeView, values: dict[str, Any]) -> str:
        row = next(r for r in view.bytes_rows if r["layers"] == view.config.layers)
        text = (
            f"L = {row['layers']}: graph parallel {row['graph-parallel']:,} B vs GNNPipe "
            f"{row['gnnpipe'] or 0:,} B per epoch" + (f" (<b>{row['ratio']:.2f}x</b>)" if row["ratio"] else "")
        )
        if view.runs:
            k1 = max(
                float((view.runs["gnnpipe-k1"].params[k] - view.runs["full"].params[k]).abs().max())
                for k in view.runs["full"].params
            )
            text += (
                f" &middot; test accuracy: full {view.runs['full'].test_accuracy:.3f}, GP "
                f"{view.runs['graph-parallel'].test_accuracy:.3f}, GNNPipe {view.runs['gnnpipe'].test_accuracy:.3f}, "
                f"hybrid {view.runs['hybrid'].test_accuracy:.3f}"
                f" &middot; K = 1 max |param diff| {k1:.1e}"
            )
        else:
            text += (
                " &middot; <small>accuracy: not run yet, press <b>Run</b> (real processes, seconds to minutes)</small>"
            )
        if view.hybrid_note:
            text += f"<br><small>hybrid: {html.escape(view.hybrid_note)}</small>"
        return text + f"<br><small>features: {html.escape(view.feature_note)}</small>"

    def widget(self) -> W.Widget:
        base = super().widget()
        return W.VBox([base.children[0], self.action.widget(), *base.children[1:]])


# ---------------------------------------------------------------------------------------------- notebook figures
def seeds_figure(acc: dict[str, dict[str, Any]], *, title: str) -> go.Figure:
    """Mean test accuracy vs epoch with a +-1 std band per method (from ``study.accuracy_over_seeds``)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="epoch"),
            yaxis=dict(title="test accuracy"),
            height=380,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    palette = ["#2ca02c", "#d62728", "#1f77b4", "#9467bd", "#17becf"]
    for (label, row), color in zip(acc.items(), palette):
        x, m, s = row["epoch"], row["mean"], row["std"]
        fig.add_trace(
            go.Scatter(
                x=x + x[::-1],
                y=[a + b for a, b in zip(m, s)] + [a - b for a, b in zip(m, s)][::-1],
                fill="toself",
                line=dict(width=0),
                fillcolor=color,
                opacity=0.15,
                showlegend=False,
                hoverinfo="skip",
            )
        )
        fig.add_trace(go.Scatter(x=x, y=m, mode="lines+markers", name=label, line=dict(color=color)))
    return fig


def depth_figure(
    rows: list[dict[str, Any]], counted: dict[str, tuple[int, int]] | None = None, *, title: str
) -> go.Figure:
    """Bytes per epoch vs L (closed form) with counted points of real runs (``{name: (L, bytes)}``)."""
    fig = bytes_figure()
    fig.data[0].x, fig.data[0].y = [r["layers"] for r in rows], [r["graph-parallel"] for r in rows]
    fig.data[1].x, fig.data[1].y = [r["layers"] for r in rows], [r["gnnpipe"] for r in rows]
    fig.data[2].x, fig.data[2].y = [r["layers"] for r in rows], [r["ratio"] for r in rows]
    fig.data[4].x, fig.data[4].y = [r["layers"] for r in rows], [r.get("hybrid") for r in rows]
    fig.data[3].name = "counted on a real run"
    pts = list((counted or {}).values())
    fig.data[3].x, fig.data[3].y = [p[0] for p in pts], [p[1] for p in pts]
    fig.layout.title.text = title
    return go.Figure(fig)


def chunk_figure(rows: list[dict[str, Any]], *, title: str) -> go.Figure:
    """Final test accuracy (mean +- std over seeds) vs K per chunk order (``study.chunk_sweep``)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="chunks K", type="log"),
            yaxis=dict(title="final test accuracy"),
            height=360,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    for order in ("fixed", "shuffled", "alternate"):
        sel = [r for r in rows if r["order"] == order]
        if sel:
            fig.add_trace(
                go.Scatter(
                    x=[r["chunks"] for r in sel],
                    y=[r["mean"] for r in sel],
                    name=order,
                    error_y=dict(array=[r["std"] for r in sel]),
                    mode="lines+markers",
                    line=dict(color=COLORS[order]),
                )
            )
    return fig


def paper_figure(rows: list[dict[str, Any]], *, title: str) -> go.Figure:
    """MODEL ratios vs L (volume, overhead, time) for METIS-like and random partitions, with the paper's lines."""
    fig = model_figure()
    i = 0
    for part in ("metis-like", "random"):
        sel = [r for r in rows if r["partition"] == part]
        for key in ("volume_ratio", "overhead_ratio", "time_ratio"):
            fig.data[i].x, fig.data[i].y = [r["layers"] for r in sel], [r[key] for r in sel]
            i += 1
    fig.layout.title.text = title
    return go.Figure(fig)


def crossover_figure(rows: list[CrossoverRow], *, title: str) -> go.Figure:
    """Graph parallelism / GNNPipe bytes per epoch vs L, one line per (dataset, P) (``study.crossover``), the
    parity line at 1 and each crossover depth marked; the paper's 16-64 layers shaded."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="layers L", type="log"),
            yaxis=dict(title="graph parallel / GNNPipe bytes", type="log"),
            height=400,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    # the paper's depths as a filled band in data coordinates (a shape's coordinates on log axes are ambiguous
    # across plotly versions: one drawn at 16..64 stretched the axis to 1e64)
    ratios = [r for row in rows for r in row.ratios if r == r and r > 0] or [1.0]
    lo, hi = min(min(ratios), 1.0) * 0.9, max(max(ratios), 1.0) * 1.1
    fig.add_trace(
        go.Scatter(x=[16, 64, 64, 16, 16], y=[lo, lo, hi, hi, lo], fill="toself", mode="none", name="paper: 16-64 layers",
                   fillcolor="rgba(128,128,128,0.15)", hoverinfo="skip")
    )  # fmt: skip
    fig.add_hline(y=1.0, line=dict(color="black", dash="dash", width=1), annotation_text="equal bytes",
                  annotation_position="bottom right")  # fmt: skip
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    workers = sorted({row.workers for row in rows})
    for row in rows:
        color = palette[workers.index(row.workers) % len(palette)]
        dash = None if row.dataset == rows[0].dataset else "dot"
        cross = f"crossover L = {row.crossover_layers}" if row.crossover_layers else "no crossover"
        fig.add_trace(
            go.Scatter(
                x=list(row.layers),
                y=[None if r != r else r for r in row.ratios],
                mode="lines+markers",
                name=f"{row.dataset} P = {row.workers} ({cross})",
                line=dict(color=color, dash=dash),
            )
        )
        if row.crossover_layers:
            fig.add_trace(
                go.Scatter(
                    x=[row.crossover_layers],
                    y=[1.0],
                    mode="markers",
                    marker=dict(symbol="x", size=10, color=color),
                    showlegend=False,
                    hovertext=f"{row.dataset} P = {row.workers}: {cross}",
                )
            )
    return fig


def depth_accuracy_figure(rows: list[dict[str, Any]], *, title: str) -> go.Figure:
    """Final test accuracy of full-graph training vs depth per model (``study.depth_accuracy``)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="layers L", type="log"),
            yaxis=dict(title="final test accuracy", range=[0, 1]),
            height=360,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    names = {"gcn": "residual GCN", "gcnii": "GCNII"}
    for model, color in (("gcn", "#d62728"), ("gcnii", "#1f77b4")):
        sel = [r for r in rows if r["model"] == model]
        if sel:
            fig.add_trace(
                go.Scatter(
                    x=[r["layers"] for r in sel],
                    y=[r["test"] for r in sel],
                    mode="lines+markers",
                    name=names[model],
                    line=dict(color=color),
                )
            )
    return fig
