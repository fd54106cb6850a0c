"""Batching gives the same numbers as one-by-one. Reference: the same circuits simulated one at a time
(single-circuit path), and qiskit-aer on a few of them. Tolerance 1e-12: only summation order differs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quantum_cases import AER_DM_GATES, DEVICE_BASIS, parametric_circuit, random_circuit

from workbench.quantum import NoiseSpec, density_matrix, probabilities
from workbench.quantum.aer import aer_probabilities
from workbench.quantum.calibration import load_calibration
from workbench.quantum.circuits import random_device_circuit


def _device_batch(count: int, seed: int):
    cal = load_calibration("fake_lima")
    rng = np.random.default_rng(seed)
    circuits = [random_device_circuit(5, int(rng.integers(1, 60)), cal.coupling_map, rng) for _ in range(count)]
    circuits[0].reset(3)  # a channel inside a one-qubit chain
    return circuits, cal


@pytest.mark.parametrize("dtype, tol", [(torch.complex128, 1e-12), (torch.complex64, 1e-5)])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_list_of_circuits_equals_one_by_one_with_per_circuit_noise(dtype, tol):
    circuits, cal = _device_batch(24, seed=1)
    noises = [NoiseSpec.device(cal.randomized(i), scale=0.5 + i / 8) for i in range(len(circuits))]
    noises[3] = None  # ideal in the middle of a noisy batch
    batch = probabilities(circuits, noise=noises, dtype=dtype)
    assert batch.shape == (24, 32)
    for c, spec, row in zip(circuits, noises, batch):
        single = probabilities(c, noise=spec)  # complex128 reference
        assert (row - single).abs().max().item() <= tol


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_batch_with_three_qubit_gates_uses_general_fusion():
    circuits = [random_circuit(4, 40, seed=s, names=AER_DM_GATES) for s in range(6)]
    spec = NoiseSpec(depolarizing=0.01, depolarizing_2q=0.03, t1=50e-6, t2=60e-6, zz=0.05, readout_p01=0.02)
    batch = probabilities(circuits, noise=spec)
    for c, row in zip(circuits, batch):
        assert np.abs(row.numpy() - aer_probabilities(c, spec)).max() <= 1e-8
        assert (row - probabilities(c, noise=spec)).abs().max().item() <= 1e-12


def test_small_chunks_equal_one_chunk():
    from workbench.quantum.circuit import from_qiskit
    from workbench.quantum.density import run_density_circuits

    circuits, cal = _device_batch(10, seed=2)
    programs = [from_qiskit(c) for c in circuits]
    spec = [NoiseSpec.device(cal)] * 10
    assert torch.allclose(
        run_density_circuits(programs, spec, chunk=3), run_density_circuits(programs, spec), atol=1e-13, rtol=0
    )


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_batched_parameters_equal_one_by_one_under_noise():
    qc, count = parametric_circuit(3, 2, seed=4)
    theta = torch.tensor(np.random.default_rng(4).uniform(-3, 3, (5, count)))
    spec = NoiseSpec(depolarizing=0.02, t1=30e-6, t2=40e-6, over_rotation=0.05, readout_p10=0.03)
    batch = probabilities(qc, theta, noise=spec)
    rhos = density_matrix(qc, theta, noise=spec)
    for b in range(5):
        assert (batch[b] - probabilities(qc, theta[b], noise=spec)).abs().max().item() <= 1e-12
        bound = qc.assign_parameters(theta[b].numpy())
        assert np.abs(batch[b].numpy() - aer_probabilities(bound, spec)).max() <= 1e-8
        assert torch.allclose(torch.diagonal(rhos[b]).real.sum(), torch.tensor(1.0, dtype=torch.float64))


def test_widths_must_match_in_a_batch():
    with pytest.raises(ValueError, match="same number of qubits"):
        probabilities(
            [random_circuit(2, 5, 0, names=DEVICE_BASIS), random_circuit(3, 5, 0, names=DEVICE_BASIS)],
            noise=NoiseSpec(depolarizing=0.01),
        )


@pytest.mark.parametrize("fuse_qubits", [1, 2, 3])
def test_density_fusion_widths_agree(fuse_qubits):
    from workbench.quantum.circuit import bind, from_qiskit
    from workbench.quantum.density import run_density

    qc, count = parametric_circuit(4, 2, seed=9)
    theta = torch.tensor(np.random.default_rng(9).uniform(-3, 3, (3, count)))
    program = from_qiskit(qc)
    steps, _ = bind(program, theta)
    spec = NoiseSpec(depolarizing=0.01, t1=40e-6, t2=50e-6, zz=0.03)
    ref = run_density(steps, 4, batch=3, noise=spec, fuse_qubits=1)
    assert (run_density(steps, 4, batch=3, noise=spec, fuse_qubits=fuse_qubits) - ref).abs().max().item() <= 1e-13
