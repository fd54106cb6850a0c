"""Expectation values of Pauli-sum observables, from a statevector or a density matrix (torch, differentiable).

A Pauli string acts on a basis state as ``P|j> = i^{n_Y} (-1)^{popcount(j & (Y|Z mask))} |j xor (X|Y mask)>``
(``X|b> = |b^1>``, ``Y|b> = i (-1)^b |b^1>``, ``Z|b> = (-1)^b |b>``), so
``<psi|P|psi> = sum_j conj(psi[j^x]) c_j psi[j]`` and ``Tr(rho P) = sum_j c_j rho[j, j^x]``: no matrices are
built, which keeps large observables cheap. Labels follow qiskit (rightmost character = qubit 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["pauli_terms", "expectation_from_state", "expectation_from_density"]


def pauli_terms(observable: Any) -> list[tuple[str, complex]]:
    """``[(label, coeff)]`` of a ``SparsePauliOp``, ``Pauli``, label string or list of ``(label, coeff)``."""
    if isinstance(observable, str):
        return [(observable, 1.0)]
    if isinstance(observable, (list, tuple)):
        return [(str(lbl), complex(c)) for lbl, c in observable]
    to_list = getattr(observable, "to_list", None)
    if to_list is not None:
        return [(lbl, complex(c)) for lbl, c in to_list()]
    to_label = getattr(observable, "to_label", None)
    if to_label is not None:
        label = to_label()
        phase = {"": 1, "-": -1, "i": 1j, "-i": -1j}[label[: len(label) - len(label.lstrip("-i"))]]
        return [(label.lstrip("-i"), phase)]
    raise TypeError(
        f"observable must be a SparsePauliOp, Pauli, label or list of (label, coeff), got {type(observable)}"
    )


def _masks(label: str, num_qubits: int) -> tuple[int, int, int]:
    if len(label) != num_qubits or set(label) - set("IXYZ"):
        raise ValueError(
            f"Pauli label {label!r} must have {num_qubits} characters from I, X, Y, Z (rightmost = qubit 0)"
        )
    flip = sign = ny = 0
    for q, char in enumerate(reversed(label)):
        if char in "XY":
            flip |= 1 << q
        if char in "YZ":
            sign |= 1 << q
        ny += char == "Y"
    return flip, sign, ny


def _coefficients(num_qubits: int, sign: int, ny: int) -> np.ndarray:
    j = np.arange(2**num_qubits)
    parity = np.zeros_like(j)
    masked = j & sign
    while masked.any():
        parity ^= masked & 1
        masked >>= 1
    return (1j**ny) * (1 - 2 * parity)


def expectation_from_state(state: Tensor, observable: Any) -> Tensor:
    """``<psi|O|psi>`` for states ``[..., 2**n]``; real ``[...]`` (imaginary part dropped: O is Hermitian)."""
    n = state.shape[-1].bit_length() - 1
    total = torch.zeros(state.shape[:-1], dtype=state.real.dtype, device=state.device)
    j = torch.arange(2**n, device=state.device)
    for label, coeff in pauli_terms(observable):
        flip, sign, ny = _masks(label, n)
        c = torch.as_tensor(_coefficients(n, sign, ny), device=state.device).to(state.dtype)
        value = (state[..., j ^ flip].conj() * c * state).sum(-1)
        total = total + (coeff * value).real
    return total


def expectation_from_density(rho: Tensor, observable: Any) -> Tensor:
    """``Tr(rho O)`` for density matrices ``[..., 2**n, 2**n]``; real ``[...]``."""
    n = rho.shape[-1].bit_length() - 1
    total = torch.zeros(rho.shape[:-2], dtype=rho.real.dtype, device=rho.device)
    j = torch.arange(2**n, device=rho.device)
    for label, coeff in pauli_terms(observable):
        flip, sign, ny = _masks(label, n)
        c = torch.as_tensor(_coefficients(n, sign, ny), device=rho.device).to(rho.dtype)
        value = (rho[..., j, j ^ flip] * c).sum(-1)
        total = total + (coeff * value).real
    return total
