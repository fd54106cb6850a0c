"""Slow, obvious versions the kernels are tested against (mitiq and qutip are the other references).

- :func:`inverse_unitary`: ``U(S)^dagger`` as the dense product of ``exp(+i H_k h)`` in *forward* order, which is
  what the reversed schedule must produce without drift;
- :func:`richardson_vandermonde`: Richardson as solving the Vandermonde system of the interpolating polynomial
  (``numpy.linalg.solve``) and reading its constant term.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.schedule import Schedule

__all__ = ["inverse_unitary", "richardson_vandermonde"]


def inverse_unitary(device: PulseDevice, schedule: Schedule, *, substeps: int = 4) -> torch.Tensor:
    """``U(S)^dagger = exp(+i H_0 h) exp(+i H_1 h) ... exp(+i H_(n-1) h)`` (one step at a time, complex128)."""
    steps = hamiltonian_steps(device, schedule, substeps=substeps)
    out = torch.eye(steps.h.shape[-1], dtype=torch.complex128)
    for h in steps.h:
        out = out @ torch.linalg.matrix_exp(1j * steps.step_ns * h)
    return out


def richardson_vandermonde(scale_factors: Sequence[float], values: Sequence[float]) -> float:
    """The constant term of the degree ``n - 1`` polynomial through the ``n`` points."""
    x = np.asarray(scale_factors, dtype=float)
    v = np.vander(x, x.size, increasing=True)
    return float(np.linalg.solve(v, np.asarray(values, dtype=float))[0])
