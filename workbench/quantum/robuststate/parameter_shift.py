"""Parameter-shift gradient ascent of the measured fidelity on the machine (the noise-aware gradient baseline).

Each step estimates the fidelity at ``theta +- pi/2 e_i`` for all P parameters (exact shift rule for the
ansatz's rz parameters), each by a classical-shadow estimate from ``bases x shots`` executions: ``2 P bases
shots`` executions per step. Adam (same learning rate as RobustState) ascends the estimated gradient.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.common.variational import Machine, parameter_shift_gradient
from workbench.quantum.robuststate.trace import Progress, Recorder, Trace, shadow_fidelity_batch

__all__ = ["train_parameter_shift"]


def train_parameter_shift(
    machine: Machine,
    theta0: Tensor,
    psi: Tensor,
    *,
    budget: int,
    bases: int,
    lr: float,
    mitigate: bool = True,
    seed: int = 0,
    progress: Progress = None,
) -> Trace:
    rng = np.random.default_rng(30_000 + seed)
    rec = Recorder("parameter-shift", machine, psi, budget, progress)
    theta = theta0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    rec.record(theta, force=True)
    p = theta.shape[-1]
    cost = 2 * p * bases * (machine.shots or 1)
    n = machine.num_qubits
    while rec.affordable(cost):
        settings = rng.integers(0, 3, size=(bases, n))
        grad = parameter_shift_gradient(
            lambda batch: shadow_fidelity_batch(machine, batch, settings, psi, mitigate=mitigate), theta.detach()
        )
        opt.zero_grad()
        theta.grad = -grad  # ascend the fidelity
        opt.step()
        rec.trace.steps += 1
        rec.record(theta)
    return rec.finish(theta)
