"""Views of ReFloat for the notebook and the panel: format comparisons, bit sweeps, the panel's view and per-block
grids. One solve in a named format (what the CLI runs too) is :mod:`workbench.solvers.refloat.experiment`; the
paper's claims and their computed verdicts are in :mod:`workbench.solvers.refloat.claims`.

``compare_formats`` solves several formats on one system, ``sweep_bits`` / ``sweep_config`` a grid of (e, f),
``refloat_view`` every format at one configuration (what the panel draws).

Caches: the sparsity pictures live here, the prepared systems, stored matrices and solves in the experiment
module, all keyed by the resolved data directory too; :func:`clear_caches` empties them all.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.solvers.matrices import matrix_names
from workbench.solvers.refloat import experiment
from workbench.solvers.refloat.block_format import QuantisedMatrix
from workbench.solvers.refloat.config import FORMATS, RefloatConfig
from workbench.solvers.refloat.experiment import (
    PAPER_FORMATS,
    FormatRun,
    data_key,
    default_solver,
    prepare,
    problem_at,
    run_format,
    solve_format,
    speedup,
    stored_matrix,
)
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.spectrum import extreme_eigenvalues

log = logging.getLogger(__name__)


def compare_formats(
    matrix: str,
    solver: str,
    formats: Iterable[tuple[str, int, int, int, int]] = PAPER_FORMATS,
    *,
    bsize: int = 128,
    base: str = "mean",
    precondition: str = "none",
    seed: int = 0,
    max_iter: int = 1000,
    criterion: str = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
) -> list[FormatRun]:
    """One :class:`FormatRun` per ``(name, e_m, f_m, e_v, f_v)`` in ``formats``, on the same system."""
    problem = prepare(matrix, precondition=precondition, seed=seed)
    return [
        solve_format(
            problem,
            make_format(name, e_m=em, f_m=fm, e_v=ev, f_v=fv, bsize=bsize, base=base),
            solver,
            max_iter=max_iter,
            criterion=criterion,
            threshold=threshold,
            rtol=rtol,
        )
        for name, em, fm, ev, fv in formats
    ]


@dataclass(frozen=True)
class Sweep:
    """Over a grid ``e_values x f_values`` (arrays of that shape): iterations (``-1`` where the solver did not
    stop on its rule), modelled seconds (NaN where not converged), the true residual ``||b - A x||^2`` of the
    final iterate, and converged (stopped, and the original system's residual meets the criterion)."""

    axis: str
    e_values: tuple[int, ...]
    f_values: tuple[int, ...]
    iterations: np.ndarray
    seconds: np.ndarray
    true_residual: np.ndarray | None = None
    fixed: tuple[int, int, int, int] = (3, 3, 3, 8)
    converged: np.ndarray | None = None

    def wrong(self) -> np.ndarray:
        """Cells that met the stopping rule on the stored matrix with a wrong solution (stopped, not converged)."""
        converged = self.converged if self.converged is not None else self.iterations >= 0
        return (self.iterations >= 0) & ~converged

    def relative_seconds(self) -> np.ndarray:
        """Modelled seconds over the fastest converged cell's (NaN where not converged)."""
        best = np.nanmin(self.seconds) if np.any(np.isfinite(self.seconds)) else 1.0
        return self.seconds / best


def sweep_bits(
    matrix: str,
    solver: str,
    *,
    axis: str,
    e_values: Iterable[int],
    f_values: Iterable[int],
    fixed: tuple[int, int, int, int] = (3, 3, 3, 8),
    bsize: int = 128,
    base: str = "mean",
    precondition: str = "none",
    seed: int = 0,
    max_iter: int = 1000,
    criterion: str = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
) -> Sweep:
    """ReFloat over (e, f) of the matrix (``axis='matrix'``, vectors at ``fixed``) or of the vectors."""
    if axis not in ("matrix", "vector"):
        raise ValueError(f"axis={axis!r} is not allowed: valid values are 'matrix', 'vector'")
    problem = prepare(matrix, precondition=precondition, seed=seed)
    e_values, f_values = tuple(e_values), tuple(f_values)
    its = np.full((len(e_values), len(f_values)), -1, dtype=np.int64)
    secs = np.full(its.shape, np.nan)
    true = np.full(its.shape, np.nan)
    ok = np.zeros(its.shape, dtype=bool)
    em, fm, ev, fv = fixed
    for i, e in enumerate(e_values):
        for j, f in enumerate(f_values):
            bits = dict(e_m=e, f_m=f, e_v=ev, f_v=fv) if axis == "matrix" else dict(e_m=em, f_m=fm, e_v=e, f_v=f)
            run = solve_format(
                problem,
                make_format("refloat", bsize=bsize, base=base, **bits),
                solver,
                max_iter=max_iter,
                criterion=criterion,
                threshold=threshold,
                rtol=rtol,
            )
            true[i, j], ok[i, j] = run.true_residual, run.converged
            if run.stopped_on_quantised:
                its[i, j] = run.iterations
            if run.converged:
                secs[i, j] = run.timing.total_seconds
    return Sweep(axis, e_values, f_values, its, secs, true, fixed, ok)


@dataclass(frozen=True)
class MatrixSummary:
    """Every paper format on one matrix: ``runs`` by label (``float64``, ``refloat (3,3 / 3,8)``, ...)."""

    name: str
    solver: str
    n: int
    nnz: int
    blocks: int
    runs: dict[str, FormatRun]
    threshold: float
    #: per label: modelled speed-up over the baseline (None: no convergence) and "solved the stored system only"
    speedups: dict[str, float | None]
    wrong: dict[str, bool]


SUMMARY_FORMATS = (
    ("float64", 3, 3, 3, 8),
    ("refloat", 3, 3, 3, 8),
    ("refloat", 3, 3, 3, 16),
    ("refloat-artifact", 3, 3, 3, 8),
    ("refloat-artifact", 3, 3, 3, 16),
    ("baseline", 3, 3, 3, 8),
)


def summarise(
    matrix: str,
    *,
    solver: str | None = None,
    formats=SUMMARY_FORMATS,
    bsize: int = 128,
    base: str = "mean",
    precondition: str = "none",
    seed: int = 0,
    max_iter: int = 1000,
    threshold: float = 1e-8,
) -> MatrixSummary:
    """All ``formats`` on ``matrix`` (absolute criterion, as the paper); solver chosen by
    :func:`default_solver` unless given."""
    problem = prepare(matrix, precondition=precondition, seed=seed)
    solver = solver or default_solver(problem.matrix)
    runs = {}
    for name, em, fm, ev, fv in formats:
        fmt = make_format(name, e_m=em, f_m=fm, e_v=ev, f_v=fv, bsize=bsize, base=base)
        runs[fmt.label] = solve_format(problem, fmt, solver, max_iter=max_iter, threshold=threshold)
    blocks = next(iter(runs.values())).stored.num_blocks
    base = runs.get("baseline")
    speedups = {label: speedup(run, base) if base is not None else None for label, run in runs.items()}
    wrong = {label: run.wrong_solution for label, run in runs.items()}
    return MatrixSummary(
        problem.name,
        solver,
        problem.A.shape[0],
        problem.A.nnz,
        blocks,
        runs,
        threshold,
        speedups,
        wrong,
    )


def summary_rows(summaries: Sequence[MatrixSummary]) -> list[dict[str, Any]]:
    """One dict per (matrix, format): iterations, converged, true residual, modelled seconds, speed-up."""
    rows = []
    for s in summaries:
        for label, run in s.runs.items():
            rows.append(
                {
                    "matrix": s.name,
                    "solver": s.solver,
                    "format": label,
                    "iterations": run.iterations,
                    "converged": run.converged,
                    "stopped_on_quantised": run.stopped_on_quantised,
                    "status": run.status,
                    "true_residual": run.true_residual,
                    "modelled_seconds": run.timing.total_seconds,
                    "speedup_vs_baseline": s.speedups[label],
                    "blocks": s.blocks,
                }
            )
    return rows


def sweep_limits(
    sweeps: Mapping[tuple[str, str], Sweep],
) -> dict[str, dict[str, tuple[int, list[int]] | tuple[int, ...] | None]]:
    """Per matrix and axis ('matrix', 'vector'): the smallest exponent width e at which some fraction width
    converges (to the right solution: the original system's residual meets the criterion), as ``(e, [f, ...])``;
    the tuple of e values tried when none does; None when that sweep was not run."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(name for name, _ in sweeps):
        out[name] = {}
        for axis in ("matrix", "vector"):
            sw = sweeps.get((name, axis))
            if sw is None:
                out[name][axis] = None
                continue
            good = sw.converged if sw.converged is not None else sw.iterations >= 0
            ok = [(e, [f for f, g in zip(sw.f_values, row) if g]) for e, row in zip(sw.e_values, good) if row.any()]
            out[name][axis] = ok[0] if ok else tuple(sw.e_values)
    return out


def sweep_axes(
    names: Iterable[str],
    *,
    e_values: Iterable[int],
    f_values: Iterable[int],
    max_iter: int = 1000,
    fixed: tuple[int, int, int, int] = (11, 52, 11, 52),
) -> dict[tuple[str, str], Sweep]:
    """Both sweeps per matrix (the matrix's (e, f) with the vectors at ``fixed``, then the vectors'), each
    with the matrix's default solver; keyed ``(name, axis)``."""
    e_values, f_values = tuple(e_values), tuple(f_values)
    out = {}
    for name in names:
        solver = default_solver(prepare(name).matrix)
        for axis in ("matrix", "vector"):
            out[name, axis] = sweep_bits(
                name, solver, axis=axis, e_values=e_values, f_values=f_values, fixed=fixed, max_iter=max_iter
            )
    return out


def eigen_rows(
    summaries: Sequence[MatrixSummary], *, max_n: int, e_m: int = 3, f_m: int = 3
) -> list[tuple[str, float, float, float, float]]:
    """(matrix, smallest eigenvalue of A, of A stored at ReFloat (e_m, f_m), share saturated up, down) for the
    CG matrices of ``summaries`` up to order ``max_n`` (dense eigenvalues)."""
    rows = []
    for s in summaries:
        if s.solver != "cg" or s.n > max_n:
            continue
        problem = prepare(s.name)
        stored = stored_matrix(problem, make_format("refloat", e_m=e_m, f_m=f_m))
        rows.append(
            (
                s.name,
                extreme_eigenvalues(problem.A).smallest,
                extreme_eigenvalues(stored.matrix).smallest,
                float(stored.saturated_up.mean()),
                float(stored.saturated_down.mean()),
            )
        )
    return rows


def block_grids(stored: QuantisedMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base, share saturated up, share saturated down) on the block grid (block rows x block columns); NaN
    marks an empty block."""
    rows, cols = stored.block_shape
    base = np.full(rows * cols, np.nan)
    up = np.full(rows * cols, np.nan)
    down = np.full(rows * cols, np.nan)
    frac_up, frac_down = stored.saturation_per_block()
    base[stored.blocks] = stored.bases
    up[stored.blocks], down[stored.blocks] = frac_up, frac_down
    return base.reshape(rows, cols), up.reshape(rows, cols), down.reshape(rows, cols)


# ---- the panel's view: every format at one configuration, memoised ---------------------------------------------
SPY_CELLS = 160  # the sparsity picture bins the matrix into at most SPY_CELLS x SPY_CELLS cells
#: the panel's (e_m, f_m) sweep grid
PANEL_SWEEP_E = (2, 3, 4, 5, 6, 8)
PANEL_SWEEP_F = (0, 1, 3, 5, 8, 12, 16, 23, 52)
#: generated matrices offered next to the registry's
PANEL_WATHEN = ("wathen-10-10", "wathen-30-30")


@functools.lru_cache(maxsize=64)
def _density(key: tuple[str, str, int, str]) -> tuple[np.ndarray, np.ndarray]:
    A = problem_at(key).A
    n = A.shape[0]
    cells = min(n, SPY_CELLS)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    counts, edges, _ = np.histogram2d(rows, A.indices, bins=cells, range=[[0, n], [0, n]])
    return counts, edges


def density(
    matrix: str, *, precondition: str = "none", seed: int = 0, data_dir: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Nonzeros per cell of the prepared matrix on an at most ``SPY_CELLS`` x ``SPY_CELLS`` grid, and the cell
    edges (in rows); memoised."""
    return _density((matrix, precondition, seed, data_key(data_dir)))


def stop_level(config: RefloatConfig, *, data_dir: str | None = None) -> float:
    """The squared residual the stopping rule compares ``||r||^2`` with: the threshold (absolute criterion) or
    ``(rtol ||b||)^2`` (relative)."""
    if config.criterion == "absolute":
        return config.threshold
    b = prepare(config.matrix, precondition=config.precondition, seed=config.seed, data_dir=data_dir).b
    return (config.rtol * float(np.linalg.norm(b))) ** 2


def solver_for(matrix: str, *, seed: int = 0, data_dir: str | None = None) -> str:
    """:func:`default_solver` of ``matrix`` (ValueError / FileNotFoundError as :func:`prepare`)."""
    return default_solver(prepare(matrix, seed=seed, data_dir=data_dir).matrix)


def matrix_choices(data_dir: str | None = None) -> list[str]:
    """The matrices a panel offers: the registry's (SPD first, by size), then :data:`PANEL_WATHEN`."""
    return [*dict.fromkeys([*matrix_names(data_dir), *PANEL_WATHEN])]


@dataclass(frozen=True)
class RefloatView:
    """What one redraw shows: the config, one run per format (with its speed-up over the baseline), the focused
    format's run, the sparsity picture and the stopping rule's level."""

    config: RefloatConfig
    runs: dict[str, FormatRun]
    focus: FormatRun
    density: np.ndarray
    edges: np.ndarray
    speedups: dict[str, float | None]
    stop_level: float

    @property
    def focus_grids(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`block_grids` of the focused format's stored matrix."""
        return block_grids(self.focus.stored)


def view_of(matrix: str, **overrides: Any) -> RefloatView:
    """:func:`refloat_view` at the config defaults for ``matrix`` (solver chosen by the matrix unless given)."""
    values = {s.name: s.default for s in RefloatConfig.specs()}
    values.update(matrix=matrix, solver=solver_for(matrix, seed=overrides.get("seed", 0)), **overrides)
    return refloat_view(values)


def refloat_view(values: Mapping[str, Any] | RefloatConfig) -> RefloatView:
    """All four formats at ``values`` (a panel's control values, or a config)."""
    config = values if isinstance(values, RefloatConfig) else RefloatConfig.from_dict(values)
    runs = {name: run_format(config, name) for name in FORMATS}
    counts, edges = density(config.matrix, precondition=config.precondition, seed=config.seed)
    speedups = {name: speedup(run, runs["baseline"]) for name, run in runs.items()}
    return RefloatView(config, runs, runs[config.format], counts, edges, speedups, stop_level(config))


def sweep_config(
    config: RefloatConfig,
    *,
    e_values: Iterable[int] = PANEL_SWEEP_E,
    f_values: Iterable[int] = PANEL_SWEEP_F,
    on_cell: Callable[[], None] | None = None,
) -> Sweep:
    """ReFloat over the matrix's (e_m, f_m) in ``e_values x f_values`` at ``config``'s other settings (every
    solve memoised as :func:`run_format`); ``on_cell()`` is called after each cell (a progress bar)."""
    e_values, f_values = tuple(e_values), tuple(f_values)
    its = np.full((len(e_values), len(f_values)), -1, dtype=np.int64)
    secs = np.full(its.shape, np.nan)
    true = np.full(its.shape, np.nan)
    ok = np.zeros(its.shape, dtype=bool)
    for i, e in enumerate(e_values):
        for j, f in enumerate(f_values):
            run = run_format(config.replace(e_m=e, f_m=f), "refloat")
            true[i, j], ok[i, j] = run.true_residual, run.converged
            if run.stopped_on_quantised:
                its[i, j] = run.iterations
            if run.converged:
                secs[i, j] = run.timing.total_seconds
            if on_cell is not None:
                on_cell()
    return Sweep("matrix", e_values, f_values, its, secs, true, (config.e_m, config.f_m, config.e_v, config.f_v), ok)


def clear_caches() -> None:
    """Forget every memo of this technique: prepared systems, stored matrices, solves, sparsity pictures and
    the matrix files read."""
    experiment.clear_caches()
    _density.cache_clear()
