"""Losses of variational state preparation, and the straight-through (RobustState) loss.

- :func:`state_fidelity`: ``|<psi|phi>|**2`` for a state vector, ``<psi|rho|psi>`` for a density matrix.
- :func:`frobenius_loss`: ``||rho - sigma||_F**2`` (``sigma = |psi><psi|``), equal to
  ``Tr rho**2 - 2 F + 1``.
- :func:`straight_through_loss`: RobustState's gradient rule (arXiv 2311.16035, tutorial slide 4, "Replace"):
  ``rho_hat = rho_sim(theta) + (rho_measured - rho_sim(theta)).detach()`` and ``L = loss(rho_hat)``. The value
  is the loss of the *measured* state; the gradient is ``dL/drho`` evaluated at the measured state, back-
  propagated through the noiseless simulator: ``dL/dtheta = Re Tr(G drho_sim/dtheta)``, ``G = dL/drho|_meas``.

Note (ours): for a loss *linear* in rho (``1 - <psi|rho|psi>``) ``G`` does not depend on the measured state,
so the straight-through gradient would be the noiseless one; a loss with curvature in rho is needed for the
measurements to steer the update. We use the Frobenius loss (``G = 2 (rho_meas - sigma)``, linear in the
measured state, so an unbiased shadow estimate of rho gives an unbiased gradient).

Classification readout (a QNN's logits): :func:`z_expectations`, ``<Z_q>`` of chosen qubits from outcome
probabilities (differentiable; TopGen scales them into logits for the cross-entropy).
VQE losses (QGAS):

- :func:`energy_function`: ``E(theta) = <psi(theta)| H |psi(theta)>`` for a dense ``H`` on the noiseless
  statevector simulator, batched ``[R, P] -> [R]`` and differentiable.
- :func:`pauli_energy`: ``sum_k c_k <P_k>`` read from outcome frequencies in Pauli-basis settings (exact
  probabilities or shot-sampled frequencies of a :class:`~workbench.quantum.common.variational.machine.Machine`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.circuit import from_qiskit
from workbench.quantum.common.variational.shadows import pauli_codes
from workbench.quantum.statevector import simulate_statevector

__all__ = [
    "state_fidelity",
    "frobenius_loss",
    "infidelity_loss",
    "straight_through_loss",
    "pure_density",
    "z_signs",
    "z_expectations",
    "energy_function",
    "pauli_energy",
]


def pure_density(psi: Tensor) -> Tensor:
    """``|psi><psi|``: ``[..., d] -> [..., d, d]`` (differentiable)."""
    return psi[..., :, None] * psi.conj()[..., None, :]


def state_fidelity(state: Tensor, target: Tensor) -> Tensor:
    """Fidelity with a pure ``target`` ``[d]``: ``state`` is ``[..., d]`` (pure) or ``[..., d, d]`` (mixed)."""
    target = target.to(state.dtype)
    if state.dim() >= 2 and state.shape[-1] == state.shape[-2] == target.shape[-1] and state.dim() != 1:
        if state.shape[-2] == target.shape[-1] and not (state.dim() == 2 and state.shape[0] != state.shape[1]):
            return torch.einsum("i,...ij,j->...", target.conj(), state, target).real
    amp = torch.einsum("i,...i->...", target.conj(), state)
    return amp.real**2 + amp.imag**2


def frobenius_loss(rho: Tensor, target: Tensor) -> Tensor:
    """``||rho - |t><t| ||_F**2`` (real) for ``rho`` ``[..., d, d]`` and a pure target ``[d]``."""
    diff = rho - pure_density(target.to(rho.dtype))
    return (diff.abs() ** 2).sum((-2, -1))


def infidelity_loss(rho: Tensor, target: Tensor) -> Tensor:
    """``1 - <t|rho|t>``."""
    return 1 - state_fidelity(rho, target)


def straight_through_loss(
    rho_sim: Tensor,
    rho_measured: Tensor,
    target: Tensor,
    loss: Callable[[Tensor, Tensor], Tensor] = frobenius_loss,
) -> Tensor:
    """``loss(rho_sim + (rho_measured - rho_sim).detach(), target)``: forward value from the measured state,
    gradient through ``rho_sim`` (see the module docstring)."""
    rho_hat = rho_sim + (rho_measured.to(rho_sim.dtype) - rho_sim).detach()
    return loss(rho_hat, target)


def z_signs(num_qubits: int, qubits: Sequence[int]) -> Tensor:
    """``[2**n, C]`` float64: the +1/-1 eigenvalue of ``Z`` on each of ``qubits`` for every basis state (qiskit
    order: outcome index = sum of bit q * 2**q)."""
    idx = torch.arange(2**num_qubits)
    return torch.stack([1.0 - 2.0 * ((idx >> q) & 1).to(torch.float64) for q in qubits], dim=1)


def z_expectations(probs: Tensor, qubits: Sequence[int], *, scale: float = 1.0) -> Tensor:
    """``scale * <Z_q>`` ``[B, C]`` for each of ``qubits`` from outcome probabilities ``probs`` ``[B, 2**n]`` (any
    leading shape; differentiable). ``scale`` multiplies the probabilities before the sum (a QNN's logit scale,
    e.g. TopGen's 5)."""
    n = int(probs.shape[-1]).bit_length() - 1
    if 2**n != probs.shape[-1]:
        raise ValueError(f"probs has {probs.shape[-1]} outcomes: valid sizes are powers of 2 (2**num_qubits)")
    if any(not 0 <= q < n for q in qubits):
        raise ValueError(f"qubits={list(qubits)}: valid range is 0..{n - 1}")
    return (scale * probs) @ z_signs(n, qubits).to(probs.dtype)


def energy_function(circuit: object, hamiltonian: object) -> Callable[[Tensor], Tensor]:
    """The VQE loss of a parameterised qiskit ``circuit`` on ``n`` qubits and a dense Hermitian ``hamiltonian``
    ``[2**n, 2**n]`` (qiskit's qubit order: index = sum of bit q * 2**q): ``f(theta) -> energies``, ``theta``
    ``[R, P]`` float64 (``P`` = the circuit's parameters in ``circuit.parameters`` order) to ``[R]`` float64,
    ``E = <psi(theta)| H |psi(theta)>`` with ``psi`` from the noiseless statevector simulator (complex128),
    differentiable by autograd. Holds ``H`` dense (16 * 4**n bytes)."""
    program = from_qiskit(circuit)
    H = torch.as_tensor(np.asarray(hamiltonian), dtype=torch.complex128)  # [D, D]
    d = 2**program.num_qubits
    if tuple(H.shape) != (d, d):
        raise ValueError(
            f"hamiltonian has shape {list(H.shape)}: expected [{d}, {d}] for the circuit's {program.num_qubits} qubits"
        )

    def energies(theta: Tensor) -> Tensor:
        psi, _ = simulate_statevector(program, theta)  # [R, D]
        return ((psi @ H.T) * psi.conj()).sum(-1).real  # [R]: sum_ij conj(psi_i) H_ij psi_j

    return energies


def pauli_energy(freqs: Tensor, settings: np.ndarray, terms: Iterable[tuple[float, str]]) -> Tensor:
    """``sum_k c_k <P_k>`` from outcome frequencies (or exact probabilities) in Pauli-basis settings.

    freqs: ``[..., K, 2**n]`` real, each row summing to 1 (outcome index = sum of bit q * 2**q); settings:
    ``[K, n]`` Pauli letters per qubit (0 = Z, 1 = X, 2 = Y, as in :mod:`~workbench.quantum.common.variational.shadows`);
    terms: ``(coefficient, label)`` pairs, labels in qiskit order (the rightmost letter is qubit 0), real
    coefficients. Each term is read from the first setting that measures every qubit of its support in the
    term's letter: ``<P> = sum_x freqs[x] (-1)**(parity of x's bits on the support)``; an identity term
    contributes its coefficient. Returns ``[...]`` float64. ValueError when a term's width or letters are
    wrong or no setting measures it.
    """
    settings = np.asarray(settings, dtype=np.int64)
    if settings.ndim != 2:
        raise ValueError(f"settings has shape {list(settings.shape)}: expected [K, n]")
    k, n = settings.shape
    if tuple(freqs.shape[-2:]) != (k, 2**n):
        raise ValueError(f"freqs has shape {list(freqs.shape)}: expected [..., {k}, {2**n}] for {k} settings")
    outcomes = torch.arange(2**n, device=freqs.device)
    total = torch.zeros(freqs.shape[:-2], dtype=torch.float64, device=freqs.device)
    for coeff, label in terms:
        c = complex(coeff)
        if abs(c.imag) > 1e-12:
            raise ValueError(f"term {label!r} has coefficient {coeff}: valid coefficients are real")
        support = [(q, int(b)) for q, b in enumerate(pauli_codes(label, n)) if b >= 0]
        if not support:
            total = total + c.real
            continue
        rows = [i for i in range(k) if all(settings[i, q] == b for q, b in support)]
        if not rows:
            raise ValueError(f"term {label!r} is measured by none of the {k} settings")
        parity = torch.zeros_like(outcomes)
        for q, _ in support:
            parity = parity ^ ((outcomes >> q) & 1)
        sign = (1 - 2 * parity).to(torch.float64)
        total = total + c.real * (freqs[..., rows[0], :].to(torch.float64) * sign).sum(-1)
    return total
