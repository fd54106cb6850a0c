"""Kudu panel: bytes moved, messages, memory and time per exploration strategy, measured on P real
processes, and the paper-scale model.

Measurements come from :func:`workbench.graphs.kudu.study.measure` (one launch of P gloo processes runs DFS,
BFS, the naive baseline and the hybrid at every chunk size of ``study.CHUNKS``), memoised there per setting;
the panel draws :func:`workbench.graphs.kudu.study.kudu_view`. Moving the chunk size, the strategy or a model slider redraws from those rows (fast); a setting not
measured yet (another graph, pattern or P) waits for the **Measure** button, because launching processes
takes about a second. The model figure is :mod:`workbench.graphs.kudu.model`, labelled as a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from widgets.layout import byte_unit
from workbench.cluster import ClusterSpec
from workbench.graphs.kudu.claims import PAPER_FIGURES
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.model import MODEL_LABEL, Projection
from workbench.graphs.kudu.study import (
    CHUNKS,
    KuduView,
    cluster_summary,
    kudu_view,
    measure,
    pick,
    scaling_projections,
)

WORKERS = (1, 2, 3, 4)
GRAPHS = ("karate", "planetoid-citeseer", "planetoid-cora", "wiki-vote", "rmat-10-4", "er-1000-0.005")
PATTERNS = ("triangle", "4-cycle", "diamond", "4-clique", "house", "5-cycle", "5-clique")
COLORS = {"dfs": "#d62728", "bfs": "#9467bd", "naive": "#7f7f7f", "hybrid": "#1f77b4", "replicated": "#ff7f0e"}
PHASES = (
    ("compute_seconds", "compute", "#2ca02c"),
    ("sync_seconds", "fetch rounds", "#d62728"),
    ("wait_seconds", "waiting for lists", "#ff7f0e"),
    ("idle_seconds", "idle (serving others)", "#c7c7c7"),
)
#: the cluster fields the model reads that the panel shows (the others do not enter the model, or are fixed)
SHOWN_CLUSTER = ("cluster.inter_node_bw_gbps", "cluster.inter_node_latency_us", "cluster.host_memory_gb")


# ---------------------------------------------------------------------------------------------- figures
def _bar_style(labels: list[str], selected: str) -> dict[str, Any]:
    colors = [COLORS[label.split()[0]] for label in labels]
    widths = [4 if label.split()[0] == selected else 0 for label in labels]
    return dict(color=colors, line=dict(color="black", width=widths))


def comm_figure() -> go.Figure:
    """Empty 1 x 3 bars: bytes moved, data messages, peak live embeddings per strategy."""
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("bytes fetched (all ranks)", "data messages (all ranks)", "peak live embeddings (max rank)"),
        horizontal_spacing=0.08,
    )
    for col in (1, 2, 3):
        fig.add_trace(go.Bar(x=[], y=[], showlegend=False, hovertemplate="%{x}: %{y:,}<extra></extra>"), row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    fig.update_layout(title="Measured per strategy", height=360, margin=dict(t=80))
    return fig


def fill_comm(fig: Any, rows: Sequence[dict[str, Any]] | None, chunk: int, selected: str, *, title: str) -> None:
    chosen = pick(rows or [], chunk)
    labels = [r["label"] for r in chosen]
    scale, unit = byte_unit([r["bytes"] for r in chosen])
    for trace, key in zip(fig.data, ("bytes", "messages", "peak_embeddings")):
        trace.x = labels
        trace.y = [
            max(r[key] / (scale if key == "bytes" else 1), 0.5 / scale if key == "bytes" else 0.5)
            if r["completed"] or key == "peak_embeddings"
            else None
            for r in chosen
        ]
        trace.marker = _bar_style(labels, selected)
        trace.text = ["" if r["completed"] else "abandoned" for r in chosen]
    fig.data[0].customdata = [r["bytes"] for r in chosen]
    fig.data[0].hovertemplate = "%{x}: %{customdata:,} B<extra></extra>"
    fig.layout.annotations[0].text = f"{unit} fetched (all ranks)"
    fig.layout.title.text = title


def time_figure() -> go.Figure:
    """Empty stacked bars: mining seconds per strategy split into compute, fetch rounds, waiting and idle."""
    fig = go.Figure(
        layout=dict(
            title="Mining time per strategy (slowest rank; real processes on this machine)",
            barmode="stack",
            yaxis=dict(title="seconds"),
            height=340,
            legend=dict(orientation="h", y=-0.25),
        )
    )
    for _, name, color in PHASES:
        fig.add_trace(go.Bar(name=name, x=[], y=[], marker_color=color))
    return fig


def fill_time(fig: Any, rows: Sequence[dict[str, Any]] | None, chunk: int) -> None:
    chosen = pick(rows or [], chunk)
    for trace, (key, _, _) in zip(fig.data, PHASES):
        trace.x = [r["label"] for r in chosen]
        trace.y = [r[key] for r in chosen]


def chunk_figure() -> go.Figure:
    """Empty tradeoff lines: messages, bytes and peak embeddings of the hybrid vs chunk size (DFS, BFS dotted)."""
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("data messages", "bytes fetched", "peak live embeddings"),
        horizontal_spacing=0.08,
    )
    for col in (1, 2, 3):
        fig.add_trace(
            go.Scatter(
                x=[], y=[], mode="lines+markers", name="hybrid", line=dict(color=COLORS["hybrid"]), showlegend=col == 1
            ),
            row=1,
            col=col,
        )
        for s in ("dfs", "bfs"):
            fig.add_trace(
                go.Scatter(
                    x=[], y=[], mode="lines", name=s, line=dict(color=COLORS[s], dash="dot"), showlegend=col == 1
                ),
                row=1,
                col=col,
            )
        fig.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers",
                name="chosen chunk",
                showlegend=col == 1,
                marker=dict(symbol="circle-open", size=16, color="black", line=dict(width=2)),
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(type="log", title_text="chunk size C", row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    fig.update_layout(
        title="BFS-DFS hybrid: the chunk size trades messages for memory",
        height=360,
        legend=dict(orientation="h", y=-0.3),
    )
    return fig


def fill_chunks(fig: Any, rows: Sequence[dict[str, Any]] | None, chunk: int) -> None:
    rows = rows or []
    hybrid = sorted((r for r in rows if r["strategy"] == "hybrid"), key=lambda r: r["chunk_size"])
    ref = {r["strategy"]: r for r in rows if r["strategy"] in ("dfs", "bfs")}
    xs = [r["chunk_size"] for r in hybrid]
    span = [min(xs), max(xs)] if xs else []
    scale, unit = byte_unit([r["bytes"] for r in rows])
    for col, key in enumerate(("messages", "bytes", "peak_embeddings")):
        base = 4 * col
        div = scale if key == "bytes" else 1.0

        def value(r: dict[str, Any], key: str = key, div: float = div) -> float:
            return max(r[key], 0.5) / div

        fig.data[base].x, fig.data[base].y = xs, [value(r) for r in hybrid]
        for i, s in enumerate(("dfs", "bfs"), start=1):
            y = value(ref[s]) if s in ref else None
            fig.data[base + i].x, fig.data[base + i].y = (span, [y, y]) if y is not None else ([], [])
        sel = [r for r in hybrid if r["chunk_size"] == chunk]
        fig.data[base + 3].x, fig.data[base + 3].y = [chunk] * len(sel), [value(r) for r in sel]
    fig.layout.annotations[1].text = f"{unit} fetched"


def model_figure() -> go.Figure:
    """Empty model bars: seconds and memory per machine per strategy (and the replicated-graph design)."""
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("modelled time (s)", "memory per machine (GB)"), horizontal_spacing=0.12
    )
    fig.add_trace(go.Bar(x=[], y=[], showlegend=False), row=1, col=1)
    fig.add_trace(go.Bar(x=[], y=[], showlegend=False), row=1, col=2)
    fig.add_trace(
        go.Scatter(x=[], y=[], mode="lines", name="machine memory", line=dict(color="black", dash="dash")), row=1, col=2
    )
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(title=MODEL_LABEL, height=380, legend=dict(orientation="h", y=-0.25), margin=dict(t=90))
    return fig


def fill_model(
    fig: Any, projs: Sequence[Projection], selected: str, cluster: ClusterSpec, machines: int, edges: float
) -> None:
    labels = [p.strategy for p in projs]
    style = _bar_style(labels, selected)
    fig.data[0].x, fig.data[0].y = labels, [p.seconds for p in projs]
    fig.data[0].marker = style
    fig.data[0].hovertext = [
        f"compute {p.compute_seconds:.3g} s, bandwidth {p.bandwidth_seconds:.3g} s, latency {p.latency_seconds:.3g} s"
        for p in projs
    ]
    fig.data[1].x, fig.data[1].y = labels, [p.memory_bytes / 1e9 for p in projs]
    fig.data[1].marker = style
    fig.data[1].hovertext = [
        f"partition {p.partition_bytes / 1e9:.3g} GB, cache {p.cache_bytes / 1e9:.3g} GB, "
        f"embeddings {p.embedding_bytes / 1e9:.3g} GB; {'fits' if p.fits else 'does NOT fit'}"
        for p in projs
    ]
    c = cluster_summary(cluster, machines)
    fig.data[2].x, fig.data[2].y = (labels[:1] + labels[-1:], [c["memory_gb"]] * 2) if labels else ([], [])
    fig.layout.title.text = (
        f"MODEL (not measured): {edges:.3g} edges with the measured graph's degree shape on "
        f"{c['machines']} machines x {c['cores']} cores, {c['bandwidth_gbps']:g} GB/s, "
        f"{c['latency_us']:g} us"
    )


def scaling_figure(
    rows: Sequence[dict[str, Any]], chunk: int, *, edges: float, machines: Sequence[int], cluster: ClusterSpec
) -> go.Figure:
    """MODEL: time and memory per machine vs machine count, per strategy, at ``edges`` edges."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("modelled time (s)", "memory per machine (GB)"))
    series = scaling_projections(rows, chunk, edges, cluster, machines)
    for name, ps in series.items():
        color = COLORS[name]
        fig.add_trace(
            go.Scatter(
                x=list(machines), y=[p.seconds for p in ps], name=name, mode="lines+markers", line=dict(color=color)
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=list(machines),
                y=[p.memory_bytes / 1e9 for p in ps],
                name=name,
                showlegend=False,
                mode="lines+markers",
                line=dict(color=color),
            ),
            row=1,
            col=2,
        )
    fig.add_trace(
        go.Scatter(
            x=[machines[0], machines[-1]],
            y=[cluster.host_memory_gb] * 2,
            mode="lines",
            name="machine memory",
            line=dict(color="black", dash="dash"),
        ),
        row=1,
        col=2,
    )
    for col in (1, 2):
        fig.update_xaxes(type="log", title_text="machines", row=1, col=col)
        fig.update_yaxes(type="log", row=1, col=col)
    fig.update_layout(
        title=f"MODEL (not measured): {edges:.3g} edges, per-edge costs measured on "
        f"{rows[0]['graph']} at P = {rows[0]['workers']}",
        height=400,
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def strategy_figures(rows: Sequence[dict[str, Any]], chunk: int, *, title: str) -> list[go.Figure]:
    """The measured comparison as plain figures (notebook): per-strategy bars, time split, chunk tradeoff."""
    comm, times, chunks = go.Figure(comm_figure()), go.Figure(time_figure()), go.Figure(chunk_figure())
    fill_comm(comm, rows, chunk, "hybrid", title=title)
    fill_time(times, rows, chunk)
    fill_chunks(chunks, rows, chunk)
    return [comm, times, chunks]


# ---------------------------------------------------------------------------------------------- panel
class KuduPanel(Panel):
    """Workers, chunk size, strategy, partition, cache and the model cluster; press Measure for new settings."""

    technique = "kudu"
    title = "Kudu: distributed pattern mining on P real processes (measured) and at paper scale (model)"
    options = {
        "graph": GRAPHS,
        "pattern": PATTERNS,
        "workers": WORKERS,
        "chunk_size": CHUNKS,
        "cache_kb": (0, 4, 16, 64, 256, 1024),
        "model_edges": (1e9, 1e10, 1e11, 1e12),
        "model_machines": (8, 32, 128, 256, 1024, 4096),
        "cluster.inter_node_bw_gbps": (1.25, 3.125, 12.5, 25.0, 50.0),
        "cluster.inter_node_latency_us": (1.0, 5.0, 20.0, 100.0),
        "cluster.host_memory_gb": (64.0, 128.0, 256.0, 512.0, 1024.0),
    }
    hidden = (
        "max_embeddings",
        "timeout_s",
        "data_dir",
        *(s.name for s in KuduConfig.specs() if s.name.startswith("cluster.") and s.name not in SHOWN_CLUSTER),
    )
    static_slider = ("chunk_size", CHUNKS)

    def panel_defaults(self) -> dict[str, Any]:
        return {"graph": "karate", "pattern": "4-cycle", "workers": 2, "chunk_size": 16}

    def __init__(self, *, static: bool | None = None, measure_now: bool = True, **values: Any) -> None:
        self.action = Action(
            self,
            "Measure (real run on P processes)",
            self._measure,
            label="runs",
            button_style="primary",
            tooltip="launch P gloo processes and run every strategy and chunk size",
        )
        self.measure_button, self.progress = self.action.button, self.action.progress
        self._measure_now = measure_now
        super().__init__(static=static, **values)

    def config_of(self, values: dict[str, Any] | None = None) -> KuduConfig:
        """The validated config of the controls (or of ``values``)."""
        return KuduConfig.from_dict(self.values() if values is None else values)

    def measure(self) -> tuple[dict[str, Any], ...]:
        """Run the current setting for real (memoised in the study), then redraw; an error (a killed or stopped
        worker: one line) shows in the status line and is raised."""
        return self.action.run()

    def _measure(self, progress: Progress) -> tuple[dict[str, Any], ...]:
        return measure(self.config_of())

    def _measure_clicked(self) -> None:
        """The button: the status line already shows why a measurement failed."""
        self.action.click()

    # ---- figures ----------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        if self._measure_now:
            try:
                measure(self.config_of(values))
            except (ValueError, FileNotFoundError):  # shown by the first redraw's status line
                pass
        return [comm_figure(), time_figure(), chunk_figure(), model_figure()]

    def compute(self, values: dict[str, Any]) -> KuduView:
        return kudu_view(self.config_of(values))

    def draw(self, figures: list[Any], view: KuduView, values: dict[str, Any]) -> None:
        comm, times, chunks, model = figures
        if view.rows is None:
            title = f"not measured yet: press Measure to run P = {values['workers']} processes"
        else:
            r0 = view.rows[0]
            title = (
                f"Measured: {r0['pattern']} ({r0['induced']}-induced) in {r0['graph']}, P = {r0['workers']}, "
                f"count {r0['count']:,}"
            )
        fill_comm(comm, view.rows, view.chunk, view.strategy, title=title)
        fill_time(times, view.rows, view.chunk)
        fill_chunks(chunks, view.rows, view.chunk)
        fill_model(model, view.projections, view.strategy, view.cluster, view.machines, view.edges)

    def notes(self, view: KuduView, values: dict[str, Any]) -> str:
        if view.rows is None:
            return (
                "<small>these settings are not measured yet: press <b>Measure</b> (a real run of every "
                "strategy on P processes, about a second on small graphs)</small>"
            )
        ratios = view.ratios
        chosen = next(r for r in view.chosen if r["strategy"] == view.strategy)
        text = (
            f"{chosen['label']}: {chosen['messages']:,} messages, {chosen['bytes']:,} bytes, hit rate "
            f"{chosen['cache_hit_rate']:.0%}, peak {chosen['peak_embeddings']:,} embeddings, "
            f"{chosen['seconds']:.3g} s &middot; naive/hybrid bytes <b>{ratios['naive_over_hybrid_bytes']:.1f}x</b>"
            f" &middot; DFS/hybrid messages <b>{ratios['dfs_over_hybrid_messages']:.1f}x</b> &middot; "
            f"BFS/hybrid peak memory <b>{ratios['bfs_over_hybrid_peak_embeddings']:.1f}x</b>"
        )
        if view.projections:
            hybrid = next(p for p in view.projections if p.strategy == "hybrid")
            rep = view.projections[-1]
            text += (
                f"<br><small>model: hybrid {hybrid.seconds:.3g} s and {hybrid.memory_bytes / 1e9:.3g} GB per "
                f"machine; replicated graph needs {rep.memory_bytes / 1e9:.3g} GB per machine "
                f"({'fits' if rep.fits else 'does not fit'}); paper: graphs of more than "
                f"{PAPER_FIGURES['largest_graph_edges']:.0e} edges on a commodity cluster</small>"
            )
        else:
            text += "<br><small>model: needs a run with P >= 2</small>"
        return text

    def widget(self) -> W.Widget:
        base = super().widget()
        return W.VBox([base.children[0], self.action.widget(), *base.children[1:]])
