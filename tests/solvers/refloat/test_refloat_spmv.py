"""Block SpMV (one partial sum per (row, block column)) against a slow loop and against scipy's ``A @ x``.

Reference: ``spmv.block_spmv_reference`` (a plain loop over rows and block columns, summing in the order a
crossbar does, bit-identical expected) and scipy's CSR product (equal up to summation order: the tolerance
is the classic bound n * eps * sum_j |a_ij x_j| per row).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from workbench.solvers.matrices import load_matrix
from workbench.solvers.refloat.spmv import BlockSpMV, block_spmv_reference


def random_case(seed: int, n_rows: int, n_cols: int, density: float):
    rng = np.random.default_rng(seed)
    A = sp.random(n_rows, n_cols, density=density, random_state=rng, format="csr")
    A.data = rng.standard_normal(A.nnz) * np.exp2(rng.uniform(-20, 20, A.nnz))
    return A, rng.standard_normal(n_cols)


@pytest.mark.parametrize(
    "seed, n_rows, n_cols, density, bsize",
    [
        (0, 37, 41, 0.2, 8),
        (1, 100, 100, 0.05, 128),
        (2, 129, 257, 0.1, 64),
        (3, 5, 300, 0.5, 7),
        (4, 61, 61, 0.0, 16),
    ],
)
def test_block_spmv_equals_the_crossbar_loop_bit_for_bit(seed, n_rows, n_cols, density, bsize):
    A, x = random_case(seed, n_rows, n_cols, density)
    got = BlockSpMV(A, bsize)(x)
    assert np.array_equal(got, block_spmv_reference(A, x, bsize))


@pytest.mark.parametrize("seed, n, bsize", [(5, 300, 16), (6, 513, 128), (7, 100, 3)])
def test_block_spmv_equals_scipy_up_to_summation_order(seed, n, bsize):
    A, x = random_case(seed, n, n, 0.05)
    got = BlockSpMV(A, bsize)(x)
    bound = n * np.finfo(float).eps * (abs(A) @ abs(x))  # |sum order difference| <= n eps sum |a x|
    assert np.all(np.abs(got - A @ x) <= bound)


@pytest.mark.parametrize("name", ["bcsstk02", "Trefethen_500", "west0067"])
def test_one_block_column_is_bit_identical_to_scipy(shared_data, name):
    A = load_matrix(name).A
    x = np.random.default_rng(0).standard_normal(A.shape[1])
    assert np.array_equal(BlockSpMV(A, A.shape[1])(x), A @ x)


def test_partial_sum_count_is_the_number_of_nonempty_row_block_pairs():
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0, 3.0], [0, 0, 0, 4.0], [0, 0, 0, 0]]))
    spmv = BlockSpMV(A, 2)
    assert spmv.num_pairs == 3  # row 0: columns {0,1} and {3}; row 1: {3}
    assert spmv.partial_sums(np.ones(4)).tolist() == [3.0, 3.0, 4.0]
    assert spmv(np.ones(4)).tolist() == [6.0, 4.0, 0.0]


def test_bad_bsize():
    with pytest.raises(ValueError, match=r"bsize=0 is out of range: valid range is >= 1"):
        BlockSpMV(sp.identity(3, format="csr"), 0)
