"""The rotating-frame transmon Hamiltonian of a schedule, piecewise constant over sub-steps of ``dt``.

Each qubit ``q`` is described in the frame rotating at its own frequency ``omega_q`` (rad/ns), which removes the
``omega_q n_q`` terms and leaves (RWA, hbar = 1)::

    H(t) = sum_q anharm_q / 2 n_q (n_q - 1)
         + sum_(i<j) J_ij (a_i^dag a_j e^{i (omega_i - omega_j) t} + h.c.)
         + sum_channels drive_q / 2 (d(t) e^{-i ((omega_f - omega_q) t + Phi(t))} a_q^dag + h.c.)

for a channel acting on qubit ``q`` at frame qubit ``f``'s frequency (``f = q`` for ``d<q>``, the target for
``u<c>-<t>``), with envelope ``d(t)`` and detuning phase ``Phi(t) = delta (t - start of the play)``. With this
convention a real envelope rotates about +X and a phase ``phi`` about ``cos(phi) X + sin(phi) Y``: the area
rule is ``theta = drive_q * sum(d) * dt`` for a resonant pulse.

Every sample of ``dt`` is split into ``substeps`` equal intervals, each with ``H`` at its midpoint (the
envelope is constant over a sample, as an AWG plays it; the frame phases are not, hence the sub-steps).
``time_scale`` stretches every interval (pulse stretching for ZNE: the caller divides amplitudes by it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.schedule import Schedule
from workbench.threads import one_thread

__all__ = ["Operators", "operators", "HamiltonianSteps", "hamiltonian_steps", "drift"]


@dataclass(frozen=True)
class Operators:
    """Annihilation and number operators of every qubit in the full space (dim = levels ** n), complex128."""

    a: tuple[torch.Tensor, ...]
    n: tuple[torch.Tensor, ...]
    dim: int


@functools.lru_cache(maxsize=32)
def operators(num_qubits: int, levels: int) -> Operators:
    """``a_q`` = I x .. x a x .. x I with qubit 0 the most significant factor (big-endian, like a ket |q0 q1>)."""
    lowering = torch.diag(torch.sqrt(torch.arange(1, levels, dtype=torch.float64)), 1).to(torch.complex128)
    eye = torch.eye(levels, dtype=torch.complex128)
    a = []
    for q in range(num_qubits):
        op = torch.ones(1, 1, dtype=torch.complex128)
        for k in range(num_qubits):
            op = torch.kron(op, lowering if k == q else eye)
        a.append(op)
    n = tuple(x.mH @ x for x in a)
    return Operators(tuple(a), n, levels**num_qubits)


def drift(device: PulseDevice) -> torch.Tensor:
    """The static part: anharmonicities (dim x dim)."""
    ops = operators(device.num_qubits, device.levels)
    h = torch.zeros(ops.dim, ops.dim, dtype=torch.complex128)
    for q, n in enumerate(ops.n):
        h = h + device.anharmonicity[q] / 2 * (n @ n - n)
    return h


@dataclass(frozen=True)
class HamiltonianSteps:
    """``h``: (steps, dim, dim) Hermitian; ``step_ns``: the length of each interval; ``times``: midpoints (ns);
    ``substeps``: intervals per sample of dt."""

    h: torch.Tensor
    step_ns: float
    times: torch.Tensor
    substeps: int = 1


@one_thread()
def hamiltonian_steps(
    device: PulseDevice, schedule: Schedule, *, substeps: int = 4, time_scale: float = 1.0
) -> HamiltonianSteps:
    """The piecewise-constant Hamiltonian of ``schedule`` on ``device`` (rad/ns)."""
    if not 1 <= substeps <= 64:
        raise ValueError(f"substeps={substeps} is out of range: valid range is 1..64")
    if not 0.1 <= time_scale <= 100:
        raise ValueError(f"time_scale={time_scale} is out of range: valid range is 0.1..100")
    ops = operators(device.num_qubits, device.levels)
    n = schedule.duration
    if n == 0:
        raise ValueError("schedule is empty: duration 0 samples")
    step = device.dt * time_scale / substeps
    steps = n * substeps
    t = (torch.arange(steps, dtype=torch.float64) + 0.5) * step
    terms: list[torch.Tensor] = []  # coefficient (steps,) per operator
    mats: list[torch.Tensor] = []
    for i, j, J in device.couplings:
        terms.append(J * torch.exp(1j * (device.omega[i] - device.omega[j]) * t))
        mats.append(ops.a[i].mH @ ops.a[j])
    for ch, env in schedule.envelopes(device, substeps).values():
        q = ch.qubit
        carrier = (device.omega[ch.frame] - device.omega[q]) * t
        terms.append(device.drive[q] / 2 * env * torch.exp(-1j * carrier.to(torch.complex128)))
        mats.append(ops.a[q].mH)
    h = drift(device).expand(steps, ops.dim, ops.dim)
    if terms:
        c = torch.stack(terms, 1)  # (steps, terms)
        m = torch.stack(mats, 0)  # (terms, dim, dim)
        off = torch.einsum("st,tij->sij", c, m)
        h = h + off + off.mH
    return HamiltonianSteps(h, step, t, substeps)
