"""Energy of a pulse schedule on two transmons: simulate, fold leakage, measure every Pauli term in its basis.

- the schedule runs from |00> (Lindblad with the device's T1/T2, or noiseless) on 3-level transmons;
- leakage is read as |1> (a discriminator's decision): the 9x9 state becomes a 2-qubit state with level-2
  populations added to level 1 and coherences with level 2 dropped;
- each Pauli term is measured in its own basis (X: H, Y: S^dag H, ideal rotations, as the code's ``u2``
  pre-rotations), with the device's readout confusion on the outcome probabilities (noisy setting), and its
  expectation is the parity of the outcome bits *at the term's non-identity positions only* (NAPA's tutorial
  took the parity of every bit, which is wrong for ``IZ``/``ZI``: a test catches it);
- ``shots`` > 0 samples each basis's outcomes (multinomial) instead of the exact probabilities.
"""

from __future__ import annotations

import numpy as np
import torch

from workbench.quantum.aer import apply_confusion
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.propagate import evolve_density
from workbench.quantum.common.pulse.schedule import Schedule
from workbench.quantum.molecules import pauli_matrix

__all__ = [
    "final_state",
    "fold_leakage",
    "term_expectation",
    "energy",
    "energy_of_state",
    "energy_and_gradient",
    "measured_hamiltonian",
    "BASIS_ROTATIONS",
]

_H = np.array([[1, 1], [1, -1]], dtype=complex) / np.sqrt(2)
_SDG = np.diag([1, -1j])
BASIS_ROTATIONS = {"I": np.eye(2, dtype=complex), "Z": np.eye(2, dtype=complex), "X": _H, "Y": _H @ _SDG}


def final_state(device: PulseDevice, schedule: Schedule, *, substeps: int = 2) -> torch.Tensor:
    """The transmons' density matrix (levels^2 x levels^2) after ``schedule`` from |00>."""
    rho = torch.zeros(device.dim, device.dim, dtype=torch.complex128)
    rho[0, 0] = 1
    return evolve_density(rho, hamiltonian_steps(device, schedule, substeps=substeps), device)


def fold_leakage(rho: np.ndarray, levels: int) -> np.ndarray:
    """A 2-transmon state as a 2-qubit state (big-endian |q0 q1>): level >= 1 of each transmon read as 1."""
    if levels == 2:
        return rho
    out = np.zeros((4, 4), dtype=complex)
    keep = {}  # full index -> (qubit index or None when leaked)
    for a in range(levels):
        for b in range(levels):
            keep[a * levels + b] = (min(a, 1) * 2 + min(b, 1), a < 2 and b < 2)
    for i, (qi, clean_i) in keep.items():
        for j, (qj, clean_j) in keep.items():
            if i == j:
                out[qi, qi] += rho[i, i]
            elif clean_i and clean_j:
                out[qi, qj] += rho[i, j]
    return out


def _to_qiskit_order(rho: np.ndarray) -> np.ndarray:
    """Big-endian |q0 q1> -> qiskit's |q1 q0> ordering of a 2-qubit matrix."""
    perm = [0, 2, 1, 3]
    return rho[np.ix_(perm, perm)]


def term_expectation(
    rho_q: np.ndarray,
    label: str,
    confusion: list[np.ndarray] | None = None,
    *,
    shots: int = 0,
    rng: np.random.Generator | None = None,
) -> float:
    """<P> for a qiskit-order label (e.g. ``"XZ"``: X on qubit 1, Z on qubit 0) of a qiskit-order 2-qubit state."""
    n = len(label)
    rot = np.ones((1, 1), dtype=complex)
    for ch in label:  # leftmost = highest qubit = most significant factor
        rot = np.kron(rot, BASIS_ROTATIONS[ch])
    probs = np.real(np.diag(rot @ rho_q @ rot.conj().T)).clip(0, None)
    probs = probs / probs.sum()
    # per-qubit confusion matrices, qubit 0 first; outcome index bit q = qubit q
    probs = apply_confusion(probs, confusion, n)
    if shots:
        rng = rng or np.random.default_rng(0)
        probs = rng.multinomial(shots, probs) / shots
    positions = [n - 1 - k for k, ch in enumerate(label) if ch != "I"]  # qubit indices of the term
    x = np.arange(2**n)
    parity = np.zeros(2**n, dtype=np.int64)
    for q in positions:
        parity ^= (x >> q) & 1
    return float(probs @ (1 - 2 * parity))


def energy_of_state(
    device: PulseDevice,
    rho: np.ndarray,
    terms: tuple[tuple[float, str], ...],
    *,
    readout: bool = True,
    shots: int = 0,
    seed: int = 0,
) -> float:
    """<H> measured term by term on a transmon state ``rho`` (levels^2 x levels^2)."""
    rho_q = _to_qiskit_order(fold_leakage(rho, device.levels))
    confusion = None
    if readout and (any(device.readout_p01) or any(device.readout_p10)):
        confusion = [
            np.array(
                [[1 - device.readout_p01[q], device.readout_p10[q]], [device.readout_p01[q], 1 - device.readout_p10[q]]]
            )
            for q in range(device.num_qubits)
        ]
    rng = np.random.default_rng(seed)
    total = 0.0
    for coeff, label in terms:
        if set(label) == {"I"}:
            total += coeff
        else:
            total += coeff * term_expectation(rho_q, label, confusion, shots=shots, rng=rng)
    return total


def energy(
    device: PulseDevice,
    schedule: Schedule,
    terms: tuple[tuple[float, str], ...],
    *,
    readout: bool = True,
    shots: int = 0,
    seed: int = 0,
    substeps: int = 2,
) -> float:
    """<H> of the state the schedule prepares from |00> (Ha), measured term by term (module docstring)."""
    rho = final_state(device, schedule, substeps=substeps).numpy()
    return energy_of_state(device, rho, terms, readout=readout, shots=shots, seed=seed)


def measured_hamiltonian(device: PulseDevice, terms: tuple[tuple[float, str], ...], *, readout: bool) -> np.ndarray:
    """The 4x4 operator (qiskit order) whose expectation on the folded 2-qubit state is the energy
    :func:`energy_of_state` measures with exact probabilities (``shots=0``), readout error included.

    Per qubit q, a read bit flips 0->1 with ``p01`` and 1->0 with ``p10``, independently, so a measured parity over
    the term's positions S has expectation ``prod_{q in S} (mu_q + lambda_q s_q)`` with ``s_q = +-1`` the true
    eigenvalue, ``lambda_q = 1 - p01 - p10``, ``mu_q = p10 - p01``: each Pauli ``P_q`` of a term becomes
    ``mu_q I + lambda_q P_q``. Without readout error this is the Hamiltonian itself."""
    if not readout or not (any(device.readout_p01) or any(device.readout_p10)):
        return pauli_matrix(terms, 2)
    lam = [1 - device.readout_p01[q] - device.readout_p10[q] for q in range(2)]
    mu = [device.readout_p10[q] - device.readout_p01[q] for q in range(2)]
    eye = np.eye(2, dtype=complex)
    paulis = {"X": np.array([[0, 1], [1, 0]], complex), "Y": np.array([[0, -1j], [1j, 0]]), "Z": np.diag([1, -1])}
    out = np.zeros((4, 4), dtype=complex)
    for coeff, label in terms:
        op = np.ones((1, 1), dtype=complex)
        for k, ch in enumerate(label):  # leftmost = qubit 1
            q = len(label) - 1 - k
            op = np.kron(op, eye if ch == "I" else mu[q] * eye + lam[q] * paulis[ch])
        out += coeff * op
    return out


def energy_and_gradient(device: PulseDevice, build, x: np.ndarray, hamiltonian: np.ndarray, *, substeps: int = 2):
    """Exact ``Tr(fold(rho) H)`` (no readout error, infinite shots) and its gradient in ``x`` by autograd through the
    simulator; ``build(x_tensor)`` returns the schedule. ``hamiltonian``: 4x4 in qiskit order."""
    xt = torch.tensor(np.asarray(x, dtype=float), requires_grad=True)
    rho = final_state(device, build(xt), substeps=substeps)
    lv = device.levels
    idx = [a * lv + b for a in (0, 1) for b in (0, 1)]  # big-endian |q0 q1>, qubit block only
    block = rho[idx][:, idx]
    pops = torch.stack([sum(rho[a * lv + b, a * lv + b].real for a in range(lv) for b in range(lv)  # type: ignore[misc]  # sum() starts at 0
                            if min(a, 1) * 2 + min(b, 1) == k) for k in range(4)])  # fmt: skip
    folded = block - torch.diag(torch.diagonal(block)) + torch.diag(pops.to(torch.complex128))
    perm = [0, 2, 1, 3]
    folded = folded[perm][:, perm]
    h = torch.as_tensor(hamiltonian, dtype=torch.complex128)
    e = torch.einsum("ij,ji->", folded, h).real
    (g,) = torch.autograd.grad(e, xt)
    return float(e.detach()), g.numpy().copy()
