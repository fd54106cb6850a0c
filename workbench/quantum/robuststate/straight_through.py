"""RobustState: forward pass from the machine, backward pass through the noiseless simulator.

Per step (arXiv 2311.16035, tutorial slide 4, as its figure shows it): measure the circuit on the machine in
``bases`` random Pauli settings x ``shots`` (``bases x shots`` executions), reconstruct the machine's state by
classical-shadow tomography (readout-mitigated), replace the simulator's output state by it
(:func:`~workbench.quantum.common.variational.losses.straight_through_loss`) and back-propagate the Frobenius loss
through the noiseless statevector simulator; Adam updates the parameters. The cost per step does not grow with
the number of parameters (parameter shift costs ``2 P`` estimates).

The gradient is ``2 Re Tr((rho_meas - sigma) d rho_sim / d theta)``: zero where the machine's state equals the
target, so a purely coherent error that the ansatz can undo is a fixed point of the update (e.g. a parameter
offset eps: theta -> theta* - eps). With incoherent noise rho_meas can never equal sigma and the update is
biased (the brief's pitfall; the study shows it).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.circuit import from_qiskit
from workbench.quantum.common.variational import Machine, shadow_density, straight_through_loss
from workbench.quantum.common.variational.losses import frobenius_loss, pure_density
from workbench.quantum.common.variational.shadows import all_settings
from workbench.quantum.robuststate.problem import readout_mitigated
from workbench.quantum.robuststate.trace import Progress, Recorder, Trace
from workbench.quantum.statevector import simulate_statevector

__all__ = ["straight_through_gradient", "train_robuststate"]


def straight_through_gradient(
    program: object, theta: Tensor, rho_measured: Tensor, psi: Tensor, loss=frobenius_loss
) -> tuple[Tensor, float]:
    """``(dL/dtheta, L)`` with ``L = loss(rho_sim + (rho_measured - rho_sim).detach(), psi)`` and
    ``rho_sim = |U(theta)0><U(theta)0|`` from the noiseless statevector simulator (autograd). ``program``:
    a :class:`~workbench.quantum.circuit.Program` or a qiskit circuit."""
    if not hasattr(program, "ops"):
        program = from_qiskit(program)
    t = theta.detach().clone().requires_grad_(True)
    state, _ = simulate_statevector(program, t)  # [1, d]
    value = straight_through_loss(pure_density(state[0]), rho_measured, psi, loss)
    (grad,) = torch.autograd.grad(value, t)
    return grad, float(value.detach())


def train_robuststate(
    machine: Machine,
    theta0: Tensor,
    psi: Tensor,
    *,
    budget: int,
    bases: int,
    lr: float,
    mitigate: bool = True,
    seed: int = 0,
    max_steps: int | None = None,
    progress: Progress = None,
    record_every: int = 1,
) -> Trace:
    """Fine-tune ``theta0`` until the next step would exceed ``budget`` executions (or ``max_steps``; then
    the learning rate is cosine-annealed to 0 over them). ``bases >= 3**n`` measures all ``3**n`` settings
    every step (full tomography) instead of a random draw."""
    program = from_qiskit(machine.circuit)
    rng = np.random.default_rng(20_000 + seed)
    rec = Recorder("robuststate", machine, psi, budget, progress, record_every)
    theta = theta0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max_steps) if max_steps else None
    rec.record(theta, force=True)
    n = machine.num_qubits
    exhaustive = all_settings(n) if bases >= 3**n else None
    if exhaustive is not None:
        bases = len(exhaustive)
    cost = bases * (machine.shots or 1)
    while rec.affordable(cost) and (max_steps is None or rec.trace.steps < max_steps):
        settings = exhaustive if exhaustive is not None else rng.integers(0, 3, size=(bases, n))
        freqs = readout_mitigated(machine, machine.measure(theta.detach(), settings), mitigate)
        rho = shadow_density(freqs, settings)
        grad, _ = straight_through_gradient(program, theta, rho, psi)
        opt.zero_grad()
        theta.grad = grad
        opt.step()
        if sched is not None:
            sched.step()
        rec.trace.steps += 1
        rec.record(theta)
    return rec.finish(theta)
