"""DwarvesGraph panel and figures: the pattern and its decomposition, the cost model's view of every
candidate plan, predicted time vs graph size, and (after *Run*) measured times and motif counts.

Moving a control only re-plans (graph statistics + cost model, memoised): no kernel runs, so redraws stay
fast. The *Run* button counts for real with both engines on the current graph, times the cheapest plans
one by one, and fills the motif chart. Everything drawn comes from ``workbench.graphs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig
from workbench.graphs.dwarvesgraph.study import (
    SIZES,
    SYNTHETIC_FAMILIES,
    DwarvesView,
    Measurements,
    circle_layout,
    decomposition_roles,
    dwarves_view,
    measure_view,
    motif_list,
    predict_seconds,
    synthetic_spec,
)
from workbench.graphs.miner import PlanChoice
from workbench.graphs.patterns import NAMED, Pattern

GRAPHS = ("karate", "planetoid-cora", "planetoid-citeseer", "wiki-vote", "planetoid-pubmed", *SYNTHETIC_FAMILIES)
PATTERNS = tuple(n for n in NAMED if n not in ("edge", "6-clique"))
COLORS = {
    "cut": "#d62728",
    "comp": ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"),
    "plain": "#7f7f7f",
    "enumerate": "#ff7f0e",
    "decompose": "#1f77b4",
}
MAX_BARS = 12


def pattern_traces(pattern: Pattern, roles: dict[int, str] | None = None) -> tuple[dict, dict]:
    """(edge trace kwargs, node trace kwargs) drawing ``pattern`` on a circle, nodes coloured by role
    (``"cut"``, ``"c0"``, ``"c1"``...; default plain)."""
    pos = circle_layout(pattern.k)
    xs, ys = [], []
    for a, b in pattern.edges:
        xs += [pos[a, 0], pos[b, 0], None]
        ys += [pos[a, 1], pos[b, 1], None]
    roles = roles or {}
    colors = [
        COLORS["cut"]
        if roles.get(v) == "cut"
        else COLORS["comp"][int(roles[v][1:]) % 5]
        if v in roles
        else COLORS["plain"]
        for v in range(pattern.k)
    ]
    return (
        dict(x=xs, y=ys),
        dict(
            x=pos[:, 0].tolist(),
            y=pos[:, 1].tolist(),
            text=[str(v) for v in range(pattern.k)],
            marker=dict(color=colors, size=22, line=dict(width=1, color="white")),
        ),
    )


class DwarvesGraphPanel(Panel):
    """Pick a graph (or a synthetic one and its size), a pattern, edge/vertex-induced; press Run to count."""

    technique = "dwarvesgraph"
    title = "DwarvesGraph: pattern decomposition vs enumeration (cost model live; Run counts for real)"
    hidden = ("engine", "workers", "cost_model", "data_dir")
    options = {"motifs": (0, 3, 4, 5)}
    static_slider = ("pattern", ("triangle", "4-cycle", "diamond", "house", "5-cycle", "5-clique"))

    def panel_defaults(self) -> dict[str, Any]:
        return {"graph": synthetic_spec("synthetic: R-MAT", 11), "pattern": "house", "motifs": 4}

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        graph = values.get("graph", self.panel_defaults()["graph"])
        family = (
            graph
            if graph in GRAPHS
            else next(
                (f for f in SYNTHETIC_FAMILIES if any(graph == synthetic_spec(f, s) for s in SIZES)), "synthetic: R-MAT"
            )
        )
        size = next((s for s in SIZES if graph == synthetic_spec(family, s)), 11)
        self.family = W.Dropdown(options=GRAPHS, value=family, description="graph", layout=W.Layout(width="300px"))
        self.size = W.IntSlider(
            value=size,
            min=SIZES[0],
            max=SIZES[-1],
            description="log2 vertices (synthetic)",
            continuous_update=False,
            style={"description_width": "initial"},
        )
        self.action = Action(self, "Run (count for real)", self._measure, total=3, button_style="primary")
        self.run_button, self.progress = self.action.button, self.action.progress
        self.measured: Measurements | None = None  # the last Run (drawn while its setting is shown)
        super().__init__(static=static, **values)
        graph = self.controls["graph"]
        graph.layout.display = "none"  # driven by the dropdown + size slider
        self.family.observe(self._on_family, names="value")
        self.size.observe(self._on_family, names="value")
        pattern = self.controls["pattern"]
        self.controls["pattern"] = W.Combobox(
            options=list(PATTERNS),
            value=pattern.value,
            description="pattern",
            ensure_option=False,
            layout=W.Layout(width="300px"),
        )
        self.controls["pattern"].observe(self._on_change, names="value")

    def _on_family(self, change: dict) -> None:
        fam = self.family.value
        self.controls["graph"].value = synthetic_spec(fam, self.size.value) if fam.startswith("synthetic") else fam

    # ---- figures ----------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [_pattern_figure(), _cost_figure(), _sweep_figure(), _motifs_figure()]

    def compute(self, values: dict[str, Any]) -> DwarvesView:
        return dwarves_view(DwarvesGraphConfig.from_dict(values))

    def _current(self, values: dict[str, Any]) -> Measurements | None:
        """The last Run's measurements if they belong to the shown (graph, pattern, induced)."""
        m = self.measured
        return m if m is not None and m.key == self._key(values) else None

    def draw(self, figures: list[Any], view: DwarvesView, values: dict[str, Any]) -> None:
        pat, cost, sweep, motifs = figures
        chosen = view.chosen
        edge, node = pattern_traces(view.pattern, decomposition_roles(chosen))
        pat.data[0].x, pat.data[0].y = edge["x"], edge["y"]
        pat.data[1].x, pat.data[1].y, pat.data[1].text = node["x"], node["y"], node["text"]
        pat.data[1].marker = node["marker"]
        shr = chosen.decomposition.shrinkages if chosen is not None and chosen.decomposition else ()
        for i in range(3):
            e2, n2 = (
                pattern_traces(shr[i][0]) if i < len(shr) else (dict(x=[], y=[]), dict(x=[], y=[], text=[], marker={}))
            )
            pat.data[2 + 2 * i].x, pat.data[2 + 2 * i].y = e2["x"], e2["y"]
            pat.data[3 + 2 * i].x, pat.data[3 + 2 * i].y, pat.data[3 + 2 * i].text = n2["x"], n2["y"], n2["text"]
            pat.data[3 + 2 * i].marker = n2["marker"]
            # an unused column's (empty) traces move to the first subplot: with no trace on its hidden axes, plotly
            # draws no background box for it (an empty frame)
            axes = (f"x{i + 2}", f"y{i + 2}") if i < len(shr) else ("x", "y")
            for trace in pat.data[2 + 2 * i : 4 + 2 * i]:
                trace.xaxis, trace.yaxis = axes
            pat.layout.annotations[1 + i].text = f"- {shr[i][1]} x {shr[i][0].label}" if i < len(shr) else ""
        plan = chosen.describe() if chosen else "closed form"
        extra = (" | V = " + " ".join(f"{c:+d}E({q.label})" for q, c in view.transform)) if view.transform else ""
        pat.layout.title.text = (f"{view.pattern.label} on {view.config.graph}: {plan}{extra}")[:160]
        pat.layout.annotations[0].text = f"{view.pattern.label} (cut red, components coloured)"

        cands = view.candidates[:MAX_BARS]
        labels = [f"{'D' if c.kind == 'decompose' else 'E'}{i}" for i, c in enumerate(cands)]
        cost.data[0].x = labels
        cost.data[0].y = [predict_seconds(c.units) for c in cands]
        cost.data[0].hovertext = [c.describe() for c in cands]
        cost.data[0].marker.color = [COLORS[c.kind] if i else "#d62728" for i, c in enumerate(cands)]
        current = self._current(values)
        m = current.plans if current else {}
        cost.data[1].x = [lab for lab, c in zip(labels, cands) if c.describe() in m]
        cost.data[1].y = [m[c.describe()] for c in cands if c.describe() in m]

        for i, kind in enumerate(("enumerate", "decompose")):
            xs, ys = view.sweep.get(kind, ([], []))
            sweep.data[i].x, sweep.data[i].y = xs, ys
            point = current.engines.get(kind) if current and current.engines else None
            sweep.data[2 + i].x = [point[0]] if point else []
            sweep.data[2 + i].y = [point[1]] if point else []

        m = self.measured
        counts = m.motifs if m is not None and m.graph == values["graph"] else []
        if counts and len(counts) == len(motif_list(values["motifs"])):
            motifs.data[0].x = [c["pattern"] for c in counts]
            motifs.data[0].y = [max(c["count"], 0.5) for c in counts]
            motifs.layout.title.text = (
                f"{len(counts)} motifs on {values['graph']} ({m.key[2]}-induced, {m.motif_seconds:.3g} s)"
            )
        else:
            names = [p.label for p in motif_list(values["motifs"])]
            motifs.data[0].x, motifs.data[0].y = names, [None] * len(names)
            motifs.layout.title.text = (
                f"Press Run to count the {len(names)} connected {values['motifs']}-vertex patterns"
                if names
                else "Motif counts (set motifs > 0 and press Run)"
            )

    def notes(self, view: DwarvesView, values: dict[str, Any]) -> str:
        c = view.chosen
        text = f"<small>chosen: <b>{c.describe() if c else 'closed form'}</b>"
        if c is not None:
            text += f"; predicted {predict_seconds(c.total_units):.3g} s incl. shrinkages (model)"
        if view.transform:
            text += "<br>vertex-induced: V = " + " ".join(f"{k:+d}&middot;E({q.label})" for q, k in view.transform)
        current = self._current(values)
        if current is not None:
            text += f"<br>{self.summary(current)}"
        return text + "</small>"

    @staticmethod
    def summary(m: Measurements) -> str:
        """One line on the measured engines (HTML)."""
        if m.engines is None:
            return f"enumeration skipped: the model predicts more than {m.enumerate_limit_s:g} s"
        dec, enu = m.engines["decompose"][1], m.engines["enumerate"][1]
        return (
            f"count {m.count:,} (both engines agree); decomposition {dec:.3g} s vs enumeration {enu:.3g} s "
            f"= <b>{m.speedup:.1f}x</b> (measured)"
        )

    @staticmethod
    def _key(values: dict[str, Any]) -> tuple:
        return (values["graph"], values["pattern"], values["induced"])

    # ---- heavy work behind the button -------------------------------------------------------------------
    def run_measurements(self, *, enumerate_limit_s: float = 30.0) -> Measurements:
        """Count for real (:func:`~workbench.graphs.dwarvesgraph.study.measure_view`), then redraw."""
        return self.action.run(enumerate_limit_s=enumerate_limit_s)

    def _measure(self, progress: Progress, *, enumerate_limit_s: float = 30.0) -> Measurements:
        config = DwarvesGraphConfig.from_dict(self.values())
        self.measured = measure_view(config, enumerate_limit_s=enumerate_limit_s, progress=progress)
        return self.measured

    def widget(self) -> W.Widget:
        base = super().widget()
        extra = W.HBox([self.family, self.size, self.action.widget()])
        return W.VBox([base.children[0], extra, *base.children[1:]])


def measured_figure(rows: Sequence[dict[str, Any]], *, title: str) -> go.Figure:
    """Predicted vs measured seconds per candidate plan (log-log), the chosen plan marked, y = x dotted."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(
                title="predicted seconds (dots: degree-statistics model; crosses: sampling estimate)", type="log"
            ),
            yaxis=dict(title="measured seconds", type="log"),
            height=420,
        )
    )
    for kind in ("enumerate", "decompose"):
        sub = [r for r in rows if r["kind"] == kind]
        fig.add_trace(
            go.Scatter(
                x=[r["predicted_seconds"] for r in sub],
                y=[r["measured_seconds"] for r in sub],
                mode="markers",
                name=kind,
                marker=dict(color=COLORS[kind], size=11),
                hovertext=[r["plan"] for r in sub],
            )
        )
    sampled = [r for r in rows if r["sampled_seconds"] == r["sampled_seconds"]]
    if sampled:
        fig.add_trace(
            go.Scatter(
                x=[r["sampled_seconds"] for r in sampled],
                y=[r["measured_seconds"] for r in sampled],
                mode="markers",
                name="sampling estimate (x) instead",
                marker=dict(symbol="x", size=9, color="#555"),
                hovertext=[r["plan"] for r in sampled],
            )
        )
    chosen = [r for r in rows if r["chosen"]]
    fig.add_trace(
        go.Scatter(
            x=[r["predicted_seconds"] for r in chosen],
            y=[r["measured_seconds"] for r in chosen],
            mode="markers",
            name="chosen by the model",
            marker=dict(symbol="circle-open", size=20, color="black", line=dict(width=2)),
        )
    )
    vals = [v for r in rows for v in (r["predicted_seconds"], r["measured_seconds"], r["sampled_seconds"]) if v > 0]
    if vals:
        lo, hi = min(vals) / 2, max(vals) * 2
        fig.add_trace(
            go.Scatter(
                x=[lo, hi], y=[lo, hi], mode="lines", name="measured = predicted", line=dict(dash="dot", color="#999")
            )
        )
    return fig


def scaling_figure(rows: Sequence[dict[str, Any]], *, title: str) -> go.Figure:
    """Measured seconds of both engines vs graph size (edges), log-log."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="edges", type="log"),
            yaxis=dict(title="seconds (kernels + planning; compile excluded)", type="log"),
            height=420,
        )
    )
    for kind in ("enumerate", "decompose"):
        fig.add_trace(
            go.Scatter(
                x=[r["edges"] for r in rows],
                y=[r[f"{kind}_seconds"] for r in rows],
                mode="lines+markers",
                name=kind,
                line=dict(color=COLORS[kind]),
                hovertext=[r["graph"] for r in rows],
            )
        )
    return fig


def motif_figure(counts: Sequence[dict[str, Any]], *, title: str) -> go.Figure:
    """Bar chart of motif counts (log y), one bar per connected pattern."""
    fig = go.Figure(
        layout=dict(title=title, yaxis=dict(title="count", type="log"), height=380, xaxis=dict(tickangle=-40))
    )
    fig.add_trace(
        go.Bar(
            x=[c["pattern"] for c in counts],
            y=[max(c["count"], 0.5) for c in counts],
            marker_color="#1f77b4",
            hovertext=[f"{c['count']:,}" for c in counts],
        )
    )
    return fig


def pattern_figure(pattern: Pattern, choice: PlanChoice | None, *, title: str = "") -> go.Figure:
    """A single drawing of ``pattern`` coloured by ``choice``'s decomposition."""
    edge, node = pattern_traces(pattern, decomposition_roles(choice))
    fig = go.Figure(
        layout=dict(
            title=title or pattern.label,
            height=320,
            width=380,
            showlegend=False,
            xaxis=dict(visible=False, range=[-1.4, 1.4]),
            yaxis=dict(visible=False, range=[-1.4, 1.4], scaleanchor="x"),
        )
    )
    fig.add_trace(go.Scatter(mode="lines", line=dict(color="#444", width=2), hoverinfo="skip", **edge))
    fig.add_trace(go.Scatter(mode="markers+text", textfont=dict(color="white"), **node))
    return fig


def _pattern_figure() -> go.Figure:
    """The pattern (its cut in red) and up to three shrinkage patterns, one subplot each."""
    pat = make_subplots(
        rows=1,
        cols=4,
        subplot_titles=("pattern (cut red)", "shrinkage", "shrinkage", "shrinkage"),
        horizontal_spacing=0.03,
        column_widths=[0.4, 0.2, 0.2, 0.2],
    )
    for col in range(1, 5):
        pat.add_trace(
            go.Scatter(x=[], y=[], mode="lines", line=dict(color="#444", width=2), hoverinfo="skip", showlegend=False),
            row=1,
            col=col,
        )
        pat.add_trace(
            go.Scatter(
                x=[], y=[], mode="markers+text", textfont=dict(color="white"), hoverinfo="text", showlegend=False
            ),
            row=1,
            col=col,
        )
        pat.update_xaxes(visible=False, range=[-1.4, 1.4], row=1, col=col)
        pat.update_yaxes(visible=False, range=[-1.4, 1.4], scaleanchor=f"x{col if col > 1 else ''}", row=1, col=col)
    pat.update_layout(height=300, margin=dict(t=60, b=40), title="")
    return pat


def _cost_figure() -> go.Figure:
    """Predicted seconds of each candidate plan, and the measured ones after Run."""
    cost = go.Figure(
        layout=dict(
            title="Cost model: predicted seconds of each candidate plan (own kernel)",
            yaxis=dict(title="seconds", type="log"),
            xaxis=dict(title="candidate plan"),
            height=360,
            barmode="overlay",
            legend=dict(orientation="h", y=-0.3),
        )
    )
    cost.add_trace(go.Bar(name="predicted (degree statistics)", x=[], y=[], marker_color=[], hovertext=[]))
    cost.add_trace(
        go.Scatter(
            name="measured (after Run)",
            x=[],
            y=[],
            mode="markers",
            marker=dict(symbol="diamond", size=12, color="black"),
        )
    )
    return cost


def _sweep_figure() -> go.Figure:
    """Predicted time vs graph size per plan kind, with the measured points."""
    sweep = go.Figure(
        layout=dict(
            title="Predicted time vs graph size (synthetic family of the current graph)",
            xaxis=dict(title="vertices", type="log"),
            yaxis=dict(title="seconds", type="log"),
            height=340,
            legend=dict(orientation="h", y=-0.3),
        )
    )
    for kind in ("enumerate", "decompose"):
        sweep.add_trace(
            go.Scatter(name=f"{kind} (model)", x=[], y=[], mode="lines+markers", line=dict(color=COLORS[kind]))
        )
    for kind in ("enumerate", "decompose"):
        sweep.add_trace(
            go.Scatter(
                name=f"{kind} (measured, current graph)",
                x=[],
                y=[],
                mode="markers",
                marker=dict(color=COLORS[kind], size=13, symbol="star"),
            )
        )
    return sweep


def _motifs_figure() -> go.Figure:
    """Motif counts (filled by Run)."""
    motifs = go.Figure(
        layout=dict(
            title="Motif counts (press Run)",
            yaxis=dict(title="count", type="log"),
            height=340,
            xaxis=dict(tickangle=-30),
        )
    )
    motifs.add_trace(go.Bar(x=[], y=[], marker_color="#1f77b4"))
    return motifs
