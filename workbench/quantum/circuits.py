"""Circuits the workbench studies, and putting them on a device.

- Families: :func:`ghz`, :func:`qft`, :func:`random_device_circuit` (QuEst's random circuits over the
  device basis ``rz, sx, x`` and ``cx``/``ecr``/``cz`` with two-qubit gates on coupling-map edges only).
- :func:`transpile_to_device`: qiskit's transpiler onto a fake backend, then :func:`compact` drops idle
  qubits, so a 3-qubit GHZ on a 127-qubit device simulates as 3 qubits; the returned
  :class:`DeviceCircuit` carries the matching calibration subset (:func:`~workbench.quantum.calibration.calibration_subset`).
- :func:`native_inverse`: the inverse of a device-basis circuit *in the device basis* (``sx^dag = rz(pi) sx rz(pi)``
  up to global phase), so a mirror ``U (U^dag U)^(r-1)`` (or QuEst's circuit-plus-inverse) needs no second
  transpilation and cancels exactly on the same physical qubits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.quantum.calibration import DeviceCalibration, calibration_subset
from workbench.quantum.device import Device, require_device

__all__ = [
    "ghz",
    "qft",
    "family_circuit",
    "FAMILIES",
    "random_device_circuit",
    "compact",
    "DeviceCircuit",
    "transpile_to_device",
    "native_inverse",
    "mirror",
]

FAMILIES = ("ghz", "qft")
#: gates whose inverse is themselves (up to global phase) in IBM device bases
_SELF_INVERSE = frozenset({"x", "cx", "cz", "ecr", "id", "y", "z", "h", "swap", "barrier"})


def ghz(width: int) -> Any:
    """GHZ preparation: ``h(0)`` then a ``cx`` chain; the ideal state is ``(|0..0> + |1..1>)/sqrt(2)``."""
    from qiskit import QuantumCircuit

    qc = QuantumCircuit(width, name=f"ghz{width}")
    qc.h(0)
    for q in range(1, width):
        qc.cx(q - 1, q)
    return qc


def qft(width: int) -> Any:
    """The quantum Fourier transform on ``width`` qubits (with final swaps), applied to ``|0..0>`` after an
    ``x`` on every other qubit so the output is not the trivial uniform state."""
    from qiskit import QuantumCircuit
    from qiskit.synthesis import synth_qft_full

    qc = QuantumCircuit(width, name=f"qft{width}")
    for q in range(0, width, 2):
        qc.x(q)
    qc.compose(synth_qft_full(width), inplace=True)
    return qc


def family_circuit(family: str, width: int) -> Any:
    """Logical circuit of ``family`` (one of :data:`FAMILIES`) on ``width`` qubits."""
    if family == "ghz":
        return ghz(width)
    if family == "qft":
        return qft(width)
    raise ValueError(f"family={family!r} is unknown: valid families are {', '.join(FAMILIES)}")


def random_device_circuit(
    num_qubits: int,
    num_gates: int,
    edges: Any,
    rng: np.random.Generator,
    *,
    two_qubit_gate: str = "cx",
    mix: Any = None,
) -> Any:
    """A random device circuit of ``num_gates`` gates: ``rz`` (angle ~ U[0, 2 pi)), ``sx``, ``x`` and
    ``two_qubit_gate`` (``cx``, ``ecr`` or ``cz``) on a random directed edge of ``edges`` (pairs among
    ``0..num_qubits-1``), drawn with probabilities ``mix`` (4 weights; default uniform: QuEst's); without edges no
    two-qubit gate is drawn. The one generator of the workbench (QuEst's dataset is drawn with it)."""
    from qiskit import QuantumCircuit
    from qiskit.circuit.library import CXGate, CZGate, ECRGate

    gate = {"cx": CXGate, "ecr": ECRGate, "cz": CZGate}.get(two_qubit_gate)
    if gate is None:
        raise ValueError(f"two_qubit_gate={two_qubit_gate!r} is unknown: valid gates are cx, ecr, cz")
    edges = [tuple(int(q) for q in e) for e in edges if max(e) < num_qubits]
    weights = np.ones(4) if mix is None else np.asarray(mix, dtype=np.float64).copy()
    if not edges:
        weights[3] = 0.0
    weights = weights / weights.sum()
    kinds = rng.choice(4, size=num_gates, p=weights)
    qc = QuantumCircuit(num_qubits)
    for kind in kinds:
        if kind == 0:
            qc.rz(float(rng.uniform(0, 2 * math.pi)), int(rng.integers(num_qubits)))
        elif kind == 1:
            qc.sx(int(rng.integers(num_qubits)))
        elif kind == 2:
            qc.x(int(rng.integers(num_qubits)))
        else:
            a, b = edges[int(rng.integers(len(edges)))]
            qc.append(gate(), [a, b])
    return qc


def compact(circuit: Any) -> tuple[Any, tuple[int, ...]]:
    """``circuit`` on its active qubits only (renumbered in increasing order) and those qubits' indices.
    Measurements are dropped (results cover all qubits)."""
    from qiskit import QuantumCircuit

    bit = {q: i for i, q in enumerate(circuit.qubits)}
    active = sorted({bit[q] for inst in circuit.data if inst.name not in ("barrier", "measure") for q in inst.qubits})
    if not active:
        active = [0]
    new = {q: i for i, q in enumerate(active)}
    out = QuantumCircuit(len(active), name=circuit.name, global_phase=circuit.global_phase)
    for inst in circuit.data:
        if inst.name == "measure":
            continue
        qubits = [new[bit[q]] for q in inst.qubits if bit[q] in new]
        if inst.name == "barrier":
            if qubits:
                out.barrier(qubits)
            continue
        out.append(inst.operation, qubits)
    return out, tuple(active)


@dataclass(frozen=True, eq=False)
class DeviceCircuit:
    """A circuit placed on a device: ``circuit`` over the active physical qubits ``physical`` (compact, in
    the device basis), and ``calibration``, the device's calibration for exactly those qubits."""

    circuit: Any
    physical: tuple[int, ...]
    calibration: DeviceCalibration


def transpile_to_device(circuit: Any, device: Device, *, seed: int = 0, optimization_level: int = 1) -> DeviceCircuit:
    """Transpile ``circuit`` to ``device`` (a :class:`~workbench.quantum.device.Device`, resolved from its name at
    the caller's config boundary; its basis, coupling map and noise-aware layout) and compact it.

    Raises ValueError when the circuit is wider than the device.
    """
    from qiskit import transpile

    dev = require_device(device, "device")
    cal = dev.calibration
    if circuit.num_qubits > cal.num_qubits:
        raise ValueError(
            f"circuit has {circuit.num_qubits} qubits but device {cal.name} has {cal.num_qubits}: "
            f"valid widths are 1..{cal.num_qubits}"
        )
    tq = transpile(circuit, backend=dev.backend, seed_transpiler=seed, optimization_level=optimization_level)
    small, physical = compact(tq)
    return DeviceCircuit(small, physical, calibration_subset(cal, physical))


def native_inverse(circuit: Any) -> Any:
    """Inverse of a device-basis circuit in the same basis, up to global phase: gates reversed, ``rz(t)``
    and ``p``/``u1`` negated, ``sx`` -> ``rz(pi) sx rz(pi)``, self-inverse gates kept; other gates use qiskit's
    ``inverse()``. Raises ValueError for non-unitary instructions (reset)."""
    from qiskit import QuantumCircuit

    out = QuantumCircuit(*circuit.qregs, name=f"{circuit.name}_inv")
    for inst in reversed(circuit.data):
        name, qubits = inst.name, inst.qubits
        if name in ("measure", "reset"):
            raise ValueError(f"native_inverse: {name} is not invertible; remove it first")
        if name in _SELF_INVERSE:
            out.append(inst.operation, qubits)
        elif name in ("rz", "p", "u1"):
            out.append(type(inst.operation)(-inst.params[0]), qubits)
        elif name == "sx":
            out.rz(math.pi, qubits[0])
            out.sx(qubits[0])
            out.rz(math.pi, qubits[0])
        else:
            out.append(inst.operation.inverse(), qubits)
    return out


def mirror(circuit: Any, depth: int) -> Any:
    """``U (U^dag U)^(depth-1)`` with barriers between the repetitions: the same ideal output as U, with
    ``2 depth - 1`` times its gates (a depth sweep for a fixed circuit)."""
    if depth < 1:
        raise ValueError(f"depth={depth} is out of range: valid range is >= 1")
    inverse = native_inverse(circuit)
    out = circuit.copy()
    for _ in range(depth - 1):
        out.barrier()
        out.compose(inverse, inplace=True)
        out.barrier()
        out.compose(circuit, inplace=True)
    return out
