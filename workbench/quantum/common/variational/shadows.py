"""Pauli measurement settings, their native basis-change gates, and classical-shadow state reconstruction.

A *setting* is one Pauli letter per qubit (``0 = Z, 1 = X, 2 = Y``; array ``[K, n]``, qubit q in column q).
Measuring qubit q in basis P means appending a rotation that maps P's +1 eigenstate to ``|0>`` and reading
the computational basis: ``X``: ``rz(pi/2) sx rz(pi/2)`` (= H up to phase), ``Y``: ``sx rz(pi/2)`` (= H S^dag
up to phase), ``Z``: nothing. On a machine these gates carry their own noise.

Classical shadows (Huang, Kueng, Preskill, Nat. Phys. 16, 1050 (2020)): one outcome bit ``x_q`` in basis
``P_q`` gives the single-qubit snapshot ``3 U^dag|x><x|U - I = I/2 + (3/2)(-1)^x P_q``; the n-qubit snapshot is
their tensor product and its mean over uniformly random settings is an unbiased estimate of ``rho``.
:func:`shadow_density` averages it over the observed outcome *frequencies* of each setting; with exact
probabilities of all ``3**n`` settings it returns ``rho`` exactly (tested to round-off).

:func:`term_settings` groups the terms of a Pauli sum into few settings (qubit-wise commuting groups) for
measuring an energy (:func:`~workbench.quantum.common.variational.losses.pauli_energy`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "BASIS_STEPS",
    "all_settings",
    "random_settings",
    "shadow_density",
    "fidelity_to_pure",
    "shadow_fidelity",
    "term_settings",
    "pauli_codes",
]

#: native gates (name, angle) applied, in order, before a computational-basis measurement of Pauli 0=Z, 1=X, 2=Y
BASIS_STEPS: tuple[tuple[tuple[str, float | None], ...], ...] = (
    (),
    (("rz", math.pi / 2), ("sx", None), ("rz", math.pi / 2)),
    (("sx", None), ("rz", math.pi / 2)),
)

#: a Pauli label's letter as a setting code (0 = Z, 1 = X, 2 = Y, as in :data:`BASIS_STEPS`); -1: identity
_CODE = {"I": -1, "Z": 0, "X": 1, "Y": 2}


def pauli_codes(label: str, num_qubits: int) -> np.ndarray:
    """``[n]`` int64: the setting code of each qubit's letter in a Pauli ``label`` (qiskit order: the rightmost
    letter is qubit 0), -1 where the letter is I. ValueError for a label of another length or other letters."""
    if len(label) != num_qubits or any(ch not in _CODE for ch in label):
        raise ValueError(f"term label {label!r} is not a Pauli string of {num_qubits} letters from I, X, Y, Z")
    return np.array([_CODE[ch] for ch in reversed(label)], dtype=np.int64)


_PAULI = (
    np.array([[1, 0], [0, -1]], dtype=np.complex128),
    np.array([[0, 1], [1, 0]], dtype=np.complex128),
    np.array([[0, -1j], [1j, 0]], dtype=np.complex128),
)


def all_settings(num_qubits: int) -> np.ndarray:
    """Every one of the ``3**n`` settings, ``[3**n, n]`` int64 (qubit 0 varies fastest)."""
    rows = [tuple(reversed(s)) for s in itertools.product(range(3), repeat=num_qubits)]
    return np.asarray(rows, dtype=np.int64).reshape(-1, num_qubits)


def random_settings(num_qubits: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` settings drawn uniformly at random, ``[count, n]`` int64."""
    if count < 1:
        raise ValueError(f"bases={count} is out of range: valid range is >= 1 (measurement settings)")
    return rng.integers(0, 3, size=(count, num_qubits), dtype=np.int64)


def _snapshot_ops(dtype: torch.dtype) -> Tensor:
    """``[3 (basis), 2 (outcome), 2, 2]``: ``I/2 + (3/2)(-1)^x P``."""
    eye = np.eye(2, dtype=np.complex128)
    ops = np.stack([np.stack([eye / 2 + 1.5 * (-1) ** x * p for x in (0, 1)]) for p in _PAULI])
    return torch.as_tensor(ops).to(dtype)


def shadow_density(freqs: Tensor, settings: np.ndarray, *, dtype: torch.dtype = torch.complex128) -> Tensor:
    """The shadow estimate of ``rho`` from outcome frequencies.

    freqs: ``[..., K, 2**n]`` real, each row summing to 1 (outcome index = sum of bit q * 2**q);
    settings: ``[K, n]`` Pauli letters. Returns ``[..., 2**n, 2**n]`` Hermitian, trace 1 (not necessarily
    positive). Cost: ``O(K n 4**n)``.
    """
    settings = np.asarray(settings)
    k, n = settings.shape
    if freqs.shape[-2:] != (k, 2**n):
        raise ValueError(f"freqs has shape {list(freqs.shape)}: expected [..., {k}, {2**n}] for {k} settings")
    lead = freqs.shape[:-2]
    ops = _snapshot_ops(dtype).to(freqs.device)  # [3, 2, 2, 2]
    # t: [L, K, x_{n-1}, ..., x_0] -> contract x_q with ops[b_q] giving (i_q, j_q)
    t = freqs.reshape(-1, k, *([2] * n)).to(dtype)
    letters = "abcdefghijklmnopqrstuvw"
    xs = letters[:n]  # x_{n-1}..x_0 are xs[0..n-1]
    ii = letters[n : 2 * n]
    jj = letters[2 * n : 3 * n]
    operands = [t]
    subs = ["LK" + xs]
    for pos in range(n):  # pos 0 is qubit n-1
        q = n - 1 - pos
        operands.append(ops[torch.as_tensor(settings[:, q], device=freqs.device)])  # [K, 2, 2, 2]
        subs.append("K" + xs[pos] + ii[pos] + jj[pos])
    expr = ",".join(subs) + "->L" + ii + jj
    rho = torch.einsum(expr, *operands).reshape(-1, 2**n, 2**n) / k
    return rho.reshape(*lead, 2**n, 2**n)


def fidelity_to_pure(rho: Tensor, psi: Tensor) -> Tensor:
    """``<psi|rho|psi>`` (real) for ``rho`` ``[..., d, d]`` and a normalised pure state ``psi`` ``[d]``."""
    psi = psi.to(rho.dtype)
    return torch.einsum("i,...ij,j->...", psi.conj(), rho, psi).real


def shadow_fidelity(freqs: Tensor, settings: np.ndarray, psi: Tensor) -> tuple[Tensor, Tensor]:
    """Shadow estimate of ``<psi|rho|psi>`` and its standard error from the spread over settings.

    freqs ``[..., K, 2**n]``, settings ``[K, n]`` (drawn uniformly at random), psi ``[2**n]``. The K per-setting
    estimates are independent and identically distributed (setting draw and shot noise together), so the
    standard error is their sample standard deviation / sqrt(K). Returns two ``[...]`` real tensors.
    """
    settings = np.asarray(settings)
    k = settings.shape[0]
    rows = torch.stack(
        [fidelity_to_pure(shadow_density(freqs[..., i : i + 1, :], settings[i : i + 1]), psi) for i in range(k)], -1
    )
    mean = rows.mean(-1)
    err = rows.std(-1) / math.sqrt(k) if k > 1 else torch.full_like(mean, float("inf"))
    return mean, err


def term_settings(labels: Iterable[str], num_qubits: int | None = None) -> np.ndarray:
    """Settings ``[K, n]`` int64 that measure every Pauli label of ``labels`` (qiskit order: the rightmost
    letter is qubit 0): terms are grouped greedily, in order, into qubit-wise commuting groups (a term joins the
    first group whose letters agree with its own on every qubit both measure); a qubit no term of a group
    measures is read in Z. Identity labels need no setting; at least one setting is returned. ``num_qubits``
    defaults to the labels' length. ValueError for labels of another length or letters outside I, X, Y, Z.
    """
    labels = list(labels)
    n = num_qubits if num_qubits is not None else (len(labels[0]) if labels else 0)
    if n < 1:
        raise ValueError(f"num_qubits={n} is out of range: valid range is >= 1")
    groups: list[np.ndarray] = []
    for label in labels:
        row = pauli_codes(label, n)  # column q = qubit q
        if (row < 0).all():
            continue
        for g in groups:
            if np.all((g < 0) | (row < 0) | (g == row)):
                np.copyto(g, row, where=row >= 0)
                break
        else:
            groups.append(row.copy())
    if not groups:
        groups.append(np.full(n, -1, dtype=np.int64))
    return np.maximum(np.stack(groups), 0)
