"""Seeded random circuits shared by the quantum tests (not a test module)."""

from __future__ import annotations

import numpy as np
from qiskit import QuantumCircuit
from qiskit.circuit import ParameterVector
from qiskit.circuit.library import get_standard_gate_name_mapping

from workbench.quantum.gates import GATES

#: gates qiskit-aer's density-matrix method runs natively (others it rejects), among ours
AER_DM_GATES = (
    "ccx",
    "cp",
    "cu1",
    "cx",
    "cy",
    "cz",
    "ecr",
    "h",
    "id",
    "p",
    "r",
    "rx",
    "rxx",
    "ry",
    "ryy",
    "rz",
    "rzx",
    "rzz",
    "s",
    "sdg",
    "swap",
    "sx",
    "sxdg",
    "t",
    "tdg",
    "u",
    "u1",
    "u2",
    "u3",
    "x",
    "y",
    "z",
)
DEVICE_BASIS = ("rz", "sx", "x", "cx")


def random_circuit(
    num_qubits: int, num_gates: int, seed: int, *, names=None, global_phase: float = 0.0
) -> QuantumCircuit:
    """``num_gates`` gates drawn uniformly from ``names`` (default: every gate we support that fits), random
    qubits and angles in [-4, 4]."""
    rng = np.random.default_rng(seed)
    mapping = get_standard_gate_name_mapping()
    names = [g for g in (names or sorted(GATES)) if GATES[g].num_qubits <= num_qubits]
    qc = QuantumCircuit(num_qubits, global_phase=global_phase)
    for _ in range(num_gates):
        name = names[int(rng.integers(len(names)))]
        gate = GATES[name]
        qubits = [int(q) for q in rng.choice(num_qubits, gate.num_qubits, replace=False)]
        op = mapping[name] if not gate.num_params else type(mapping[name])(*rng.uniform(-4, 4, gate.num_params))
        qc.append(op, qubits)
    return qc


def parametric_circuit(num_qubits: int, layers: int, seed: int) -> tuple[QuantumCircuit, int]:
    """A hardware-efficient ansatz with every parameterised gate kind, affine expressions (2*t + 0.3, t0 - t1)
    and a parametric global phase; returns (circuit, number of parameters)."""
    rng = np.random.default_rng(seed)
    count = 3 * num_qubits * layers + 2
    t = ParameterVector("t", count)
    qc = QuantumCircuit(num_qubits, global_phase=0.5 * t[0])
    k = 0
    one = ("rx", "ry", "rz", "p")
    two = ("crx", "cry", "crz", "cp", "rzz", "rxx", "ryy", "rzx")
    for _ in range(layers):
        for q in range(num_qubits):
            getattr(qc, one[int(rng.integers(len(one)))])(t[k], q)
            qc.u(t[k + 1], 2 * t[k + 2] + 0.3, -0.7, q)
            k += 3
        for q in range(num_qubits - 1):
            getattr(qc, two[int(rng.integers(len(two)))])(t[k % count] - t[(k + 1) % count], q, q + 1)
    qc.r(t[count - 2], t[count - 1], 0)
    return qc, count


def key_tree(value):
    """The key structure of a JSON value: dicts -> {key: tree} (in order), lists -> [tree of the first item]."""
    if isinstance(value, dict):
        return {k: key_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [key_tree(value[0])] if value else []
    return type(value).__name__
