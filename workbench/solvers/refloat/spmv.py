"""Block SpMV as a crossbar computes it: one partial sum per (row, block column), then the partials added.

A ReRAM crossbar holds one ``bsize x bsize`` block and returns, for every row, the dot product of that row's
part of the block with the matching vector segment. The row's result is the sum of its blocks' partial sums.
The authors' ``sparse_spmv_coo`` (``src/refloat_blas.cpp``) does exactly this in float64: entries in block
order, ``psum`` restarted at each (row, block column) and added to ``y[row]`` in ascending block column.

Here that is two CSR products: ``P`` (one row per non-empty (row, block column) pair, holding that pair's
entries in column order) gives all partial sums, and ``S`` (a 0/1 matrix, one row per matrix row) adds them
in ascending block column. With ``bsize >= n_cols`` there is one pair per row, ``S`` is the identity and the
result is bit-identical to ``A @ x``; otherwise it differs from ``A @ x`` only by summation order (tested).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from workbench.solvers.refloat.block_format import check_bsize, csr_canonical


class BlockSpMV:
    """``y = A @ x`` with crossbar partial sums.

    A: sparse (m, n) matrix (made canonical: float64 CSR, sorted, duplicates summed, zeros dropped).
    bsize: block size. ``num_pairs``: non-empty (row, block column) pairs, the partial sums per product.
    Example: ``BlockSpMV(A, 128)(np.ones(A.shape[1]))``.
    """

    def __init__(self, A: sp.spmatrix | sp.sparray, bsize: int = 128) -> None:
        check_bsize(bsize)
        A = csr_canonical(A)
        n_rows, n_cols = A.shape
        n_bcols = -(-n_cols // bsize)
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(A.indptr))
        key = rows * n_bcols + A.indices.astype(np.int64) // bsize  # sorted: CSR order is row, then column
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if A.nnz else np.zeros(0, dtype=np.int64)
        pair_indptr = np.r_[starts, A.nnz].astype(A.indptr.dtype)
        self.num_pairs = int(starts.size)
        self.shape = A.shape
        self.bsize = bsize
        # P: (num_pairs, n_cols); row p holds the entries of pair p
        self.P = sp.csr_matrix((A.data, A.indices, pair_indptr), shape=(self.num_pairs, n_cols))
        pair_row = rows[starts]
        per_row = np.bincount(pair_row, minlength=n_rows)
        # S: (n_rows, num_pairs); row i sums its pairs, which are consecutive and in ascending block column
        self.S = sp.csr_matrix(
            (np.ones(self.num_pairs), np.arange(self.num_pairs), np.r_[0, np.cumsum(per_row)]),
            shape=(n_rows, self.num_pairs),
        )
        self._identity_sum = self.num_pairs == n_rows and bool(np.all(per_row == 1))

    def partial_sums(self, x: np.ndarray) -> np.ndarray:
        """(num_pairs,) partial sums, one per non-empty (row, block column) pair."""
        return self.P @ x

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(m,) ``A @ x`` from the crossbar partial sums; ``x`` has shape (n,)."""
        partial = self.P @ x
        return partial if self._identity_sum else self.S @ partial


def block_spmv_reference(A: sp.spmatrix, x: np.ndarray, bsize: int) -> np.ndarray:
    """Slow reference: loop over rows, then block columns, summing each block's products in column order."""
    A = csr_canonical(A)
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        total, psum, current = 0.0, 0.0, None
        for j, v in zip(A.indices[lo:hi], A.data[lo:hi]):
            if current is not None and j // bsize != current:
                total += psum
                psum = 0.0
            current = j // bsize
            psum += v * x[j]
        y[i] = total + psum if current is not None else 0.0
    return y
