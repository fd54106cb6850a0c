"""QuEst's graph encoding: the 24-d node features of a hand-built circuit, edges and depth against qiskit's DAG,
first-use qubit order, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.converters import circuit_to_dag

from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.quest.encoding import LIU_FEATURES, MAX_QUBITS, encode


@pytest.fixture(scope="module")
def lima():
    return calibration_subset(load_calibration("fake_lima"), (0, 1, 2, 3, 4))


def test_two_gate_circuit_features(lima):
    qc = QuantumCircuit(3)
    qc.sx(2)
    qc.cx(2, 1)
    g = encode(qc, lima)
    # nodes: in(q2), in(q1), sx, cx, out(q2), out(q1); wires renumbered in first use: q2 -> 0, q1 -> 1
    assert g.x.shape == (6, 24)
    us = lambda t: t * 1e6  # noqa: E731
    sx_error = lima.gate("sx", (2,)).error
    cx_error = lima.gate("cx", (2, 1)).error
    expected = np.zeros((6, 24))
    rows = [  # type, wires, qubit a, qubit b, gate error
        (0, [0], 2, None, 0.0), (0, [1], 1, None, 0.0), (4, [0], 2, None, sx_error),
        (5, [0, 1], 2, 1, cx_error), (1, [0], 2, None, 0.0), (1, [1], 1, None, 0.0)]
    for i, (kind, wires, a, b, err) in enumerate(rows):
        expected[i, kind] = 1
        expected[i, [6 + w for w in wires]] = 1
        expected[i, 16:18] = us(lima.t1[a]), us(lima.t2[a])
        if b is not None:
            expected[i, 18:20] = us(lima.t1[b]), us(lima.t2[b])
        expected[i, 20] = err
        expected[i, 21:23] = lima.readout_p10[a], lima.readout_p01[a]
        expected[i, 23] = i
    np.testing.assert_allclose(g.x, expected, rtol=1e-6, atol=1e-9)
    assert sorted(map(tuple, g.edges.T.tolist())) == [(0, 2), (1, 3), (2, 3), (3, 4), (3, 5)]
    np.testing.assert_array_equal(g.globals, [2, 2, 0, 0, 1, 1])  # depth, width, rz, x, sx, cx
    liu = np.zeros(LIU_FEATURES)
    liu[0] = 1  # one one-qubit gate on wire 0
    liu[MAX_QUBITS + 0 * MAX_QUBITS + 1] = 1  # cx control wire 0, target wire 1
    np.testing.assert_array_equal(g.liu, liu)


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
    gate_nodes = g.x[:, 2:6].sum(1) == 1
    np.testing.assert_array_equal(indeg[gate_nodes], 1 + g.x[gate_nodes, 5])


def test_idle_wires_dropped_and_first_use_order(lima):
    qc = QuantumCircuit(5)
    qc.x(4)
    qc.rz(0.3, 1)
    g = encode(qc, lima)
    assert g.globals[1] == 2
    assert g.x.shape[0] == 2 + 2 + 2
    np.testing.assert_array_equal(g.x[2, 6:16], np.eye(10)[0])  # x on qubit 4 is wire 0
    np.testing.assert_array_equal(g.x[3, 6:16], np.eye(10)[1])


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
