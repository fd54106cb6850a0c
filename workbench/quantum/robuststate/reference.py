"""Slow, obvious references for RobustState's kernels.

- :func:`reference_straight_through_gradient`: ``g_i = Re Tr(G d rho_sim / d theta_i)`` with
  ``G = 2 (rho_meas - sigma)`` (the Frobenius loss's gradient at the measured state), where the derivative of
  ``Tr(G rho_sim(theta))`` (an expectation value of the fixed Hermitian G) comes from the two-term
  parameter-shift rule on qiskit's ``Statevector`` (another simulator, no autograd).
- :func:`aer_machine_density`: the machine's state from qiskit-aer's density-matrix method (the bound circuit
  with its coherent errors as unitary gates, under ``NoiseSpec.to_aer()``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

if TYPE_CHECKING:
    from workbench.quantum.common.variational.machine import Machine

__all__ = ["reference_straight_through_gradient", "aer_machine_density"]


def reference_straight_through_gradient(circuit: Any, theta: Tensor, rho_measured: Tensor, psi: Tensor) -> Tensor:
    from qiskit.quantum_info import Statevector

    sigma = np.outer(psi.numpy(), psi.numpy().conj())
    g = 2 * (rho_measured.numpy() - sigma)
    g = (g + g.conj().T) / 2
    t = theta.numpy().astype(np.float64)

    def expval(values: np.ndarray) -> float:
        v = Statevector(circuit.assign_parameters(values)).data
        return float(np.real(v.conj() @ g @ v))

    out = np.zeros_like(t)
    for i in range(t.size):
        e = np.zeros_like(t)
        e[i] = math.pi / 2
        out[i] = (expval(t + e) - expval(t - e)) / 2
    return torch.as_tensor(out)


def aer_machine_density(machine: Machine, theta: Tensor) -> np.ndarray:
    from workbench.quantum.aer import aer_density_matrix

    return aer_density_matrix(machine.qiskit_circuit(theta), machine.noise)
