"""Statevectors against ``qiskit.quantum_info.Statevector(circuit).data`` (an independent simulator):
random circuits over every gate we support, odd and even widths, bound and parameterised, global phase."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit.quantum_info import Statevector
from quantum_cases import parametric_circuit, random_circuit

from workbench.quantum import probabilities, statevector
from workbench.quantum.circuit import bind, from_qiskit
from workbench.quantum.statevector import run_statevector


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 9])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_circuits_match_qiskit(n, seed):
    qc = random_circuit(n, 12 * n + 10, seed, global_phase=0.37 * seed)
    ref = Statevector(qc).data
    assert np.abs(statevector(qc).numpy() - ref).max() <= 1e-10  # complex128: round-off ~1e-15 per gate
    ours64 = statevector(qc, dtype=torch.complex64).numpy()
    assert np.abs(ours64 - ref).max() <= 1e-5  # complex64: ~1e-7 per gate, ~100 gates


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5])
def test_fusion_widths_agree(width):
    qc = random_circuit(11, 120, 3)  # wide enough that fusion is on by default
    steps, phase = bind(from_qiskit(qc), None)
    ref = Statevector(qc).data
    out = run_statevector(steps, 11, phase=phase, fuse_qubits=width).numpy()[0]
    assert np.abs(out - ref).max() <= 1e-10


@pytest.mark.parametrize("n", [3, 5])
def test_parameterised_circuit_batched_equals_bound_one_by_one(n):
    qc, count = parametric_circuit(n, 2, seed=n)
    rng = np.random.default_rng(n)
    theta = torch.tensor(rng.uniform(-3, 3, (6, count)))
    batch = statevector(qc, theta)
    assert batch.shape == (6, 2**n)
    for b in range(6):
        bound = qc.assign_parameters(theta[b].numpy())
        assert np.abs(batch[b].numpy() - Statevector(bound).data).max() <= 1e-10
        assert torch.equal(statevector(qc, theta[b]), batch[b])  # one parameter set: same numbers, no batch dim


def test_params_by_dict_and_names():
    qc, count = parametric_circuit(3, 1, seed=0)
    theta = np.linspace(0.1, 1.0, count)
    by_param = {p: float(v) for p, v in zip(qc.parameters, theta)}
    by_name = {p.name: float(v) for p, v in zip(qc.parameters, theta)}
    ref = statevector(qc, torch.tensor(theta))
    assert torch.allclose(statevector(qc, by_param), ref, atol=1e-14)
    assert torch.allclose(statevector(qc, by_name), ref, atol=1e-14)


def test_list_of_circuits_stacks_and_probabilities_sum_to_one():
    circuits = [random_circuit(4, 30, s) for s in range(3)]
    states = statevector(circuits)
    assert states.shape == (3, 16)
    for qc, s in zip(circuits, states):
        assert np.abs(s.numpy() - Statevector(qc).data).max() <= 1e-10
    probs = probabilities(circuits)
    assert torch.allclose(probs.sum(-1), torch.ones(3, dtype=torch.float64), atol=1e-12)


def test_final_measurements_and_barriers_are_ignored():
    qc = random_circuit(3, 20, 5)
    measured = qc.copy()
    measured.barrier()
    measured.measure_all()
    assert torch.equal(statevector(measured), statevector(qc))
