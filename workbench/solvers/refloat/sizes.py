"""Size of a refloat run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

The matrix (Wathen: order and nonzeros from nx, ny; a SuiteSparse file: its size), its CSR copies in float64 and in
the block format, the Krylov vectors, and ``max_iter`` iterations of two products per iteration.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.solvers.refloat.config import RefloatConfig

__all__ = ["estimate", "shape"]


#: measured: the run's fixed overhead at the smoke settings (scipy.sparse, the matrix registry)
BASE_BYTES = 3 * MB
#: bytes per nonzero kept (float64 CSR, the quantised copy, the reference's copy) and seconds per nonzero product
NNZ_BYTES, NNZ_S = 60, 2e-8
#: nonzeros per row of a Wathen matrix (8-node serendipity elements)
WATHEN_ROW = 17


def shape(matrix: str) -> tuple[float, float]:
    """(order, nonzeros) of a matrix reference, estimated before it is read."""
    found = re.fullmatch(r"wathen-(\d+)-(\d+)", matrix.strip())
    if found:
        nx, ny = (float(g) for g in found.groups())
        order = 3 * nx * ny + 2 * nx + 2 * ny + 1
        return order, WATHEN_ROW * order
    try:
        size = Path(matrix).expanduser().stat().st_size if "/" in matrix or matrix.endswith(".mtx") else 0
    except (OSError, ValueError):
        size = 0
    nnz = max(size / 30, 2e5)  # a MatrixMarket line "i j value"; registry matrices: up to a few hundred thousand
    return nnz / 20, nnz


def estimate(config: RefloatConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run refloat`` with ``config``."""
    order, nnz = shape(config.matrix)
    vectors = 12 * order * 8
    blocks = nnz / max(config.bsize, 1) * 64
    return Estimate(BASE_BYTES + nnz * NNZ_BYTES + vectors + blocks, 1.0 + config.max_iter * 2 * nnz * NNZ_S * 3)
