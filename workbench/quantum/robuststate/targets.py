"""Target states: GHZ, W and seeded Haar-random states (qiskit order, complex128)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

__all__ = ["target_state"]


def target_state(name: str, num_qubits: int, *, seed: int = 0) -> Tensor:
    """``[2**n]`` normalised: ``ghz`` = (|0..0> + |1..1>)/sqrt 2, ``w`` = equal superposition of the n one-hot
    states, ``random`` = Haar-random (normalised complex Gaussian vector from ``seed``)."""
    d = 2**num_qubits
    if num_qubits < 1:
        raise ValueError(f"qubits={num_qubits} is out of range: valid range is >= 1")
    psi = np.zeros(d, dtype=np.complex128)
    if name == "ghz":
        psi[0] = psi[-1] = 1 / math.sqrt(2)
    elif name == "w":
        for q in range(num_qubits):
            psi[1 << q] = 1 / math.sqrt(num_qubits)
    elif name == "random":
        rng = np.random.default_rng(seed)
        psi = rng.normal(size=d) + 1j * rng.normal(size=d)
        psi /= np.linalg.norm(psi)
    else:
        raise ValueError(f"target={name!r} is not supported: valid values are ghz, w, random")
    return torch.as_tensor(psi)
