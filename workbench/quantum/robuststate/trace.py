"""What a training method returns: the fidelity curve against machine executions, and its end point."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.common.variational import Machine, shadow_density
from workbench.quantum.common.variational.shadows import fidelity_to_pure
from workbench.quantum.robuststate.problem import evaluate, readout_mitigated

__all__ = ["Trace", "Recorder", "shadow_fidelity_batch"]

Progress = Callable[[float], None] | None


@dataclass
class Trace:
    """executions[i] (cumulative machine executions when point i was taken), fidelity[i], coherent[i],
    incoherent[i] (true values on the machine, uncounted); ``theta`` the final parameters; ``steps`` updates."""

    method: str
    executions: list[int] = field(default_factory=list)
    fidelity: list[float] = field(default_factory=list)
    coherent: list[float] = field(default_factory=list)
    incoherent: list[float] = field(default_factory=list)
    theta: Tensor | None = None
    steps: int = 0


class Recorder:
    """Appends the machine's true state quality to a :class:`Trace` every ``every`` steps (and at the end)."""

    def __init__(self, method: str, machine: Machine, psi: Tensor, budget: int, progress: Progress, every: int = 1):
        self.trace = Trace(method)
        self.machine, self.psi, self.budget, self.progress, self.every = machine, psi, budget, progress, every

    def record(self, theta: Tensor, *, force: bool = False) -> None:
        t = self.trace
        if not force and t.steps % self.every:
            return
        if t.executions and t.executions[-1] == self.machine.executions:
            return
        e = evaluate(self.machine, theta, self.psi)
        t.executions.append(int(self.machine.executions))
        t.fidelity.append(e.fidelity)
        t.coherent.append(e.coherent_error)
        t.incoherent.append(e.incoherent_error)
        if self.progress is not None and self.budget:
            self.progress(min(self.machine.executions / self.budget, 1.0))

    def finish(self, theta: Tensor) -> Trace:
        self.record(theta, force=True)
        self.trace.theta = theta.detach().clone()
        return self.trace

    def affordable(self, cost: int) -> bool:
        return self.machine.executions + cost <= self.budget


def shadow_fidelity_batch(
    machine: Machine, theta: Tensor, settings: np.ndarray, psi: Tensor, *, mitigate: bool
) -> Tensor:
    """Counted shadow estimates of the fidelity for a batch ``theta`` ``[B, P]`` (same settings for every row:
    common random numbers for differences). Returns ``[B]``."""
    freqs = machine.measure(theta, settings)  # [B, K, 2**n]
    freqs = readout_mitigated(machine, freqs, mitigate)
    with torch.no_grad():
        return fidelity_to_pure(shadow_density(freqs, settings), psi)
