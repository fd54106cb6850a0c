"""Gate-level baselines compiled to the same device's calibrated pulses: a hardware-efficient ansatz and the
(two-qubit reduced) UCCSD, so that their durations are in ns on the same ``dt`` as NAPA's.

Circuits are transpiled by qiskit to ``rz, sx, x, ecr`` on the calibrated pair's direction (``seed_transpiler``
0, level 1), played with :func:`~workbench.quantum.common.pulse.natives.circuit_schedule`, and the remaining virtual-Z
frames are applied to the final state before the measurement rotations.
"""

from __future__ import annotations

import functools

import numpy as np

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.natives import NativeGates, circuit_schedule, frame_rotation
from workbench.quantum.napa.energy import energy_of_state, final_state

__all__ = ["hea_circuit", "uccsd_circuit", "GateAnsatz"]


def hea_circuit(layers: int):
    """``ry rz`` on both qubits, ``cx(0, 1)``, repeated ``layers`` times, then a final ``ry rz`` (4 (L + 1) angles)."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    theta = ParameterVector("t", 4 * (layers + 1))
    qc = QuantumCircuit(2)
    k = 0
    for layer in range(layers + 1):
        for q in (0, 1):
            qc.ry(theta[k], q)
            qc.rz(theta[k + 1], q)
            k += 2
        if layer < layers:
            qc.cx(0, 1)
    return qc


def uccsd_circuit(hf_bits: int):
    """The reduced UCCSD: the Hartree-Fock basis state, then ``exp(-i theta X Y)`` (couples it with the double
    excitation ``hf ^ 11``): one parameter."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import Parameter
    from qiskit.circuit.library import PauliEvolutionGate
    from qiskit.quantum_info import SparsePauliOp

    theta = Parameter("theta")
    qc = QuantumCircuit(2)
    for q in (0, 1):
        if (hf_bits >> q) & 1:
            qc.x(q)
    qc.append(PauliEvolutionGate(SparsePauliOp("XY"), time=theta), [0, 1])
    return qc


class GateAnsatz:
    """A parameterised circuit played as calibrated pulses; parameters in [0, 1] map to angles in [-pi, pi]."""

    def __init__(self, circuit, natives: NativeGates) -> None:
        from qiskit import transpile

        self.natives = natives
        self.circuit = transpile(circuit, basis_gates=["rz", "sx", "x", "ecr"], coupling_map=[[0, 1]],
                                 optimization_level=1, seed_transpiler=0)  # fmt: skip
        self.parameters = list(self.circuit.parameters)

    @property
    def num_params(self) -> int:
        return len(self.parameters)

    def bound(self, x: np.ndarray):
        angles = (np.asarray(x) * 2 - 1) * np.pi
        return self.circuit.assign_parameters(dict(zip(self.parameters, angles)))

    @functools.cached_property
    def duration_ns(self) -> float:
        sched, _ = circuit_schedule(self.bound(np.full(self.num_params, 0.5)), self.natives)
        return sched.duration * self.natives.device.dt

    def energy(self, device: PulseDevice, terms, x: np.ndarray, **kw) -> float:
        sched, frames = circuit_schedule(self.bound(x), self.natives)
        rho = final_state(device, sched)
        f = frame_rotation(frames, device)
        return energy_of_state(device, (f @ rho @ f.mH).numpy(), terms, **kw)
