"""The Wathen generator against the properties of MATLAB's ``gallery('wathen', nx, ny)``.

Reference (independent of our assembly): the documented order 3 nx ny + 2 nx + 2 ny + 1; symmetry and
positive definiteness (dense eigenvalues); Wathen's bound 0.25 <= eig(D^-1 A) <= 4.5 with D = diag(A); the
element matrix rows summing to the element's share of 1^T A 1 = 4 * sum(rho) (the serendipity shape functions
form a partition of unity on the reference square of area 4); and the 1 x 1 grid, which is the element matrix
placed at MATLAB's node numbers [8 7 6 4 1 2 3 5] (1-based, worked by hand from wathen.m's formulas).
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.solvers.wathen import ELEMENT_MATRIX, parse_wathen_name, wathen, wathen_order

GRIDS = [(1, 1), (2, 3), (3, 2), (5, 4), (7, 7)]


@pytest.mark.parametrize("nx, ny", GRIDS)
def test_order_symmetry_and_definiteness(nx, ny):
    A = wathen(nx, ny, seed=nx * 10 + ny)
    assert A.shape == (3 * nx * ny + 2 * nx + 2 * ny + 1,) * 2 == (wathen_order(nx, ny),) * 2
    D = A.toarray()
    assert np.array_equal(D, D.T)
    assert np.linalg.eigvalsh(D)[0] > 0


@pytest.mark.parametrize("nx, ny", GRIDS)
def test_wathen_eigenvalue_bound_of_the_diagonally_scaled_matrix(nx, ny):
    D = wathen(nx, ny, seed=1).toarray()
    d = 1 / np.sqrt(np.diag(D))
    w = np.linalg.eigvalsh(d[:, None] * D * d[None, :])  # same spectrum as D^-1 A
    assert 0.25 - 1e-12 <= w[0] and w[-1] <= 4.5 + 1e-12


@pytest.mark.parametrize("nx, ny", GRIDS)
def test_total_mass_is_four_times_the_density_sum(nx, ny):
    rho = np.random.default_rng(5).uniform(1, 100, (nx, ny))
    A = wathen(nx, ny, rho=rho)
    ones = np.ones(A.shape[0])
    assert ones @ (A @ ones) == pytest.approx(4 * rho.sum(), rel=1e-12)


def test_one_element_is_the_element_matrix_at_matlabs_node_numbers():
    A = wathen(1, 1, rho=np.array([[2.5]])).toarray()
    nodes = np.array([8, 7, 6, 4, 1, 2, 3, 5]) - 1
    assert np.array_equal(A[np.ix_(nodes, nodes)], 2.5 * ELEMENT_MATRIX)
    assert np.array_equal(
        ELEMENT_MATRIX[:4, :4] * 45, [[6, -6, 2, -8], [-6, 32, -6, 20], [2, -6, 6, -6], [-8, 20, -6, 32]]
    )


def test_pattern_is_seed_independent_and_values_seeded():
    a, b, c = wathen(4, 3, seed=0), wathen(4, 3, seed=0), wathen(4, 3, seed=1)
    assert np.array_equal(a.indptr, c.indptr) and np.array_equal(a.indices, c.indices)
    assert np.array_equal(a.data, b.data) and not np.array_equal(a.data, c.data)


def test_names_and_errors():
    assert parse_wathen_name("wathen-100-120") == (100, 120) and parse_wathen_name("bcsstk01") is None
    with pytest.raises(ValueError, match=r"nx=0 is out of range: valid range is >= 1"):
        wathen(0, 3)
    with pytest.raises(ValueError, match=r"rho has shape \(2, 2\): expected \(3, 2\) positive densities"):
        wathen(3, 2, rho=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"nx\*ny=4_000_002 is too large"):
        wathen(2, 2_000_001)
