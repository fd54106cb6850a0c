"""One solve in a named format, and the comparisons the notebook and the CLI report (formats, bit sweeps, verdicts).

``solve_format`` prepares the system (b = ones, optional symmetric Jacobi scaling), stores the matrix in the
format (cached per matrix and format), runs CG or BiCGSTAB with the format's search-direction quantiser and
prices the run on the ReRAM model. ``compare_formats`` does that for several formats, ``sweep_bits`` over a grid
of (e, f), and ``verdict`` says in words whether the paper's claim holds on a matrix.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import scipy.sparse as sp

from workbench.solvers.refloat.formats import Format, make_format
from workbench.solvers.krylov import SolveResult, bicgstab, cg
from workbench.solvers.matrices import LoadedMatrix, load_matrix
from workbench.solvers.refloat.block_format import QuantisedMatrix
from workbench.solvers.refloat.model import ReramTiming, solve_timing
from workbench.solvers.refloat.spmv import BlockSpMV

log = logging.getLogger(__name__)

#: the paper's settings: matrix (3, 3), vectors (3, 8), and (3, 16) as its run script uses for some matrices
PAPER_FORMATS = (("float64", 3, 3, 3, 8), ("refloat", 3, 3, 3, 8), ("refloat", 3, 3, 3, 16),
                 ("refloat-artifact", 3, 3, 3, 8), ("baseline", 3, 3, 3, 8))


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
    key: tuple[str, str, int]  # (matrix reference, precondition, seed): what :func:`prepare` was called with

    @property
    def name(self) -> str:
        return self.matrix.name


@functools.lru_cache(maxsize=32)
def prepare(matrix: str, *, precondition: str = "none", seed: int = 0) -> Problem:
    """The system for ``matrix`` with b = ones; ``precondition='jacobi'`` scales symmetrically by |diag|^-1/2.

    Raises ValueError when Jacobi scaling meets a zero diagonal entry.
    """
    loaded = load_matrix(matrix, seed=seed)
    A = loaded.A
    b = np.ones(A.shape[0])
    if precondition == "none":
        return Problem(loaded, A, b, precondition, None, (matrix, precondition, seed))
    if precondition != "jacobi":
        raise ValueError(f"precondition={precondition!r} is not allowed: valid values are 'none', 'jacobi'")
    diag = np.abs(A.diagonal())
    if np.any(diag == 0):
        raise ValueError(f"precondition='jacobi' needs a nonzero diagonal: matrix {loaded.name} has "
                         f"{int(np.sum(diag == 0))} zero diagonal entries; use precondition='none'")
    d = 1.0 / np.sqrt(diag)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    scaled = A.copy()
    scaled.data = A.data * (d[rows] * d[A.indices])  # d_i d_j == d_j d_i exactly: symmetry is kept bit for bit
    return Problem(loaded, scaled, d * b, precondition, d, (matrix, precondition, seed))


@functools.lru_cache(maxsize=24)
def _stored(key: tuple[str, str, int], fmt: Format) -> tuple[QuantisedMatrix, BlockSpMV]:
    matrix, precondition, seed = key
    problem = prepare(matrix, precondition=precondition, seed=seed)
    q = fmt.quantise_matrix(problem.A)
    return q, BlockSpMV(q.matrix, fmt.bsize)


def stored_matrix(problem: Problem, fmt: Format) -> QuantisedMatrix:
    """The problem's matrix as ``fmt`` stores it (cached per problem and format)."""
    return _stored(problem.key, fmt)[0]


@dataclass(frozen=True)
class FormatRun:
    """One solve: the format, the solver's result, the stored matrix, the modelled time and residual checks.

    true_residual: ``||b - A x||^2`` with the unquantised (scaled) A; stored_residual: the same with the stored
    matrix (the system the solver actually solved).
    """

    format: Format
    solver: str
    result: SolveResult
    stored: QuantisedMatrix
    timing: ReramTiming
    true_residual: float
    stored_residual: float

    @property
    def iterations(self) -> int:
        return self.result.iterations

    @property
    def converged(self) -> bool:
        return self.result.converged


def check_solver(problem: Problem, solver: str) -> None:
    """ValueError when ``solver`` cannot apply: CG on a non-symmetric matrix, an unknown solver name."""
    if solver not in ("cg", "bicgstab"):
        raise ValueError(f"solver={solver!r} is not allowed: valid values are 'cg', 'bicgstab'")
    if solver == "cg" and not problem.matrix.symmetric:
        A = problem.matrix.A
        raise ValueError(f"solver='cg' needs a symmetric positive definite matrix: {problem.name} is not symmetric "
                         f"(max |A - A^T| = {abs(A - A.T).max():.3g}); use solver='bicgstab'")
    if solver == "cg":
        diag = problem.A.diagonal()
        bad = np.flatnonzero(diag <= 0)
        if bad.size:
            raise ValueError(f"solver='cg' needs a symmetric positive definite matrix: {problem.name} has "
                             f"{bad.size} diagonal entries <= 0 (A[{bad[0]},{bad[0]}] = {diag[bad[0]]:g}), so it is "
                             "not positive definite; use solver='bicgstab'")


def solve_format(problem: Problem, fmt: Format, solver: str, *, max_iter: int = 1000, criterion: str = "absolute",
                 threshold: float = 1e-8, rtol: float = 1e-10, strict: bool = False) -> FormatRun:
    """Solve ``problem`` in format ``fmt`` with ``solver`` and price it.

    strict: raise ValueError (rather than report) when CG finds ``p^T A p <= 0`` on a matrix the format left
    untouched, i.e. the user's matrix itself is not positive definite.
    """
    check_solver(problem, solver)
    stored, spmv = _stored(problem.key, fmt)
    kernel = cg if solver == "cg" else bicgstab
    result = kernel(spmv, problem.b, quantise=fmt.vector_quantiser(), max_iter=max_iter, criterion=criterion,
                    threshold=threshold, rtol=rtol)
    if strict and solver == "cg" and result.indefinite_at is not None and fmt.name in ("float64", "refloat-artifact"):
        raise ValueError(f"CG breakdown on {problem.name}: p^T A p <= 0 at iteration {result.indefinite_at}, so the "
                         "matrix is not positive definite and CG does not apply; use solver='bicgstab'")
    timing = solve_timing(result.iterations, solver, num_blocks=stored.num_blocks, bsize=fmt.bsize, e_m=fmt.e_m,
                          f_m=fmt.f_m, e_v=fmt.e_v, f_v=fmt.f_v)
    with np.errstate(all="ignore"):
        true_res = float(np.sum((problem.b - problem.A @ result.x) ** 2))
        stored_res = float(np.sum((problem.b - stored.matrix @ result.x) ** 2))
    return FormatRun(fmt, solver, result, stored, timing, true_res, stored_res)


def compare_formats(matrix: str, solver: str, formats: Iterable[tuple[str, int, int, int, int]] = PAPER_FORMATS, *,
                    bsize: int = 128, base: str = "mean", precondition: str = "none", seed: int = 0,
                    max_iter: int = 1000, criterion: str = "absolute", threshold: float = 1e-8,
                    rtol: float = 1e-10) -> list[FormatRun]:
    """One :class:`FormatRun` per ``(name, e_m, f_m, e_v, f_v)`` in ``formats``, on the same system."""
    problem = prepare(matrix, precondition=precondition, seed=seed)
    return [solve_format(problem, make_format(name, e_m=em, f_m=fm, e_v=ev, f_v=fv, bsize=bsize, base=base), solver,
                         max_iter=max_iter, criterion=criterion, threshold=threshold, rtol=rtol)
            for name, em, fm, ev, fv in formats]


@dataclass(frozen=True)
class Sweep:
    """Iterations (``-1`` where not converged), modelled seconds (NaN where not converged) and the true residual
    ``||b - A x||^2`` of the final iterate, over a grid ``e_values x f_values`` (arrays of that shape)."""

    axis: str
    e_values: tuple[int, ...]
    f_values: tuple[int, ...]
    iterations: np.ndarray
    seconds: np.ndarray
    true_residual: np.ndarray | None = None
    fixed: tuple[int, int, int, int] = (3, 3, 3, 8)


def sweep_bits(matrix: str, solver: str, *, axis: str, e_values: Iterable[int], f_values: Iterable[int],
               fixed: tuple[int, int, int, int] = (3, 3, 3, 8), bsize: int = 128, base: str = "mean",
               precondition: str = "none", seed: int = 0, max_iter: int = 1000, criterion: str = "absolute",
               threshold: float = 1e-8, rtol: float = 1e-10) -> Sweep:
    """ReFloat over (e, f) of the matrix (``axis='matrix'``, vectors at ``fixed``) or of the vectors."""
    if axis not in ("matrix", "vector"):
        raise ValueError(f"axis={axis!r} is not allowed: valid values are 'matrix', 'vector'")
    problem = prepare(matrix, precondition=precondition, seed=seed)
    e_values, f_values = tuple(e_values), tuple(f_values)
    its = np.full((len(e_values), len(f_values)), -1, dtype=np.int64)
    secs = np.full(its.shape, np.nan)
    true = np.full(its.shape, np.nan)
    em, fm, ev, fv = fixed
    for i, e in enumerate(e_values):
        for j, f in enumerate(f_values):
            bits = dict(e_m=e, f_m=f, e_v=ev, f_v=fv) if axis == "matrix" else dict(e_m=em, f_m=fm, e_v=e, f_v=f)
            run = solve_format(problem, make_format("refloat", bsize=bsize, base=base, **bits), solver,
                               max_iter=max_iter, criterion=criterion, threshold=threshold, rtol=rtol)
            true[i, j] = run.true_residual
            if run.converged:
                its[i, j] = run.iterations
                secs[i, j] = run.timing.total_seconds
    return Sweep(axis, e_values, f_values, its, secs, true, fixed)


def speedup(run: FormatRun, baseline: FormatRun) -> float | None:
    """Modelled time-to-solution ratio baseline / run; None when ``run`` did not converge (no solution time)."""
    if not run.converged:
        return None
    return baseline.timing.total_seconds / run.timing.total_seconds


#: a converged run whose true residual ||b - A x||^2 exceeds this many times the threshold solved another system
WRONG_SOLUTION_FACTOR = 100.0


def wrong_solution(run: FormatRun, threshold: float = 1e-8) -> bool:
    """True when ``run`` met its stopping rule on the stored matrix but ``x`` does not solve the original system:
    ``||b - A x||^2 > WRONG_SOLUTION_FACTOR * threshold`` with the unquantised A."""
    return run.true_residual > WRONG_SOLUTION_FACTOR * threshold


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
    verdicts: dict[str, str]
    threshold: float


SUMMARY_FORMATS = (("float64", 3, 3, 3, 8), ("refloat", 3, 3, 3, 8), ("refloat", 3, 3, 3, 16),
                   ("refloat-artifact", 3, 3, 3, 8), ("refloat-artifact", 3, 3, 3, 16), ("baseline", 3, 3, 3, 8))


def summarise(matrix: str, *, solver: str | None = None, formats=SUMMARY_FORMATS, bsize: int = 128,
              base: str = "mean", precondition: str = "none", seed: int = 0, max_iter: int = 1000,
              threshold: float = 1e-8) -> MatrixSummary:
    """All ``formats`` on ``matrix`` (absolute criterion, as the paper), with the verdicts; solver chosen by
    :func:`default_solver` unless given."""
    problem = prepare(matrix, precondition=precondition, seed=seed)
    solver = solver or default_solver(problem.matrix)
    runs = {}
    for name, em, fm, ev, fv in formats:
        fmt = make_format(name, e_m=em, f_m=fm, e_v=ev, f_v=fv, bsize=bsize, base=base)
        runs[fmt.label] = solve_format(problem, fmt, solver, max_iter=max_iter, threshold=threshold)
    blocks = next(iter(runs.values())).stored.num_blocks
    return MatrixSummary(problem.name, solver, problem.A.shape[0], problem.A.nnz, blocks, runs,
                         verdict(runs, max_iter=max_iter, threshold=threshold), threshold)


def verdict(runs: dict[str, FormatRun], *, max_iter: int, threshold: float = 1e-8) -> dict[str, str]:
    """Per quantised format: does the paper's claim (converges like float64, to the solution of the original
    system, and faster than the baseline on the ReRAM model) hold on this matrix? ``runs`` maps labels to runs
    and holds 'float64' and 'baseline'."""
    ref, base = runs["float64"], runs["baseline"]
    out = {}
    for label, run in runs.items():
        if label in ("float64", "baseline"):
            continue
        if not ref.converged:
            out[label] = (f"untestable: float64 itself does not converge in {max_iter} iterations "
                          f"({ref.result.status}); this format: {run.result.status} after {run.iterations}")
            continue
        if not run.converged:
            out[label] = (f"fails: {run.result.status} after {run.iterations} iterations, where float64 converges "
                          f"in {ref.iterations}")
            continue
        s = speedup(run, base)
        extra = "" if base.converged else " (baseline did not converge: a lower bound)"
        ratio = run.iterations / max(ref.iterations, 1)
        wrong = wrong_solution(run, threshold)
        head = ("converges on the stored matrix but to the wrong solution" if wrong
                else "holds" if s is not None and s >= 1 else "converges, no speed-up")
        out[label] = (f"{head}: {run.iterations} iterations ({ratio:.2f}x float64's {ref.iterations}), true "
                      f"||b - A x||^2 = {run.true_residual:.2g}, modelled speed-up {s:.2f}x over the baseline{extra}")
    return out
