"""A trainable circuit as data: a :class:`GateAnsatz` is a tuple of :class:`Gate` s on logical qubits
``0..Q-1`` with parameter slots, grown block by block and turned into a qiskit circuit on demand (TopGen's
generated, hardware-efficient and QuantumNAS-style ansatze; :class:`~.ansatz.Ansatz` is the other, fixed
block ansatz of the layer, in native gates).

Gates: fixed ``h, cx, cz``; one-angle ``rx, ry, rz, crx, rzz``; three-angle ``u3, cu3``. :class:`GateBuilder`
collects gates and hands out parameter slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Gate", "GateAnsatz", "GateBuilder", "ANGLES", "TWO_QUBIT_CX"]

#: angles each gate takes (0: fixed gate)
ANGLES = {"h": 0, "cx": 0, "cz": 0, "rx": 1, "ry": 1, "rz": 1, "crx": 1, "rzz": 1, "u3": 3, "cu3": 3}
#: native CNOTs a two-qubit gate costs on an IBM device (cx, cz: 1; crx, rzz, cu3: 2)
TWO_QUBIT_CX = {"cx": 1, "cz": 1, "crx": 2, "rzz": 2, "cu3": 2}


@dataclass(frozen=True)
class Gate:
    """``name`` on logical ``qubits``; its angles are parameters ``first .. first + ANGLES[name] - 1``."""

    name: str
    qubits: tuple[int, ...]
    first: int = -1


@dataclass(frozen=True)
class GateAnsatz:
    """``gates`` on ``num_qubits`` logical qubits with ``num_parameters`` angles; ``block_sizes`` counts the
    parameters of each block (the generated initial blocks, then each grown block)."""

    num_qubits: int
    gates: tuple[Gate, ...]
    num_parameters: int
    block_sizes: tuple[int, ...] = ()
    name: str = "ansatz"

    @property
    def num_blocks(self) -> int:
        return len(self.block_sizes)

    def cx_count(self) -> int:
        """Native CNOTs of the two-qubit gates (no routing; TopGen's closed-form count)."""
        return sum(TWO_QUBIT_CX.get(g.name, 0) for g in self.gates)

    def circuit(self, prefix: str = "w") -> Any:
        """The qiskit circuit, angles ``ParameterVector(prefix, num_parameters)``."""
        from qiskit import QuantumCircuit
        from qiskit.circuit import ParameterVector

        w = ParameterVector(prefix, self.num_parameters)
        qc = QuantumCircuit(self.num_qubits, name=self.name)
        for g in self.gates:
            k = ANGLES[g.name]
            angles = [w[g.first + i] for i in range(k)]
            # u3 and cu3 written with rz/ry/cx (equal up to global phase): qiskit's BasisTranslator takes
            # seconds on u/cu/p gates with symbolic angles, milliseconds on these
            if g.name == "u3":
                _u3(qc, angles[0], angles[1], angles[2], g.qubits[0])
                continue
            if g.name == "cu3":  # qiskit's CU3Gate definition
                theta, phi, lam = angles
                c, t = g.qubits
                qc.rz((lam + phi) / 2, c)
                qc.rz((lam - phi) / 2, t)
                qc.cx(c, t)
                _u3(qc, -theta / 2, 0, -(phi + lam) / 2, t)
                qc.cx(c, t)
                _u3(qc, theta / 2, phi, 0, t)
                continue
            getattr(qc, g.name)(*angles, *g.qubits)
        return qc

    def then(self, gates: Sequence[Gate], count: int, name: str | None = None) -> GateAnsatz:
        """This ansatz followed by ``gates`` whose parameter slots start at 0 (shifted here) as a new block."""
        shifted = tuple(Gate(g.name, g.qubits, g.first + self.num_parameters if g.first >= 0 else -1) for g in gates)
        return GateAnsatz(
            self.num_qubits,
            self.gates + shifted,
            self.num_parameters + count,
            self.block_sizes + (count,),
            name or self.name,
        )


def _u3(qc: Any, theta: Any, phi: Any, lam: Any, q: int) -> None:
    """``U3(theta, phi, lam) = e^{i (phi + lam)/2} RZ(phi) RY(theta) RZ(lam)``: rz(lam), ry(theta), rz(phi)."""
    if not (isinstance(lam, (int, float)) and lam == 0):
        qc.rz(lam, q)
    qc.ry(theta, q)
    if not (isinstance(phi, (int, float)) and phi == 0):
        qc.rz(phi, q)


class GateBuilder:
    """Collects gates and hands out parameter slots."""

    def __init__(self) -> None:
        self.gates: list[Gate] = []
        self.count = 0

    def add(self, name: str, *qubits: int) -> None:
        k = ANGLES[name]
        self.gates.append(Gate(name, tuple(qubits), self.count if k else -1))
        self.count += k
