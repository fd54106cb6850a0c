"""CFP panel: plan cost per training step (CFP, Megatron, data parallel; ILP and Alpa's objective on request),
strategy combinations before and after ParallelBlock grouping, profiling runs vs depth, and the plan of one
layer. Every number is the cost MODEL of :mod:`workbench.llm.cfp.study` (memoised there); the panel only draws.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from widgets.base import Panel
from workbench.llm.cfp.study import CfpViewConfig, PanelView, panel_view

COLORS = {"cfp": "#1f77b4", "ilp": "#2ca02c", "alpa": "#9467bd", "megatron": "#ff7f0e", "data-parallel": "#8c564b"}
OVER = "#d62728"


def cost_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(title="Plan cost per training step (MODEL)", height=340, yaxis=dict(title="seconds per step"))
    )
    fig.add_trace(go.Bar(x=[], y=[], text=[], textposition="outside", name="plans", marker=dict(color=[])))
    return fig


def combos_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Strategy combinations before and after grouping",
            height=340,
            xaxis=dict(title="layers", type="log"),
            yaxis=dict(title="log10 combinations"),
        )
    )
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="per operator (Alpa's ILP space)"))
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="per ParallelBlock (CFP)"))
    fig.add_trace(go.Scatter(x=[], y=[], mode="markers", name="this depth", marker=dict(size=14, symbol="circle-open")))
    return fig


def profile_figure() -> go.Figure:
    fig = go.Figure(
        layout=dict(
            title="Profiling runs vs depth",
            height=340,
            xaxis=dict(title="layers", type="log"),
            yaxis=dict(title="block strategies to profile", type="log"),
        )
    )
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="unique segments (CFP)"))
    fig.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="every layer"))
    return fig


def plan_figure() -> go.Figure:
    fig = go.Figure(layout=dict(title="CFP plan of one layer", height=300, yaxis=dict(title="mesh axis")))
    fig.add_trace(
        go.Heatmap(
            x=[], y=[], z=[], text=[], texttemplate="%{text}", showscale=False, colorscale="Viridis", zmin=0, zmax=6
        )
    )
    return fig


def draw(figures: list[Any], view: PanelView) -> None:
    cost, combos, prof, plan = figures
    c = view.config
    setting = f"{c.model}, {c.gpus} GPUs, mesh {view.mesh}, batch {c.batch}, limit {c.memory_gb:g} GB"
    names = [p["name"] for p in view.plans]
    bar = cost.data[0]
    bar.x = names
    bar.y = [p["seconds"] for p in view.plans]
    bar.text = [f"{p['memory'] / 1e9:.1f} GB" + ("" if p["fits"] else " (over)") for p in view.plans]
    bar.marker.color = [COLORS.get(n, "#7f7f7f") if p["fits"] else OVER for n, p in zip(names, view.plans)]
    cfp = view.plans[0]["seconds"]
    cost.layout.title.text = f"{view.label}: seconds per step, {setting}; CFP {cfp:.3g} s (red: over the memory limit)"
    combos.data[0].x = combos.data[1].x = view.layers_axis
    combos.data[0].y, combos.data[1].y = view.combos_before, view.combos_after
    depth = c.layers or _own_layers(view)
    i = view.layers_axis.index(depth)
    combos.data[2].x, combos.data[2].y = [depth, depth], [view.combos_before[i], view.combos_after[i]]
    combos.layout.title.text = (
        f"Strategy combinations at {depth} layers: 10^{view.combos_before[i]:.0f} per operator -> "
        f"10^{view.combos_after[i]:.0f} per ParallelBlock ({c.model}, mesh {view.mesh})"
    )
    prof.data[0].x = prof.data[1].x = view.layers_axis
    prof.data[0].y, prof.data[1].y = view.profile_unique, view.profile_per_layer
    prof.layout.title.text = (
        f"Profiling runs: {view.profile_unique[0]} block strategies for the unique segments at any depth vs "
        f"{view.profile_per_layer[i]} for every layer at {depth}"
    )
    letters = sorted({s for row in view.layer_strategies for s in row})
    code = {s: k for k, s in enumerate(letters)}
    axes = [f"axis {a} ({n})" for a, n in enumerate(view.mesh.split("x"))]
    plan.data[0].x = view.layer_ops
    plan.data[0].y = axes
    plan.data[0].z = [[code[row[a]] for row in view.layer_strategies] for a in range(len(axes))]
    plan.data[0].text = [[row[a] for row in view.layer_strategies] for a in range(len(axes))]
    plan.data[0].zmax = max(1, len(letters) - 1)
    plan.layout.title.text = (
        f"CFP plan of one layer on mesh {view.mesh} (index split per axis; - replicate), DP {view.method}, "
        f"search {view.search_seconds * 1e3:.0f} ms"
    )


def _own_layers(view: PanelView) -> int:
    from workbench.llm.cfp.graph import PAPER_MODELS

    return PAPER_MODELS[view.config.model].layers


class CfpPanel(Panel):
    """Model, depth, GPUs, mesh rows, batch, memory limit; ILP and Alpa's objective on request."""

    technique = "cfp"
    config = CfpViewConfig
    title = "CFP: intra-operator plan search by ParallelBlocks, segments and a DP (MODEL at paper scale)"
    options = {
        "layers": (0, 4, 8, 16, 24, 32, 48, 96),
        "gpus": (1, 2, 4, 8, 16, 32, 64),
        "mesh_rows": (1, 2, 4, 8),
        "batch": (1, 2, 4, 8, 16, 32, 64),
        "memory_gb": (16.0, 24.0, 40.0, 80.0, 141.0),
    }
    static_slider = ("layers", (4, 8, 16, 32))

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [cost_figure(), combos_figure(), profile_figure(), plan_figure()]

    def compute(self, values: dict[str, Any]) -> PanelView:
        return panel_view(CfpViewConfig.from_dict(values))

    def draw(self, figures: list[Any], view: PanelView, values: dict[str, Any]) -> None:
        draw(figures, view)

    def notes(self, view: PanelView, values: dict[str, Any]) -> str:
        by = {p["name"]: p for p in view.plans}
        cfp = by["cfp"]["seconds"]
        parts = [f"CFP {cfp:.3g} s/step"]
        for name in ("megatron", "data-parallel", "alpa", "ilp"):
            if name in by:
                p = by[name]
                parts.append(f"{name} {p['seconds'] / cfp:.2f}x" + ("" if p["fits"] else " (over memory)"))
        return " &middot; ".join(parts) + " <small>(MODEL)</small>"


# ---------------------------------------------------------------------------------------------- notebook figures
def table_html(rows: list[dict], cols: list[str] | None = None) -> str:
    """An HTML table of ``rows`` (dicts), columns ``cols`` (default: the first row's keys)."""
    import html as _html

    cols = cols or list(rows[0])
    head = "".join(f"<th>{_html.escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{_html.escape(str(r.get(c, '')))}</td>" for c in cols) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def search_time_figure(rows: list[dict], *, title: str) -> go.Figure:
    """Search seconds vs operators for CFP, the ILP and brute force (``study.search_time_sweep``)."""
    fig = go.Figure(
        layout=dict(
            title=title, height=360, xaxis=dict(title="operators", type="log"), yaxis=dict(title="seconds", type="log")
        )
    )
    for key, name in (("cfp_seconds", "CFP (blocks + DP)"), ("ilp_seconds", "ILP (HiGHS)"),
                      ("brute_force_seconds", "brute force")):  # fmt: skip
        pts = [(r["operators"], r[key]) for r in rows if r[key] is not None]
        fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=name))
    return fig


def profile_sweep_figure(rows: list[dict], *, title: str) -> go.Figure:
    """Block strategies profiled (real runs) vs depth, beside per-layer profiling (``study.profile_sweep``)."""
    fig = go.Figure(layout=dict(title=title, height=340, xaxis=dict(title="layers"), yaxis=dict(title="runs")))
    xs = [r["layers"] for r in rows]
    fig.add_trace(go.Scatter(x=xs, y=[r["runs"] for r in rows], mode="lines+markers", name="CFP: unique blocks"))
    fig.add_trace(
        go.Scatter(x=xs, y=[r["runs_per_layer_profiling"] for r in rows], mode="lines+markers", name="every layer")
    )
    fig.add_trace(
        go.Scatter(x=xs, y=[r["wall_seconds"] for r in rows], mode="lines+markers", name="wall seconds (right)",
                   yaxis="y2", line=dict(dash="dot"))
    )  # fmt: skip
    fig.update_layout(yaxis2=dict(title="wall seconds", overlaying="y", side="right", rangemode="tozero"))
    return fig


def paper_figure(rows: list, *, title: str) -> go.Figure:
    """Seconds per step of each plan at paper scale (MODEL), one group per model (``study.paper_rows``)."""
    fig = go.Figure(layout=dict(title=title, height=380, barmode="group", yaxis=dict(title="seconds per step")))
    for key, name in (("cfp", "cfp"), ("ilp", "ilp"), ("alpa", "alpa"), ("megatron", "megatron"),
                      ("data_parallel", "data-parallel")):  # fmt: skip
        fig.add_trace(
            go.Bar(
                x=[r.model for r in rows],
                y=[getattr(r, key) for r in rows],
                name=name + "",
                marker=dict(
                    color=[COLORS[name] if r.fits.get(name, True) else OVER for r in rows],
                    line=dict(color=COLORS[name], width=2),
                ),
            )
        )
    return fig


def memory_loss_figure(rows: list[dict], *, title: str) -> go.Figure:
    """Seconds per step of the Lagrangian and the exact plan under a binding memory limit
    (``study.memory_limit_loss``)."""
    fig = go.Figure(layout=dict(title=title, height=340, barmode="group", yaxis=dict(title="seconds per step")))
    xs = [f"{r['model']} {r['mesh']} {r['memory_gb']:g} GB" for r in rows]
    fig.add_trace(go.Bar(x=xs, y=[r["lagrangian_seconds"] for r in rows], name="Lagrangian (old fallback)"))
    fig.add_trace(go.Bar(x=xs, y=[r["exact_seconds"] for r in rows], name="exact (Pareto DP)"))
    return fig


def profile_vs_model_figure(rows: list, *, title: str) -> go.Figure:
    """Seconds per step, priced with profiled block seconds, of the plan chosen on the cost model and of the plan
    chosen on the profile (``study.profile_vs_model_rows``; real gloo profiles)."""
    fig = go.Figure(layout=dict(title=title, height=340, barmode="group", yaxis=dict(title="profiled s per step")))
    xs = [r.setting for r in rows]
    fig.add_trace(go.Bar(x=xs, y=[r.profiled_model_plan for r in rows], name="plan chosen by the cost model"))
    fig.add_trace(go.Bar(x=xs, y=[r.profiled_profile_plan for r in rows], name="plan chosen by the profile"))
    return fig
