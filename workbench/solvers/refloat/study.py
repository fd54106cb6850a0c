"""One solve in a named format, and everything the notebook, the panel and the CLI show of it: format
comparisons, bit sweeps, the panel's view and per-block grids (the paper's claims and their computed verdicts are in
:mod:`workbench.solvers.refloat.claims`).

``solve_format`` prepares the system (b = ones, optional symmetric Jacobi scaling), stores the matrix in the
format, runs CG or BiCGSTAB with the format's search-direction quantiser and prices the run on the ReRAM model.
``compare_formats`` does that for several formats, ``sweep_bits`` / ``sweep_config`` over a grid of (e, f),
``refloat_view`` every format at one configuration (what the panel draws).

Caches: every memo of this technique lives here (the prepared systems, the stored matrices, the solves and
the sparsity pictures), keyed by everything it depends on, the data directory included (resolved when the
call is made, so a changed ``WORKBENCH_DATA`` gives fresh entries); :func:`clear_caches` empties them all.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from workbench.data.registry import resolve_data_dir
from workbench.solvers import matrices
from workbench.solvers.krylov import SolveResult, bicgstab, cg, meets_criterion
from workbench.solvers.matrices import LoadedMatrix, load_matrix, matrix_names
from workbench.solvers.refloat.block_format import QuantisedMatrix
from workbench.solvers.refloat.config import FORMATS, RefloatConfig
from workbench.solvers.refloat.formats import Format, make_format
from workbench.solvers.refloat.model import ReramTiming, solve_timing
from workbench.solvers.refloat.spmv import BlockSpMV
from workbench.solvers.spectrum import extreme_eigenvalues

log = logging.getLogger(__name__)

#: the paper's settings: matrix (3, 3), vectors (3, 8), and (3, 16) as its run script uses for some matrices
PAPER_FORMATS = (
    ("float64", 3, 3, 3, 8),
    ("refloat", 3, 3, 3, 8),
    ("refloat", 3, 3, 3, 16),
    ("refloat-artifact", 3, 3, 3, 8),
    ("baseline", 3, 3, 3, 8),
)


@dataclass(frozen=True)
class Problem:
    """The system a solver sees: ``A`` (canonical CSR, scaled when preconditioned), ``b`` and how it was made.

    scale: the diagonal ``d`` with ``A = D^-1/2 A0 D^-1/2`` (None: unscaled); the solution of the original
    system is ``d * x``.
    """

    matrix: LoadedMatrix
    A: sp.csr_matrix
    b: np.ndarray
    precondition: str
    scale: np.ndarray | None
    key: tuple[str, str, int, str]  # (matrix reference, precondition, seed, resolved data directory)

    @property
    def name(self) -> str:
        return self.matrix.name


def _data_key(data_dir: str | None) -> str:
    return str(resolve_data_dir(data_dir)[0])


def prepare(matrix: str, *, precondition: str = "none", seed: int = 0, data_dir: str | None = None) -> Problem:
    """The system for ``matrix`` with b = ones; ``precondition='jacobi'`` scales symmetrically by |diag|^-1/2.

    Cached per (matrix, precondition, seed, data directory); treat the arrays as read-only.
    Raises ValueError when Jacobi scaling meets a zero diagonal entry (or for an unknown matrix).
    """
    return _prepare(matrix, precondition, seed, _data_key(data_dir))


@functools.lru_cache(maxsize=32)
def _prepare(matrix: str, precondition: str, seed: int, data_dir: str) -> Problem:
    key = (matrix, precondition, seed, data_dir)
    loaded = load_matrix(matrix, seed=seed, data_dir=data_dir)
    A = loaded.A
    b = np.ones(A.shape[0])
    if precondition == "none":
        return Problem(loaded, A, b, precondition, None, key)
    if precondition != "jacobi":
        raise ValueError(f"precondition={precondition!r} is not allowed: valid values are 'none', 'jacobi'")
    diag = np.abs(A.diagonal())
    if np.any(diag == 0):
        raise ValueError(
            f"precondition='jacobi' needs a nonzero diagonal: matrix {loaded.name} has "
            f"{int(np.sum(diag == 0))} zero diagonal entries; use precondition='none'"
        )
    d = 1.0 / np.sqrt(diag)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    scaled = A.copy()
    scaled.data = A.data * (d[rows] * d[A.indices])  # d_i d_j == d_j d_i exactly: symmetry is kept bit for bit
    return Problem(loaded, scaled, d * b, precondition, d, key)


@functools.lru_cache(maxsize=24)
def _stored(key: tuple[str, str, int, str], fmt: Format) -> tuple[QuantisedMatrix, BlockSpMV]:
    problem = _prepare(*key)
    q = fmt.quantise_matrix(problem.A)
    return q, BlockSpMV(q.matrix, fmt.bsize)


def stored_matrix(problem: Problem, fmt: Format) -> QuantisedMatrix:
    """The problem's matrix as ``fmt`` stores it (cached per problem and format)."""
    return _stored(problem.key, fmt)[0]


@dataclass(frozen=True)
class FormatRun:
    """One solve: the format, the solver's result, the stored matrix, the modelled time and residual checks.

    true_residual: ``||b - A x||^2`` with the unquantised (scaled, when preconditioned) A: the original
    system's residual; stored_residual: the same with the stored matrix (the system the solver iterated on);
    true_meets_criterion: whether ``true_residual`` meets the run's stopping criterion.

    ``converged`` means the right answer: the solver stopped on its rule *and* the original system's residual
    meets the same criterion. ``stopped_on_quantised`` is the solver's own stop (its recursive residual, on the
    stored matrix, met the rule); a run with ``stopped_on_quantised`` but not ``converged`` solved the
    quantised system only (:attr:`wrong_solution`, status ``wrong_solution``).
    """

    format: Format
    solver: str
    result: SolveResult
    stored: QuantisedMatrix
    timing: ReramTiming
    true_residual: float
    stored_residual: float
    true_meets_criterion: bool

    @property
    def iterations(self) -> int:
        return self.result.iterations

    @property
    def stopped_on_quantised(self) -> bool:
        """The stopping rule was met on the system the solver iterated (the stored matrix; A itself for the
        formats that leave the matrix untouched)."""
        return self.result.converged

    @property
    def converged(self) -> bool:
        """The solver stopped and ``x`` solves the original system to the criterion."""
        return self.result.converged and self.true_meets_criterion

    @property
    def wrong_solution(self) -> bool:
        """Met the stopping rule on the stored matrix, but ``x`` does not solve the original system."""
        return self.result.converged and not self.true_meets_criterion

    @property
    def status(self) -> str:
        """The solver's status, or ``wrong_solution`` when it stopped on the stored matrix with a wrong ``x``."""
        return "wrong_solution" if self.wrong_solution else self.result.status

    @property
    def message(self) -> str:
        if not self.wrong_solution:
            return self.result.message
        return (
            f"stopping rule met on the stored matrix in {self.iterations} iterations, but the original system's "
            f"||b - A x||^2 = {self.true_residual:.3g} does not meet the criterion: not converged"
        )


def check_solver(problem: Problem, solver: str) -> None:
    """ValueError when ``solver`` cannot apply: CG on a non-symmetric matrix, an unknown solver name."""
    if solver not in ("cg", "bicgstab"):
        raise ValueError(f"solver={solver!r} is not allowed: valid values are 'cg', 'bicgstab'")
    if solver == "cg" and not problem.matrix.symmetric:
        A = problem.matrix.A
        raise ValueError(
            f"solver='cg' needs a symmetric positive definite matrix: {problem.name} is not symmetric "
            f"(max |A - A^T| = {abs(A - A.T).max():.3g}); use solver='bicgstab'"
        )
    if solver == "cg":
        diag = problem.A.diagonal()
        bad = np.flatnonzero(diag <= 0)
        if bad.size:
            raise ValueError(
                f"solver='cg' needs a symmetric positive definite matrix: {problem.name} has "
                f"{bad.size} diagonal entries <= 0 (A[{bad[0]},{bad[0]}] = {diag[bad[0]]:g}), so it is "
                "not positive definite; use solver='bicgstab'"
            )


def solve_format(
    problem: Problem,
    fmt: Format,
    solver: str,
    *,
    max_iter: int = 1000,
    criterion: str = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
    strict: bool = False,
) -> FormatRun:
    """Solve ``problem`` in format ``fmt`` with ``solver`` and price it.

    strict: raise ValueError (rather than report) when CG finds ``p^T A p <= 0`` on a matrix the format left
    untouched, i.e. the user's matrix itself is not positive definite.
    """
    check_solver(problem, solver)
    stored, spmv = _stored(problem.key, fmt)
    kernel = cg if solver == "cg" else bicgstab
    result = kernel(
        spmv,
        problem.b,
        quantise=fmt.vector_quantiser(),
        max_iter=max_iter,
        criterion=criterion,
        threshold=threshold,
        rtol=rtol,
    )
    if strict and solver == "cg" and result.indefinite_at is not None and fmt.name in ("float64", "refloat-artifact"):
        raise ValueError(
            f"CG breakdown on {problem.name}: p^T A p <= 0 at iteration {result.indefinite_at}, so the "
            "matrix is not positive definite and CG does not apply; use solver='bicgstab'"
        )
    timing = solve_timing(
        result.iterations,
        solver,
        num_blocks=stored.num_blocks,
        bsize=fmt.bsize,
        e_m=fmt.e_m,
        f_m=fmt.f_m,
        e_v=fmt.e_v,
        f_v=fmt.f_v,
    )
    with np.errstate(all="ignore"):
        true_res = float(np.sum((problem.b - problem.A @ result.x) ** 2))
        stored_res = float(np.sum((problem.b - stored.matrix @ result.x) ** 2))
    meets = meets_criterion(true_res, problem.b, criterion=criterion, threshold=threshold, rtol=rtol)
    return FormatRun(fmt, solver, result, stored, timing, true_res, stored_res, meets)


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


def speedup(run: FormatRun, baseline: FormatRun) -> float | None:
    """Modelled time-to-solution ratio baseline / run; None when ``run`` did not converge (no solution time,
    including a wrong solution)."""
    if not run.converged:
        return None
    return baseline.timing.total_seconds / run.timing.total_seconds


def wrong_solution(run: FormatRun) -> bool:
    """True when ``run`` met its stopping rule on the stored matrix but ``x`` does not solve the original system
    (its true ``||b - A x||^2`` misses the criterion): :attr:`FormatRun.wrong_solution`."""
    return run.wrong_solution


def default_solver(matrix: LoadedMatrix) -> str:
    """'cg' for a symmetric matrix with a positive diagonal (the SPD set, Wathen), else 'bicgstab'."""
    return "cg" if matrix.symmetric and bool(np.all(matrix.A.diagonal() > 0)) else "bicgstab"


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


def format_of(config: RefloatConfig, name: str | None = None) -> Format:
    """The format ``name`` (default ``config.format``) at ``config``'s widths, block size and base rule."""
    return make_format(
        name or config.format,
        e_m=config.e_m,
        f_m=config.f_m,
        e_v=config.e_v,
        f_v=config.f_v,
        bsize=config.bsize,
        base=config.base,
    )


@functools.lru_cache(maxsize=256)
def _numeric_run(
    key: tuple[str, str, int, str],
    fmt: Format,
    solver: str,
    max_iter: int,
    criterion: str,
    threshold: float,
    rtol: float,
) -> FormatRun:
    return solve_format(
        _prepare(*key), fmt, solver, max_iter=max_iter, criterion=criterion, threshold=threshold, rtol=rtol
    )


def run_format(config: RefloatConfig, name: str, *, data_dir: str | None = None) -> FormatRun:
    """The solve of ``config`` in format ``name``, memoised on what changes its numbers.

    The artifact's numbers depend only on ``f_v`` (its matrix is untouched and its vectors only lose fraction
    bits), so its other widths enter only the re-priced time.
    """
    fmt = format_of(config, name)
    numeric = make_format(name, f_v=config.f_v, bsize=config.bsize) if name == "refloat-artifact" else fmt
    key = (config.matrix, config.precondition, config.seed, _data_key(data_dir))
    run = _numeric_run(key, numeric, config.solver, config.max_iter, config.criterion, config.threshold, config.rtol)
    if numeric is fmt:
        return run
    timing = solve_timing(
        run.iterations,
        config.solver,
        num_blocks=run.stored.num_blocks,
        bsize=fmt.bsize,
        e_m=fmt.e_m,
        f_m=fmt.f_m,
        e_v=fmt.e_v,
        f_v=fmt.f_v,
    )
    return FormatRun(
        fmt,
        run.solver,
        run.result,
        run.stored,
        timing,
        run.true_residual,
        run.stored_residual,
        run.true_meets_criterion,
    )


@functools.lru_cache(maxsize=64)
def _density(key: tuple[str, str, int, str]) -> tuple[np.ndarray, np.ndarray]:
    A = _prepare(*key).A
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
    return _density((matrix, precondition, seed, _data_key(data_dir)))


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
    for cached in (_prepare, _stored, _numeric_run, _density):
        cached.cache_clear()
    matrices.clear_file_cache()
