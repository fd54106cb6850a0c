"""PST labels from qiskit-aer against our own simulator, against sampled shots, and the identity-circuit sanity
check; the state fidelity against qiskit.quantum_info."""

from __future__ import annotations

import numpy as np
import pytest
from qiskit import QuantumCircuit
from qiskit.quantum_info import DensityMatrix, Statevector
from qiskit.quantum_info import state_fidelity as qiskit_fidelity

from workbench.quantum import density_matrix, probabilities
from workbench.quantum.aer import aer_counts
from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.noise import NoiseSpec
from workbench.quantum.quest.labels import echo_circuit, effective_calibration, noise_model, pst, state_fidelity


@pytest.fixture(scope="module")
def noisy():
    cal = calibration_subset(load_calibration("fake_lima"), (1, 3, 4))
    return effective_calibration(cal, np.random.default_rng(5), scale=2.0)


def test_effective_calibration_scales_errors_not_t1(noisy):
    base = calibration_subset(load_calibration("fake_lima"), (1, 3, 4))
    ratio_t1 = np.array(noisy.t1) / np.array(base.t1)
    ratio_ro = np.array(noisy.readout_p01) / np.array(base.readout_p01)
    assert ((0.5 <= ratio_t1) & (ratio_t1 <= 1.5)).all()
    assert ((1.0 <= ratio_ro) & (ratio_ro <= 3.0)).all()  # U(0.5, 1.5) x 2


def test_identity_circuit_pst_is_readout_success(noisy):
    qc = QuantumCircuit(3)
    qc.rz(0.4, 0)
    qc.rz(1.1, 2)  # virtual gates: no error, no duration
    expected = np.prod([1 - p for p in noisy.readout_p01])
    assert pst([qc], noise_model(noisy))[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("gates,seed", [(7, 0), (40, 1), (150, 2)])
def test_pst_equals_our_simulator(noisy, gates, seed):
    qc = random_device_circuit(3, gates, noisy.coupling_map, np.random.default_rng(seed))
    ours = probabilities(echo_circuit(qc), noise=NoiseSpec.device(noisy))[0]
    assert pst([qc], noise_model(noisy))[0] == pytest.approx(float(ours), abs=1e-6)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_pst_agrees_with_sampled_shots(noisy):
    qc = random_device_circuit(3, 60, noisy.coupling_map, np.random.default_rng(9))
    exact = pst([qc], noise_model(noisy))[0]
    shots = 4096
    sampled = aer_counts(echo_circuit(qc), NoiseSpec.device(noisy), shots=shots, seed=3)[0]
    assert abs(sampled - exact) <= 4 * np.sqrt(exact * (1 - exact) / shots)


def test_state_fidelity_matches_qiskit(noisy):
    qc = random_device_circuit(3, 50, noisy.coupling_map, np.random.default_rng(4))
    rho = density_matrix(qc, noise=NoiseSpec.device(noisy)).numpy()
    want = qiskit_fidelity(DensityMatrix(rho), Statevector(qc))
    assert state_fidelity(qc, noise_model(noisy)) == pytest.approx(want, abs=1e-6)


def test_bad_scale():
    with pytest.raises(ValueError, match="scale=-1"):
        effective_calibration(load_calibration("fake_lima"), np.random.default_rng(0), -1)


def test_stretched_draws_scale_every_gate_duration_by_one_factor_in_range():
    base = calibration_subset(load_calibration("fake_lima"), (1, 3, 4))
    factors = []
    for seed in range(40):
        noisy = effective_calibration(base, np.random.default_rng(seed), 1.0, duration_log2_max=6.0)
        ratio = {round(n.duration / b.duration, 9) for n, b in zip(noisy.gates, base.gates) if b.duration > 0}
        assert len(ratio) == 1  # one stretch for the whole draw
        factors.append(ratio.pop())
        assert [n.error for n in noisy.gates] != [b.error for b in base.gates]  # the usual error draw still happens
    factors = np.array(factors)
    assert ((factors >= 1) & (factors <= 64)).all()
    assert 0.25 < np.mean(factors == 1) < 0.75 and (factors > 8).any()  # about half the draws keep the durations
    plain = effective_calibration(base, np.random.default_rng(0), 1.0)
    assert [g.duration for g in plain.gates] == [g.duration for g in base.gates]


def test_bad_duration_stretch():
    cal = load_calibration("fake_lima")
    with pytest.raises(ValueError, match="duration_log2_max=9"):
        effective_calibration(cal, np.random.default_rng(0), 1.0, duration_log2_max=9)
    with pytest.raises(ValueError, match="factor=0"):
        cal.durations_scaled(0)
    from workbench.quantum.quest.dataset import DatasetSpec

    with pytest.raises(ValueError, match="duration_log2_max=-1"):
        DatasetSpec(duration_log2_max=-1)
