"""What the pulse-sim panel and notebook show: one pulse's trajectory (the experiment's :func:`pulse_view`,
re-exported), Rabi curves, DRAG and CR scans.

Caches: the views are memoised in memory (:func:`clear_caches` empties them, the calibrated natives' memory cache
included); calibrated natives come from :func:`workbench.quantum.common.pulse.calibrated.calibrated_natives`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from workbench.quantum.common.pulse.calibrated import cached_natives, clear_calibration_cache
from workbench.quantum.common.pulse.fidelity import average_gate_fidelity, from_qiskit, leakage
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import calibration_warnings
from workbench.quantum.common.pulse.propagate import unitary
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag, gaussian, gaussian_square
from workbench.quantum.device import Device
from workbench.quantum.pulse_sim import experiment
from workbench.quantum.pulse_sim.config import PulseSimConfig
from workbench.quantum.pulse_sim.experiment import TWO_PI_MHZ, PulseView, pulse_of, pulse_view, single_transmon
from workbench.threads import one_thread

__all__ = [
    "pulse_of",
    "PulseView",
    "pulse_view",
    "rabi_curve",
    "drag_scan",
    "cr_scan",
    "calibration_notes",
    "clear_caches",
]


@functools.lru_cache(maxsize=64)
@one_thread()
def _rabi(config: PulseSimConfig, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dev = single_transmon(config).noiseless()
    amps = np.linspace(0.0, 1.0, points)
    unit = pulse_of(config, amp=1.0)
    base = hamiltonian_steps(dev, Schedule.of([Play("d0", unit, 0, config.detuning_mhz * TWO_PI_MHZ)]),
                             substeps=1)  # fmt: skip
    h0 = hamiltonian_steps(dev, Schedule.of([Play("d0", 0 * unit, 0, 0.0)]), substeps=1).h
    drive = base.h - h0  # the drive term is linear in the amplitude
    h = h0.unsqueeze(0) + torch.as_tensor(amps).view(-1, 1, 1, 1) * drive.unsqueeze(0)
    u = torch.linalg.matrix_exp(-1j * base.step_ns * h)  # (amps, steps, d, d)
    while u.shape[1] > 1:
        if u.shape[1] % 2:
            u = torch.cat([u[:, :-2], (u[:, -1] @ u[:, -2]).unsqueeze(1)], 1)
        u = u[:, 1::2] @ u[:, 0::2]
    col = u[:, 0, :, 0].abs() ** 2
    p2 = col[:, 2].numpy() if config.levels == 3 else np.zeros(points)
    return amps, col[:, 1].numpy(), p2


def rabi_curve(config: PulseSimConfig, points: int = 41) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(amplitudes 0..1, final P(1), final P(2)) of the pulse's shape from |0>, no relaxation (memoised).

    One interval per sample: exact for a resonant drive on one transmon (the envelope is constant over a sample
    and there is no frame phase), second order in ``detuning * dt`` otherwise."""
    return _rabi(config, points)


@functools.lru_cache(maxsize=16)
def drag_scan(device: Device, qubit: int, betas: tuple[float, ...], duration: int = 32, sigma: float = 8.0) -> dict:
    """Leakage and X-gate error of a pi pulse of ``duration`` samples over DRAG ``betas`` (3 levels, alone).

    The amplitude follows the area rule of the plain Gaussian; the analytic DRAG value is
    ``beta = -1 / (2 anharmonicity dt)`` (samples)."""
    dev = device.transmons((qubit,), levels=3).noiseless()
    area = float(gaussian(duration, 1.0, sigma).real.sum())
    amp = math.pi / (dev.drive[0] * area * dev.dt)
    if amp > 1.0:
        raise ValueError(f"duration={duration} is too short for a pi pulse on {dev.name}: amplitude {amp:.2f} > 1")
    target = from_qiskit(np.array([[0, 1], [1, 0]]), 1)
    leak, err = [], []
    for b in betas:
        u = unitary(hamiltonian_steps(dev, Schedule.of([Play("d0", drag(duration, amp, sigma, b))])))
        leak.append(float(leakage(u, 1, 3)))
        err.append(1 - float(average_gate_fidelity(u, target, 1, 3)))
    return {"betas": np.array(betas), "leakage": np.array(leak), "error": np.array(err), "amp": amp,
            "analytic_beta": -1 / (2 * dev.anharmonicity[0] * dev.dt), "duration_ns": duration * dev.dt}  # fmt: skip


@functools.lru_cache(maxsize=16)
def cr_scan(device: Device, qubit: int, target: int, amp: float, durations: tuple[int, ...]) -> dict:
    """P(target = 1) after a CR GaussianSquare of each duration, with the control in |0> and in |1>."""
    pair = device.transmons((qubit, target), levels=3).noiseless()
    lv = pair.levels
    p_c0, p_c1 = [], []
    for d in durations:
        u = unitary(hamiltonian_steps(pair, Schedule.of([Play("u0-1", gaussian_square(d, amp, 64, d - 256))])))
        col0, col1 = u[:, 0].abs() ** 2, u[:, lv].abs() ** 2  # from |00> and |10>
        p_c0.append(float(sum(col0[a * lv + 1] for a in range(lv))))
        p_c1.append(float(sum(col1[a * lv + 1] for a in range(lv))))
    return {"durations_ns": np.array(durations) * pair.dt, "control_0": np.array(p_c0), "control_1": np.array(p_c1)}


def calibration_notes(config: PulseSimConfig) -> tuple[str, ...]:
    """Warnings of the pair ``qubit -> target``'s calibration (ECR below its fidelity target), when it has been
    calibrated before (cheap: nothing is calibrated here)."""
    try:
        natives = cached_natives(config.resolved_device(), config.qubit, config.target, config.levels)
    except ValueError:  # not a coupled pair, or a qubit outside the Hamiltonian
        return ()
    return calibration_warnings(natives) if natives is not None else ()


def clear_caches() -> None:
    """Empty the in-memory caches, the calibrated natives' included (their disk cache stays)."""
    experiment.clear_caches()
    _rabi.cache_clear()
    drag_scan.cache_clear()
    cr_scan.cache_clear()
    clear_calibration_cache()
