"""ReFloat panel and notebook figures: residual histories per format, modelled ReRAM time, the matrix's sparsity,
per-block exponent bases and saturation, and (behind a button) a sweep over the matrix's (e, f).

Every number drawn comes from ``workbench.solvers`` (``study.solve_format`` for solves and modelled time,
``refloat_format`` for bases and saturation); solves are memoised per format, so moving a bit slider re-runs
only the solves that depend on it.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.solvers.refloat.config import FORMATS, RefloatConfig
from workbench.solvers.refloat.formats import Format, make_format
from workbench.solvers.matrices import load_matrix, matrix_names
from workbench.solvers.refloat.model import FORMULA, solve_timing
from workbench.solvers.refloat.study import FormatRun, Sweep, default_solver, prepare, solve_format, speedup
from widgets.base import Panel
from widgets.solvers.refloat_figures import (
    COLORS,
    DASH,
    block_grids,
    block_title,
    grid_shapes,
    legend_label,
    log_counts,
    sweep_figure,
)

SPY_CELLS = 160  # the sparsity picture bins the matrix into at most SPY_CELLS x SPY_CELLS cells
SWEEP_E = (2, 3, 4, 5, 6, 8)
SWEEP_F = (0, 1, 3, 5, 8, 12, 16, 23, 52)


def _format_of(values: dict[str, Any], name: str) -> Format:
    return make_format(name, e_m=values["e_m"], f_m=values["f_m"], e_v=values["e_v"], f_v=values["f_v"],
                       bsize=values["bsize"], base=values["base"])


@functools.lru_cache(maxsize=256)
def _numeric_run(key: tuple, fmt: Format, solver: str, max_iter: int, criterion: str, threshold: float,
                 rtol: float) -> FormatRun:
    problem = prepare(key[0], precondition=key[1], seed=key[2])
    return solve_format(problem, fmt, solver, max_iter=max_iter, criterion=criterion, threshold=threshold, rtol=rtol)


def run_format(config: RefloatConfig, name: str) -> FormatRun:
    """The solve of ``config`` in format ``name``, memoised on what changes its numbers.

    The artifact's numbers depend only on ``f_v`` (its matrix is untouched and its vectors only lose fraction
    bits), so its other widths enter only the re-priced time.
    """
    values = config.to_dict()
    fmt = _format_of(values, name)
    numeric = fmt
    if name == "refloat-artifact":
        numeric = make_format(name, f_v=config.f_v, bsize=config.bsize)
    run = _numeric_run((config.matrix, config.precondition, config.seed), numeric, config.solver, config.max_iter,
                       config.criterion, config.threshold, config.rtol)
    if numeric is fmt:
        return run
    timing = solve_timing(run.iterations, config.solver, num_blocks=run.stored.num_blocks, bsize=fmt.bsize,
                          e_m=fmt.e_m, f_m=fmt.f_m, e_v=fmt.e_v, f_v=fmt.f_v)
    return FormatRun(fmt, run.solver, run.result, run.stored, timing, run.true_residual, run.stored_residual)


@functools.lru_cache(maxsize=64)
def _density(matrix: str, precondition: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    A = prepare(matrix, precondition=precondition, seed=seed).A
    n = A.shape[0]
    cells = min(n, SPY_CELLS)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    counts, edges, _ = np.histogram2d(rows, A.indices, bins=cells, range=[[0, n], [0, n]])
    return counts, edges


@dataclass(frozen=True)
class RefloatView:
    """What one redraw shows: the config, one run per format, and the focused format's stored matrix."""

    config: RefloatConfig
    runs: dict[str, FormatRun]
    focus: FormatRun
    density: np.ndarray
    edges: np.ndarray


def view_of(matrix: str, **overrides: Any) -> RefloatView:
    """:func:`refloat_view` at the config defaults for ``matrix`` (solver chosen by the matrix unless given)."""
    values = {s.name: s.default for s in RefloatConfig.specs()}
    values.update(matrix=matrix, solver=default_solver(load_matrix(matrix)), **overrides)
    return refloat_view(values)


def refloat_view(values: dict[str, Any]) -> RefloatView:
    """All four formats at ``values`` (a panel's control values)."""
    config = RefloatConfig.from_dict(values)
    runs = {name: run_format(config, name) for name in FORMATS}
    density, edges = _density(config.matrix, config.precondition, config.seed)
    return RefloatView(config, runs, runs[config.format], density, edges)


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
        self.run_button = W.Button(description="Run (e_m, f_m) sweep", tooltip="ReFloat over the matrix's bits "
                                   "at the current vector bits (one solve per cell)")
        self.progress = W.IntProgress(value=0, min=0, max=len(SWEEP_E) * len(SWEEP_F), description="sweep")
        self.run_button.on_click(lambda _: self.run_sweep())
        self.show_formats = {name: W.Checkbox(value=True, description=name, indent=False,
                                              layout=W.Layout(width="150px")) for name in FORMATS}
        for name, box in self.show_formats.items():
            box.observe(lambda change, n=name: self._toggle(n, change["new"]), names="value")
        if self.static:
            self.run_sweep()

    def _matrix_dropdown(self) -> None:
        """The matrix control as a dropdown of the registry's matrices (plus a few Wathen sizes)."""
        old = self.controls["matrix"]
        names = [*dict.fromkeys([*matrix_names(), "wathen-10-10", "wathen-30-30"])]
        if old.value not in names:
            names.append(old.value)
        new = W.Dropdown(options=names, value=old.value, description=old.description, style=old.style,
                         layout=old.layout, tooltip=old.tooltip)
        old.unobserve(self._on_change, names="value")
        new.observe(self._on_change, names="value")
        self.controls = {name: (new if name == "matrix" else w) for name, w in self.controls.items()}

    def adjust_controls(self, changed: str) -> None:
        if changed == "matrix":
            try:
                loaded = load_matrix(self.controls["matrix"].value, seed=self.values()["seed"])
            except (ValueError, FileNotFoundError):
                return  # shown by the redraw
            self.controls["solver"].value = default_solver(loaded)

    def _toggle(self, name: str, visible: bool) -> None:
        residual = self.figures[0]
        residual.data[FORMATS.index(name)].visible = True if visible else "legendonly"

    # ---- figures --------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        residual = go.Figure(layout=dict(title="Residual ||r||^2 per iteration", height=380,
                                         xaxis=dict(title="iteration"),
                                         yaxis=dict(title="||r||^2", type="log", exponentformat="power"),
                                         legend=dict(orientation="h", y=-0.22)))
        for name in FORMATS:
            residual.add_trace(go.Scatter(x=[], y=[], mode="lines", name=name,
                                          line=dict(color=COLORS[name], dash=DASH[name], width=2)))
        residual.add_trace(go.Scatter(x=[], y=[], mode="lines", name="threshold", showlegend=False,
                                      line=dict(color="#999", dash="dot", width=1)))
        timing = go.Figure(layout=dict(title="Modelled ReRAM solver time (model)", height=340, showlegend=False,
                                       yaxis=dict(title="seconds", type="log", exponentformat="power")))
        timing.add_trace(go.Bar(x=list(FORMATS), y=[None] * 4, marker=dict(color=[COLORS[n] for n in FORMATS]),
                                textposition="outside"))
        spy = go.Figure(layout=dict(title="Sparsity and block grid", height=400, width=430,
                                    yaxis=dict(autorange="reversed", scaleanchor="x"), margin=dict(l=50, r=20)))
        spy.add_trace(go.Heatmap(z=[[0]], colorscale="Blues", showscale=False,
                                 hovertemplate="row %{y:.0f}, col %{x:.0f}<extra></extra>"))
        blocks = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                               subplot_titles=("exponent base per block", "entries saturated (up + down)"))
        blocks.add_trace(go.Heatmap(z=[[0]], colorscale="RdBu", zmid=0, colorbar=dict(x=0.44, title="E"),
                                    hovertemplate="block (%{y}, %{x}): base 2^%{z}<extra></extra>"), row=1, col=1)
        blocks.add_trace(go.Heatmap(z=[[0]], colorscale="Reds", zmin=0, zmax=1, colorbar=dict(title="share"),
                                    hovertemplate="block (%{y}, %{x}): %{z:.1%} saturated<extra></extra>"),
                         row=1, col=2)
        for col in (1, 2):
            blocks.update_yaxes(autorange="reversed", title_text="block row", row=1, col=col)
            blocks.update_xaxes(title_text="block column", row=1, col=col)
        blocks.update_layout(height=360)
        sweep = go.Figure(layout=dict(title="ReFloat over the matrix's (e, f): press 'Run (e_m, f_m) sweep'",
                                      height=340, xaxis=dict(title="matrix fraction bits f_m", type="category"),
                                      yaxis=dict(title="matrix exponent bits e_m", type="category")))
        sweep.add_trace(go.Heatmap(z=[[None]], colorscale="Viridis", texttemplate="%{text}",
                                   colorbar=dict(title="log10 time / best")))
        sweep.add_trace(go.Heatmap(z=[[None]], colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]], showscale=False,
                                   texttemplate="%{text}"))
        return [residual, timing, spy, blocks, sweep]

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
        if config.criterion == "absolute":
            residual.data[-1].x, residual.data[-1].y = [0, longest], [config.threshold] * 2
        else:
            level = (config.rtol * float(np.linalg.norm(prepare(config.matrix, precondition=config.precondition,
                                                                seed=config.seed).b))) ** 2
            residual.data[-1].x, residual.data[-1].y = [0, longest], [level] * 2
        residual.layout.title.text = (f"{config.matrix}, {config.solver}: recursive residual ||r||^2 per iteration "
                                      f"({config.criterion} criterion, dotted)")
        timing.data[0].x = [view.runs[n].format.label for n in FORMATS]
        timing.data[0].y = [view.runs[n].timing.total_seconds for n in FORMATS]
        timing.data[0].text = [f"{view.runs[n].iterations} its" + ("" if view.runs[n].converged else " (no conv.)")
                               for n in FORMATS]
        timing.data[0].marker.pattern.shape = ["" if view.runs[n].converged else "/" for n in FORMATS]
        centers = (view.edges[:-1] + view.edges[1:]) / 2
        spy.data[0].z, spy.data[0].x, spy.data[0].y = log_counts(view.density), centers, centers
        spy.layout.shapes = grid_shapes(float(view.edges[-1]), config.bsize)
        spy.layout.title.text = f"{config.matrix}: n = {int(view.edges[-1])}, nnz = {view.focus.stored.matrix.nnz}"
        focus = view.focus.stored
        base, up, down = block_grids(focus)
        blocks.data[0].z = base
        blocks.data[1].z = up + down
        blocks.layout.title.text = f"{config.format} storage: " + block_title(focus)

    def notes(self, view: RefloatView, values: dict[str, Any]) -> str:
        base = view.runs["baseline"]
        parts = []
        for name in ("refloat", "refloat-artifact"):
            run = view.runs[name]
            s = speedup(run, base)
            state = (f"{run.iterations} its" if run.converged else f"<b style='color:#b00020'>{run.result.status}"
                     f"</b> after {run.iterations}")
            parts.append(f"{html.escape(run.format.label)}: {state}"
                         + (f", <b>{s:.2f}x</b> over baseline" if s is not None else "")
                         + (f", true ||b-Ax||^2 = {run.true_residual:.2g}" if run.converged else ""))
        f64 = view.runs["float64"]
        parts.append(f"float64: {f64.iterations} its" + ("" if f64.converged else " (no convergence)"))
        return "<small>solves are real; times are the ReRAM model</small><br>" + " &middot; ".join(parts)

    # ---- heavy: the sweep ------------------------------------------------------------------------------------
    def run_sweep(self) -> Sweep:
        """ReFloat over (e_m, f_m) in SWEEP_E x SWEEP_F at the current vector bits; fills the sweep figure."""
        values = self.values()
        config = RefloatConfig.from_dict(values)
        its = np.full((len(SWEEP_E), len(SWEEP_F)), -1, dtype=np.int64)
        secs = np.full(its.shape, np.nan)
        true = np.full(its.shape, np.nan)
        self.progress.value = 0
        for i, e in enumerate(SWEEP_E):
            for j, f in enumerate(SWEEP_F):
                run = run_format(config.replace(e_m=e, f_m=f), "refloat")
                true[i, j] = run.true_residual
                if run.converged:
                    its[i, j], secs[i, j] = run.iterations, run.timing.total_seconds
                self.progress.value += 1
        self.sweep = Sweep("matrix", SWEEP_E, SWEEP_F, its, secs, true, (config.e_m, config.f_m, config.e_v,
                                                                         config.f_v))
        threshold = config.threshold if config.criterion == "absolute" else (
            config.rtol * float(np.linalg.norm(prepare(config.matrix, precondition=config.precondition,
                                                       seed=config.seed).b))) ** 2
        built = sweep_figure(self.sweep, threshold=threshold,
                             title=f"{config.matrix}: ReFloat over the matrix's (e_m, f_m), vectors ({config.e_v}, "
                                   f"{config.f_v}); x = no convergence, * = wrong solution")
        fig = self.figures[4]
        with fig.batch_update():
            for mine, theirs in zip(fig.data, built.data):
                mine.z, mine.x, mine.y, mine.text = theirs.z, theirs.x, theirs.y, theirs.text
                mine.hovertemplate = theirs.hovertemplate
            fig.layout.title.text = built.layout.title.text
        return self.sweep

    def widget(self) -> W.Widget:
        header = W.HTML(f"<b>{html.escape(self.title)}</b>")
        controls = W.Box(list(self.controls.values()), layout=W.Layout(flex_flow="row wrap"))
        toggles = W.HBox([W.HTML("show:"), *self.show_formats.values()])
        formula = W.HTML(f"<small>model: {html.escape(FORMULA)}</small>")
        return W.VBox([header, controls, self.status, toggles, self.figures[0], self.figures[1],
                       W.HBox([self.figures[2]]), self.figures[3], W.HBox([self.run_button, self.progress]),
                       self.figures[4], formula])
