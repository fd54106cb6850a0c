"""Mesh-Attention panel: per-rank communication vs GPUs, modelled step time and memory, and who computes
which block of the Q x KV matrix (Ring rows vs Mesh tiles).

Everything drawn here comes from ``workbench.llm.mesh_attention.study`` (the memoised model sweeps, block maps
and ratios); this module only builds and updates the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Panel
from widgets.layout import byte_unit
from workbench.llm.mesh_attention.config import MeshAttentionConfig, tile_a_options
from workbench.llm.mesh_attention.study import (
    HEAT_MAX,
    MODEL_METHODS,
    MeshAttentionView,
    headline_speedups,
    max_count_difference,
    mesh_attention_view,
)

GPU_OPTIONS = (1, 2, 4, 6, 8, 9, 12, 16, 32, 64, 128, 256, 512, 1024)
SEQ_OPTIONS = tuple(2**k for k in range(10, 23))  # 1K .. 4M tokens
#: the cluster controls the panel shows: node size and the two link bandwidths (the rest keep their defaults)
SHOWN_CLUSTER = ("cluster.gpus_per_node", "cluster.intra_node_bw_gbps", "cluster.inter_node_bw_gbps")
COLORS = {
    "ring": "#d62728",
    "ulysses": "#9467bd",
    "usp": "#ff7f0e",
    "startrail": "#8c564b",
    "mesh": "#1f77b4",
    "node_mesh": "#17becf",
}


def _colour_index(ranks: np.ndarray, gpus: int) -> np.ndarray:
    """A colour per rank that differs between neighbours (ranks scattered over the colour scale); NaN = masked."""
    step = next(s for s in range(max(gpus // 3, 1), gpus + 1) if np.gcd(s, gpus) == 1) if gpus > 2 else 1
    return np.where(ranks < 0, np.nan, (ranks * step) % max(gpus, 1)).astype(float)


class MeshAttentionPanel(Panel):
    """Move GPUs, sequence length, heads, head dim, node size, bandwidths, causal and the tile shape."""

    technique = "mesh-attention"
    title = (
        "Mesh-Attention (flat, and the workbench's node-level extension) vs Ring, Ulysses, USP and StarTrail "
        "(cluster model, labelled; nothing runs here)"
    )
    options = {
        "gpus": GPU_OPTIONS,
        "seq": SEQ_OPTIONS,
        "head_dim": (32, 64, 128, 256),
        "cluster.gpus_per_node": (1, 2, 4, 8, 16),
        "cluster.intra_node_bw_gbps": (50.0, 100.0, 200.0, 450.0, 900.0),
        "cluster.inter_node_bw_gbps": (3.125, 6.25, 12.5, 25.0, 50.0, 100.0),
    }
    hidden = ("mode", "batch", "ulysses_degree", "seed", "timeout_s") + tuple(
        s.name for s in MeshAttentionConfig.specs() if s.group == "cluster" and s.name not in SHOWN_CLUSTER
    )
    static_slider = ("gpus", (4, 16, 64, 256, 1024))

    def panel_defaults(self) -> dict[str, Any]:
        return {
            "mode": "model",
            "gpus": 256,
            "seq": 1_048_576,
            "heads": 32,
            "head_dim": 128,
            "causal": True,
            "dtype": "bfloat16",
        }

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        gpus = values.get("gpus", self.panel_defaults()["gpus"])
        self.options = {**self.options, "tile_a": self._tile_options(int(gpus))}
        super().__init__(static=static, **values)

    @staticmethod
    def _tile_options(gpus: int) -> tuple[int, ...]:
        return tile_a_options(gpus)

    def adjust_controls(self, changed: str) -> None:
        if changed == "gpus":
            tile = self.controls["tile_a"]
            options = self._tile_options(self.controls["gpus"].value)
            keep = tile.value if tile.value in options else 0
            tile.options = options
            tile.value = keep

    # ---- figures ----------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [self._comm_figure(), self._time_figure(), self._memory_figure(), self._heat_figure()]

    @staticmethod
    def _comm_figure() -> go.Figure:
        """Bytes per rank vs GPUs, one line per method, plus the chosen P."""
        comm = go.Figure(
            layout=dict(
                title="Per-rank communication vs GPUs (fwd+bwd, one attention layer; model = exact kernel counts)",
                xaxis=dict(title="GPUs P", type="log"),
                yaxis=dict(title="bytes per rank (max over ranks)", type="log"),
                height=380,
                legend=dict(orientation="h", y=-0.25),
            )
        )
        for method in MODEL_METHODS:
            comm.add_trace(go.Scatter(name=method, mode="lines+markers", line=dict(color=COLORS[method]), x=[], y=[]))
        comm.add_trace(
            go.Scatter(
                name="chosen P",
                mode="markers",
                x=[],
                y=[],
                hoverinfo="x+y",
                marker=dict(symbol="circle-open", size=16, color="black", line=dict(width=2)),
            )
        )
        return comm

    @staticmethod
    def _time_figure() -> go.Figure:
        """Stacked compute / exposed communication bars per method."""
        time_fig = go.Figure(
            layout=dict(
                title="Modelled step time per method (fwd+bwd): compute vs exposed communication",
                barmode="stack",
                yaxis=dict(title="seconds"),
                height=360,
                legend=dict(orientation="h", y=-0.2),
            )
        )
        time_fig.add_trace(
            go.Bar(name="compute", x=list(MODEL_METHODS), y=[0] * len(MODEL_METHODS), marker_color="#2ca02c")
        )
        time_fig.add_trace(
            go.Bar(
                name="exposed communication", x=list(MODEL_METHODS), y=[0] * len(MODEL_METHODS), marker_color="#d62728"
            )
        )
        return time_fig

    @staticmethod
    def _memory_figure() -> go.Figure:
        """Peak activation memory bar per method."""
        memory = go.Figure(
            layout=dict(
                title="Modelled peak activation memory per rank (attention op)",
                yaxis=dict(title="GB"),
                height=340,
                showlegend=False,
            )
        )
        memory.add_trace(
            go.Bar(x=list(MODEL_METHODS), y=[0] * len(MODEL_METHODS), marker_color=[COLORS[m] for m in MODEL_METHODS])
        )
        return memory

    @staticmethod
    def _heat_figure() -> go.Figure:
        """Ring vs Mesh assignment matrices side by side."""
        heat = make_subplots(
            rows=1, cols=2, subplot_titles=("Ring: rank i computes row i", "Mesh: a x b tiles"), horizontal_spacing=0.08
        )
        for col in (1, 2):
            heat.add_trace(
                go.Heatmap(
                    z=[[0]],
                    colorscale="Turbo",
                    showscale=False,
                    zmin=0,
                    hovertemplate="Q %{y}, KV %{x}: rank %{customdata}<extra></extra>",
                ),
                row=1,
                col=col,
            )
            heat.update_yaxes(
                autorange="reversed",
                type="category",
                showticklabels=False,
                row=1,
                col=col,
                title_text="Q chunk" + (" (grouped by tile row)" if col == 2 else ""),
            )
            heat.update_xaxes(
                type="category",
                showticklabels=False,
                row=1,
                col=col,
                title_text="KV chunk" + (" (grouped by tile column)" if col == 2 else ""),
            )
        heat.update_layout(
            title="Who computes each block of the Q x KV matrix (masked causal blocks blank)", height=420
        )
        return heat

    def compute(self, values: dict[str, Any]) -> MeshAttentionView:
        return mesh_attention_view(values)

    def draw(self, figures: list[Any], view: MeshAttentionView, values: dict[str, Any]) -> None:
        comm, time_fig, memory, heat = figures
        scale, unit = byte_unit([*view.chosen_bytes(), *(y for m in MODEL_METHODS for y in view.sweep[m][1])])
        for i, method in enumerate(MODEL_METHODS):
            xs, ys = view.sweep[method]
            comm.data[i].x, comm.data[i].y = xs, [None if y is None else y / scale for y in ys]
        chosen = [b / scale for b in view.chosen_bytes()]
        comm.data[-1].x, comm.data[-1].y = [view.config.gpus] * len(chosen), chosen
        comm.layout.yaxis.title.text = f"{unit} per rank (max over ranks)"

        ok = view.ok
        compute = [ok[m].compute_seconds if m in ok else None for m in MODEL_METHODS]
        exposed = [ok[m].total_seconds - ok[m].compute_seconds if m in ok else None for m in MODEL_METHODS]
        time_fig.data[0].y, time_fig.data[1].y = compute, exposed
        time_fig.layout.title.text = (
            f"Modelled step time at P={view.config.gpus}, S={view.config.seq:,} "
            "(fwd+bwd): compute vs exposed communication"
        )
        memory.data[0].y = [float(ok[m].peak_memory_bytes.max()) / 1e9 if m in ok else None for m in MODEL_METHODS]

        for trace, block_map in zip(heat.data, (view.ring_map, view.mesh_map)):
            trace.z = _colour_index(block_map.ranks, view.config.gpus)
            trace.customdata = block_map.ranks
            trace.x, trace.y = [str(c) for c in block_map.kv_chunks], [str(c) for c in block_map.q_chunks]
            trace.zmax = max(view.config.gpus - 1, 1)
        mesh = ok.get("mesh")
        corner = f" (first {HEAT_MAX} of {view.config.gpus} chunks)" if view.config.gpus > HEAT_MAX else ""
        heat.layout.annotations[1].text = (f"Mesh: {mesh.tile[0]} x {mesh.tile[1]} tiles" if mesh else "Mesh") + corner
        heat.layout.annotations[0].text = "Ring: rank i computes row i" + corner

    def notes(self, view: MeshAttentionView, values: dict[str, Any]) -> str:
        parts = []
        ratio = view.bytes_ratio()
        if ratio is not None:
            p = view.config.gpus
            parts.append(f"bytes Ring/Mesh = <b>{ratio:.2f}x</b> ((&radic;P+1)/2 = {(np.sqrt(p) + 1) / 2:.2f})")
            for other in ("ring", "usp", "startrail"):
                if view.speedup(other) is not None:
                    parts.append(f"Mesh speed-up over {other}: <b>{view.speedup(other):.2f}x</b>")
            if view.speedup("node_mesh") is not None:
                parts.append(
                    f"node-level Mesh (extension) / flat Mesh time: <b>{1 / view.speedup('node_mesh'):.2f}</b>"
                )
        errors = [f"{m}: {r}" for m, r in view.errors.items()]
        text = " &middot; ".join(parts)
        if errors:
            text += "<br><small style='color:#777'>" + "<br>".join(errors) + "</small>"
        return "<small>model (not a measurement)</small> " + text


def check_figure(result: dict[str, Any]) -> go.Figure:
    """Bars of the bytes each rank really sent+received in a ``mode='check'`` run; the title gives the largest
    difference from the model's count (hover shows both)."""
    ok = [r for r in result["results"] if "error" not in r]
    diff = max_count_difference(result)
    scale, unit = byte_unit([b for r in ok for b in r["bytes_per_rank"]])
    fig = go.Figure(
        layout=dict(
            title=f"Real run on {result['gpus']} processes: bytes per rank (fwd+bwd); max |counted - model| = {diff} B",
            xaxis=dict(title="rank", dtick=1),
            yaxis=dict(title=f"{unit} sent + received"),
            barmode="group",
            height=360,
        )
    )
    for r in ok:
        ranks = list(range(len(r["bytes_per_rank"])))
        fig.add_trace(
            go.Bar(
                name=r["method"],
                x=ranks,
                y=[b / scale for b in r["bytes_per_rank"]],
                marker_color=COLORS[r["method"]],
                customdata=list(zip(r["bytes_per_rank"], r["model_bytes_per_rank"])),
                hovertemplate="rank %{x}: counted %{customdata[0]:,} B, model %{customdata[1]:,} B",
            )
        )
    return fig


def headline_figure(base: MeshAttentionConfig, *, gpus_list: tuple[int, ...], seq_list: tuple[int, ...]) -> go.Figure:
    """The paper's headline as a model figure: Mesh speed-up vs GPUs and vs sequence length."""
    speedups = headline_speedups(base, gpus_list=gpus_list, seq_list=seq_list)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(f"vs GPUs (S = {base.seq:,} tokens)", f"vs sequence length (P = {base.gpus} GPUs)"),
    )
    for col, (axis, points) in enumerate((("gpus", gpus_list), ("seq", seq_list)), start=1):
        for method, ratios in speedups[axis].items():
            fig.add_trace(
                go.Scatter(
                    x=list(points),
                    y=ratios,
                    name=f"over {method}",
                    mode="lines+markers",
                    line=dict(color=COLORS[method]),
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(
            type="log",
            title_text="GPUs P" if axis == "gpus" else "tokens S",
            row=1,
            col=col,
            tickvals=list(points),
            ticktext=[f"{p:,}" if axis == "gpus" else f"{p // 1024:,}K" for p in points],
        )
    fig.update_yaxes(title_text="Mesh speed-up (x)", row=1, col=1)
    fig.add_hline(y=1.0, line=dict(color="#999", dash="dot"))
    fig.update_layout(
        title="MODEL (not measured): Mesh-Attention step-time speed-up, one attention layer fwd+bwd",
        height=420,
        annotations=list(fig.layout.annotations)
        + [
            dict(
                text=(
                    f"cluster model: {base.cluster.gpu_tflops:g} TFLOP/s per GPU, {base.cluster.gpus_per_node} GPUs/node, "
                    f"NVLink {base.cluster.intra_node_bw_gbps:g} GB/s, network {base.cluster.inter_node_bw_gbps:g} GB/s per GPU; "
                    "bytes = exact counts of the real kernels"
                ),
                xref="paper",
                yref="paper",
                x=0,
                y=-0.3,
                showarrow=False,
                font=dict(size=11, color="#555"),
            )
        ],
        margin=dict(b=110),
    )
    return fig
