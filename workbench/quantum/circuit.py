"""A qiskit ``QuantumCircuit`` as a flat list of operations, and the tensors they become.

:func:`from_qiskit` reads a circuit once into a :class:`Program`: its operations in order (standard gates,
``unitary`` gates with their matrix, ``reset``), each gate angle an affine function of the circuit's free
parameters (:class:`Angle`), and the global phase. :func:`bind` turns a program plus parameter values
(``[P]`` or a batch ``[B, P]``, torch tensors, differentiable) into :class:`Step` s: ``(qubits, matrix)``
pairs that the simulators apply. Steps are also the extension point for later techniques: a pulse segment
or a custom channel is a ``Step`` whose matrix (or Kraus operators) the caller provides.

Parameters follow ``circuit.parameters`` order (qiskit sorts them by name, vectors by index). Barriers,
delays and final measurements are dropped (delays: no duration-dependent noise is modelled); a measurement
followed by a gate on the same qubit, classical control and unknown gates raise ValueError.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.gates import GATES, gate_matrix, supported_gates

__all__ = ["Angle", "Op", "Program", "Step", "from_qiskit", "resolve_params", "bind", "real_dtype"]

#: instructions that are skipped (no effect on the state)
SKIPPED = frozenset({"barrier", "delay"})
CONTROL_FLOW = frozenset({"if_else", "while_loop", "for_loop", "switch_case", "box"})


class Angle(NamedTuple):
    """``const + sum(coeff * theta[index] for index, coeff in terms)`` (radians). Immutable (a named tuple:
    circuits of thousands of gates are read in microseconds per gate)."""

    const: float
    terms: tuple[tuple[int, float], ...] = ()

    def value(self, theta: Tensor | None) -> Tensor | float:
        """The angle for parameter values ``theta`` ``[B, P]``: a ``[B]`` tensor, or a float when constant."""
        if not self.terms:
            return self.const
        out = theta[:, self.terms[0][0]] * self.terms[0][1] + self.const
        for index, coeff in self.terms[1:]:
            out = out + coeff * theta[:, index]
        return out


class Op(NamedTuple):
    """One operation: ``name`` (a standard gate, ``unitary`` or ``reset``) on ``qubits`` (qarg order);
    ``parametric`` is True when an angle depends on a free parameter."""

    name: str
    qubits: tuple[int, ...]
    angles: tuple[Angle, ...] = ()
    matrix: np.ndarray | None = None  # ``unitary`` gates: their matrix (qiskit order)
    parametric: bool = False


@dataclass(frozen=True, eq=False)
class Program:
    """A circuit read by :func:`from_qiskit`: ``num_qubits``, ``ops`` in order, the free ``parameters``
    (qiskit ``Parameter`` objects, in ``circuit.parameters`` order) and the ``global_phase``."""

    num_qubits: int
    ops: tuple[Op, ...]
    parameters: tuple[Any, ...]
    global_phase: Angle
    name: str = ""

    @property
    def num_parameters(self) -> int:
        return len(self.parameters)


@dataclass(frozen=True, eq=False)
class Step:
    """What a simulator applies: ``matrix`` ``[B or 1, d, d]`` on ``qubits`` (qiskit order, d = 2**len(qubits)).

    ``kraus=True``: ``matrix`` is ``[K, B or 1, d, d]``, the Kraus operators of a channel (density matrix only).
    ``name`` is the instruction name, which selects the noise attached after it (empty: no noise).
    """

    qubits: tuple[int, ...]
    matrix: Tensor
    kraus: bool = False
    name: str = ""
    fixed: bool = True  # True when the matrix does not depend on parameters (cacheable)


def real_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 for complex128, float32 for complex64; ValueError for anything else."""
    if dtype == torch.complex128:
        return torch.float64
    if dtype == torch.complex64:
        return torch.float32
    raise ValueError(f"dtype={dtype} is not supported: valid values are torch.complex64, torch.complex128")


def _angle(value: Any, index: Mapping[Any, int], position: int | str, name: str = "") -> Angle:
    """An :class:`Angle` from a float or an affine qiskit ``ParameterExpression`` (of instruction ``position``)."""
    where = f"instruction {position} ({name})" if name else str(position)
    if isinstance(value, numbers.Real):
        return Angle(float(value))
    params = getattr(value, "parameters", None)
    if params is None:
        raise ValueError(f"{where}: angle {value!r} is not a number or a parameter expression")
    if not params:
        return Angle(float(value))
    terms = []
    for p in sorted(params, key=lambda p: index[p]):
        grad = value.gradient(p)
        if getattr(grad, "parameters", None):
            raise ValueError(
                f"{where}: angle {value} is not affine in its parameters: only expressions like "
                "a*theta + b*phi + c are supported"
            )
        terms.append((index[p], float(complex(grad).real)))
    const = value.bind({p: 0.0 for p in params})
    return Angle(float(complex(const).real), tuple(terms))


def from_qiskit(circuit: Any) -> Program:
    """Read a qiskit ``QuantumCircuit`` into a :class:`Program` (see the module docstring).

    Raises ValueError for unsupported instructions (the message lists the supported gates and suggests
    ``qiskit.transpile``), classical control, or a gate after a measurement on the same qubit.
    """
    from qiskit import QuantumCircuit

    if not isinstance(circuit, QuantumCircuit):
        raise TypeError(f"circuit must be a qiskit QuantumCircuit, got {type(circuit).__name__}")
    parameters = tuple(circuit.parameters)
    index = {p: i for i, p in enumerate(parameters)}
    bit = {q: i for i, q in enumerate(circuit.qubits)}
    ops: list[Op] = []
    measured: set[int] = set()
    for position, inst in enumerate(circuit.data):
        name = inst.name
        if name in SKIPPED:
            continue
        qubits = tuple(bit[q] for q in inst.qubits)
        if name == "measure":
            measured.update(qubits)
            continue
        where = f"instruction {position} ({name} on qubits {list(qubits)})" if name not in GATES else ""
        if name in CONTROL_FLOW:
            raise ValueError(f"{where}: classically controlled operations are not supported")
        if measured and measured.intersection(qubits):
            where = f"instruction {position} ({name} on qubits {list(qubits)})"
            raise ValueError(
                f"{where}: acts on a qubit that was already measured; only final measurements "
                "are supported (they are dropped: results are probabilities of all qubits)"
            )
        gate = GATES.get(name)
        if gate is not None and len(qubits) == gate.num_qubits:
            angles = tuple(
                Angle(float(p)) if isinstance(p, float) else _angle(p, index, position, name) for p in inst.params
            )
            ops.append(Op(name, qubits, angles, None, any(a.terms for a in angles)))
        elif name == "reset":
            ops.append(Op("reset", qubits))
        elif name == "unitary":
            matrix = np.asarray(inst.operation.to_matrix(), dtype=np.complex128)
            ops.append(Op("unitary", qubits, matrix=matrix))
        elif name == "global_phase":
            angle = _angle(inst.params[0], index, position, name)
            ops.append(Op("global_phase", (), (angle,), None, bool(angle.terms)))
        else:
            raise ValueError(
                f"{where}: gate {name!r} is not supported: supported gates are {', '.join(supported_gates())}, "
                "unitary, reset, barrier, delay and final measure; decompose it first, e.g. "
                "qiskit.transpile(circuit, basis_gates=['rz', 'sx', 'x', 'cx'])"
            )
    phase = _angle(circuit.global_phase, index, "global phase")
    return Program(circuit.num_qubits, tuple(ops), parameters, phase, circuit.name)


def resolve_params(
    program: Program, params: Any, *, dtype: torch.dtype, device: torch.device | str | None = None
) -> tuple[Tensor | None, bool]:
    """Parameter values as ``[B, P]`` (real dtype) and whether the caller passed a batch.

    params: None (circuit bound), a sequence or tensor ``[P]`` or ``[B, P]`` in ``program.parameters`` order,
    or a mapping ``{Parameter or name: value or [B] tensor}`` naming every parameter.
    """
    real = real_dtype(dtype)
    count = program.num_parameters
    if params is None:
        if count:
            names = ", ".join(p.name for p in program.parameters)
            raise ValueError(
                f"params=None but the circuit has {count} free parameter(s) ({names}): pass params as a "
                f"[{count}] or [B, {count}] tensor or a dict"
            )
        return None, False
    if isinstance(params, Mapping):
        by_name: dict[Any, Any] = {getattr(k, "name", k): v for k, v in params.items()}
        missing = [p.name for p in program.parameters if p.name not in by_name]
        extra = sorted(set(by_name) - {p.name for p in program.parameters})
        if missing or extra:
            raise ValueError(f"params dict does not match the circuit's parameters: missing {missing}, unknown {extra}")
        cols = [torch.as_tensor(by_name[p.name], dtype=real, device=device) for p in program.parameters]
        batched = any(c.dim() == 1 for c in cols)
        shape = max((c.shape for c in cols), key=len) if cols else ()
        theta = torch.stack([c.expand(shape) for c in cols], dim=-1)
    else:
        theta = torch.as_tensor(params, device=device)
        theta = theta.to(real) if theta.dtype != real else theta
        batched = theta.dim() == 2
    if theta.dim() not in (1, 2) or theta.shape[-1] != count:
        raise ValueError(
            f"params has shape {list(theta.shape)}: expected [{count}] or [B, {count}] "
            f"(the circuit's {count} parameter(s) in circuit.parameters order)"
        )
    return (theta if batched else theta[None]), batched


def bind(
    program: Program,
    theta: Tensor | None,
    *,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
) -> tuple[list[Step], Tensor | float]:
    """The program's steps for parameter values ``theta`` ``[B, P]`` (None when bound), and its global phase.

    Matrices of fixed gates are ``[1, d, d]`` (shared by the batch), of parametric gates ``[B, d, d]``;
    ``reset`` becomes a two-operator Kraus step. The phase is a float or a ``[B]`` tensor (radians).
    """
    real_dtype(dtype)
    fixed: dict[tuple, Tensor] = {}
    steps: list[Step] = []
    phase: Tensor | float = program.global_phase.value(theta)
    for op in program.ops:
        if op.name == "global_phase":
            phase = phase + op.angles[0].value(theta)
            continue
        if op.name == "reset":
            key: tuple = ("reset",)
            if key not in fixed:
                k0 = torch.tensor([[1, 0], [0, 0]], dtype=dtype, device=device)
                k1 = torch.tensor([[0, 1], [0, 0]], dtype=dtype, device=device)
                fixed[key] = torch.stack([k0, k1])[:, None]
            steps.append(Step(op.qubits, fixed[key], kraus=True, name="reset"))
            continue
        if op.name == "unitary":
            steps.append(Step(op.qubits, torch.as_tensor(op.matrix, device=device).to(dtype)[None], name="unitary"))
            continue
        if op.parametric:
            values = [a.value(theta) for a in op.angles]
            matrix = gate_matrix(op.name, values, dtype=dtype, device=device)
            matrix = matrix if matrix.dim() == 3 else matrix[None]
            steps.append(Step(op.qubits, matrix, name=op.name, fixed=False))
            continue
        key = (op.name, tuple(a.const for a in op.angles))
        if key not in fixed:
            fixed[key] = gate_matrix(op.name, [a.const for a in op.angles], dtype=dtype, device=device)[None]
        steps.append(Step(op.qubits, fixed[key], name=op.name))
    return steps, phase
