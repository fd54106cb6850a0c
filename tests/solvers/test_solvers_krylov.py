"""CG and BiCGSTAB in float64 against scipy.sparse.linalg on real matrices, and the quantised solves' invariants.

Reference: ``scipy.sparse.linalg.cg`` / ``bicgstab`` (scipy >= 1.12, ``rtol=``), iterations counted by the
matvecs scipy asks for (x0 = 0: CG one per iteration; BiCGSTAB two, one on a half-step exit). With one block
column (bsize >= n) our SpMV is scipy's CSR product bit for bit and our updates are scipy's in the same order,
so counts and iterates must be identical; with 128-blocks the SpMV sums in another order, so counts may move
by one and solutions agree to 1e-6 relative (the systems are solved to 1e-10 relative residual, and
cond(A) * 1e-10 stays below 1e-3 for these matrices; observed agreement is ~1e-12).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from workbench.solvers.krylov import bicgstab, cg
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.refloat.study import prepare, solve_format

CG_MATRICES = ("mesh1e1", "LF10", "bcsstk01", "bcsstk02", "Trefethen_500", "wathen-6-5")


def scipy_solve(A, b, solver: str, *, rtol: float, atol: float = 0.0, maxiter: int = 20000):
    count = [0]

    def matvec(v):
        count[0] += 1
        return A @ v

    op = spla.LinearOperator(A.shape, matvec=matvec, dtype=np.float64)
    fn = spla.cg if solver == "cg" else spla.bicgstab
    x, info = fn(op, b, rtol=rtol, atol=atol, maxiter=maxiter)
    its = count[0] if solver == "cg" else (count[0] + 1) // 2
    return x, info, its


@pytest.mark.parametrize("name", CG_MATRICES)
@pytest.mark.parametrize("criterion", ["relative", "absolute"])
def test_float64_cg_is_scipy_cg(shared_data, name, criterion):
    problem = prepare(name)
    n = problem.A.shape[0]
    # absolute: ours stops on ||r||^2 <= 1e-8, scipy on ||r|| < atol; 1e-4 * (1 - 1e-12) makes them the same test
    kw = dict(rtol=1e-10) if criterion == "relative" else dict(rtol=0.0, atol=1e-4 * (1 - 1e-12))
    x_ref, info, its = scipy_solve(problem.A, problem.b, "cg", **kw)
    assert info == 0
    one_block = solve_format(problem, make_format("float64", bsize=n), "cg", max_iter=20000, criterion=criterion)
    assert one_block.converged and one_block.iterations == its
    assert np.array_equal(one_block.result.x, x_ref)
    blocked = solve_format(problem, make_format("float64", bsize=128), "cg", max_iter=20000, criterion=criterion)
    assert blocked.converged and abs(blocked.iterations - its) <= 1
    assert np.max(np.abs(blocked.result.x - x_ref)) <= 1e-6 * np.max(np.abs(x_ref))


def test_float64_bicgstab_is_scipy_bicgstab_on_a_general_matrix():
    rng = np.random.default_rng(3)
    n = 300
    A = sp.random(n, n, density=0.02, random_state=rng, format="csr") + sp.diags(4.0 + rng.random(n))
    A = sp.csr_matrix(A)
    b = np.ones(n)
    x_ref, info, its = scipy_solve(A, b, "bicgstab", rtol=1e-10)
    assert info == 0
    res = bicgstab(A.__matmul__, b, max_iter=1000, criterion="relative", rtol=1e-10)
    assert res.converged and res.iterations == its
    assert np.array_equal(res.x, x_ref)


def test_float64_bicgstab_breaks_down_where_scipy_does_on_west0067(shared_data):
    problem = prepare("west0067")
    n = problem.A.shape[0]
    _, info, its = scipy_solve(problem.A, problem.b, "bicgstab", rtol=1e-10)
    run = solve_format(problem, make_format("float64", bsize=n), "bicgstab", max_iter=20000, criterion="relative")
    assert info < 0 and run.result.status == "breakdown" and run.iterations == its


@pytest.mark.parametrize(
    "name, solver", [("bcsstk02", "cg"), ("Trefethen_500", "cg"), ("wathen-6-5", "cg"), ("west0067", "bicgstab")]
)
def test_refloat_e11_f52_iterates_like_float64(shared_data, name, solver):
    problem = prepare(name)
    ref = solve_format(problem, make_format("float64"), solver, max_iter=500)
    wide = solve_format(problem, make_format("refloat", e_m=11, f_m=52, e_v=11, f_v=52), solver, max_iter=500)
    assert wide.iterations == ref.iterations and wide.result.status == ref.result.status
    assert np.array_equal(wide.result.residuals, ref.result.residuals) and np.array_equal(wide.result.x, ref.result.x)


def test_residual_history_and_max_iter():
    A = sp.diags(np.linspace(1.0, 1e4, 200)).tocsr()
    res = cg(A.__matmul__, np.ones(200), max_iter=7)
    assert res.status == "max_iter" and res.iterations == 7 and res.residuals.size == 8
    assert not res.converged and res.final_residual == res.residuals[-1]


@pytest.mark.parametrize("solver", [cg, bicgstab])
def test_divergence_to_nan_is_reported_not_converged(solver):
    A = sp.identity(10, format="csr") * 2.0

    def blow_up(v):  # a quantiser that overflows the search direction to inf
        return v * 1e300 * 1e300

    res = solver(A.__matmul__, np.ones(10), quantise=blow_up, max_iter=50)
    assert res.status in ("diverged", "breakdown") and not res.converged


def test_cg_records_where_p_A_p_turns_non_positive():
    A = sp.csr_matrix(np.diag([1.0, 2.0, -3.0, 4.0]))
    res = cg(A.__matmul__, np.ones(4), max_iter=20)
    assert res.indefinite_at is not None and "not positive definite" in res.message


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"criterion": "loose"}, r"criterion='loose' is not allowed: valid values are 'absolute', 'relative'"),
        ({"max_iter": -1}, r"max_iter=-1 is out of range: valid range is >= 0"),
    ],
)
def test_bad_solver_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cg(lambda v: v, np.ones(3), **kwargs)


def test_jacobi_scaling_keeps_symmetry_exactly_and_unit_diagonal(shared_data):
    problem = prepare("bcsstk02", precondition="jacobi")
    A = problem.A
    assert abs(A - A.T).max() == 0
    assert np.allclose(np.abs(A.diagonal()), 1.0, rtol=1e-15, atol=0)  # |a_ii| / (sqrt|a_ii|)^2
    assert np.array_equal(problem.b, problem.scale)  # b = D^-1/2 ones
