"""ReFloat's orchestration, called by the runner (CLI) and the study (panel, notebook): prepare a system (b = ones,
optional symmetric Jacobi scaling), store its matrix in a format, solve with CG or BiCGSTAB under the format's
vector quantiser and price the run on the ReRAM model (:func:`solve_format`); :func:`run_format` memoises a
solve per config and format.

Caches: the prepared systems, the stored matrices and the solves, keyed by everything they depend on, the data
directory included (resolved when the call is made, so a changed ``WORKBENCH_DATA`` gives fresh entries);
:func:`clear_caches` empties them (the study's :func:`~workbench.solvers.refloat.study.clear_caches` also its own).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from workbench.data.registry import resolve_data_dir
from workbench.solvers import matrices
from workbench.solvers.krylov import SolveResult, bicgstab, cg, meets_criterion
from workbench.solvers.matrices import LoadedMatrix, load_matrix
from workbench.solvers.refloat.block_format import QuantisedMatrix
from workbench.solvers.refloat.config import RefloatConfig
from workbench.solvers.refloat.formats import Format, make_format
from workbench.solvers.refloat.model import ReramTiming, solve_timing
from workbench.solvers.refloat.spmv import BlockSpMV

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


def data_key(data_dir: str | None) -> str:
    """The resolved data directory (a cache key part): ``data_dir`` or ``WORKBENCH_DATA`` or the default."""
    return _data_key(data_dir)


def problem_at(key: tuple[str, str, int, str]) -> Problem:
    """The prepared system of ``key`` = (matrix, precondition, seed, :func:`data_key`), memoised."""
    return _prepare(*key)


def clear_caches() -> None:
    """Forget the prepared systems, stored matrices and solves, and the matrix files read."""
    for cached in (_prepare, _stored, _numeric_run):
        cached.cache_clear()
    matrices.clear_file_cache()
