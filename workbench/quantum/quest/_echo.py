"""First-order echo survival of every gate's noise (workbench extension to QuEst's encoding; numba, cached on disk).

PST runs a circuit U, then its inverse, and reads all-zero. One error channel Lambda (Kraus ``K_i``) after a gate,
with the ideal state ``psi`` there and no other error, leaves the echo at all-zero with probability
``s = sum_i |<psi|K_i|psi>|^2 = sum_i |Tr(rho K_i)|^2`` (``rho``: the reduced state of the gate's qubits), since the
rest of the echo maps ``psi`` back to |0..0>. A gate's noise acts twice in the echo: after the gate (state after
it) and after its inverse in the second half (the state before it; for ``sx``, whose inverse is ``rz(pi) sx
rz(pi)``, up to a z rotation the channels commute with). The encoding's column is the gate's **echo cost**
``-log s_after - log s_before``.

The channel is the one aer's device model applies: depolarizing ``p``, then thermal relaxation of each qubit over
the gate's duration (T2 <= 2 T1). Thermal relaxation (amplitude damping ``g = 1 - E``, then pure dephasing) has,
per qubit, the Kraus operators ``u diag(1, sqrt E)``, ``v diag(1, -sqrt E)`` and ``sqrt(g) |0><1|`` (``E =
exp(-t/T1)``, ``L = exp(-t/T2)``, ``u^2, v^2 = (1 +- c)/2``, ``c = L / sqrt E``; the two decay operators of
the composition are parallel and merge), so ``s_relax`` is a sum of 9 (two qubits) or 3 squared traces of
entries of ``rho``. The depolarizing part applied before it gives
``s = (1 - p) s_relax + (p/d) Tr(rho^2 Lambda_relax(I))`` (sum over Paulis of ``|Tr(rho K P)|^2`` is
``d Tr(rho K K^dag rho)``), with ``Lambda_relax(I) = (x)_q diag(1 + g_q, 1 - g_q)``.
Tested against the same survival from qiskit's Kraus operators of the aer noise model's own channels.

Wires are bits of the state index (wire w is bit w); a two-qubit gate's matrix acts on index ``bit_a + 2 bit_b``
(qiskit's order, qubit a = the gate's first qubit).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["echo_costs", "GATE_MATRICES_1Q", "GATE_MATRICES_2Q"]

_S = 1 / math.sqrt(2)
#: x, sx (type codes 1, 2; rz is code 0, diagonal, built in the kernel)
GATE_MATRICES_1Q = np.array(
    [[[0, 1], [1, 0]], [[(1 + 1j) / 2, (1 - 1j) / 2], [(1 - 1j) / 2, (1 + 1j) / 2]]], dtype=np.complex128
)
#: cx, ecr, cz (type codes 3, 4, 5) on index bit_a + 2 bit_b
GATE_MATRICES_2Q = np.array(
    [
        [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]],
        [[0, _S, 0, 1j * _S], [_S, 0, -1j * _S, 0], [0, 1j * _S, 0, _S], [-1j * _S, 0, _S, 0]],
        [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, -1]],
    ],
    dtype=np.complex128,
)
_FLOOR = 1e-12  # survival floor before the log (an all-destroying channel)


@numba.njit(cache=True, nogil=True)
def _reduced(psi, ma, mb, rho):  # pragma: no cover
    """Reduced density matrix of the wires with bit masks ``ma``, ``mb`` (``mb = 0``: one wire, the [2, 2] block
    of ``rho``) into ``rho [4, 4]``, index bit_a + 2 bit_b (upper triangle summed, lower filled by symmetry)."""
    rho[:, :] = 0
    dim = 4 if mb else 2
    mask = ma | mb
    x = np.empty(4, dtype=np.complex128)
    for i in range(psi.shape[0]):
        if i & mask:
            continue
        x[0], x[1] = psi[i], psi[i | ma]
        if dim == 4:
            x[2], x[3] = psi[i | mb], psi[i | ma | mb]
        for j in range(dim):
            xj = x[j]
            for k in range(j, dim):
                rho[j, k] += xj * np.conj(x[k])
    for j in range(dim):
        for k in range(j):
            rho[j, k] = np.conj(rho[k, j])


@numba.njit(cache=True, nogil=True)
def _kraus(e, lam, out):  # pragma: no cover
    """Thermal relaxation's Kraus operators as numbers, into ``out [5]``: ``u diag(1, sqrt E)`` and
    ``v diag(1, -sqrt E)`` as (u, u sqrt E, v, -v sqrt E) and ``sqrt(g) |0><1|`` as sqrt(g)."""
    root = math.sqrt(e)
    c = min(lam / root, 1.0) if root > 0 else 0.0
    u, v = math.sqrt((1 + c) / 2), math.sqrt((1 - c) / 2)
    out[0], out[1], out[2], out[3] = u, u * root, v, -v * root
    out[4] = math.sqrt(max(1.0 - e, 0.0))


@numba.njit(cache=True, nogil=True)
def _survival(psi, qa, qb, ea, la, eb, lb, p, rho, ka, kb):  # pragma: no cover
    """Echo survival of a gate's channel at state ``psi`` (qubit b = -1: a one-qubit gate); see the module
    docstring. ``rho [4, 4]`` and ``ka``/``kb [5]`` are work arrays."""
    two = qb >= 0
    dim = 4 if two else 2
    _reduced(psi, 1 << qa, (1 << qb) if two else 0, rho)
    _kraus(ea, la, ka)
    _kraus(eb, lb, kb)
    s = 0.0
    if two:
        for i in range(2):  # diagonal Kraus of qubit a (u or v) ...
            da0, da1 = ka[2 * i], ka[2 * i + 1]
            for j in range(2):  # ... times diagonal Kraus of qubit b
                db0, db1 = kb[2 * j], kb[2 * j + 1]
                t = rho[0, 0] * da0 * db0 + rho[1, 1] * da1 * db0 + rho[2, 2] * da0 * db1 + rho[3, 3] * da1 * db1
                s += t.real**2 + t.imag**2
        for j in range(2):
            db0, db1 = kb[2 * j], kb[2 * j + 1]
            t = (rho[1, 0] * db0 + rho[3, 2] * db1) * ka[4]  # a decays, b diagonal
            s += t.real**2 + t.imag**2
        for i in range(2):
            da0, da1 = ka[2 * i], ka[2 * i + 1]
            t = (rho[2, 0] * da0 + rho[3, 1] * da1) * kb[4]  # b decays, a diagonal
            s += t.real**2 + t.imag**2
        t = rho[3, 0] * ka[4] * kb[4]  # both decay
        s += t.real**2 + t.imag**2
    else:
        for i in range(2):
            t = rho[0, 0] * ka[2 * i] + rho[1, 1] * ka[2 * i + 1]
            s += t.real**2 + t.imag**2
        t = rho[1, 0] * ka[4]
        s += t.real**2 + t.imag**2
    # Tr(rho^2 Lambda(I)), Lambda(I) diagonal: (rho^2)_jj = sum_k |rho_jk|^2
    ga, gb = 1.0 - ea, 1.0 - eb
    purity_m = 0.0
    for j in range(dim):
        row = 0.0
        for k in range(dim):
            row += rho[j, k].real ** 2 + rho[j, k].imag ** 2
        m = (1 + ga * (1 - 2 * (j & 1))) * ((1 + gb * (1 - 2 * (j >> 1))) if two else 1.0)
        purity_m += row * m
    return (1 - p) * s + p / dim * purity_m


@numba.njit(cache=True, nogil=True)
def _apply(psi, kind, qa, qb, angle, m1, m2):  # pragma: no cover
    """Apply gate ``kind`` (0 rz, 1 x, 2 sx, 3 cx, 4 ecr, 5 cz) to ``psi`` in place."""
    ma = 1 << qa
    if kind == 0:
        lo, hi = np.exp(-0.5j * angle), np.exp(0.5j * angle)
        for i in range(psi.shape[0]):
            psi[i] *= hi if i & ma else lo
    elif kind < 3:
        u = m1[kind - 1]
        for i in range(psi.shape[0]):
            if i & ma:
                continue
            x0, x1 = psi[i], psi[i | ma]
            psi[i] = u[0, 0] * x0 + u[0, 1] * x1
            psi[i | ma] = u[1, 0] * x0 + u[1, 1] * x1
    else:
        u = m2[kind - 3]
        mb = 1 << qb
        off = (0, ma, mb, ma | mb)
        for i in range(psi.shape[0]):
            if i & ma or i & mb:
                continue
            x = (psi[i], psi[i | ma], psi[i | mb], psi[i | ma | mb])
            for j in range(4):
                psi[i | off[j]] = u[j, 0] * x[0] + u[j, 1] * x[1] + u[j, 2] * x[2] + u[j, 3] * x[3]


@numba.njit(cache=True, nogil=True)
def _costs(kind, a, b, angle, ea, la, eb, lb, p, gate_ptr, width, m1, m2, floor):  # pragma: no cover
    out = np.zeros(len(kind))
    rho = np.zeros((4, 4), dtype=np.complex128)
    ka, kb = np.zeros(5), np.zeros(5)
    psi = np.zeros(1 << max(int(width.max()), 1), dtype=np.complex128)
    for c in range(len(gate_ptr) - 1):
        state = psi[: 1 << width[c]]
        state[:] = 0
        state[0] = 1.0
        for g in range(gate_ptr[c], gate_ptr[c + 1]):
            k = kind[g]
            noisy = k != 0 and (p[g] > 0 or ea[g] < 1 or la[g] < 1 or eb[g] < 1 or lb[g] < 1)
            if noisy:
                before = _survival(state, a[g], b[g], ea[g], la[g], eb[g], lb[g], p[g], rho, ka, kb)
            _apply(state, k, a[g], b[g], angle[g], m1, m2)
            if noisy:
                after = _survival(state, a[g], b[g], ea[g], la[g], eb[g], lb[g], p[g], rho, ka, kb)
                out[g] = -math.log(max(before, floor)) - math.log(max(after, floor))
    return out


def echo_costs(
    kind: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    angle: np.ndarray,
    relax_a: tuple[np.ndarray, np.ndarray],
    relax_b: tuple[np.ndarray, np.ndarray],
    depolarizing: np.ndarray,
    gate_ptr: np.ndarray,
    width: np.ndarray,
) -> np.ndarray:
    """Echo cost ``[G]`` of every gate of every circuit (gates ``gate_ptr[c]:gate_ptr[c+1]`` of circuit c, on its
    ``width[c]`` wires): ``kind`` type codes (0 rz, 1 x, 2 sx, 3 cx, 4 ecr, 5 cz), ``a``/``b`` wires (b = -1 for
    one-qubit gates), ``angle`` rz angles (rad), ``relax_a``/``relax_b`` = (E, L) = (exp(-t/T1), exp(-t/T2)) of
    each gate's qubits over its duration (1 for none), ``depolarizing`` aer's depolarizing parameter of the gate."""
    f = np.ascontiguousarray
    return _costs(
        f(kind, dtype=np.int64),
        f(a, dtype=np.int64),
        f(b, dtype=np.int64),
        f(angle, dtype=np.float64),
        f(relax_a[0], dtype=np.float64),
        f(relax_a[1], dtype=np.float64),
        f(relax_b[0], dtype=np.float64),
        f(relax_b[1], dtype=np.float64),
        f(depolarizing, dtype=np.float64),
        f(gate_ptr, dtype=np.int64),
        f(width, dtype=np.int64),
        GATE_MATRICES_1Q,
        GATE_MATRICES_2Q,
        _FLOOR,
    )
