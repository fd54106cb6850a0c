"""The circuit-depth recurrence of QuEst's encoding as one compiled loop over a batch (numba, cached on disk)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["depths"]


@numba.njit(cache=True, nogil=True)
def depths(a: np.ndarray, b: np.ndarray, gate_ptr: np.ndarray, wires: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Depth of every circuit c over its gates ``gate_ptr[c]:gate_ptr[c+1]`` (qubit a, qubit b or -1; ``wires[c]``
    qubits): a one-qubit gate raises its wire's level by one, a two-qubit gate sets both wires to the larger
    level plus one; the depth is the highest level (0 for no gates)."""
    out = np.zeros(len(gate_ptr) - 1, dtype=np.int64)
    level = np.zeros(max(int(wires.max()), 1), dtype=np.int64)
    for c in range(len(gate_ptr) - 1):
        level[: wires[c]] = 0
        deepest = 0
        for g in range(gate_ptr[c], gate_ptr[c + 1]):
            qa, qb = a[g], b[g]
            if qb >= 0:
                top = max(level[qa], level[qb]) + 1
                level[qa] = top
                level[qb] = top
            else:
                top = level[qa] + 1
                level[qa] = top
            if top > deepest:
                deepest = top
        out[c] = deepest
    return out
