"""Gradients through the simulator. References: central finite differences (complex128, step 1e-5, error
~1e-10) and the parameter-shift rule ``d<H>/dt = (<H>(t + pi/2) - <H>(t - pi/2)) / 2``, exact for gates
``exp(-i t G)`` with G's eigenvalues +-1/2 (rx, ry, rz, rzz, crx via its two terms is excluded)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit import QuantumCircuit
from qiskit.circuit import ParameterVector
from quantum_cases import parametric_circuit

from workbench.quantum import NoiseSpec, expectation, probabilities

OBSERVABLE = [("ZZI", 0.7), ("XIX", -0.4), ("IYZ", 0.25), ("ZII", 1.0)]


def _loss(qc, theta, noise=None):
    return expectation(qc, OBSERVABLE, theta, noise=noise)


def _finite_difference(f, theta, h=1e-5):
    grad = torch.zeros_like(theta)
    for i in range(theta.numel()):
        e = torch.zeros_like(theta)
        e[i] = h
        grad[i] = (f(theta + e) - f(theta - e)) / (2 * h)
    return grad


@pytest.mark.parametrize(
    "noise", [None, NoiseSpec(depolarizing=0.02, t1=30e-6, t2=40e-6, zz=0.05)], ids=["ideal", "noisy"]
)
def test_autograd_equals_finite_differences(noise):
    qc, count = parametric_circuit(3, 2, seed=1)
    theta = torch.tensor(np.random.default_rng(1).uniform(-2, 2, count), requires_grad=True)
    _loss(qc, theta, noise).backward()
    with torch.no_grad():
        fd = _finite_difference(lambda t: _loss(qc, t, noise), theta.detach())
    assert (theta.grad - fd).abs().max().item() <= 1e-8  # FD truncation ~h^2 = 1e-10, round-off 1e-16/h


def _shift_circuit(num_qubits: int = 3, layers: int = 2):
    t = ParameterVector("t", 3 * num_qubits * layers + layers * (num_qubits - 1))
    qc = QuantumCircuit(num_qubits)
    k = 0
    for _ in range(layers):
        for q in range(num_qubits):
            qc.rx(t[k], q)
            qc.ry(t[k + 1], q)
            qc.rz(t[k + 2], q)
            k += 3
        for q in range(num_qubits - 1):
            qc.rzz(t[k], q, q + 1)
            k += 1
    return qc, len(t)


@pytest.mark.parametrize("noise", [None, NoiseSpec(depolarizing=0.01, t1=50e-6, t2=50e-6)], ids=["ideal", "noisy"])
def test_autograd_equals_parameter_shift(noise):
    qc, count = _shift_circuit()
    theta = torch.tensor(np.random.default_rng(2).uniform(-3, 3, count), requires_grad=True)
    _loss(qc, theta, noise).backward()
    shifts = torch.eye(count, dtype=torch.float64) * (np.pi / 2)
    with torch.no_grad():  # all 2P shifted circuits in one batch
        plus = _loss(qc, theta.detach() + shifts, noise)
        minus = _loss(qc, theta.detach() - shifts, noise)
    assert (theta.grad - (plus - minus) / 2).abs().max().item() <= 1e-12  # both exact: round-off only


def test_gradient_of_batched_probabilities_and_complex64():
    qc, count = parametric_circuit(3, 1, seed=3)
    theta = torch.tensor(np.random.default_rng(3).uniform(-2, 2, (4, count)), requires_grad=True)
    weights = torch.linspace(0, 1, 8, dtype=torch.float64)
    (probabilities(qc, theta, noise=NoiseSpec.readout_error(0.05)) @ weights).sum().backward()
    grad128 = theta.grad.clone()
    theta32 = theta.detach().float().requires_grad_()
    (
        probabilities(qc, theta32, noise=NoiseSpec.readout_error(0.05), dtype=torch.complex64) @ weights.float()
    ).sum().backward()
    assert (theta32.grad.double() - grad128).abs().max().item() <= 1e-4  # float32 round-off through ~40 gates
