"""Gate fidelity of a simulated propagator against a target unitary, and qubit-ordering helpers.

Our kets are big-endian (qubit 0 is the most significant factor, ``|q0 q1>``); qiskit's ``Operator`` is
little-endian. :func:`from_qiskit` converts. Fidelities are taken in the computational subspace (levels 0/1
of every transmon) with leakage counted as error: the average gate fidelity of Pedersen et al. (2007),
``F = (|Tr(V^dag U)|^2 + Tr(U^dag U)) / (d (d + 1))`` with ``U`` the projected propagator. (NAPA's tutorial used
``|Tr(U V)|``, which is maximised by the inverse rotation: a test checks that ours is not.)
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import torch

__all__ = ["qubit_indices", "project", "average_gate_fidelity", "leakage", "from_qiskit"]


@functools.lru_cache(maxsize=32)
def _indices(num_qubits: int, levels: int) -> tuple[int, ...]:
    out = []
    for bits in itertools.product((0, 1), repeat=num_qubits):
        out.append(sum(b * levels ** (num_qubits - 1 - k) for k, b in enumerate(bits)))
    return tuple(out)


def qubit_indices(num_qubits: int, levels: int) -> torch.Tensor:
    """Indices of the 2**n computational basis states |b0 b1 ...> in the levels**n space (big-endian)."""
    return torch.tensor(_indices(num_qubits, levels))


def project(u: torch.Tensor, num_qubits: int, levels: int) -> torch.Tensor:
    """The (2**n, 2**n) block of ``u`` on the computational subspace."""
    idx = qubit_indices(num_qubits, levels)
    return u[..., idx[:, None], idx[None, :]]


def average_gate_fidelity(u: torch.Tensor, target: torch.Tensor, num_qubits: int, levels: int) -> torch.Tensor:
    """Average gate fidelity of full-space propagator ``u`` against the qubit unitary ``target`` (leakage = error)."""
    p = project(u, num_qubits, levels)
    d = 2**num_qubits
    target = torch.as_tensor(target, dtype=torch.complex128)
    overlap = torch.einsum("...ij,...ij->...", target.conj(), p)  # Tr(V^dag U)
    norm = torch.einsum("...ij,...ij->...", p.conj(), p).real  # Tr(U^dag U)
    return (overlap.abs() ** 2 + norm) / (d * (d + 1))


def leakage(u: torch.Tensor, num_qubits: int, levels: int) -> torch.Tensor:
    """Average population leaving the computational subspace: ``1 - Tr(P U^dag U P) / d``."""
    p = project(u, num_qubits, levels)
    return 1 - torch.einsum("...ij,...ij->...", p.conj(), p).real / 2**num_qubits


def from_qiskit(matrix: np.ndarray | object, num_qubits: int) -> torch.Tensor:
    """A little-endian (qiskit) operator as a big-endian complex128 tensor."""
    m = np.asarray(getattr(matrix, "data", matrix), dtype=complex)
    n = num_qubits
    t = m.reshape((2,) * (2 * n))
    perm = [*range(n - 1, -1, -1), *range(2 * n - 1, n - 1, -1)]
    return torch.from_numpy(np.ascontiguousarray(t.transpose(perm).reshape(2**n, 2**n)))
