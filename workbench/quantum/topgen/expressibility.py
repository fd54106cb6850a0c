"""Expressibility and entangling capability of a parameterised circuit (Sim et al., arXiv 1905.10876v3).

Expressibility (their Eq. 1): draw ``pairs`` pairs of parameter vectors uniformly in ``[0, 2 pi)``, prepare
``|psi(a)>, |psi(b)>`` with our batched torch simulator and histogram the fidelities
``F = |<psi(a)|psi(b)>|^2`` in ``bins`` equal bins of ``[0, 1]``; the result is
``KL(P_PQC || P_Haar) = sum_j p_j ln(p_j / q_j)`` over bins with ``p_j > 0``, where ``q_j`` is the Haar
probability of bin ``j``: the exact integral of ``P_Haar(F) = (N - 1)(1 - F)^(N - 2)`` (``N = 2**n``), i.e.
``q_j = (1 - lo_j)^(N-1) - (1 - hi_j)^(N-1)``. Lower is more expressive. An idle circuit (every F = 1) gets
the upper bound ``-ln q_last = (N - 1) ln(bins)``.

Entangling capability (their Eq. 3): the mean over random parameter vectors (up to 4096, fewer on wide circuits) of the Meyer-Wallach
``Q = 2 (1 - (1/n) sum_k Tr rho_k^2)``, ``rho_k`` the reduced state of qubit k: 0 for product states, 1 for
GHZ. The slow qiskit version is :mod:`workbench.quantum.topgen.reference`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from workbench.quantum import statevector
from workbench.threads import one_thread

__all__ = [
    "haar_bin_probabilities",
    "kl_to_haar",
    "fidelities",
    "meyer_wallach",
    "sample_states",
    "Descriptors",
    "describe",
    "idle_kl",
    "default_chunk",
    "MAX_AMPLITUDES",
]

#: Sim et al.'s sample sizes: 5000 fidelity pairs, 75 bins (the TopGen brief's setting too)
DEFAULT_PAIRS = 5000
DEFAULT_BINS = 75


def haar_bin_probabilities(num_qubits: int, bins: int) -> np.ndarray:
    """Haar probability of each of ``bins`` equal fidelity bins of [0, 1] for ``num_qubits`` qubits ``[bins]``."""
    if bins < 1:
        raise ValueError(f"bins={bins} is out of range: valid range is >= 1")
    n = 2**num_qubits
    edges = np.linspace(0.0, 1.0, bins + 1)
    tail = (1.0 - edges) ** (n - 1)  # P(F >= edge)
    return tail[:-1] - tail[1:]


def kl_to_haar(fid: np.ndarray | Tensor, num_qubits: int, bins: int = DEFAULT_BINS) -> float:
    """``KL(histogram of fid || Haar)`` in nats (see the module docstring); ``fid`` ``[S]`` in [0, 1]."""
    f = np.asarray(fid.detach().cpu() if isinstance(fid, Tensor) else fid, dtype=np.float64).ravel()
    if f.size == 0:
        raise ValueError("fidelities are empty: valid input has at least one pair")
    counts, _ = np.histogram(np.clip(f, 0.0, 1.0), bins=bins, range=(0.0, 1.0))
    p = counts / f.size
    q = haar_bin_probabilities(num_qubits, bins)
    mask = p > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(p[mask] * (np.log(p[mask]) - np.log(q[mask]))))


def idle_kl(num_qubits: int, bins: int = DEFAULT_BINS) -> float:
    """KL of a circuit whose fidelities are all 1: ``-ln q_last = (2**n - 1) ln(bins)``."""
    return float(-np.log(haar_bin_probabilities(num_qubits, bins)[-1]))


def sample_states(circuit: Any, count: int, generator: torch.Generator, *, dtype=torch.complex128) -> Tensor:
    """``count`` states of ``circuit`` at parameters uniform in [0, 2 pi) drawn from ``generator``: ``[count, 2**n]``."""
    p = circuit.num_parameters
    if p == 0:
        return statevector(circuit, dtype=dtype).expand(count, -1)
    theta = torch.rand(count, p, generator=generator, dtype=torch.float64) * (2 * math.pi)
    return statevector(circuit, theta, dtype=dtype)


#: amplitudes held at once by the samplers (2**22 complex128 = 64 MiB per state batch)
MAX_AMPLITUDES = 2**22


def default_chunk(num_qubits: int) -> int:
    """Pairs per chunk: 4096, fewer for wide circuits so ``2 * chunk * 2**n <= MAX_AMPLITUDES``."""
    return max(1, min(4096, MAX_AMPLITUDES // (2 * 2**num_qubits)))


def fidelities(circuit: Any, pairs: int, generator: torch.Generator, *, chunk: int | None = None) -> Tensor:
    """``F = |<psi(a)|psi(b)>|^2`` of ``pairs`` random parameter pairs ``[pairs]`` (float64), in chunks of
    ``chunk`` pairs (default :func:`default_chunk`); each chunk draws its ``2 * chunk`` parameter vectors in turn."""
    chunk = default_chunk(circuit.num_qubits) if chunk is None else chunk
    out = []
    left = pairs
    while left > 0:
        m = min(chunk, left)
        states = sample_states(circuit, 2 * m, generator)  # [2m, 2**n]
        a, b = states[:m], states[m:]
        out.append((torch.sum(a.conj() * b, dim=-1).abs() ** 2).real)  # [m]
        left -= m
    return torch.cat(out)


def meyer_wallach(states: Tensor, num_qubits: int) -> Tensor:
    """Meyer-Wallach Q of each state ``[B, 2**n] -> [B]`` (qiskit order; Q in [0, 1])."""
    b = states.shape[0]
    t = states.reshape(b, *([2] * num_qubits))  # axis 1 + (n-1-q) is qubit q
    purity = torch.zeros(b, dtype=torch.float64, device=states.device)
    for q in range(num_qubits):
        axis = 1 + (num_qubits - 1 - q)
        m = torch.movedim(t, axis, 1).reshape(b, 2, -1)  # [B, 2, rest]
        rho = m @ m.conj().transpose(1, 2)  # [B, 2, 2] reduced state of qubit q
        purity = purity + (rho.abs() ** 2).sum(dim=(1, 2)).real.to(torch.float64)
    return 2.0 * (1.0 - purity / num_qubits)


@dataclass(frozen=True, kw_only=True)
class Descriptors:
    """A circuit's descriptors: ``expressibility_kl`` (nats; lower is more expressive), ``meyer_wallach``
    (mean Q over random parameters), its spread (``mw_std``), and the settings (pairs, bins, seed)."""

    expressibility_kl: float
    meyer_wallach: float
    mw_std: float
    num_qubits: int
    num_parameters: int
    pairs: int
    bins: int
    seed: int


def describe(circuit: Any, *, pairs: int = DEFAULT_PAIRS, bins: int = DEFAULT_BINS, seed: int = 0) -> Descriptors:
    """Expressibility (``pairs`` pairs, ``bins`` bins) and entangling capability (MW over the first states
    of the same draws: ``2 * pairs`` states) of ``circuit`` (a qiskit circuit; parameters in [0, 2 pi)).

    Example::

        >>> from workbench.quantum.topgen.templates import sim_circuit
        >>> d = describe(sim_circuit(9, 4), pairs=2000)
        >>> round(d.meyer_wallach, 6)   # a linear cluster state up to local rotations
        1.0
    """
    if pairs < 1:
        raise ValueError(f"pairs={pairs} is out of range: valid range is >= 1")
    with one_thread():
        return _describe(circuit, pairs, bins, seed)


def _describe(circuit: Any, pairs: int, bins: int, seed: int) -> Descriptors:
    g = torch.Generator().manual_seed(int(seed))
    n = circuit.num_qubits
    fid = fidelities(circuit, pairs, g)
    g2 = torch.Generator().manual_seed(int(seed) + 1)
    mw = meyer_wallach(sample_states(circuit, min(2 * pairs, 4096, max(16, MAX_AMPLITUDES // 2**n)), g2), n)
    return Descriptors(
        expressibility_kl=kl_to_haar(fid, n, bins),
        meyer_wallach=float(mw.mean()),
        mw_std=float(mw.std()) if mw.numel() > 1 else 0.0,
        num_qubits=n,
        num_parameters=circuit.num_parameters,
        pairs=pairs,
        bins=bins,
        seed=seed,
    )
