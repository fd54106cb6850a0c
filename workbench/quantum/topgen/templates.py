"""Parameterised circuit templates: Sim et al.'s circuits 1, 2 and 9 (arXiv 1905.10876v3, Fig. 2) and
user circuits read from OpenQASM 2 or 3.

Sim et al. draw qubit 0 at the top; circuit 2's CNOT ladder and circuit 9's CZ ladder run from the bottom
qubit upwards (``cx(n-1, n-2), ..., cx(1, 0)``), which is what we build. Each template repeats ``layers``
times with fresh parameters, as the paper's L.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.quantum.qasm import looks_like_qasm, read_qasm

__all__ = ["SIM_CIRCUITS", "sim_circuit", "from_qasm", "circuit_by_name", "PARAMETRIC_GATES"]

SIM_CIRCUITS = ("sim-1", "sim-2", "sim-9")
#: one-angle gates whose constant angles become free parameters when a QASM 2 circuit has none
PARAMETRIC_GATES = frozenset({"rx", "ry", "rz", "p", "u1", "crx", "cry", "crz", "cp", "rxx", "ryy", "rzz", "rzx"})


def sim_circuit(circuit_id: int, num_qubits: int, layers: int = 1) -> Any:
    """Sim et al.'s circuit ``circuit_id`` (1, 2 or 9) on ``num_qubits`` qubits with ``layers`` layers.

    1: ``rx, rz`` on every qubit (no entangler; 2n parameters per layer); 2: circuit 1 then a CNOT ladder
    ``cx(q, q-1)`` from the bottom qubit up; 9: ``h`` on every qubit, a CZ ladder, then ``rx`` (n parameters).
    Raises ValueError for another id, fewer than 2 qubits or fewer than 1 layer.
    """
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    if circuit_id not in (1, 2, 9):
        raise ValueError(f"circuit_id={circuit_id} is unknown: valid ids are 1, 2, 9")
    if num_qubits < 2:
        raise ValueError(f"num_qubits={num_qubits} is out of range: valid range is >= 2")
    if layers < 1:
        raise ValueError(f"layers={layers} is out of range: valid range is >= 1")
    per_layer = num_qubits if circuit_id == 9 else 2 * num_qubits
    theta = ParameterVector("t", per_layer * layers)
    qc = QuantumCircuit(num_qubits, name=f"sim-{circuit_id}")
    k = 0
    for _ in range(layers):
        if circuit_id in (1, 2):
            for q in range(num_qubits):
                qc.rx(theta[k], q)
                qc.rz(theta[k + 1], q)
                k += 2
            if circuit_id == 2:
                for q in range(num_qubits - 1, 0, -1):
                    qc.cx(q, q - 1)
        else:
            for q in range(num_qubits):
                qc.h(q)
            for q in range(num_qubits - 1, 0, -1):
                qc.cz(q, q - 1)
            for q in range(num_qubits):
                qc.rx(theta[k], q)
                k += 1
    return qc


def _free_angles(qc: Any) -> Any:
    """``qc`` with the angle of every one-angle rotation (:data:`PARAMETRIC_GATES`) replaced by a parameter."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import Parameter

    out = QuantumCircuit(*qc.qregs, name=qc.name)
    k = 0
    for inst in qc.data:
        op = inst.operation
        if inst.name in PARAMETRIC_GATES:
            op = op.copy()
            op.params = [Parameter(f"q{k:04d}")]
            k += 1
        out.append(op, inst.qubits, inst.clbits if out.clbits else [])
    return out


def from_qasm(source: str | Path) -> Any:
    """A parameterised circuit from OpenQASM 2 or 3 source text or a file path, read by the quantum area's guarded
    reader (:func:`workbench.quantum.qasm.read_qasm`: limits, no classical control, no reset, no redefined
    standard gates; measurements only at the end, and removed here).

    OpenQASM 3 ``input angle`` / ``input float`` values stay free parameters. A circuit without free
    parameters gets one per one-angle rotation (rx, ry, rz, p, crx, ...) so it is a template. Raises ValueError
    naming ``circuit`` for a missing file or text that does not parse or breaks a limit.
    """
    if isinstance(source, str) and not source.strip():
        raise ValueError("circuit='' is not OpenQASM: give sim-1, sim-2, sim-9, OpenQASM 2/3 source or a file path")
    qc = read_qasm(source, what="circuit")
    qc.remove_final_measurements(inplace=True)
    return qc if qc.parameters else _free_angles(qc)


def circuit_by_name(circuit: str, num_qubits: int, layers: int = 1) -> Any:
    """``sim-1|sim-2|sim-9`` (on ``num_qubits`` qubits, ``layers`` layers), OpenQASM text or the path of an
    OpenQASM file (its own width).

    Raises ValueError naming ``circuit`` when it is neither a known name, QASM nor an existing file.
    """
    name = circuit.strip().lower()
    if name in SIM_CIRCUITS:
        return sim_circuit(int(name.split("-")[1]), num_qubits, layers)
    if looks_like_qasm(circuit) or Path(circuit.strip()).is_file():
        return from_qasm(circuit if looks_like_qasm(circuit) else Path(circuit.strip()))
    raise ValueError(
        f"circuit={circuit!r} is unknown: valid values are {', '.join(SIM_CIRCUITS)}, OpenQASM 2/3 source text or "
        "the path of an OpenQASM file"
    )
