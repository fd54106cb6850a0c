"""Matrices of qiskit's standard gates, as torch tensors, in qiskit's qubit order.

**Ordering.** Qiskit is little-endian: a basis state of qubits ``(q_0, ..., q_{n-1})`` has index
``sum_j b_j 2**j``, and a k-qubit gate applied to ``qargs = (a_0, ..., a_{k-1})`` has a ``2**k x 2**k``
matrix whose row/column index is ``sum_j b(a_j) 2**j``: the *first* qarg is the least significant bit. So
``cx`` on ``(control, target)`` is ``I (x) |0><0| + X (x) |1><1|`` (control on the right of the Kronecker
product), not the textbook ``|0><0| (x) I + |1><1| (x) X``. Every matrix here follows qiskit's convention
and is tested against ``qiskit.quantum_info.Operator(gate)`` (tests/quantum/test_quantum_gates.py).
torchquantum, by contrast, is big-endian (``qargs[0]`` most significant).

**Angles.** A parameterised gate takes its angles (radians) as real tensors of any common shape ``[...]``
and returns ``[..., 2**k, 2**k]``; fixed gates return ``[2**k, 2**k]``. Everything is differentiable.

Example::

    >>> import torch
    >>> gate_matrix("rx", [torch.tensor([0.0, 3.14159265])], dtype=torch.complex128).shape
    torch.Size([2, 2, 2])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import torch
from torch import Tensor

__all__ = ["GateDef", "GATES", "VIRTUAL_GATES", "gate_matrix", "controlled", "supported_gates"]

_S2 = 1 / math.sqrt(2)


@dataclass(frozen=True)
class GateDef:
    """A standard gate: name, qubit count k, angle count, and ``matrix(angles, dtype) -> [..., 2**k, 2**k]``."""

    name: str
    num_qubits: int
    num_params: int
    matrix: Callable[[Sequence[Tensor], torch.dtype], Tensor]


def _fixed(rows: list[list[complex]]) -> Callable[[Sequence[Tensor], torch.dtype], Tensor]:
    def make(_angles: Sequence[Tensor], dtype: torch.dtype) -> Tensor:
        return torch.tensor(rows, dtype=dtype)

    return make


def _stack(entries: list[list[Tensor | complex]], dtype: torch.dtype) -> Tensor:
    """Build ``[..., r, c]`` from a nested list of broadcastable tensors or numbers."""
    tensors = [e for row in entries for e in row if isinstance(e, Tensor)]
    shape = max((t.shape for t in tensors), key=len, default=())  # angles share one shape (or are 0-d)
    device = tensors[0].device if tensors else None
    flat = [
        (e.to(dtype) if isinstance(e, Tensor) else torch.tensor(e, dtype=dtype, device=device)).expand(shape)
        for row in entries
        for e in row
    ]
    return torch.stack(flat, dim=-1).reshape(*shape, len(entries), len(entries[0]))


def _phase(angle: Tensor, dtype: torch.dtype) -> Tensor:
    """exp(i angle) as a complex tensor."""
    return torch.polar(torch.ones_like(angle), angle).to(dtype)


def _cs(theta: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    return torch.cos(theta / 2).to(dtype), torch.sin(theta / 2).to(dtype)


def u3_matrix(theta: Tensor, phi: Tensor, lam: Tensor, dtype: torch.dtype) -> Tensor:
    """U3(theta, phi, lambda) = [[c, -e^{i lam} s], [e^{i phi} s, e^{i(phi+lam)} c]], c = cos(theta/2)."""
    c, s = _cs(theta, dtype)
    return _stack([[c, -_phase(lam, dtype) * s], [_phase(phi, dtype) * s, _phase(phi + lam, dtype) * c]], dtype)


def _rx(a, dtype):
    c, s = _cs(a[0], dtype)
    return _stack([[c, -1j * s], [-1j * s, c]], dtype)


def _ry(a, dtype):
    c, s = _cs(a[0], dtype)
    return _stack([[c, -s], [s, c]], dtype)


def _rz(a, dtype):
    return _stack([[_phase(-a[0] / 2, dtype), 0], [0, _phase(a[0] / 2, dtype)]], dtype)


def _p(a, dtype):
    return _stack([[1, 0], [0, _phase(a[0], dtype)]], dtype)


def _r(a, dtype):
    c, s = _cs(a[0], dtype)
    return _stack([[c, -1j * _phase(-a[1], dtype) * s], [-1j * _phase(a[1], dtype) * s, c]], dtype)


def _u2(a, dtype):
    phi, lam = a
    return _S2 * _stack([[1, -_phase(lam, dtype)], [_phase(phi, dtype), _phase(phi + lam, dtype)]], dtype)


def controlled(u: Tensor) -> Tensor:
    """Controlled-U with the control as qarg 0 (least significant bit): ``[..., 2, 2] -> [..., 4, 4]``."""
    out = torch.zeros(*u.shape[:-2], 4, 4, dtype=u.dtype, device=u.device)
    out[..., 0, 0] = 1
    out[..., 2, 2] = 1
    out[..., 1::2, 1::2] = u  # rows/cols 1 and 3: control bit set
    return out


def _ctrl(single: Callable) -> Callable:
    return lambda a, dtype: controlled(single(a, dtype))


def _cu(a, dtype):
    theta, phi, lam, gamma = a
    return controlled(_phase(gamma, dtype)[..., None, None] * u3_matrix(theta, phi, lam, dtype))


def _pauli_pair(theta: Tensor, pp: Tensor, dtype: torch.dtype) -> Tensor:
    """exp(-i theta/2 P) for a 4x4 Pauli product P with P^2 = I: cos(theta/2) I - i sin(theta/2) P."""
    c, s = _cs(theta, dtype)
    eye = torch.eye(4, dtype=dtype, device=theta.device)
    return c[..., None, None] * eye - 1j * s[..., None, None] * pp.to(dtype=dtype, device=theta.device)


_X = torch.tensor([[0, 1], [1, 0]], dtype=torch.complex128)
_Y = torch.tensor([[0, -1j], [1j, 0]], dtype=torch.complex128)
_Z = torch.tensor([[1, 0], [0, -1]], dtype=torch.complex128)


def _xx_plus_yy(a, dtype):
    theta, beta = a
    c, s = _cs(theta, dtype)
    return _stack(
        [
            [1, 0, 0, 0],
            [0, c, -1j * s * _phase(-beta, dtype), 0],
            [0, -1j * s * _phase(beta, dtype), c, 0],
            [0, 0, 0, 1],
        ],
        dtype,
    )


def _xx_minus_yy(a, dtype):
    theta, beta = a
    c, s = _cs(theta, dtype)
    return _stack(
        [
            [c, 0, 0, -1j * s * _phase(-beta, dtype)],
            [0, 1, 0, 0],
            [0, 0, 1, 0],
            [-1j * s * _phase(beta, dtype), 0, 0, c],
        ],
        dtype,
    )


def _perm(n_qubits: int, mapping: dict[int, int]) -> list[list[complex]]:
    """Permutation matrix sending basis index i to mapping.get(i, i)."""
    d = 2**n_qubits
    rows = [[0j] * d for _ in range(d)]
    for i in range(d):
        rows[mapping.get(i, i)][i] = 1
    return rows


def _diag(values: list[complex]) -> list[list[complex]]:
    return [[values[i] if i == j else 0 for j in range(len(values))] for i in range(len(values))]


_T = complex(_S2, _S2)
_SX = [[0.5 + 0.5j, 0.5 - 0.5j], [0.5 - 0.5j, 0.5 + 0.5j]]
_SXDG = [[0.5 - 0.5j, 0.5 + 0.5j], [0.5 + 0.5j, 0.5 - 0.5j]]
_H = [[_S2, _S2], [_S2, -_S2]]


def _c(rows: list[list[complex]]) -> list[list[complex]]:
    """Fixed controlled gate (control = qarg 0)."""
    return controlled(torch.tensor(rows, dtype=torch.complex128)).tolist()


_DEFS = [
    GateDef("id", 1, 0, _fixed([[1, 0], [0, 1]])),
    GateDef("x", 1, 0, _fixed([[0, 1], [1, 0]])),
    GateDef("y", 1, 0, _fixed([[0, -1j], [1j, 0]])),
    GateDef("z", 1, 0, _fixed([[1, 0], [0, -1]])),
    GateDef("h", 1, 0, _fixed(_H)),
    GateDef("s", 1, 0, _fixed([[1, 0], [0, 1j]])),
    GateDef("sdg", 1, 0, _fixed([[1, 0], [0, -1j]])),
    GateDef("t", 1, 0, _fixed([[1, 0], [0, _T]])),
    GateDef("tdg", 1, 0, _fixed([[1, 0], [0, _T.conjugate()]])),
    GateDef("sx", 1, 0, _fixed(_SX)),
    GateDef("sxdg", 1, 0, _fixed(_SXDG)),
    GateDef("rx", 1, 1, _rx),
    GateDef("ry", 1, 1, _ry),
    GateDef("rz", 1, 1, _rz),
    GateDef("p", 1, 1, _p),
    GateDef("u1", 1, 1, _p),
    GateDef("r", 1, 2, _r),
    GateDef("u2", 1, 2, _u2),
    GateDef("u", 1, 3, lambda a, dtype: u3_matrix(a[0], a[1], a[2], dtype)),
    GateDef("u3", 1, 3, lambda a, dtype: u3_matrix(a[0], a[1], a[2], dtype)),
    GateDef("cx", 2, 0, _fixed(_c([[0, 1], [1, 0]]))),
    GateDef("cy", 2, 0, _fixed(_c([[0, -1j], [1j, 0]]))),
    GateDef("cz", 2, 0, _fixed(_diag([1, 1, 1, -1]))),
    GateDef("ch", 2, 0, _fixed(_c(_H))),
    GateDef("cs", 2, 0, _fixed(_diag([1, 1, 1, 1j]))),
    GateDef("csdg", 2, 0, _fixed(_diag([1, 1, 1, -1j]))),
    GateDef("csx", 2, 0, _fixed(_c(_SX))),
    GateDef("swap", 2, 0, _fixed(_perm(2, {1: 2, 2: 1}))),
    GateDef("iswap", 2, 0, _fixed([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]])),
    GateDef("dcx", 2, 0, _fixed(_perm(2, {1: 2, 2: 3, 3: 1}))),
    GateDef(
        "ecr",
        2,
        0,
        _fixed([[0, _S2, 0, 1j * _S2], [_S2, 0, -1j * _S2, 0], [0, 1j * _S2, 0, _S2], [-1j * _S2, 0, _S2, 0]]),
    ),
    GateDef("cp", 2, 1, _ctrl(_p)),
    GateDef("cu1", 2, 1, _ctrl(_p)),
    GateDef("crx", 2, 1, _ctrl(_rx)),
    GateDef("cry", 2, 1, _ctrl(_ry)),
    GateDef("crz", 2, 1, _ctrl(_rz)),
    GateDef("cu3", 2, 3, lambda a, dtype: controlled(u3_matrix(a[0], a[1], a[2], dtype))),
    GateDef("cu", 2, 4, _cu),
    GateDef("rxx", 2, 1, lambda a, dtype: _pauli_pair(a[0], torch.kron(_X, _X), dtype)),
    GateDef("ryy", 2, 1, lambda a, dtype: _pauli_pair(a[0], torch.kron(_Y, _Y), dtype)),
    GateDef("rzz", 2, 1, lambda a, dtype: _pauli_pair(a[0], torch.kron(_Z, _Z), dtype)),
    GateDef("rzx", 2, 1, lambda a, dtype: _pauli_pair(a[0], torch.kron(_X, _Z), dtype)),  # Z on qarg 0
    GateDef("xx_plus_yy", 2, 2, _xx_plus_yy),
    GateDef("xx_minus_yy", 2, 2, _xx_minus_yy),
    GateDef("ccx", 3, 0, _fixed(_perm(3, {3: 7, 7: 3}))),
    GateDef("ccz", 3, 0, _fixed(_diag([1] * 7 + [-1]))),
    GateDef("cswap", 3, 0, _fixed(_perm(3, {3: 5, 5: 3}))),
]

#: name -> :class:`GateDef` of every gate the simulator takes (``unitary``, ``reset``, ``barrier``, ``delay``,
#: ``global_phase`` and final ``measure`` are handled by :mod:`workbench.quantum.circuit`)
GATES = MappingProxyType({g.name: g for g in _DEFS})

#: diagonal phase gates that IBM devices implement in software ("virtual Z"): no duration, no error
VIRTUAL_GATES = frozenset({"rz", "p", "u1", "z", "s", "sdg", "t", "tdg"})


def supported_gates() -> tuple[str, ...]:
    """Names of the standard gates :func:`gate_matrix` builds, sorted."""
    return tuple(sorted(GATES))


def gate_matrix(
    name: str,
    angles: Sequence[Tensor | float] = (),
    *,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
) -> Tensor:
    """Matrix of standard gate ``name`` in qiskit order.

    angles: the gate's angles in radians, each a real tensor (any common shape ``[...]``) or a float.
    Returns ``[..., 2**k, 2**k]`` (``[2**k, 2**k]`` for a fixed gate) of complex ``dtype``.
    Raises ValueError for an unknown name or a wrong number of angles.
    """
    gate = GATES.get(name)
    if gate is None:
        raise ValueError(f"gate {name!r} is not supported: supported gates are {', '.join(supported_gates())}")
    if len(angles) != gate.num_params:
        raise ValueError(f"gate {name!r} takes {gate.num_params} angle(s), got {len(angles)}")
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    tensors = [a if isinstance(a, Tensor) else torch.tensor(float(a), dtype=real, device=device) for a in angles]
    out = gate.matrix(tensors, dtype)
    return out.to(device) if device is not None else out
