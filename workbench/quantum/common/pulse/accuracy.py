"""How many sub-steps per sample of dt a schedule needs for an error budget against continuous time.

The piecewise-constant propagator holds each sample's envelope (exact: an AWG holds it) but also freezes the
frame phases ``exp(i (omega_i - omega_j) t)`` of the couplings and cross-resonance drives over each interval: a
midpoint rule, second order, so the error against continuous time falls as ``e(1) / k^2`` with ``k`` sub-steps
(measured on fake_jakarta's check schedule, rho against a continuous-time qutip model: 7.9e-3, 4.9e-4, 3.0e-5,
1.7e-6 at 1, 4, 16, 64). :func:`substeps_for` estimates ``e(1)`` a posteriori from the noiseless unitaries at one
and two sub-steps (Richardson: ``e(1) ~ 4/3 max |U_1 - U_2|``) and returns the fewest power-of-two sub-steps whose
predicted error ``e(1) / k^2`` is within ``tolerance`` (max abs element of the unitary).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.propagate import unitary
from workbench.quantum.common.pulse.schedule import Schedule

__all__ = ["MAX_SUBSTEPS", "SubstepChoice", "substeps_for"]

MAX_SUBSTEPS = 64


@dataclass(frozen=True)
class SubstepChoice:
    """``substeps`` chosen for ``tolerance``; ``error_at_one``: the estimated error with one sub-step;
    ``predicted_error``: ``error_at_one / substeps^2``; ``met``: whether it is within the tolerance (False only
    when even :data:`MAX_SUBSTEPS` is not enough)."""

    substeps: int
    tolerance: float
    error_at_one: float
    predicted_error: float
    met: bool


def substeps_for(device: PulseDevice, schedule: Schedule, tolerance: float) -> SubstepChoice:
    """The fewest power-of-two sub-steps (1..64) for ``|U_k - U_continuous| <= tolerance`` on ``schedule``."""
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance={tolerance:g} is out of range: valid range is (0, 1) (max abs error of U)")
    quiet = device.noiseless()
    u1 = unitary(hamiltonian_steps(quiet, schedule, substeps=1))
    u2 = unitary(hamiltonian_steps(quiet, schedule, substeps=2))
    e1 = 4 / 3 * float((u1 - u2).abs().max())
    k = 1
    while e1 / k**2 > tolerance and k < MAX_SUBSTEPS:
        k *= 2
    return SubstepChoice(k, tolerance, e1, e1 / k**2, e1 / k**2 <= tolerance)
