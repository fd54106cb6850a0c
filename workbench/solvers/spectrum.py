"""Extreme eigenvalues of a symmetric sparse matrix: does quantisation keep an SPD matrix positive definite?

Saturating a block's small entries upward (and truncating fractions) perturbs A; when the perturbation's
norm passes the smallest eigenvalue, the stored matrix can become indefinite and CG loses its guarantee.
Dense ``numpy.linalg.eigvalsh`` up to ``DENSE_LIMIT`` rows (exact to float64 round-off), ARPACK
(``scipy.sparse.linalg.eigsh``, smallest algebraic) above it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

DENSE_LIMIT = 5000


@dataclass(frozen=True)
class Extremes:
    """Smallest and largest eigenvalue of a symmetric matrix, and how they were found ('dense' or 'arpack')."""

    smallest: float
    largest: float
    method: str

    @property
    def condition(self) -> float:
        """largest / smallest (meaningful when smallest > 0)."""
        return self.largest / self.smallest if self.smallest > 0 else float("inf")


def extreme_eigenvalues(A: sp.spmatrix, *, dense_limit: int = DENSE_LIMIT) -> Extremes:
    """Smallest and largest eigenvalue of symmetric ``A`` (n, n). ValueError if ``A`` is not symmetric."""
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix is {A.shape[0]} x {A.shape[1]}: eigenvalues need a square matrix")
    asym = abs(A - A.T).max() if A.nnz else 0.0
    if asym > 0:
        raise ValueError(f"matrix is not symmetric (max |A - A^T| = {asym:.3g}): extreme_eigenvalues needs A = A^T")
    if A.shape[0] <= dense_limit:
        w = np.linalg.eigvalsh(A.toarray())
        return Extremes(float(w[0]), float(w[-1]), "dense")
    lo = spla.eigsh(A, k=1, which="SA", return_eigenvectors=False, maxiter=20000, tol=1e-10)[0]
    hi = spla.eigsh(A, k=1, which="LA", return_eigenvectors=False, maxiter=20000, tol=1e-10)[0]
    return Extremes(float(lo), float(hi), "arpack")
