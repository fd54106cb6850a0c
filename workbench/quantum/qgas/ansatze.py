"""Ansatz structures: the gate-list genome the local, random and evolutionary proposers mutate (rendered as
OpenQASM 3 text, exactly what a language model would send), and the fixed reference ansaetze QGAS is compared
with: a hardware-efficient ansatz (qiskit's ``n_local``: ry layers and linear cx entanglers), UCCSD for the
chemistry problems (singles and doubles from the Hartree-Fock state, Jordan-Wigner, one Trotter step, built
here from the fermionic operators since qiskit-nature is not a dependency) and QAOA for the combinatorial ones.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Gate", "Genome", "render_qasm", "genome_of", "hardware_efficient", "uccsd", "qaoa", "excitation_generators"]

ROTATIONS = ("rx", "ry", "rz")
ENTANGLERS = ("cx", "cz")


@dataclass(frozen=True)
class Gate:
    """One gate of a genome: ``name``, ``qubits``, ``angle`` (None = a fresh trainable parameter; a float =
    a fixed angle; ignored for gates without angles)."""

    name: str
    qubits: tuple[int, ...]
    angle: float | None = None


Genome = tuple[Gate, ...]
_ANGLED = {"rx", "ry", "rz", "p", "crx", "cry", "crz", "cp"}


def render_qasm(genome: Genome, num_qubits: int) -> str:
    """OpenQASM 3 text of ``genome``: one ``input float[64] tK`` per trainable angle, in gate order."""
    lines, body, k = ["OPENQASM 3.0;", 'include "stdgates.inc";'], [], 0
    for g in genome:
        args = ", ".join(f"q[{q}]" for q in g.qubits)
        if g.name in _ANGLED:
            if g.angle is None:
                lines.append(f"input float[64] t{k};")
                body.append(f"{g.name}(t{k}) {args};")
                k += 1
            else:
                body.append(f"{g.name}({g.angle!r}) {args};")
        else:
            body.append(f"{g.name} {args};")
    return "\n".join([*lines, f"qubit[{num_qubits}] q;", *body]) + "\n"


def genome_of(circuit: Any) -> Genome:
    """The genome of a parsed proposal (angles that depend on a parameter become fresh parameters)."""
    bit = {q: i for i, q in enumerate(circuit.qubits)}
    out = []
    for inst in circuit.data:
        if inst.name == "barrier":
            continue
        qubits = tuple(bit[q] for q in inst.qubits)
        angle = None
        if inst.params:
            p = inst.params[0]
            angle = None if getattr(p, "parameters", None) else float(p)
        out.append(Gate(inst.name, qubits, angle))
    return tuple(out)


def hardware_efficient(num_qubits: int, reps: int = 2) -> Any:
    """qiskit ``n_local(n, 'ry', 'cx', 'linear', reps)`` decomposed to ry and cx."""
    from qiskit.circuit.library import n_local

    return n_local(num_qubits, "ry", "cx", "linear", reps=reps).decompose()


def _creation(j: int, n: int) -> np.ndarray:
    """Jordan-Wigner ``a_j^dagger`` on n qubits (qiskit basis index: bit q = qubit q = spin orbital q)."""
    out = np.zeros((2**n, 2**n))
    for s in range(2**n):
        if not s >> j & 1:
            sign = (-1) ** bin(s & ((1 << j) - 1)).count("1")
            out[s | 1 << j, s] = sign
    return out


def _pauli_decompose(matrix: np.ndarray, n: int, tol: float = 1e-12) -> list[tuple[str, complex]]:
    paulis = {
        "I": np.eye(2),
        "X": np.array([[0, 1], [1, 0]]),
        "Y": np.array([[0, -1j], [1j, 0]]),
        "Z": np.diag([1, -1]),
    }
    out = []
    for chars in itertools.product("IXYZ", repeat=n):
        m = np.ones((1, 1))
        for c in chars:
            m = np.kron(m, paulis[c])
        c = np.trace(m.conj().T @ matrix) / 2**n
        if abs(c) > tol:
            out.append(("".join(chars), complex(c)))
    return out


def excitation_generators(num_qubits: int, electrons: int) -> list[tuple[str, list[tuple[str, complex]]]]:
    """Spin-conserving singles and doubles ``T - T^dagger`` from the lowest ``electrons`` spin orbitals
    (interleaved up/down) as Hermitian Pauli sums ``A`` with ``T - T^dagger = i A`` (name, terms)."""
    a = [_creation(j, num_qubits) for j in range(num_qubits)]
    occ, vir = range(electrons), range(electrons, num_qubits)
    out = []
    for i, v in itertools.product(occ, vir):
        if i % 2 == v % 2:
            t = a[v] @ a[i].T
            out.append((f"s{i}->{v}", _pauli_decompose(-1j * (t - t.T), num_qubits)))
    for (i, j), (u, v) in itertools.product(itertools.combinations(occ, 2), itertools.combinations(vir, 2)):
        if (i % 2 + j % 2) == (u % 2 + v % 2):
            t = a[v] @ a[u] @ a[j].T @ a[i].T
            out.append((f"d{i}{j}->{u}{v}", _pauli_decompose(-1j * (t - t.T), num_qubits)))
    return out


def uccsd(num_qubits: int, hf_bitstring: str) -> Any:
    """UCCSD (one Trotter step): X on the occupied spin orbitals, then ``exp(theta_k (T_k - T_k^dag))`` per
    excitation, transpiled to h, sx, rz, cx (parameters kept)."""
    from qiskit import QuantumCircuit, transpile
    from qiskit.circuit import Parameter
    from qiskit.circuit.library import PauliEvolutionGate
    from qiskit.quantum_info import SparsePauliOp

    electrons = hf_bitstring.count("1")
    qc = QuantumCircuit(num_qubits)
    for q in range(num_qubits):
        if hf_bitstring[num_qubits - 1 - q] == "1":
            qc.x(q)
    for k, (_name, terms) in enumerate(excitation_generators(num_qubits, electrons)):
        op = SparsePauliOp.from_list([(lbl, -c.real) for lbl, c in terms])  # exp(i t A) = exp(-i t (-A))
        qc.append(PauliEvolutionGate(op, time=Parameter(f"u{k:02d}")), range(num_qubits))
    return transpile(qc, basis_gates=["h", "sx", "sxdg", "rz", "rx", "x", "cx"], optimization_level=1)


def qaoa(terms, num_qubits: int, layers: int = 2) -> Any:
    """QAOA: H on all qubits, then ``layers`` x (cost ``exp(-i gamma C)`` from the Z and ZZ terms, mixer
    ``rx(2 beta)``)."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import Parameter

    qc = QuantumCircuit(num_qubits)
    qc.h(range(num_qubits))
    for layer in range(layers):
        gamma, beta = Parameter(f"g{layer}"), Parameter(f"b{layer}")
        for coeff, label in terms:
            qs = [num_qubits - 1 - i for i, c in enumerate(label) if c == "Z"]
            if len(qs) == 1:
                qc.rz(2 * coeff * gamma, qs[0])
            elif len(qs) == 2:
                qc.rzz(2 * coeff * gamma, qs[0], qs[1])
            elif len(qs) > 2:
                raise ValueError(f"term {label} has {len(qs)} Z factors: QAOA here takes at most two")
        qc.rx(2 * beta, range(num_qubits))
    return qc
