"""QuEst's graph encoding (version 3): the 30-d node features of a hand-built circuit (the paper's 24 columns
widened to cx/ecr/cz, plus duration, relaxation and the echo cost, whose values ``test_quest_echo.py`` checks
against qiskit), the relaxation infidelity against the workbench's own
thermal-relaxation channel, edges and depth against qiskit's DAG, first-use qubit order, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.circuit.library import CZGate, ECRGate
from qiskit.converters import circuit_to_dag

from workbench.quantum import channels as ch
from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.quest.encoding import LIU_FEATURES, MAX_QUBITS, NODE_FEATURES, encode


@pytest.fixture(scope="module")
def lima():
    return calibration_subset(load_calibration("fake_lima"), (0, 1, 2, 3, 4))


def _relax_infidelity(cal, qubits, duration):
    """Reference: 1 - average gate fidelity of the workbench's thermal-relaxation superoperator."""
    sup = ch.tensor_superops(
        [ch.thermal_relaxation_superop(cal.t1[q], min(cal.t2[q], 2 * cal.t1[q]), duration) for q in qubits]
    )
    return 1 - ch.average_gate_fidelity(sup)


def test_two_gate_circuit_features(lima):
    qc = QuantumCircuit(3)
    qc.sx(2)
    qc.cx(2, 1)
    g = encode(qc, lima)
    # nodes: in(q2), in(q1), sx, cx, out(q2), out(q1); wires renumbered in first use: q2 -> 0, q1 -> 1
    assert g.x.shape == (6, NODE_FEATURES) == (6, 30)
    us = lambda t: t * 1e6  # noqa: E731
    sx, cx = lima.gate("sx", (2,)), lima.gate("cx", (2, 1))
    r_sx, r_cx = _relax_infidelity(lima, (2,), sx.duration), _relax_infidelity(lima, (2, 1), cx.duration)
    expected = np.zeros((6, 30))
    rows = [  # type, wires, qubit a, qubit b, gate error, duration, relaxation infidelity
        (0, [0], 2, None, 0.0, 0.0, 0.0),
        (0, [1], 1, None, 0.0, 0.0, 0.0),
        (4, [0], 2, None, sx.error, sx.duration, r_sx),
        (5, [0, 1], 2, 1, cx.error, cx.duration, r_cx),
        (1, [0], 2, None, 0.0, 0.0, 0.0),
        (1, [1], 1, None, 0.0, 0.0, 0.0),
    ]
    for i, (kind, wires, a, b, err, duration, relax) in enumerate(rows):
        expected[i, kind] = 1
        expected[i, [8 + w for w in wires]] = 1
        expected[i, 18:20] = us(lima.t1[a]), us(lima.t2[a])
        if b is not None:
            expected[i, 20:22] = us(lima.t1[b]), us(lima.t2[b])
        expected[i, 22] = err
        expected[i, 23:25] = lima.readout_p10[a], lima.readout_p01[a]
        expected[i, 25] = duration * 1e9
        expected[i, 26] = relax
        expected[i, 27] = max(err, relax)
        expected[i, 28] = i
    echo = g.x[:, 29]
    assert echo[2] > 0 and echo[3] > echo[2] and not echo[[0, 1, 4, 5]].any()  # gates only; the cx costs more
    expected[:, 29] = echo
    # float32 storage: 1e-6 relative; relaxation infidelities ~1e-4..1e-3 need an absolute 1e-9
    np.testing.assert_allclose(g.x, expected, rtol=1e-6, atol=1e-9)
    assert sorted(map(tuple, g.edges.T.tolist())) == [(0, 2), (1, 3), (2, 3), (3, 4), (3, 5)]
    gate_log = -np.log1p(-max(sx.error, r_sx)) - np.log1p(-max(cx.error, r_cx))
    readout_log = -np.log1p(-lima.readout_p01[2]) - np.log1p(-lima.readout_p01[1])
    # depth, width, rz, x, sx, two-qubit, gate, readout and echo sums
    np.testing.assert_allclose(g.globals, [2, 2, 0, 0, 1, 1, gate_log, readout_log, echo.sum()], rtol=1e-6)
    liu = np.zeros(LIU_FEATURES)
    liu[0] = 1  # one one-qubit gate on wire 0
    liu[MAX_QUBITS + 0 * MAX_QUBITS + 1] = 1  # cx control wire 0, target wire 1
    np.testing.assert_array_equal(g.liu, liu)


@pytest.mark.parametrize("device, gate, column", [("fake_brisbane", "ecr", 6), ("fake_fez", "cz", 7)])
def test_todays_two_qubit_gates(device, gate, column):
    """ecr (Eagle) and cz (Heron) get their own type column, their calibrated error and duration."""
    cal = load_calibration(device)
    a, b = next(g.qubits for g in cal.gates if g.name == gate)
    sub = calibration_subset(cal, (a, b))
    qc = QuantumCircuit(2)
    qc.append({"ecr": ECRGate, "cz": CZGate}[gate](), [0, 1])
    g = encode(qc, sub)
    calib = sub.gate(gate, (0, 1))
    assert g.x[2, column] == 1 and g.x[2, 2:8].sum() == 1
    np.testing.assert_allclose(g.x[2, 22], calib.error, rtol=1e-6)
    np.testing.assert_allclose(g.x[2, 25], calib.duration * 1e9, rtol=1e-6)
    np.testing.assert_allclose(g.x[2, 26], _relax_infidelity(sub, (0, 1), calib.duration), rtol=1e-5, atol=1e-9)
    assert g.globals[5] == 1


def test_slow_gates_cost_their_relaxation():
    """fake_toronto's cx take 5-8 us: relaxation over them exceeds the reported error, and the effective error
    column says so (aer's device model charges the relaxation)."""
    cal = calibration_subset(load_calibration("fake_toronto"), (5, 8))
    qc = QuantumCircuit(2)
    qc.cx(0, 1)
    g = encode(qc, cal)
    assert g.x[2, 26] > g.x[2, 22] and g.x[2, 27] == g.x[2, 26]


@pytest.mark.parametrize("seed", range(6))
def test_edges_and_depth_match_qiskit_dag(lima, seed):
    rng = np.random.default_rng(seed)
    width = int(rng.integers(1, 6))
    qc = random_device_circuit(width, int(rng.integers(1, 120)), [e for e in lima.coupling_map if max(e) < width], rng)
    qc.barrier()
    g = encode(qc, lima)
    dag = circuit_to_dag(qc)
    dag.remove_all_ops_named("barrier")
    for node in list(dag.idle_wires()):
        dag.remove_qubits(node)
    ops = list(dag.topological_op_nodes())
    assert g.globals[0] == qc.depth()
    assert g.x.shape[0] == len(ops) + 2 * dag.num_qubits()
    assert g.edges.shape[1] == len(list(dag.edges()))
    # every edge goes forward, and every gate node has as many in-edges as it has qubits
    assert (g.edges[0] < g.edges[1]).all() or (g.x[g.edges[1], 1] == 1).any()
    indeg = np.bincount(g.edges[1], minlength=g.x.shape[0])
    gate_nodes = g.x[:, 2:8].sum(1) == 1
    np.testing.assert_array_equal(indeg[gate_nodes], 1 + g.x[gate_nodes, 5:8].sum(1))


def test_idle_wires_dropped_and_first_use_order(lima):
    qc = QuantumCircuit(5)
    qc.x(4)
    qc.rz(0.3, 1)
    g = encode(qc, lima)
    assert g.globals[1] == 2
    assert g.x.shape[0] == 2 + 2 + 2
    np.testing.assert_array_equal(g.x[2, 8:18], np.eye(10)[0])  # x on qubit 4 is wire 0
    np.testing.assert_array_equal(g.x[3, 8:18], np.eye(10)[1])


def test_clear_errors(lima):
    h = QuantumCircuit(1)
    h.h(0)
    with pytest.raises(ValueError, match="gate 'h' is not in the device basis"):
        encode(h, lima)
    with pytest.raises(ValueError, match="no gates"):
        encode(QuantumCircuit(2), lima)
    with pytest.raises(ValueError, match="valid widths are 1..5"):
        encode(QuantumCircuit(6), lima)
    wide = QuantumCircuit(11)
    for q in range(11):
        wide.x(q)
    with pytest.raises(ValueError, match="at most 10"):
        encode(wide, load_calibration("fake_guadalupe"))
