"""ReFloat panel: residual histories per format, modelled ReRAM time, the matrix's sparsity, per-block exponent
bases and saturation, and (behind a button) a sweep over the matrix's (e, f).

Every number drawn comes from ``workbench.solvers.refloat.study`` (``refloat_view`` for one configuration,
``sweep_config`` for the sweep; both memoised there); this module only builds and updates figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from widgets.base import Action, Panel, Progress
from widgets.solvers.refloat_figures import (
    BLOCK_COLORBAR_X,
    BLOCK_SPACING,
    COLORS,
    DASH,
    block_title,
    grid_shapes,
    legend_label,
    log_counts,
    sweep_figure,
)
from workbench.solvers.refloat.config import FORMATS, RefloatConfig
from workbench.solvers.refloat.model import FORMULA
from workbench.solvers.refloat.study import (
    PANEL_SWEEP_E,
    PANEL_SWEEP_F,
    RefloatView,
    Sweep,
    matrix_choices,
    refloat_view,
    solver_for,
    sweep_config,
)


# ---- the panel -----------------------------------------------------------------------------------------------
class RefloatPanel(Panel):
    """Pick a matrix, move the bits of the matrix and vectors and the block size; see every format's solve."""

    technique = "refloat"
    title = "ReFloat: CG/BiCGSTAB with the matrix and search directions in block floating point"
    options = {"bsize": (16, 32, 64, 128, 256, 512), "max_iter": (100, 250, 500, 1000)}
    hidden = ("threshold", "rtol", "seed")
    static_slider = ("e_m", (2, 3, 4, 5, 6))

    def panel_defaults(self) -> dict[str, Any]:
        return {"matrix": "wathen-10-10"}

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.sweep: Sweep | None = None
        super().__init__(static=static, **values)
        self._matrix_dropdown()
        self.action = Action(
            self,
            "Run (e_m, f_m) sweep",
            self._sweep,
            done=self._draw_sweep,
            total=len(PANEL_SWEEP_E) * len(PANEL_SWEEP_F),
            label="sweep",
            tooltip="ReFloat over the matrix's bits at the current vector bits (one solve per cell)",
        )
        self.run_button, self.progress = self.action.button, self.action.progress
        self.show_formats = {
            name: W.Checkbox(value=True, description=name, indent=False, layout=W.Layout(width="150px"))
            for name in FORMATS
        }
        for name, box in self.show_formats.items():
            box.observe(lambda change, n=name: self._toggle(n, change["new"]), names="value")
        if self.static:
            self.run_sweep()

    def _matrix_dropdown(self) -> None:
        """The matrix control as a dropdown of the registry's matrices (plus a few Wathen sizes)."""
        old = self.controls["matrix"]
        names = matrix_choices()
        if old.value not in names:
            names.append(old.value)
        new = W.Dropdown(
            options=names,
            value=old.value,
            description=old.description,
            style=old.style,
            layout=old.layout,
            tooltip=old.tooltip,
        )
        old.unobserve(self._on_change, names="value")
        new.observe(self._on_change, names="value")
        self.controls = {name: (new if name == "matrix" else w) for name, w in self.controls.items()}

    def adjust_controls(self, changed: str) -> None:
        if changed == "matrix":
            try:
                solver = solver_for(self.controls["matrix"].value, seed=self.values()["seed"])
            except (ValueError, FileNotFoundError):
                return  # shown by the redraw
            self.controls["solver"].value = solver

    def _toggle(self, name: str, visible: bool) -> None:
        residual = self.figures[0]
        residual.data[FORMATS.index(name)].visible = True if visible else "legendonly"

    # ---- figures --------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        return [_residual_figure(), _timing_figure(), _spy_figure(), _blocks_figure(), _sweep_figure()]

    def compute(self, values: dict[str, Any]) -> RefloatView:
        return refloat_view(values)

    def draw(self, figures: list[Any], view: RefloatView, values: dict[str, Any]) -> None:
        residual, timing, spy, blocks, _ = figures
        config = view.config
        longest = 1
        for i, name in enumerate(FORMATS):
            run = view.runs[name]
            res = np.where(np.isfinite(run.result.residuals), run.result.residuals, np.nan)
            residual.data[i].x, residual.data[i].y = np.arange(res.size), res
            residual.data[i].name = legend_label(run.format.label, run)
            longest = max(longest, res.size - 1)
        residual.data[-1].x, residual.data[-1].y = [0, longest], [view.stop_level] * 2
        residual.layout.title.text = (
            f"{config.matrix}, {config.solver}: recursive residual ||r||^2 per iteration "
            f"({config.criterion} criterion, dotted)"
        )
        timing.data[0].x = [view.runs[n].format.label for n in FORMATS]
        timing.data[0].y = [view.runs[n].timing.total_seconds for n in FORMATS]
        timing.data[0].text = [
            f"{view.runs[n].iterations} its"
            + ("" if view.runs[n].converged else " (wrong x)" if view.runs[n].wrong_solution else " (no conv.)")
            for n in FORMATS
        ]
        timing.data[0].marker.pattern.shape = ["" if view.runs[n].converged else "/" for n in FORMATS]
        centers = (view.edges[:-1] + view.edges[1:]) / 2
        spy.data[0].z, spy.data[0].x, spy.data[0].y = log_counts(view.density), centers, centers
        spy.layout.shapes = grid_shapes(float(view.edges[-1]), config.bsize)
        spy.layout.title.text = f"{config.matrix}: n = {int(view.edges[-1])}, nnz = {view.focus.stored.matrix.nnz}"
        base, up, down = view.focus_grids
        blocks.data[0].z = base
        blocks.data[1].z = up + down
        blocks.layout.title.text = f"{config.format} storage: " + block_title(view.focus.stored)

    def notes(self, view: RefloatView, values: dict[str, Any]) -> str:
        parts = []
        for name in ("refloat", "refloat-artifact"):
            run = view.runs[name]
            s = view.speedups[name]
            state = (
                f"{run.iterations} its"
                if run.converged
                else f"<b style='color:#b00020'>{html.escape(run.status)}</b> after {run.iterations}"
            )
            parts.append(
                f"{html.escape(run.format.label)}: {state}"
                + (f", <b>{s:.2f}x</b> over baseline" if s is not None else "")
                + (f", true ||b-Ax||^2 = {run.true_residual:.2g}" if run.stopped_on_quantised else "")
            )
        f64 = view.runs["float64"]
        parts.append(f"float64: {f64.iterations} its" + ("" if f64.converged else " (no convergence)"))
        return "<small>solves are real; times are the ReRAM model</small><br>" + " &middot; ".join(parts)

    # ---- heavy: the sweep ------------------------------------------------------------------------------------
    def run_sweep(self) -> Sweep:
        """ReFloat over (e_m, f_m) in the study's panel grid at the current vector bits; fills the sweep figure."""
        self.action.run()
        return self.sweep

    def _sweep(self, progress: Progress) -> tuple[RefloatConfig, Sweep]:
        config = RefloatConfig.from_dict(self.values())
        return config, sweep_config(config, e_values=PANEL_SWEEP_E, f_values=PANEL_SWEEP_F, on_cell=progress.advance)

    def _draw_sweep(self, result: tuple[RefloatConfig, Sweep]) -> None:
        config, self.sweep = result
        built = sweep_figure(
            self.sweep,
            title=f"{config.matrix}: ReFloat over the matrix's (e_m, f_m), vectors ({config.e_v}, "
            f"{config.f_v}); x = no convergence, * = wrong solution",
        )
        fig = self.figures[4]
        with fig.batch_update():
            for mine, theirs in zip(fig.data, built.data):
                mine.z, mine.x, mine.y, mine.text = theirs.z, theirs.x, theirs.y, theirs.text
                mine.hovertemplate = theirs.hovertemplate
            fig.layout.title.text = built.layout.title.text

    def widget(self) -> W.Widget:
        header = W.HTML(f"<b>{html.escape(self.title)}</b>")
        controls = W.Box(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        toggles = W.HBox([W.HTML("show:"), *self.show_formats.values()])
        formula = W.HTML(f"<small>model: {html.escape(FORMULA)}</small>")
        return W.VBox(
            [
                header,
                controls,
                self.status,
                toggles,
                *self.views[:4],
                self.action.widget(),
                self.views[4],
                formula,
            ]
        )


def _residual_figure() -> go.Figure:
    """||r||^2 per iteration, one line per format, and the threshold line."""
    residual = go.Figure(
        layout=dict(
            title="Residual ||r||^2 per iteration",
            height=380,
            xaxis=dict(title="iteration"),
            yaxis=dict(title="||r||^2", type="log", exponentformat="power"),
            legend=dict(orientation="h", y=-0.22),
        )
    )
    for name in FORMATS:
        residual.add_trace(
            go.Scatter(x=[], y=[], mode="lines", name=name, line=dict(color=COLORS[name], dash=DASH[name], width=2))
        )
    residual.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="lines",
            name="threshold",
            showlegend=False,
            line=dict(color="#999", dash="dot", width=1),
        )
    )
    return residual


def _timing_figure() -> go.Figure:
    """Modelled solve time bar per format."""
    timing = go.Figure(
        layout=dict(
            title="Modelled ReRAM solver time (model)",
            height=340,
            showlegend=False,
            yaxis=dict(title="seconds", type="log", exponentformat="power"),
        )
    )
    timing.add_trace(
        go.Bar(x=list(FORMATS), y=[None] * 4, marker=dict(color=[COLORS[n] for n in FORMATS]), textposition="outside")
    )
    return timing


def _spy_figure() -> go.Figure:
    """Sparsity picture of the prepared matrix."""
    spy = go.Figure(
        layout=dict(
            title="Sparsity and block grid",
            height=400,
            xaxis=dict(title="column", constrain="domain"),  # square: narrower, not wider
            yaxis=dict(title="row", autorange="reversed", scaleanchor="x"),
        )
    )
    spy.add_trace(
        go.Heatmap(
            z=[[0]], colorscale="Blues", showscale=False, hovertemplate="row %{y:.0f}, col %{x:.0f}<extra></extra>"
        )
    )
    return spy


def _blocks_figure() -> go.Figure:
    """Per-block exponent base and saturation heatmaps."""
    blocks = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=BLOCK_SPACING,
        subplot_titles=("exponent base per block", "entries saturated (up + down)"),
    )
    blocks.add_trace(
        go.Heatmap(
            z=[[0]],
            colorscale="RdBu",
            zmid=0,
            colorbar=dict(x=BLOCK_COLORBAR_X, title="E"),
            hovertemplate="block (%{y}, %{x}): base 2^%{z}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    blocks.add_trace(
        go.Heatmap(
            z=[[0]],
            colorscale="Reds",
            zmin=0,
            zmax=1,
            colorbar=dict(title="share"),
            hovertemplate="block (%{y}, %{x}): %{z:.1%} saturated<extra></extra>",
        ),
        row=1,
        col=2,
    )
    for col in (1, 2):
        blocks.update_yaxes(autorange="reversed", title_text="block row" if col == 1 else None, row=1, col=col)
        blocks.update_xaxes(title_text="block column", row=1, col=col)
    blocks.update_layout(height=360)
    return blocks


def _sweep_figure() -> go.Figure:
    """The (e_m, f_m) sweep heatmap (filled by the sweep button)."""
    sweep = go.Figure(
        layout=dict(
            title="ReFloat over the matrix's (e, f): press 'Run (e_m, f_m) sweep'",
            height=340,
            xaxis=dict(title="matrix fraction bits f_m", type="category"),
            yaxis=dict(title="matrix exponent bits e_m", type="category"),
        )
    )
    sweep.add_trace(
        go.Heatmap(z=[[None]], colorscale="Viridis", texttemplate="%{text}", colorbar=dict(title="log10 time / best"))
    )
    sweep.add_trace(
        go.Heatmap(z=[[None]], colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], showscale=False, texttemplate="%{text}")
    )
    return sweep
