"""Independent references for the pulse simulator: qutip 5 and scipy's adaptive ODE solver.

:func:`qutip_evolve` hands qutip exactly our piecewise-constant coefficients (qutip step interpolation,
``order=0``) and integrates the Schroedinger or Lindblad equation with its own adaptive solver and operators
built by qutip (``destroy``, ``tensor``), so agreement checks our operators, frames, propagation and
dissipator, not a shared code path. :func:`qutip_evolve_continuous` is the same Lindblad problem in *continuous*
time: every coefficient a function of ``t`` (each sample's envelope held over its dt, as an AWG plays it, but the
frame phases ``exp(i (omega_f - omega_q) t)``, the couplings' and the detunings' turning continuously), which
measures the piecewise-constant discretisation itself. :func:`ode_unitary` integrates ``dU/dt = -i H(t) U`` with
scipy's DOP853 on the continuous frame phases (noiseless).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.integrate
import torch

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.schedule import Schedule

__all__ = ["qutip_evolve", "qutip_evolve_continuous", "ode_unitary"]


def _terms(device: PulseDevice, schedule: Schedule, substeps: int):
    """(static H, [(operator, coefficient per step)], step) with qutip operators."""
    import qutip

    n, lv = device.num_qubits, device.levels
    a = [qutip.tensor([qutip.destroy(lv) if k == q else qutip.qeye(lv) for k in range(n)]) for q in range(n)]
    static = sum((device.anharmonicity[q] / 2 * (a[q].dag() * a[q].dag() * a[q] * a[q]) for q in range(n)), 0 * a[0])
    step = device.dt / substeps
    steps = schedule.duration * substeps
    t = (np.arange(steps) + 0.5) * step
    terms = []
    for i, j, J in device.couplings:
        c = J * np.exp(1j * (device.omega[i] - device.omega[j]) * t)
        terms.append((a[i].dag() * a[j], c))
    for ch, env in schedule.envelopes(device, substeps).values():
        q = ch.qubit
        e = env.detach().numpy()
        c = device.drive[q] / 2 * e * np.exp(-1j * (device.omega[ch.frame] - device.omega[q]) * t)
        terms.append((a[q].dag(), c))
    return static, terms, step, steps, a


def qutip_evolve(device: PulseDevice, schedule: Schedule, rho0: np.ndarray, *, substeps: int = 4) -> np.ndarray:
    """The density matrix after ``schedule`` from ``rho0`` by qutip ``mesolve`` (``sesolve`` for a pure start
    without noise), with T1 and pure dephasing collapse operators built from the device."""
    import qutip

    static, terms, step, steps, a = _terms(device, schedule, substeps)
    tlist = np.arange(steps + 1) * step
    h = [static]
    for op, c in terms:
        cc = np.append(c, c[-1])
        h.append([op, qutip.coefficient(cc, tlist=tlist, order=0)])
        h.append([op.dag(), qutip.coefficient(cc.conj(), tlist=tlist, order=0)])
    dims = [[device.levels] * device.num_qubits] * 2
    rho = qutip.Qobj(rho0, dims=dims)
    c_ops = _collapse(device, a)
    opts = {"atol": 1e-12, "rtol": 1e-10, "nsteps": 10**6, "max_step": step}
    result = qutip.mesolve(qutip.QobjEvo(h, tlist=tlist), rho, tlist[[0, -1]], c_ops=c_ops, options=opts)
    return result.states[-1].full()


def _collapse(device: PulseDevice, a: list) -> list:
    out = []
    for q in range(device.num_qubits):
        t1, t2 = device.t1[q], device.t2[q]
        g1 = 1 / t1 if math.isfinite(t1) else 0.0
        gphi = max((1 / t2 if math.isfinite(t2) else 0.0) - g1 / 2, 0.0)
        if g1:
            out.append(math.sqrt(g1) * a[q])
        if gphi:
            out.append(math.sqrt(2 * gphi) * a[q].dag() * a[q])
    return out


def _continuous_drive(device: PulseDevice, play, dt: float):
    """``f(t)``: a play's coefficient of ``a_q^dag`` at time ``t`` (ns), continuous phases, held samples."""
    from workbench.quantum.common.pulse.schedule import parse_channel

    ch = parse_channel(play.channel, device.num_qubits)
    samples = play.samples.detach().numpy()
    w = device.omega[ch.frame] - device.omega[ch.qubit]
    delta, scale = float(torch.as_tensor(play.detuning)), device.drive[ch.qubit] / 2

    def f(t: float) -> complex:
        k = int(t / dt) - play.start
        if not 0 <= k < samples.size:
            return 0j
        return complex(scale * samples[k] * np.exp(-1j * (w * t + delta * (t - play.start * dt))))

    return ch.qubit, f


def qutip_evolve_continuous(device: PulseDevice, schedule: Schedule, rho0: np.ndarray) -> np.ndarray:
    """The density matrix after ``schedule`` by qutip ``mesolve`` in continuous time (see the module docstring;
    adaptive steps of at most dt / 8 so that the held envelope's jumps are resolved)."""
    import qutip

    n, lv, dt = device.num_qubits, device.levels, device.dt
    a = [qutip.tensor([qutip.destroy(lv) if k == q else qutip.qeye(lv) for k in range(n)]) for q in range(n)]
    h: list = [sum((device.anharmonicity[q] / 2 * (a[q].dag() * a[q].dag() * a[q] * a[q]) for q in range(n)), 0 * a[0])]
    for i, j, J in device.couplings:
        w = device.omega[i] - device.omega[j]
        h.append([a[i].dag() * a[j], lambda t, J=J, w=w: J * np.exp(1j * w * t)])
        h.append([a[j].dag() * a[i], lambda t, J=J, w=w: J * np.exp(-1j * w * t)])
    for play in schedule.plays:
        q, f = _continuous_drive(device, play, dt)
        h.append([a[q].dag(), f])
        h.append([a[q], lambda t, f=f: f(t).conjugate()])
    rho = qutip.Qobj(rho0, dims=[[lv] * n] * 2)
    opts = {"atol": 1e-12, "rtol": 1e-10, "nsteps": 10**7, "max_step": dt / 8}
    result = qutip.mesolve(
        qutip.QobjEvo(h), rho, [0.0, schedule.duration * dt], c_ops=_collapse(device, a), options=opts
    )
    return result.states[-1].full()


def ode_unitary(device: PulseDevice, schedule: Schedule) -> np.ndarray:
    """The propagator with continuous frame phases (envelopes held per sample), by scipy DOP853 (rtol 1e-11)."""
    from workbench.quantum.common.pulse.hamiltonian import drift, operators

    ops = operators(device.num_qubits, device.levels)
    h0 = drift(device).numpy()
    coupling = [
        (J, (ops.a[i].mH @ ops.a[j]).resolve_conj().numpy(), device.omega[i] - device.omega[j])
        for i, j, J in device.couplings
    ]
    drives = []
    if any(float(abs(torch.as_tensor(p.detuning))) != 0.0 for p in schedule.plays):
        raise ValueError("ode_unitary supports schedules without detuning")
    for ch, env in schedule.envelopes(device).values():
        drives.append((ch, env.detach().numpy(), ops.a[ch.qubit].mH.resolve_conj().numpy()))
    dim = ops.dim

    def h_of(t: float) -> np.ndarray:
        h = h0.astype(complex).copy()
        for J, op, w in coupling:
            x = J * np.exp(1j * w * t) * op
            h += x + x.conj().T
        k = min(int(t / device.dt), schedule.duration - 1)
        for ch, env, op in drives:
            q = ch.qubit
            x = device.drive[q] / 2 * env[k] * np.exp(-1j * (device.omega[ch.frame] - device.omega[q]) * t) * op
            h += x + x.conj().T
        return h

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        return (-1j * h_of(t) @ y.reshape(dim, dim)).reshape(-1)

    out = np.eye(dim, dtype=complex)
    for k in range(schedule.duration):  # integrate sample by sample (the envelope jumps between samples)
        sol = scipy.integrate.solve_ivp(
            rhs, (k * device.dt, (k + 1) * device.dt), out.reshape(-1), method="DOP853", rtol=1e-11, atol=1e-13
        )
        out = sol.y[:, -1].reshape(dim, dim)
    return out
