"""What the pulse-sim runner and study both run: one pulse's trajectory, the checks against qutip (our
coefficients and continuous time), scipy and closed forms, and the CX played from calibrated natives.

Sub-steps: a pulse (and the check) runs with ``config.substeps`` when set, else with the fewest sub-steps whose
predicted error against continuous time is within ``config.tolerance``
(:func:`workbench.quantum.common.pulse.accuracy.substeps_for`). Caches: :func:`pulse_view` is memoised
(:func:`clear_caches`).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from workbench.quantum.common.pulse.accuracy import SubstepChoice, substeps_for
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.fidelity import average_gate_fidelity, from_qiskit
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import NativeGates, circuit_schedule, frame_rotation
from workbench.quantum.common.pulse.propagate import dissipator, evolve_density, step_unitaries, unitary
from workbench.quantum.common.pulse.reference import ode_unitary, qutip_evolve, qutip_evolve_continuous
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import constant, drag, gaussian, gaussian_square
from workbench.quantum.device import Device
from workbench.quantum.pulse_sim.config import PulseSimConfig

__all__ = [
    "TWO_PI_MHZ",
    "pulse_of",
    "single_transmon",
    "substeps_of",
    "PulseView",
    "pulse_view",
    "cx_check",
    "check_schedule",
    "qutip_check",
    "CONTINUOUS_SUBSTEPS",
    "continuous_check",
    "convergence_check",
    "analytic_checks",
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


def single_transmon(config: PulseSimConfig) -> PulseDevice:
    dev = config.resolved_device().transmons((config.qubit,), levels=config.levels)
    return dev.scaled_noise(config.noise_scale) if config.noise_scale else dev.noiseless()


def substeps_of(config: PulseSimConfig, device: PulseDevice, schedule: Schedule) -> SubstepChoice:
    """``config.substeps`` when set, else the fewest sub-steps for ``config.tolerance`` on ``schedule``."""
    if config.substeps:
        return SubstepChoice(config.substeps, config.tolerance, float("nan"), float("nan"), True)
    return substeps_for(device, schedule, config.tolerance)


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
    substeps: SubstepChoice


@functools.lru_cache(maxsize=64)
def _pulse_view(config: PulseSimConfig) -> PulseView:
    dev = single_transmon(config)
    samples = pulse_of(config)
    schedule = Schedule.of([Play("d0", samples, 0, config.detuning_mhz * TWO_PI_MHZ)])
    sub = substeps_of(config, dev, schedule).substeps
    steps = hamiltonian_steps(dev, schedule, substeps=sub)
    lv = config.levels
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
        substeps=substeps_of(config, dev, schedule),
    )


def pulse_view(config: PulseSimConfig) -> PulseView:
    """The trajectory of ``config``'s pulse on its qubit alone (memoised)."""
    return _pulse_view(config)


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


def check_schedule() -> Schedule:
    """A drive on the control, a CR on u0-1 and a detuned drive on the target, overlapping (461 samples)."""
    return Schedule.of(
        [
            Play("d0", drag(160, 0.17, 40, 1.0, 0.3)),
            Play("u0-1", gaussian_square(301, 0.4, 64, 100.5, 1.0), 97),
            Play("d1", drag(160, 0.1, 40, 0.5), 50, 0.01),
        ]
    )


def _check_state(levels: int) -> np.ndarray:
    dim = levels**2
    rho = np.zeros((dim, dim), complex)
    i1 = levels + 1  # |11>
    rho[0, 0], rho[i1, i1], rho[0, i1], rho[i1, 0] = 0.7, 0.3, 0.3, 0.3
    return rho


def qutip_check(device: Device, qubit: int, target: int, levels: int, substeps: int = 4) -> dict[str, float]:
    """Max |rho_ours - rho_qutip| after :func:`check_schedule` with T1/T2, qutip given *our* piecewise-constant
    coefficients at ``substeps`` (checks operators, frames, propagation, dissipator), and both run times."""
    pair = device.transmons((qubit, target), levels=levels)
    s = check_schedule()
    rho = _check_state(levels)
    t = time.perf_counter()
    ours = evolve_density(torch.from_numpy(rho), hamiltonian_steps(pair, s, substeps=substeps), pair).numpy()
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = qutip_evolve(pair, s, rho, substeps=substeps)
    qutip_s = time.perf_counter() - t
    return {"max_abs_diff": float(np.abs(ours - ref).max()), "ours_seconds": ours_s, "qutip_seconds": qutip_s}


CONTINUOUS_SUBSTEPS = (1, 4, 16, 64)


@functools.lru_cache(maxsize=8)
def continuous_check(device: Device, qubit: int, target: int, levels: int) -> dict[int, float]:
    """Max |rho_ours - rho_continuous| after :func:`check_schedule` with T1/T2 for 1, 4, 16, 64 sub-steps, against
    qutip in continuous time (:func:`~workbench.quantum.common.pulse.reference.qutip_evolve_continuous`): the
    discretisation's own error (second order: / 16 per x 4 sub-steps)."""
    pair = device.transmons((qubit, target), levels=levels)
    s = check_schedule()
    rho = _check_state(levels)
    ref = qutip_evolve_continuous(pair, s, rho)
    out = {}
    for k in CONTINUOUS_SUBSTEPS:
        ours = evolve_density(torch.from_numpy(rho), hamiltonian_steps(pair, s, substeps=k), pair).numpy()
        out[k] = float(np.abs(ours - ref).max())
    return out


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


def clear_caches() -> None:
    """Empty the memoised pulse views and continuous-time checks."""
    _pulse_view.cache_clear()
    continuous_check.cache_clear()
