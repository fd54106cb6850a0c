"""Wathen matrices, as MATLAB's ``gallery('wathen', nx, ny)``: the class of ReFloat's wathen100 and wathen120.

The consistent mass matrix of a regular ``nx x ny`` grid of 8-node serendipity elements (A. J. Wathen, "Realistic
eigenvalue bounds for the Galerkin mass matrix", IMA J. Numer. Anal. 7, 1987; N. J. Higham's test matrix
collection). Each element contributes ``rho * E`` with the fixed 8 x 8 element matrix ``E`` below and a random
density ``rho`` in [0, 100); the order is ``n = 3 nx ny + 2 nx + 2 ny + 1``. A is symmetric positive definite
for any positive densities, and with ``D = diag(diag(A))`` the eigenvalues of ``D^-1 A`` lie in [0.25, 4.5].

Node numbering follows MATLAB's ``private/wathen.m`` (element (i, j), 1-based: ``nn1 = 3 j nx + 2 i + 2 j + 1``,
``nn2 = nn1 - 1``, ``nn3 = nn2 - 1``, ``nn4 = (3 j - 1) nx + 2 j + i - 1``, ``nn5 = 3 (j - 1) nx + 2 i + 2 j - 3``,
``nn6 = nn5 + 1``, ``nn7 = nn6 + 1``, ``nn8 = nn4 + 1``), so the sparsity pattern, and hence the block count
the ReRAM model uses, is exactly that of SuiteSparse's wathen100 (``nx = ny = 100``). The densities come from
numpy's seeded generator, not MATLAB's ``rand``, so values differ from the SuiteSparse files.
"""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

from workbench.memory import require

_E1 = np.array([[6, -6, 2, -8], [-6, 32, -6, 20], [2, -6, 6, -6], [-8, 20, -6, 32]], dtype=np.float64)
_E2 = np.array([[3, -8, 2, -6], [-8, 16, -8, 20], [2, -8, 3, -8], [-6, 20, -8, 16]], dtype=np.float64)
#: the 8-node serendipity element mass matrix (MATLAB: e = [e1 e2; e2' e1] / 45)
ELEMENT_MATRIX = np.block([[_E1, _E2], [_E2.T, _E1]]) / 45.0
MAX_ELEMENTS = 4_000_000
_NAME = re.compile(r"^wathen-(\d+)-(\d+)$")


def wathen_order(nx: int, ny: int) -> int:
    """Order of ``gallery('wathen', nx, ny)``: ``3 nx ny + 2 nx + 2 ny + 1``."""
    return 3 * nx * ny + 2 * nx + 2 * ny + 1


def element_nodes(nx: int, ny: int) -> np.ndarray:
    """(nx * ny, 8) zero-based global node numbers of each element, elements in MATLAB's loop order (j, then i)."""
    j, i = np.meshgrid(np.arange(1, ny + 1), np.arange(1, nx + 1), indexing="ij")
    i, j = i.reshape(-1), j.reshape(-1)  # i varies fastest, as MATLAB's inner loop
    nn = np.empty((i.size, 8), dtype=np.int64)
    nn[:, 0] = 3 * j * nx + 2 * i + 2 * j + 1
    nn[:, 1] = nn[:, 0] - 1
    nn[:, 2] = nn[:, 1] - 1
    nn[:, 3] = (3 * j - 1) * nx + 2 * j + i - 1
    nn[:, 4] = 3 * (j - 1) * nx + 2 * i + 2 * j - 3
    nn[:, 5] = nn[:, 4] + 1
    nn[:, 6] = nn[:, 5] + 1
    nn[:, 7] = nn[:, 3] + 1
    return nn - 1


def wathen(nx: int, ny: int, *, seed: int = 0, rho: np.ndarray | None = None) -> sp.csr_matrix:
    """``gallery('wathen', nx, ny)`` as float64 CSR, densities ``rho`` (nx, ny) or uniform [0, 100) from ``seed``.

    Raises ValueError for nx, ny < 1, too many elements, or a ``rho`` of the wrong shape or not positive.
    Example: ``wathen(2, 3).shape == (35, 35)``.
    """
    for name, v in (("nx", nx), ("ny", ny)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r} is out of range: valid range is >= 1 (elements per grid side)")
    if nx * ny > MAX_ELEMENTS:
        raise ValueError(f"nx*ny={nx * ny:_} is too large: valid range is 1..{MAX_ELEMENTS:_} elements")
    # measured peak (tracemalloc): 2.9 KB per element at 100 x 100; 4 KB with a margin
    require(4096 * nx * ny, what=f"wathen-{nx}-{ny}", hint="valid sizes fit in memory: choose smaller nx, ny")
    if rho is None:
        rho = np.random.default_rng(seed).uniform(0.0, 100.0, size=(nx, ny))
    rho = np.asarray(rho, dtype=np.float64)
    if rho.shape != (nx, ny) or not np.all(rho > 0):
        raise ValueError(f"rho has shape {rho.shape}: expected ({nx}, {ny}) positive densities")
    nn = element_nodes(nx, ny)  # (elements, 8)
    dens = rho.T.reshape(-1)  # RHO(i, j) for elements in (j, then i) order
    rows = np.repeat(nn, 8, axis=1).reshape(-1)  # nn[k, a] repeated over b
    cols = np.tile(nn, (1, 8)).reshape(-1)  # nn[k, b]
    vals = (dens[:, None, None] * ELEMENT_MATRIX[None, :, :]).reshape(-1)
    n = wathen_order(nx, ny)
    A = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    return A


def parse_wathen_name(name: str) -> tuple[int, int] | None:
    """``"wathen-NX-NY"`` -> (NX, NY); None for other names."""
    m = _NAME.match(name.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None
