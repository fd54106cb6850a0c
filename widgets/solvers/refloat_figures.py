"""ReFloat figures and tables for the notebook and the panel: residual histories, sparsity with the block grid,
per-block exponent bases and saturation, modelled time, (e, f) sweeps, per-matrix overviews and tables.

Pure functions of results computed in ``workbench.solvers.refloat.study`` (nothing is solved, swept or
decided here: the figures and tables only draw and format what the study returns).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.solvers.refloat.block_format import QuantisedMatrix
from workbench.solvers.refloat.claims import PAPER_SPEEDUP_RANGE
from workbench.solvers.refloat.study import FormatRun, MatrixSummary, Sweep, block_grids, sweep_limits

#: the block figures' two heatmaps: the gap between them holds the left one's colourbar (BLOCK_COLORBAR_X,
#: just right of its plot) and, clear of it, the right one's plot (its y-axis title is the left one's)
BLOCK_SPACING = 0.2
BLOCK_COLORBAR_X = (1 - BLOCK_SPACING) / 2 + 0.01
COLORS = {"float64": "#222222", "refloat": "#1f77b4", "refloat-artifact": "#ff7f0e", "baseline": "#2ca02c"}
DASH = {"float64": "dot", "refloat": "solid", "refloat-artifact": "dash", "baseline": "dashdot"}


def residual_figure(runs: dict[str, FormatRun], *, threshold: float | None = 1e-8, title: str = "") -> go.Figure:
    """||r||^2 per iteration (log scale), one line per run; the stopping threshold as a dotted line."""
    fig = go.Figure(
        layout=dict(
            title=title or "Residual ||r||^2 per iteration (recursive residual)",
            xaxis=dict(title="iteration"),
            yaxis=dict(title="||r||^2", type="log", exponentformat="power"),
            height=380,
            legend=dict(orientation="h", y=-0.22),
        )
    )
    for label, run in runs.items():
        name = run.format.name
        res = np.where(np.isfinite(run.result.residuals), run.result.residuals, np.nan)
        fig.add_trace(
            go.Scatter(
                x=np.arange(res.size),
                y=res,
                mode="lines",
                name=legend_label(label, run),
                line=dict(color=COLORS[name], dash=DASH[name], width=2),
            )
        )
    if threshold is not None:
        fig.add_hline(y=threshold, line=dict(color="#999", dash="dot"), annotation_text="threshold")
    return fig


def legend_label(label: str, run: FormatRun) -> str:
    mark = f"{run.iterations} its" if run.converged else f"{run.status} at {run.iterations}"
    return f"{label}: {mark}"


def sparsity_figure(density: np.ndarray, edges: np.ndarray, *, bsize: int, title: str = "") -> go.Figure:
    """Nonzeros per cell (log colour) with the bsize block grid drawn when it has at most 64 lines per side."""
    fig = go.Figure(
        layout=dict(
            title=title or "Sparsity (nonzeros per cell) and the block grid",
            height=420,
            yaxis=dict(title="row", autorange="reversed", scaleanchor="x"),
            xaxis=dict(title="column", constrain="domain"),
        )
    )  # square: narrower, not wider
    centers = (edges[:-1] + edges[1:]) / 2
    fig.add_trace(
        go.Heatmap(
            z=log_counts(density),
            x=centers,
            y=centers,
            colorscale="Blues",
            showscale=False,
            hovertemplate="row %{y:.0f}, col %{x:.0f}<extra></extra>",
        )
    )
    fig.update_layout(shapes=grid_shapes(float(edges[-1]), bsize))
    return fig


def log_counts(density: np.ndarray) -> np.ndarray:
    return np.where(density > 0, np.log10(np.maximum(density, 1)) + 1, np.nan)


def grid_shapes(n: float, bsize: int) -> list[dict]:
    lines = np.arange(bsize, n, bsize)
    if lines.size > 64:
        return []
    style = dict(color="rgba(214,39,40,0.5)", width=1)
    return [dict(type="line", x0=v, x1=v, y0=0, y1=n, line=style) for v in lines] + [
        dict(type="line", x0=0, x1=n, y0=v, y1=v, line=style) for v in lines
    ]


def block_figure(stored: QuantisedMatrix, *, title: str = "") -> go.Figure:
    """Per block: the exponent base (left) and the share of entries saturated up / down (right)."""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=BLOCK_SPACING,
        subplot_titles=("exponent base per block", "entries saturated (up + down)"),
    )
    base, up, down = block_grids(stored)
    fig.add_trace(
        go.Heatmap(
            z=base,
            colorscale="RdBu",
            zmid=0,
            colorbar=dict(x=BLOCK_COLORBAR_X, title="E"),
            hovertemplate="block (%{y}, %{x}): base 2^%{z}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            z=up + down,
            customdata=np.dstack([up, down]),
            colorscale="Reds",
            zmin=0,
            zmax=1,
            colorbar=dict(title="share"),
            hovertemplate="block (%{y}, %{x}): up %{customdata[0]:.1%}, down %{customdata[1]:.1%}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    dtick = 1 if max(stored.block_shape) <= 20 else None  # integer ticks on small grids
    for col in (1, 2):
        fig.update_yaxes(
            autorange="reversed", title_text="block row" if col == 1 else None, row=1, col=col, dtick=dtick
        )
        fig.update_xaxes(title_text="block column", row=1, col=col, dtick=dtick)
    fig.update_layout(title=title or block_title(stored), height=380)
    return fig


def saturation_figure(stored: QuantisedMatrix, *, max_points: int = 30_000, title: str = "") -> go.Figure:
    """Which entries saturate: every stored entry pushed up (red) or down (blue), at its (row, column), over the
    block grid; at most ``max_points`` per kind (an even subsample beyond that, said in the legend)."""
    A = stored.matrix
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    fig = go.Figure(
        layout=dict(
            title=title or "Entries saturated by the format (up: small entries raised; down: large entries lowered)",
            height=460,
            yaxis=dict(autorange="reversed", scaleanchor="x", title="row"),
            xaxis=dict(title="column", constrain="domain"),
            legend=dict(orientation="h", y=-0.15),
            shapes=grid_shapes(float(A.shape[0]), stored.bsize),
        )
    )
    for mask, name, color in (
        (stored.saturated_up, "saturated up", "#d62728"),
        (stored.saturated_down, "saturated down", "#1f77b4"),
    ):
        idx = np.flatnonzero(mask)
        step = max(1, -(-idx.size // max_points))
        shown = idx[::step]
        label = f"{name}: {idx.size:,} entries" + (f" (every {step}th shown)" if step > 1 else "")
        fig.add_trace(
            go.Scattergl(
                x=A.indices[shown], y=rows[shown], mode="markers", name=label, marker=dict(size=3, color=color)
            )
        )
    return fig


def block_title(stored: QuantisedMatrix) -> str:
    if stored.base_rule == "none":
        return f"{stored.num_blocks} non-empty blocks of {stored.bsize}: values untouched by this format"
    return (
        f"{stored.num_blocks} non-empty blocks of {stored.bsize}, e={stored.e}, f={stored.f} "
        f"(base: {stored.base_rule}): {stored.saturated_up.mean():.1%} of entries saturated up, "
        f"{stored.saturated_down.mean():.1%} down"
    )


def time_figure(runs: dict[str, FormatRun], *, title: str = "") -> go.Figure:
    """Modelled ReRAM solver time per run (log scale); hatched bars for runs that did not converge."""
    labels = list(runs)
    fig = go.Figure(
        layout=dict(
            title=title or "Modelled ReRAM solver time (model, not a measurement)",
            yaxis=dict(title="seconds", type="log", exponentformat="power"),
            height=340,
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[runs[k].timing.total_seconds for k in labels],
            marker=dict(
                color=[COLORS[runs[k].format.name] for k in labels],
                pattern=dict(shape=["" if runs[k].converged else "/" for k in labels]),
            ),
            text=[
                f"{runs[k].iterations} its"
                + ("" if runs[k].converged else " (wrong x)" if runs[k].wrong_solution else " (no conv.)")
                for k in labels
            ],
            textposition="outside",
        )
    )
    return fig


def sweep_figure(sweep: Sweep, *, title: str = "") -> go.Figure:
    """Heatmap over (e, f). Converged cells (trace 0): colour = modelled time relative to the fastest converged
    cell (log10), text = iterations. Cells that did not converge (trace 1): grey, 'x', or the iterations with '*'
    where the run met its stopping rule on the stored matrix but the original system's residual misses the
    criterion (a wrong solution)."""
    failed = ~sweep.converged if sweep.converged is not None else sweep.iterations < 0
    z = np.where(failed, np.nan, np.log10(np.where(failed, 1.0, sweep.relative_seconds())))
    text = [
        [str(int(k)) + ("*" if w else "") if k >= 0 else "x" for k, w in zip(row, wrow)]
        for row, wrow in zip(sweep.iterations, sweep.wrong())
    ]
    x, y = [str(f) for f in sweep.f_values], [str(e) for e in sweep.e_values]
    fig = go.Figure(
        layout=dict(
            title=title or f"ReFloat over the {sweep.axis}'s (e, f): iterations (x = no convergence)",
            xaxis=dict(title=f"{sweep.axis} fraction bits f", type="category"),
            yaxis=dict(title=f"{sweep.axis} exponent bits e", type="category"),
            height=360,
        )
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar=dict(title="log10 time / best"),
            hovertemplate="e=%{y}, f=%{x}: %{text} iterations<extra></extra>",
        )
    )
    fig.add_trace(
        go.Heatmap(
            z=np.where(failed, 0.0, np.nan),
            x=x,
            y=y,
            text=text,
            texttemplate="%{text}",
            colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]],
            showscale=False,
            hovertemplate="e=%{y}, f=%{x}: %{text} (no convergence)<extra></extra>",
        )
    )
    return fig


def iterations_markdown(summaries: Sequence[MatrixSummary]) -> str:
    """Markdown table: a row per matrix, a column per format, cells 'iterations' or 'x (status)'."""
    labels = list(summaries[0].runs) if summaries else []
    head = "| matrix | n | blocks | solver | " + " | ".join(labels) + " |"
    lines = [head, "|" + "---|" * (4 + len(labels))]
    for s in summaries:
        cells = []
        for label in labels:
            r = s.runs[label]
            cells.append(str(r.iterations) if r.converged else f"x ({r.status})")
        lines.append(f"| {s.name} | {s.n} | {s.blocks} | {s.solver} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speedup_markdown(summaries: Sequence[MatrixSummary]) -> str:
    """Markdown table of modelled speed-ups over the baseline (time to solution), '-' where no convergence."""
    labels = [k for k in (summaries[0].runs if summaries else {}) if k != "baseline"]
    lines = ["| matrix | baseline time | " + " | ".join(labels) + " |", "|" + "---|" * (2 + len(labels))]
    for s in summaries:
        base = s.runs["baseline"]
        cells = []
        for label in labels:
            v = s.speedups[label]
            cells.append("wrong x" if s.wrong[label] else "-" if v is None else f"{v:.3g}x")
        b = f"{base.timing.total_seconds * 1e6:.4g} us" + ("" if base.converged else " (no conv.)")
        lines.append(f"| {s.name} | {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overview_figure(summaries: Sequence[MatrixSummary], *, max_iter: int = 1000) -> go.Figure:
    """Iterations per matrix and format (log scale); runs that did not converge drawn hatched, at ``max_iter``
    unless they stopped on the stored matrix with a wrong solution (then at their iterations)."""
    labels = list(summaries[0].runs) if summaries else []
    fig = go.Figure(
        layout=dict(
            title="Iterations to converge (||b - A x||^2 <= 1e-8); hatched = no convergence "
            "(at max_iter) or a wrong solution",
            barmode="group",
            yaxis=dict(title="iterations", type="log"),
            height=420,
            legend=dict(orientation="h", y=-0.3),
        )
    )
    for label in labels:
        runs = [s.runs[label] for s in summaries]
        name = runs[0].format.name
        fig.add_trace(
            go.Bar(
                name=label,
                x=[s.name for s in summaries],
                y=[r.iterations if r.stopped_on_quantised else max_iter for r in runs],
                marker=dict(
                    color=COLORS[name],
                    opacity=1.0 if "16" not in label else 0.6,
                    pattern=dict(shape=["" if r.converged else "/" for r in runs]),
                ),
                customdata=[r.status for r in runs],
                hovertemplate="%{x}: %{y} iterations (%{customdata})<extra>" + label + "</extra>",
            )
        )
    return fig


def speedup_figure(summaries: Sequence[MatrixSummary]) -> go.Figure:
    """Modelled speed-up over the baseline (time to solution), per matrix and format (log scale), for runs that
    converged to the solution of the original system; the paper's range shaded."""
    labels = [k for k in (summaries[0].runs if summaries else {}) if k not in ("baseline",)]
    fig = go.Figure(
        layout=dict(
            title="MODEL: solver-time speed-up over the baseline accelerator (runs that reach the right solution only)",
            barmode="group",
            yaxis=dict(title="speed-up (x)", type="log"),
            height=420,
            legend=dict(orientation="h", y=-0.3),
        )
    )
    for label in labels:
        vals = [None if s.wrong[label] else s.speedups[label] for s in summaries]
        fig.add_trace(
            go.Bar(
                name=label,
                x=[s.name for s in summaries],
                y=vals,
                marker=dict(
                    color=COLORS[summaries[0].runs[label].format.name], opacity=1.0 if "16" not in label else 0.6
                ),
            )
        )
    lo, hi = PAPER_SPEEDUP_RANGE
    fig.add_hrect(
        y0=lo,
        y1=hi,
        fillcolor="#ffd700",
        opacity=0.2,
        line_width=0,
        annotation_text=f"paper: {lo}x-{hi}x",
        annotation_position="top left",
    )
    shown = [v for trace in fig.data for v in trace.y if v is not None and v > 0]
    lo, hi = min(shown + [1.0]) / 2, max(shown + [100.0]) * 2
    fig.update_yaxes(range=[np.log10(lo), np.log10(hi)])  # a log axis range is given in log10 units
    return fig


def eigen_markdown(rows: Sequence[tuple[str, float, float, float, float]]) -> str:
    """Markdown table from (matrix, lambda_min(A), lambda_min(A_q), saturated up, saturated down) rows."""
    lines = [
        "| matrix | smallest eigenvalue of A | of A stored at ReFloat (3, 3) | entries saturated up / down |",
        "|---|---|---|---|",
    ]
    for name, lo, lo_q, up, down in rows:
        flag = " (**indefinite**)" if lo_q <= 0 < lo else ""
        lines.append(f"| {name} | {lo:.4g} | {lo_q:.4g}{flag} | {up:.1%} / {down:.1%} |")
    return "\n".join(lines)


def sweep_limits_markdown(sweeps: dict[tuple[str, str], Sweep]) -> str:
    """Markdown table of :func:`~workbench.solvers.refloat.study.sweep_limits`: per matrix, the smallest exponent
    width e (matrix, then vectors) at which some fraction width converges to the right solution."""
    lines = [
        "| matrix | smallest matrix e that converges (vectors exact) | smallest vector e that converges "
        "(matrix exact) |",
        "|---|---|---|",
    ]
    for name, axes in sweep_limits(sweeps).items():
        cells = []
        for axis in ("matrix", "vector"):
            got = axes[axis]
            if got is None:
                cells.append("-")
            elif isinstance(got[1], list):
                cells.append(f"e = {got[0]} (with f in {got[1]})")
            else:
                cells.append(f"none of e in {list(got)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
