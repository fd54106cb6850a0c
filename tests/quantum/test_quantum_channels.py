"""Channel formulas. References: qiskit-aer's ``thermal_relaxation_error`` / ``depolarizing_error`` and
qiskit's ``SuperOp``, ``average_gate_fidelity`` and ``RXGate`` (over-rotation), all independent of our code."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from qiskit.circuit.library import CXGate, RXGate
from qiskit.quantum_info import Kraus, Operator, SuperOp, average_gate_fidelity
from qiskit_aer.noise import depolarizing_error, thermal_relaxation_error

from workbench.quantum import channels as ch
from workbench.quantum.noise import NoiseSpec, device_depolarizing_parameter


def _to_column(s: np.ndarray) -> np.ndarray:
    """Our row-major superoperator in qiskit's column-stacking convention."""
    d = int(round(math.sqrt(s.shape[0])))
    idx = np.arange(d * d).reshape(d, d).T.reshape(-1)
    return s[np.ix_(idx, idx)]


@pytest.mark.parametrize(
    "t1, t2, time",
    [(50e-6, 70e-6, 50e-9), (80e-6, 30e-6, 300e-9), (40e-6, 80e-6, 5e-6), (math.inf, 20e-6, 1e-6), (20e-6, 1e-6, 1e-6)],
)
def test_thermal_relaxation_equals_aer(t1, t2, time):
    ours = ch.thermal_relaxation_superop(t1, t2, time)
    assert np.abs(_to_column(ours) - SuperOp(thermal_relaxation_error(t1, t2, time)).data).max() < 1e-14


@pytest.mark.parametrize("p, k", [(0.0, 1), (0.03, 1), (4 / 3, 1), (0.05, 2), (16 / 15, 2), (0.2, 3)])
def test_depolarizing_equals_aer(p, k):
    ours = ch.depolarizing_superop(p, k)
    assert np.abs(_to_column(ours) - SuperOp(depolarizing_error(p, k)).data).max() < 1e-14


def test_tensor_of_singles_equals_aer_expand():
    a, b = (50e-6, 60e-6, 300e-9), (90e-6, 40e-6, 300e-9)
    ours = ch.tensor_superops([ch.thermal_relaxation_superop(*a), ch.thermal_relaxation_superop(*b)])
    ref = thermal_relaxation_error(*a).expand(thermal_relaxation_error(*b))  # first qubit lowest
    assert np.abs(_to_column(ours) - SuperOp(ref).data).max() < 1e-14


def test_average_gate_fidelity_and_device_rule():
    s = ch.thermal_relaxation_superop(30e-6, 20e-6, 400e-9)
    assert ch.average_gate_fidelity(s) == pytest.approx(average_gate_fidelity(SuperOp(_to_column(s))), abs=1e-15)
    p = device_depolarizing_parameter(0.01, ch.average_gate_fidelity(s), 1)
    total = ch.depolarizing_superop(p, 1)
    combined = s @ total  # depolarizing, then relaxation
    assert 1 - ch.average_gate_fidelity(combined) == pytest.approx(0.01, rel=1e-12)  # matches the gate error
    assert device_depolarizing_parameter(1e-9, ch.average_gate_fidelity(s), 1) == 0.0
    # arrays (the QuEst encoder's per-gate form) give each scalar's value
    errors, fids, widths = (
        np.array([0.01, 1e-9, 0.03, 0.85]),
        np.array([0.995, 0.99, 0.98, 0.18]),
        np.array([1, 1, 2, 2]),
    )
    many = device_depolarizing_parameter(errors, fids, widths)
    assert list(many) == [device_depolarizing_parameter(*args) for args in zip(errors, fids, widths)]
    assert (many >= 0).all()  # an error above the cap but below the relaxation: none, not a negative rate


def test_unitary_power_is_over_rotation():
    x = Operator(RXGate(math.pi)).data
    for eps in (0.05, -0.1):
        ours = ch.unitary_power(x, 1 + eps)
        assert np.abs(ours - Operator(RXGate(math.pi * (1 + eps))).data).max() < 1e-12
    cx = Operator(CXGate()).data
    half = ch.unitary_power(cx, 0.5)
    assert np.abs(half @ half - cx).max() < 1e-12


def test_superop_to_kraus_round_trip_and_readout():
    s = ch.tensor_superops([ch.thermal_relaxation_superop(50e-6, 30e-6, 1e-6)] * 2) @ ch.depolarizing_superop(0.05, 2)
    kraus = ch.superop_to_kraus(s)
    back = sum(np.kron(k, k.conj()) for k in kraus)
    assert np.abs(back - s).max() < 1e-13
    assert np.abs(_to_column(s) - SuperOp(Kraus(kraus)).data).max() < 1e-13
    a = ch.readout_matrix(0.1, 0.3)
    assert np.allclose(a @ [1, 0], [0.9, 0.1]) and np.allclose(a @ [0, 1], [0.3, 0.7])


def test_unitary_and_kraus_superops_in_torch():
    u = torch.tensor(Operator(RXGate(0.7)).data)
    assert np.abs(ch.unitary_superop(u).numpy() - np.kron(u.numpy(), u.numpy().conj())).max() < 1e-15
    spec = NoiseSpec.coherent(over_rotation=0.1)
    assert spec.channel("rz", (0,)) is None  # virtual gates carry no over-rotation
    assert spec.channel("rx", (0,)) is None  # parametric gates neither
    assert spec.channel("sx", (0,)) is not None
