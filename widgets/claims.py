"""Figures of the claim layer (:mod:`workbench.claims`): the scoreboard (ours / paper per claim on a log axis,
coloured by verdict) and a claim's sensitivity to one assumption. They only draw what the evaluations hold:
either :class:`~workbench.claims.Evaluation` objects or their JSON records (``VERDICTS.json``)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from workbench.claims import TOLERANCES, Evaluation

Record = dict[str, Any]

__all__ = ["VERDICT_COLOURS", "scoreboard_figure", "sensitivity_figure"]

#: one colour per verdict status
VERDICT_COLOURS = {
    "reproduced": "#2ca02c",
    "depends on": "#ff7f0e",
    "not reproduced": "#d62728",
    "refuted": "#7f0000",
    "not tested here": "#7f7f7f",
}


def _records(items: Sequence[Evaluation | Record]) -> list[Record]:
    return [it.to_json() if isinstance(it, Evaluation) else it for it in items]


def _ratio(r: Record) -> float | None:
    """Ours / paper, oriented so that > 1 is better than the paper (an error's ratio is inverted)."""
    if r["ours"] is None or not r["paper"]:
        return None
    x = r["ours"] / r["paper"]
    if not TOLERANCES[r["kind"]].higher_is_better:
        x = 1 / x if x else float("inf")
    return x if x > 0 else None


def scoreboard_figure(evaluations: Sequence[Evaluation | Record]) -> go.Figure:
    """One marker per claim: ours / paper (log axis, 1 = the paper's figure; errors inverted so that right is
    better), one row per claim, coloured by verdict; hover shows the baseline and the assumptions."""
    recs = _records(evaluations)
    fig = go.Figure()
    labels = [f"{r['technique']}: {r['key']}" for r in recs]
    for status, colour in VERDICT_COLOURS.items():
        chosen = [(i, r) for i, r in enumerate(recs) if r["status"] == status]
        if not chosen:
            continue
        xs = [_ratio(r) for _, r in chosen]
        hover = [
            "<br>".join(
                [
                    f"<b>{html.escape(r['claim'])}</b>",
                    f"verdict: {html.escape(r['verdict'])}",
                    f"paper: {r['paper']:g} {html.escape(r['unit'])} ({html.escape(r['paper_source'])})",
                    f"ours: {'-' if r['ours'] is None else format(r['ours'], '.3g')} ({r['scale']})",
                    f"baseline: {html.escape(r['baseline']['name'])}",
                    *(
                        html.escape(f"{a['name']}={a['value']} ({'sourced' if a['sourced'] else 'inferred'})")
                        for a in r["assumptions"]
                    ),
                ]
            )  # fmt: skip
            for _, r in chosen
        ]
        # no ratio: not tested (an x), or a paper figure of 0 (a direction only: an open diamond at 1)
        symbols = ["circle" if x else "x-thin-open" if status == "not tested here" else "diamond-open" for x in xs]
        fig.add_trace(go.Scatter(
            x=[x if x is not None else 1.0 for x in xs], y=[labels[i] for i, _ in chosen], mode="markers",
            name=status, marker=dict(color=colour, size=10, symbol=symbols, line=dict(color=colour, width=2)),
            hovertext=hover, hoverinfo="text",
        ))  # fmt: skip
    fig.add_vline(x=1.0, line_dash="dot", line_color="#444")
    fig.update_layout(
        title="Scoreboard: our figure / the paper's, one row per claim (1 = the paper's; right is better; "
        "an open diamond: the paper gives a direction, no figure)",
        xaxis=dict(type="log", title="ours / paper (errors inverted)"),
        yaxis=dict(autorange="reversed", type="category"),
        height=max(420, 18 * len(labels) + 160),
        legend=dict(orientation="h"),
    )
    return fig


def sensitivity_figure(evaluations: Sequence[Evaluation | Record], assumption: str) -> go.Figure:
    """Our figure against one assumption's values (its sweep), one line per claim, with each claim's paper
    figure as a dotted line and the points that meet it filled."""
    fig = go.Figure()
    recs = _records(evaluations)
    for r in recs:
        pts = sorted(r["sensitivity"].get(assumption, ()), key=lambda p: p["value"])
        if not pts:
            continue
        fig.add_trace(go.Scatter(
            x=[p["value"] for p in pts], y=[p["ours"] for p in pts], mode="lines+markers", name=r["claim"],
            marker=dict(symbol=["circle" if p["meets"] else "circle-open" for p in pts], size=9),
        ))  # fmt: skip
        fig.add_hline(y=r["paper"], line_dash="dot", opacity=0.5)
    units = {a["unit"] for r in recs for a in r["assumptions"] if a["name"] == assumption}
    unit = f" ({units.pop()})" if len(units) == 1 and "" not in units else ""
    fig.update_layout(
        title=f"Sensitivity: our figure against {assumption} (dotted: the paper's; filled: meets it)",
        xaxis=dict(title=f"{assumption}{unit}"),
        yaxis=dict(title=", ".join(sorted({r["unit"] or "value" for r in recs}))),
        legend=dict(orientation="h"),
    )
    return fig
