"""CG and BiCGSTAB with quantised search directions, as in the ReFloat artifact (``src/refloat_solver.cpp``).

The matrix is quantised once, outside (the ``matvec`` passed in multiplies by the stored matrix). Inside, the
search directions are quantised before every SpMV, in place: ``p`` in CG (also the first ``p = r``), ``p`` and
``s`` in BiCGSTAB, so the quantised vectors are the ones the recurrences carry on with. Everything else (dot
products, axpy, residuals, ``x``) is float64.

Stopping: ``criterion="absolute"`` stops when ``||r||^2 <= threshold`` (the paper: 1e-8, on the recursively
updated residual); ``"relative"`` when ``||r|| < rtol * ||b||`` (scipy's test). The loop checks before every
iteration, at most ``max_iter`` iterations; a non-finite residual ends the run as ``diverged``. With no
quantisation the arithmetic follows ``scipy.sparse.linalg.cg``/``bicgstab`` operation for operation (same
updates, same order), so the iterates agree with scipy's up to the SpMV's summation order (tested).

BiCGSTAB also stops after the half step when ``s`` already meets the criterion (``x += alpha p``), as
scipy's does and the artifact's does not; that iteration counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

log = logging.getLogger(__name__)

Criterion = Literal["absolute", "relative"]
Status = Literal["converged", "max_iter", "diverged", "breakdown"]
Matvec = Callable[[np.ndarray], np.ndarray]
Quantiser = Callable[[np.ndarray], np.ndarray] | None


@dataclass
class SolveResult:
    """Outcome of one solve.

    x: (n,) final iterate; iterations: completed iterations; status: converged, max_iter, diverged (inf/NaN)
    or breakdown (a zero denominator); residuals: ``||r||^2`` before the first iteration and after each one
    (length iterations + 1); indefinite_at: first CG iteration with ``p^T A p <= 0`` (the stored matrix is
    not positive definite along ``p``), None if never; message: one line for humans.
    """

    x: np.ndarray
    iterations: int
    status: Status
    residuals: np.ndarray
    indefinite_at: int | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        """The stopping rule was met by the recursive residual of the system ``matvec`` multiplies by (which
        may be a quantised matrix: whether ``x`` solves the original system is the caller's check)."""
        return self.status == "converged"

    @property
    def final_residual(self) -> float:
        """``||r||^2`` of the recursively updated residual at the end (what the stopping rule looks at)."""
        return float(self.residuals[-1])


def _stop_reason(res: float, k: int, max_iter: int, done) -> Status | None:
    """Why an iteration loop stops at squared residual ``res`` after ``k`` iterations, or None to go on."""
    if not np.isfinite(res):
        return "diverged"
    if done(res):
        return "converged"
    if k >= max_iter:
        return "max_iter"
    return None


def meets_criterion(
    residual_sq: float,
    b: np.ndarray,
    *,
    criterion: Criterion = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
) -> bool:
    """Whether a squared residual norm ``||b - A x||^2`` meets the stopping criterion the solvers use
    (absolute: ``<= threshold``; relative: ``||r|| < rtol * ||b||``); False for a non-finite residual."""
    return bool(np.isfinite(residual_sq)) and bool(
        _stop_test(np.asarray(b, dtype=np.float64), criterion, threshold, rtol)(residual_sq)
    )


def _stop_test(b: np.ndarray, criterion: Criterion, threshold: float, rtol: float) -> Callable[[float], bool]:
    if criterion == "absolute":
        return lambda res: res <= threshold
    if criterion == "relative":
        atol = rtol * float(np.linalg.norm(b))
        return lambda res: np.sqrt(res) < atol
    raise ValueError(f"criterion={criterion!r} is not allowed: valid values are 'absolute', 'relative'")


def _check(b: np.ndarray, max_iter: int) -> np.ndarray:
    b = np.asarray(b, dtype=np.float64)
    if b.ndim != 1:
        raise ValueError(f"b has shape {b.shape}: expected a vector (n,)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter={max_iter!r} is out of range: valid range is >= 0")
    return b


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # divergence is detected and reported, not warned
def cg(
    matvec: Matvec,
    b: np.ndarray,
    *,
    quantise: Quantiser = None,
    max_iter: int = 1000,
    criterion: Criterion = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
) -> SolveResult:
    """Conjugate gradient from x0 = 0 for ``A x = b`` (A symmetric positive definite), p quantised each step.

    matvec: x (n,) -> A x (n,); quantise: applied to every new search direction (None: float64).
    Returns a :class:`SolveResult`; a non-positive ``p^T A p`` is recorded in ``indefinite_at`` and the
    iteration goes on as the artifact's does (a zero one is a breakdown).
    """
    b = _check(b, max_iter)
    done = _stop_test(b, criterion, threshold, rtol)
    q_fn = quantise or (lambda v: v)
    x = np.zeros_like(b)
    r = b.copy()  # r = b - A x0 with x0 = 0
    p = q_fn(r.copy())
    res = float(r @ r)
    history = [res]
    indefinite_at = None
    status: Status = "max_iter"
    k = 0
    while True:
        stop = _stop_reason(res, k, max_iter, done)
        if stop is not None:
            status = stop
            break
        Ap = matvec(p)
        pAp = float(p @ Ap)
        if pAp <= 0 and indefinite_at is None:
            indefinite_at = k + 1
        if pAp == 0.0:
            status = "breakdown"
            break
        alpha = res / pAp
        x += alpha * p
        r -= alpha * Ap
        res_new = float(r @ r)
        beta = res_new / res
        p *= beta
        p += r  # p = beta p + r, scipy's order
        p = q_fn(p)
        res = res_new
        history.append(res)
        k += 1
    message = _message(status, k, res, "p^T A p = 0")
    if indefinite_at is not None:
        message += f"; p^T A p <= 0 first at iteration {indefinite_at} (matrix not positive definite)"
    log.debug("cg: %s", message)
    return SolveResult(
        x=x, iterations=k, status=status, residuals=np.array(history), indefinite_at=indefinite_at, message=message
    )


@dataclass
class _BiCGState:
    """BiCGSTAB's recurrence, carried from one iteration to the next: vectors (n,) float64 (``p`` quantised)
    and the scalars of the previous iteration."""

    x: np.ndarray
    r: np.ndarray
    r_tilde: np.ndarray
    p: np.ndarray | None = None
    v: np.ndarray | None = None
    rho_prev: float = 1.0
    alpha: float = 1.0
    omega: float = 1.0


def _bicgstab_iteration(
    st: _BiCGState, matvec: Matvec, q_fn: Callable[[np.ndarray], np.ndarray], done, first: bool
) -> tuple[float | None, Status | None, str]:
    """One BiCGSTAB iteration on ``st``, in place (scipy's operations, in scipy's order).

    Returns (``||r||^2`` after it, or None if it broke down before completing; the status that ends the run,
    None to go on; the breakdown's reason). The half-step exit (``s`` meets the criterion) completes the
    iteration with ``x += alpha p`` and status converged."""
    rho = float(st.r_tilde @ st.r)
    if rho == 0.0:
        return None, "breakdown", "r~ . r = 0"
    if first:
        st.p = st.r.copy()
    else:
        beta = (rho / st.rho_prev) * (st.alpha / st.omega)
        st.p -= st.omega * st.v
        st.p *= beta
        st.p += st.r  # p = r + beta (p - omega v), scipy's order
    st.p = q_fn(st.p)
    st.v = matvec(st.p)
    rv = float(st.r_tilde @ st.v)
    if rv == 0.0:
        return None, "breakdown", "r~ . A p = 0"
    st.alpha = rho / rv
    s = st.r - st.alpha * st.v
    res_s = float(s @ s)
    if np.isfinite(res_s) and done(res_s):  # half-step exit, as scipy
        st.x += st.alpha * st.p
        return res_s, "converged", ""
    s = q_fn(s)
    t = matvec(s)
    tt = float(t @ t)
    if tt == 0.0:
        return None, "breakdown", "t . t = 0"
    st.omega = float(t @ s) / tt
    st.x += st.alpha * st.p
    st.x += st.omega * s
    st.r = s - st.omega * t
    st.rho_prev = rho
    res = float(st.r @ st.r)
    if st.omega == 0.0 and not done(res):
        return res, "breakdown", "omega = 0"
    return res, None, ""


def _message(status: Status, k: int, res: float, breakdown: str) -> str:
    """One line for humans: how a solve ended after ``k`` iterations (``breakdown``: the zero denominator)."""
    return {
        "converged": f"converged in {k} iterations",
        "max_iter": f"no convergence in {k} iterations",
        "diverged": f"diverged (residual became {res}) at iteration {k}",
        "breakdown": f"breakdown at iteration {k + 1}: {breakdown}",
    }[status]


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def bicgstab(
    matvec: Matvec,
    b: np.ndarray,
    *,
    quantise: Quantiser = None,
    max_iter: int = 1000,
    criterion: Criterion = "absolute",
    threshold: float = 1e-8,
    rtol: float = 1e-10,
) -> SolveResult:
    """BiCGSTAB from x0 = 0 for a general square ``A``, with ``p`` and ``s`` quantised before their SpMVs.

    Breakdowns (``r~ . r = 0``, ``r~ . v = 0``, ``t . t = 0`` or ``omega = 0``) end the run with status
    ``breakdown``. Returns a :class:`SolveResult`.
    """
    b = _check(b, max_iter)
    done = _stop_test(b, criterion, threshold, rtol)
    q_fn = quantise or (lambda v: v)
    st = _BiCGState(x=np.zeros_like(b), r=b.copy(), r_tilde=b.copy())
    res = float(st.r @ st.r)
    history = [res]
    status: Status = "max_iter"
    why = ""
    k = 0
    while True:
        stop = _stop_reason(res, k, max_iter, done)
        if stop is not None:
            status = stop
            break
        res_k, end, why = _bicgstab_iteration(st, matvec, q_fn, done, first=k == 0)
        if res_k is not None:  # the iteration completed (possibly by the half step)
            res = res_k
            history.append(res)
            k += 1
        if end is not None:
            status = end
            break
    message = _message(status, k, res, why)
    log.debug("bicgstab: %s", message)
    return SolveResult(x=st.x, iterations=k, status=status, residuals=np.array(history), message=message)
