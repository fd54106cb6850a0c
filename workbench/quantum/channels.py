"""Quantum channels as superoperators (numpy complex128 for noise tables, torch for differentiable gates).

Convention: ``vec(rho)`` is row-major, so a channel with Kraus operators ``K_i`` has the superoperator
``S = sum_i K_i (x) conj(K_i)`` and ``vec(K rho K^dag) = (K (x) conj K) vec(rho)``. For a k-qubit channel on
qubits ``(a_0, ..., a_{k-1})`` (qiskit order), the ``4**k`` superoperator index has the column bits of
``a_0..a_{k-1}`` as its low bits and the row bits above them; :func:`virtual_targets` gives the matching
virtual qubits of an n-qubit density matrix.

Formulas (written out here, checked against qiskit-aer's own constructions in tests/quantum):

- depolarizing ``rho -> (1-p) rho + p Tr(rho) I/d`` (aer's ``depolarizing_error(p, k)``; ``p <= 4**k/(4**k-1)``);
- thermal relaxation over time t with T1, T2 (``T2 <= 2 T1``), ground-state relaxation (zero temperature):
  ``rho_11 -> e^{-t/T1} rho_11``, ``rho_00 -> rho_00 + (1 - e^{-t/T1}) rho_11``, coherences ``x e^{-t/T2}``;
- average gate fidelity ``F = (d F_pro + 1)/(d + 1)`` with process fidelity ``F_pro = Tr(S)/d**2``;
- readout confusion ``A = [[1-p01, p10], [p01, 1-p10]]`` with ``p01 = P(read 1 | prepared 0)``:
  measured probabilities are ``A`` applied on each qubit's axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.linalg
from torch import Tensor

__all__ = [
    "unitary_superop",
    "kraus_superop",
    "depolarizing_superop",
    "thermal_relaxation_superop",
    "tensor_superops",
    "average_gate_fidelity",
    "readout_matrix",
    "unitary_power",
    "virtual_targets",
    "superop_to_kraus",
]


def virtual_targets(qubits: Sequence[int], num_qubits: int) -> tuple[int, ...]:
    """Virtual qubits of an n-qubit density matrix that a channel on ``qubits`` acts on (columns, then rows)."""
    return tuple(qubits) + tuple(num_qubits + q for q in qubits)


def unitary_superop(u: Tensor) -> Tensor:
    """``U (x) conj(U)``: ``[..., d, d] -> [..., d*d, d*d]`` (torch, differentiable)."""
    d = u.shape[-1]
    out = u[..., :, None, :, None] * u.conj()[..., None, :, None, :]  # [..., i, j, k, l] = U_ik conj(U_jl)
    return out.reshape(*u.shape[:-2], d * d, d * d)


def kraus_superop(kraus: Tensor) -> Tensor:
    """``sum_i K_i (x) conj(K_i)`` for Kraus operators ``[K, ..., d, d]`` (torch)."""
    return unitary_superop(kraus).sum(0)


def depolarizing_superop(p: float, num_qubits: int) -> np.ndarray:
    """Superoperator of ``rho -> (1-p) rho + p Tr(rho) I/d`` on ``num_qubits`` qubits."""
    d = 2**num_qubits
    eye = np.eye(d).reshape(-1)
    return (1 - p) * np.eye(d * d, dtype=np.complex128) + (p / d) * np.outer(eye, eye).astype(np.complex128)


def thermal_relaxation_superop(t1: float, t2: float, time: float) -> np.ndarray:
    """Single-qubit thermal relaxation at zero temperature (see module docstring); ``4 x 4``.

    t1, t2, time in the same unit (seconds); ``math.inf`` means no decay. Raises ValueError if ``t2 > 2 t1``.
    """
    if t1 <= 0 or t2 <= 0 or time < 0:
        raise ValueError(f"thermal relaxation needs t1 > 0, t2 > 0, time >= 0: got t1={t1}, t2={t2}, time={time}")
    if t2 > 2 * t1 * (1 + 1e-12):
        raise ValueError(f"t2={t2:g} > 2*t1={2 * t1:g} is unphysical: valid range is 0 < t2 <= 2*t1")
    e1 = 0.0 if math.isinf(time) else math.exp(-time / t1)
    e2 = math.exp(-time / t2)
    s = np.zeros((4, 4), dtype=np.complex128)  # index = 2*row + col
    s[0, 0] = 1.0
    s[0, 3] = 1.0 - e1  # rho_11 decays into rho_00
    s[3, 3] = e1
    s[1, 1] = s[2, 2] = e2
    return s


def tensor_superops(singles: Sequence[np.ndarray]) -> np.ndarray:
    """Superoperator of independent single-qubit channels ``singles[j]`` on qubit position j of a k-qubit gate."""
    k = len(singles)
    d = 2**k
    # S[(r, c), (r', c')] = prod_j s_j[(r_j, c_j), (r'_j, c'_j)]: build as a tensor over (r_j, c_j) pairs
    tensors = [s.reshape(2, 2, 2, 2) for s in singles]  # [r, c, r', c']
    # einsum over qubit positions, most significant (last qubit) first in each index
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    r, c, rp, cp = (letters[i * k : (i + 1) * k] for i in range(4))
    terms = [f"{r[j]}{c[j]}{rp[j]}{cp[j]}" for j in range(k)]
    out_idx = r[::-1] + c[::-1] + rp[::-1] + cp[::-1]
    out = np.einsum(",".join(terms) + "->" + out_idx, *tensors)
    return out.reshape(d * d, d * d)


def average_gate_fidelity(superop: np.ndarray) -> float:
    """Average gate fidelity of a channel (given by its superoperator) to the identity."""
    d = int(round(math.sqrt(superop.shape[0])))
    f_pro = float(np.trace(superop).real) / d**2
    return (d * f_pro + 1) / (d + 1)


def readout_matrix(p01: float, p10: float) -> np.ndarray:
    """Confusion matrix ``A[measured, prepared]`` of one qubit (columns sum to 1)."""
    return np.array([[1 - p01, p10], [p01, 1 - p10]], dtype=np.float64)


def unitary_power(u: np.ndarray, exponent: float) -> np.ndarray:
    """``U**exponent`` on the principal branch (eigenphases in (-pi, pi]; -1 goes to e^{i pi exponent}).

    Used for over-rotation: a gate with unitary U over-rotated by a fraction eps is ``U**(1 + eps) =
    U**eps @ U`` (for ``x`` that is ``rx(eps * pi)`` up to phase; for ``sx``, ``rx(eps * pi / 2)``).
    """
    t, z = scipy.linalg.schur(np.asarray(u, dtype=np.complex128), output="complex")  # U = Z T Z^dag, T diagonal
    phases = np.angle(np.diag(t))
    phases = np.where(phases <= -math.pi + 1e-12, math.pi, phases)
    return (z * np.exp(1j * exponent * phases)) @ z.conj().T


def superop_to_kraus(superop: np.ndarray, atol: float = 1e-14) -> list[np.ndarray]:
    """Kraus operators of a CP map from its superoperator (via the Choi matrix), for aer's ``kraus_error``."""
    d = int(round(math.sqrt(superop.shape[0])))
    # Choi[(i, k), (j, l)] = S[(i, j), (k, l)]
    choi = superop.reshape(d, d, d, d).transpose(0, 2, 1, 3).reshape(d * d, d * d)
    w, v = np.linalg.eigh((choi + choi.conj().T) / 2)
    return [math.sqrt(x) * v[:, i].reshape(d, d) for i, x in enumerate(w) if x > atol]
