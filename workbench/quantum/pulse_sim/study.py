"""What the pulse-sim panel, notebook and CLI show: one pulse's trajectory, Rabi curves, calibrated natives,
and the checks against qutip and scipy.

Caches: the views are memoised in memory (:func:`clear_caches` empties them); calibrated natives come from
:func:`workbench.quantum.pulse.calibrated.calibrated_natives` (memoised and cached on disk there).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from workbench.quantum.device import Device, get_device
from workbench.quantum.pulse.calibrated import clear_calibration_cache
from workbench.quantum.pulse.device import PulseDevice
from workbench.quantum.pulse.fidelity import average_gate_fidelity, from_qiskit, leakage
from workbench.quantum.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.pulse.natives import (
    NativeGates,
    circuit_schedule,
    frame_rotation,
)
from workbench.quantum.pulse.propagate import dissipator, evolve_density, step_unitaries, unitary
from workbench.quantum.pulse.reference import ode_unitary, qutip_evolve
from workbench.quantum.pulse.schedule import Play, Schedule
from workbench.quantum.pulse.waveforms import constant, drag, gaussian, gaussian_square
from workbench.quantum.pulse_sim.config import PulseSimConfig
from workbench.threads import one_thread

__all__ = [
    "pulse_of",
    "PulseView",
    "pulse_view",
    "rabi_curve",
    "cx_check",
    "qutip_check",
    "convergence_check",
    "analytic_checks",
    "drag_scan",
    "cr_scan",
    "clear_caches",
]

TWO_PI_MHZ = 2 * math.pi * 1e-3  # rad/ns per MHz


def pulse_of(config: PulseSimConfig, amp: float | None = None) -> torch.Tensor:
    """The explored pulse's samples (complex, ``duration``)."""
    a = config.amp if amp is None else amp
    if config.shape == "gaussian":
        return gaussian(config.duration, a, config.sigma, config.phase)
    if config.shape == "drag":
        return drag(config.duration, a, config.sigma, config.beta, config.phase)
    if config.shape == "gaussian_square":
        return gaussian_square(config.duration, a, config.sigma, config.width, config.phase)
    return constant(config.duration, a, config.phase)


def _single(config: PulseSimConfig) -> PulseDevice:
    dev = get_device(config.device).transmons((config.qubit,), levels=config.levels)
    return dev.scaled_noise(config.noise_scale) if config.noise_scale else dev.noiseless()


@dataclass(frozen=True)
class PulseView:
    """One pulse from |0>: times (ns, per sample), envelope I/Q, populations of every level after each sample,
    Bloch vector of the qubit subspace, final P(1), leakage to |2> and the X/SX fidelities of the pulse."""

    times_ns: np.ndarray
    envelope: np.ndarray
    populations: np.ndarray  # (levels, samples + 1)
    bloch: np.ndarray  # (3, samples + 1)
    p1: float
    p2: float
    rotation_deg: float
    fidelity_x: float
    fidelity_sx: float
    duration_ns: float
    device: PulseDevice


@functools.lru_cache(maxsize=64)
def _pulse_view(config: PulseSimConfig) -> PulseView:
    dev = _single(config)
    samples = pulse_of(config)
    schedule = Schedule.of([Play("d0", samples, 0, config.detuning_mhz * TWO_PI_MHZ)])
    steps = hamiltonian_steps(dev, schedule, substeps=config.substeps)
    lv, sub = config.levels, config.substeps
    us = step_unitaries(steps).numpy()
    half = dissipator(dev, steps.step_ns / 2)
    trace = []
    if half is None:  # a pure state: |psi> after every sample
        psi = np.zeros(lv, complex)
        psi[0] = 1
        trace.append(np.outer(psi, psi.conj()))
        for k in range(us.shape[0]):
            psi = us[k] @ psi
            if (k + 1) % sub == 0:
                trace.append(np.outer(psi, psi.conj()))
    else:
        h = half.numpy()
        rho = np.zeros((lv, lv), complex)
        rho[0, 0] = 1
        trace.append(rho)
        for k in range(us.shape[0]):
            rho = (h @ rho.reshape(-1)).reshape(lv, lv)
            rho = us[k] @ rho @ us[k].conj().T
            rho = (h @ rho.reshape(-1)).reshape(lv, lv)
            if (k + 1) % sub == 0:
                trace.append(rho)
    rhos = np.stack(trace)
    pops = np.real(np.einsum("tii->it", rhos))
    bloch = np.stack([2 * rhos[:, 0, 1].real, -2 * rhos[:, 0, 1].imag, pops[0] - pops[1]])
    u = unitary(steps)
    x_target = from_qiskit(np.array([[0, 1], [1, 0]]), 1)
    sx_target = from_qiskit(np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]]) / 2, 1)
    p1 = float(pops[1, -1])
    return PulseView(
        times_ns=np.arange(config.duration + 1) * dev.dt,
        envelope=samples.numpy(),
        populations=pops,
        bloch=bloch,
        p1=p1,
        p2=float(pops[2, -1]) if lv == 3 else 0.0,
        rotation_deg=math.degrees(2 * math.asin(min(1.0, math.sqrt(max(0.0, p1))))),
        fidelity_x=float(average_gate_fidelity(u, x_target, 1, lv)),
        fidelity_sx=float(average_gate_fidelity(u, sx_target, 1, lv)),
        duration_ns=config.duration * dev.dt,
        device=dev,
    )


def pulse_view(config: PulseSimConfig) -> PulseView:
    """The trajectory of ``config``'s pulse on its qubit alone (memoised)."""
    return _pulse_view(config)


@functools.lru_cache(maxsize=64)
@one_thread()
def _rabi(config: PulseSimConfig, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dev = _single(config).noiseless()
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


def cx_check(natives: NativeGates) -> tuple[float, float]:
    """(average gate fidelity, duration in ns) of a CX compiled by qiskit to rz/sx/x/ecr and played as pulses."""
    from qiskit import QuantumCircuit, transpile
    from qiskit.quantum_info import Operator

    qc = QuantumCircuit(2)
    qc.cx(0, 1)
    tq = transpile(qc, basis_gates=["ecr", "rz", "sx", "x"], coupling_map=[[0, 1]], seed_transpiler=0)
    sched, frames = circuit_schedule(tq, natives)
    dev = natives.device
    u = frame_rotation(frames, dev) @ unitary(hamiltonian_steps(dev, sched))
    return float(average_gate_fidelity(u, from_qiskit(Operator(qc), 2), 2, dev.levels)), sched.duration * dev.dt


def _check_schedule() -> Schedule:
    return Schedule.of(
        [
            Play("d0", drag(160, 0.17, 40, 1.0, 0.3)),
            Play("u0-1", gaussian_square(301, 0.4, 64, 100.5, 1.0), 97),
            Play("d1", drag(160, 0.1, 40, 0.5), 50, 0.01),
        ]
    )


def qutip_check(device: Device, qubit: int, target: int, levels: int) -> dict[str, float]:
    """Max |rho_ours - rho_qutip| after a drive + CR + detuned drive schedule with T1/T2, and both run times."""
    pair = device.transmons((qubit, target), levels=levels)
    s = _check_schedule()
    dim = pair.dim
    rho = np.zeros((dim, dim), complex)
    i1 = levels + 1  # |11>
    rho[0, 0], rho[i1, i1], rho[0, i1], rho[i1, 0] = 0.7, 0.3, 0.3, 0.3
    t = time.perf_counter()
    ours = evolve_density(torch.from_numpy(rho), hamiltonian_steps(pair, s), pair).numpy()
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = qutip_evolve(pair, s, rho)
    qutip_s = time.perf_counter() - t
    return {"max_abs_diff": float(np.abs(ours - ref).max()), "ours_seconds": ours_s, "qutip_seconds": qutip_s}


def convergence_check(device: Device, qubit: int, target: int, levels: int) -> dict[int, float]:
    """Max |U_pc - U_ode| of a short drive + CR schedule for 1, 2, 4, 8 sub-steps (continuous frames by DOP853)."""
    pair = device.transmons((qubit, target), levels=levels).noiseless()
    s = Schedule.of([Play("d0", drag(64, 0.3, 16, 1.0, 0.3)), Play("u0-1", gaussian_square(80, 0.4, 16, 20, 1.0), 7)])
    exact = ode_unitary(pair, s)
    return {
        k: float(np.abs(unitary(hamiltonian_steps(pair, s, substeps=k)).numpy() - exact).max()) for k in (1, 2, 4, 8)
    }


def analytic_checks(device: Device, qubit: int) -> dict[str, float]:
    """Worst relative errors against closed forms: Rabi P(1) = sin^2(theta/2), T1 and T2 decay (2-level)."""
    dev = device.transmons((qubit,), levels=2)
    area = float(gaussian(160, 1.0, 40).real.sum())
    rabi = 0.0
    for theta in (0.3, math.pi / 2, math.pi, 2.5):
        amp = theta / (dev.drive[0] * area * dev.dt)
        u = unitary(hamiltonian_steps(dev.noiseless(), Schedule.of([Play("d0", gaussian(160, amp, 40))])))
        rabi = max(rabi, abs(float(abs(u[1, 0]) ** 2) - math.sin(theta / 2) ** 2))
    idle = hamiltonian_steps(dev, Schedule.of([Play("d0", constant(2000, 0.0))]), substeps=1)
    t = 2000 * dev.dt
    one = evolve_density(torch.tensor([[0, 0], [0, 1]], dtype=torch.complex128), idle, dev)
    plus = evolve_density(torch.full((2, 2), 0.5, dtype=torch.complex128), idle, dev)
    return {
        "rabi_max_abs_err": rabi,
        "t1_rel_err": abs(float(one[1, 1].real) / math.exp(-t / dev.t1[0]) - 1),
        "t2_rel_err": abs(float(abs(plus[0, 1])) / (0.5 * math.exp(-t / dev.t2[0])) - 1),
    }


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


def clear_caches() -> None:
    """Empty the in-memory caches, the calibrated natives' included (their disk cache stays)."""
    _pulse_view.cache_clear()
    _rabi.cache_clear()
    drag_scan.cache_clear()
    cr_scan.cache_clear()
    clear_calibration_cache()
