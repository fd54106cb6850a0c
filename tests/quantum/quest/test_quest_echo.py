"""The echo cost column (``_echo.echo_costs``): each gate's first-order echo survival against the same quantity
from qiskit, computed independently: the statevector of the echo itself (qiskit ``Statevector``, the device-basis
inverse included), the Kraus operators of the aer noise model's own channel for that gate (``NoiseSpec`` ->
qiskit ``Kraus``) and ``sum_i |Tr(rho K_i)|^2`` on the gate's reduced state. Tolerance 1e-9 (float64 both sides).

Also: the gate matrices equal qiskit's, and a noiseless circuit costs nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from qiskit.circuit.library import CXGate, CZGate, ECRGate, SXGate, XGate
from qiskit.quantum_info import Kraus, Statevector, SuperOp, partial_trace

from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.circuits import native_inverse, random_device_circuit
from workbench.quantum.noise import NoiseSpec
from workbench.quantum.quest._echo import GATE_MATRICES_1Q, GATE_MATRICES_2Q
from workbench.quantum.quest.dataset import connected_qubits
from workbench.quantum.quest.encoding import PHYSICAL_COLUMN, encode, encode_batch

ECHO = PHYSICAL_COLUMN + 11
SWAP = np.eye(4)[[0, 2, 1, 3]]


def test_gate_matrices_are_qiskits() -> None:
    for m, gate in zip(GATE_MATRICES_1Q, (XGate(), SXGate())):
        assert np.allclose(m, gate.to_matrix(), atol=1e-12)
    for m, gate in zip(GATE_MATRICES_2Q, (CXGate(), ECRGate(), CZGate())):
        assert np.allclose(m, gate.to_matrix(), atol=1e-12)


def reference_costs(circuit, calibration) -> np.ndarray:
    """Per gate of ``circuit``: -log of the survival after it and after its inverse in the echo (qiskit)."""
    spec = NoiseSpec.device(calibration)
    echo = circuit.compose(native_inverse(circuit))  # PST's echo, instructions in the circuit's order
    n = echo.num_qubits
    gates = [i for i in circuit.data if i.name not in ("barrier", "measure")]
    sv = Statevector.from_label("0" * n)
    survival = []
    for inst in echo.data:
        qs = tuple(echo.find_bit(q).index for q in inst.qubits)
        sv = sv.evolve(inst.operation, qargs=list(qs))
        channel = spec._build_channel(inst.name, qs)
        if channel is None:
            continue
        rho = partial_trace(sv, [q for q in range(n) if q not in qs]).data  # qubits in ascending order
        if len(qs) == 2 and qs[0] > qs[1]:  # the channel's order is the gate's (qubit a = bit 0)
            rho = SWAP @ rho @ SWAP
        survival.append((inst.name, qs, sum(abs(np.trace(rho @ k)) ** 2 for k in Kraus(SuperOp(channel)).data)))
    # forward half: noisy gates in order; second half: their inverses' noisy gates in reverse order
    keys = [(i.name, tuple(circuit.find_bit(q).index for q in i.qubits)) for i in gates]
    noisy = [key for key in keys if spec._build_channel(*key) is not None]
    assert len(survival) == 2 * len(noisy)
    fwd, bwd = survival[: len(noisy)], survival[len(noisy) :][::-1]
    costs = np.zeros(len(gates))
    j = 0
    for g in range(len(gates)):
        if keys[g] not in noisy:
            continue
        assert fwd[j][:2] == bwd[j][:2] == noisy[j]
        costs[g] = -math.log(fwd[j][2]) - math.log(bwd[j][2])
        j += 1
    return costs


@pytest.mark.parametrize(
    "device,width,gates,seed",
    [("fake_toronto", 3, 25, 0), ("fake_brisbane", 4, 30, 1), ("fake_fez", 2, 17, 2), ("fake_lima", 5, 41, 3)],
)
def test_echo_costs_equal_qiskit_kraus_survival(device: str, width: int, gates: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    full = load_calibration(device)
    qubits = connected_qubits(full, width, rng)
    cal = calibration_subset(full, qubits).randomized(rng).durations_scaled(4.0)  # long gates: relaxation matters
    circuit = random_device_circuit(width, gates, cal.coupling_map, rng, two_qubit_gate=cal.two_qubit_gate)
    g = encode(circuit, cal)
    width_used = int((g.x[:, 0] == 1).sum())
    got = g.x[width_used : width_used + len(g.x) - 2 * width_used, ECHO]
    ref = reference_costs(circuit, cal)
    assert ref.max() > 0.005  # the circuit is noisy enough to test something
    assert np.allclose(got, ref, rtol=1e-5, atol=1e-7), np.abs(got - ref).max()
    batch = encode_batch([circuit, circuit], [cal, cal])
    assert np.array_equal(batch.graph(1).x, g.x)


def test_hand_built_circuit_with_a_reversed_cx() -> None:
    """sx then cx(2, 1) on fake_lima (qubit a above qubit b): the costs equal qiskit's."""
    from qiskit import QuantumCircuit

    cal = calibration_subset(load_calibration("fake_lima"), (0, 1, 2, 3, 4))
    qc = QuantumCircuit(3)
    qc.sx(2)
    qc.cx(2, 1)
    g = encode(qc, cal)
    np.testing.assert_allclose(g.x[2:4, ECHO], reference_costs(qc, cal), rtol=1e-5)
    np.testing.assert_allclose(g.globals[8], g.x[:, ECHO].sum(), rtol=1e-6)


def test_noiseless_gates_cost_nothing() -> None:
    """A calibration with no errors, durations or readout error: every echo cost is 0."""
    from dataclasses import replace

    full = calibration_subset(load_calibration("fake_lima"), (0, 1, 2))
    cal = replace(full, gates=tuple(replace(g, error=0.0, duration=0.0) for g in full.gates))
    circuit = random_device_circuit(
        3, 30, cal.coupling_map, np.random.default_rng(5), two_qubit_gate=cal.two_qubit_gate
    )
    assert not encode(circuit, cal).x[:, ECHO].any()
