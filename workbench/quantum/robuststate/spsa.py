"""SPSA on the machine: minimise ``1 - F_hat`` with two shadow-fidelity estimates per step
(``2 bases shots`` executions), gains after Spall (1998)."""

from __future__ import annotations

import numpy as np
from torch import Tensor

from workbench.quantum.common.variational import SPSA, Machine
from workbench.quantum.robuststate.trace import Progress, Recorder, Trace, shadow_fidelity_batch

__all__ = ["train_spsa"]


def train_spsa(
    machine: Machine,
    theta0: Tensor,
    psi: Tensor,
    *,
    budget: int,
    bases: int,
    mitigate: bool = True,
    seed: int = 0,
    a: float = 0.05,
    c: float = 0.05,
    progress: Progress = None,
    record_every: int = 4,
) -> Trace:
    rng = np.random.default_rng(40_000 + seed)
    rec = Recorder("spsa", machine, psi, budget, progress, record_every)
    opt = SPSA(a=a, c=c, A=10.0, seed=seed)
    theta = theta0.detach().clone()
    rec.record(theta, force=True)
    cost = 2 * bases * (machine.shots or 1)
    n = machine.num_qubits
    while rec.affordable(cost):
        settings = rng.integers(0, 3, size=(bases, n))
        theta, _ = opt.step(
            lambda batch: 1 - shadow_fidelity_batch(machine, batch, settings, psi, mitigate=mitigate), theta
        )
        rec.trace.steps += 1
        rec.record(theta)
    return rec.finish(theta)
