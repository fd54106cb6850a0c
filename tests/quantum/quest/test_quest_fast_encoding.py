"""The batch encoder of the prediction path (``encode_batch``) against the one-circuit encoder (``encode``):
every feature of every graph bit for bit, the same edges in the same order, the same errors; the module-call-free
forward (``net.infer``) against the models' own forward, exactly; one shared calibration against each circuit's
own subset (the speed benchmark's form)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit import QuantumCircuit

from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.quest.batching import encoded_batch, graphs_batch
from workbench.quantum.quest.checkpoint import load_checkpoint
from workbench.quantum.quest.dataset import DEVICES, GATE_COUNTS, connected_qubits
from workbench.quantum.quest.encoding import clear_device_tables, encode, encode_batch
from workbench.quantum.quest.labels import effective_calibration
from workbench.quantum.quest.net import infer
from workbench.quantum.quest.predict import predict_pst


@pytest.fixture(scope="module")
def mixed():
    """Random circuits of widths 1-8 on cx, ecr and cz devices (5 to 156 qubits) under noise draws, some with a
    barrier and final measurements, an odd count."""
    rng = np.random.default_rng(3)
    circuits, cals = [], []
    for dev in ("fake_lima", "fake_toronto", "fake_brisbane", "fake_fez"):
        cal = load_calibration(dev)
        for _ in range(13):
            width = int(rng.integers(1, 6 if cal.num_qubits == 5 else 9))
            noisy = effective_calibration(calibration_subset(cal, connected_qubits(cal, width, rng)), rng)
            qc = random_device_circuit(
                width, int(rng.choice(GATE_COUNTS)), noisy.coupling_map, rng, two_qubit_gate=DEVICES[dev][0]
            )
            if rng.random() < 0.3:
                qc.barrier()
                qc.measure_all()
            circuits.append(qc)
            cals.append(noisy)
    return circuits, cals


def _same(g, h) -> None:
    for field in ("x", "edges", "globals", "liu"):
        a, b = getattr(g, field), getattr(h, field)
        assert a.dtype == b.dtype and a.shape == b.shape, field
        assert np.array_equal(a, b), field  # exactly, bit for bit


def test_batch_equals_one_by_one_feature_by_feature(mixed):
    circuits, cals = mixed
    clear_device_tables()
    batch = encode_batch(circuits, cals)
    assert len(batch) == len(circuits) == 52
    for i, (qc, cal) in enumerate(zip(circuits, cals)):
        _same(encode(qc, cal), batch.graph(i))
    again = encode_batch(circuits, cals)  # device tables kept from the first call: same values
    assert np.array_equal(again.x, batch.x) and np.array_equal(again.edges, batch.edges)


def test_single_circuit_and_hand_built_cases():
    lima = calibration_subset(load_calibration("fake_lima"), (0, 1, 2, 3, 4))
    cases = []
    qc = QuantumCircuit(3)
    qc.sx(2)
    qc.cx(2, 1)
    cases.append(qc)
    qc = QuantumCircuit(5)  # parallel edges, an idle wire, a gate on the last qubit first
    qc.x(4)
    qc.cx(3, 4)
    qc.cx(3, 4)
    qc.rz(0.3, 0)
    qc.barrier()
    qc.measure_all()
    cases.append(qc)
    qc = QuantumCircuit(1)
    qc.rz(1.0, 0)
    cases.append(qc)
    for qc in cases:
        _same(encode(qc, lima), encode_batch([qc], [lima]).graph(0))


def test_batch_errors_match():
    lima = calibration_subset(load_calibration("fake_lima"), (0, 1, 2, 3, 4))
    qc = QuantumCircuit(2)
    qc.h(0)
    with pytest.raises(ValueError, match="'h' is not in the device basis"):
        encode_batch([qc], [lima])
    with pytest.raises(ValueError, match="no gates"):
        encode_batch([QuantumCircuit(2)], [lima])
    with pytest.raises(ValueError, match="1 calibrations"):
        encode_batch([qc, qc], [lima])
    wide = QuantumCircuit(6)
    wide.x(5)
    with pytest.raises(ValueError, match="valid widths are 1..5"):
        encode_batch([wide], [lima])


def test_one_shared_calibration_equals_each_circuits_subset():
    rng = np.random.default_rng(7)
    cal = load_calibration("fake_lima")
    shared = effective_calibration(calibration_subset(cal, connected_qubits(cal, 5, rng)), rng)
    circuits, subs = [], []
    for _ in range(17):
        sub = calibration_subset(shared, tuple(range(int(rng.integers(1, 6)))))
        circuits.append(random_device_circuit(sub.num_qubits, int(rng.choice(GATE_COUNTS)), sub.coupling_map, rng))
        subs.append(sub)
    a, b = encode_batch(circuits, subs), encode_batch(circuits, [shared] * len(circuits))
    for field in ("x", "edges", "node_ptr", "edge_ptr", "globals", "liu"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


def test_fast_forward_and_prediction_equal_the_old_path(mixed):
    circuits, cals = mixed
    ckpt = load_checkpoint()
    with torch.inference_mode():
        old = graphs_batch([encode(c, k) for c, k in zip(circuits, cals)], ckpt.normalizer)
        new = encoded_batch(encode_batch(circuits, cals), ckpt.normalizer)
        for field in ("x", "edge_index", "batch", "globals", "liu"):
            assert torch.equal(getattr(old, field), getattr(new, field)), field
        for name, model in ckpt.models.items():
            assert torch.equal(model(old), infer(model, new)), name
        expected = np.clip(ckpt.models["transformer"](old).numpy().astype(np.float64), 0, 1)
    assert np.array_equal(predict_pst(ckpt, circuits, cals)["transformer"], expected)
