"""The reversed-pulse fidelity estimator and its echo-decay form, and the simulator's true process fidelity.

Estimator (a Loschmidt echo, the pulse analogue of QuEst's PST): prepare |0...0>, play ``S`` then ``S^R``,
read out; ``F_est = P(read 0...0)``. Echo decay: ``(S S^R)^m`` for ``m = 1..M``, fit ``P(m) = A p^m + B``; the error
per echo pair is ``r = (1 - p) (d - 1) / d`` (mirror benchmarking, *not* Clifford-twirled RB).

True fidelity: the average gate fidelity of the noisy channel of ``S`` (Lindblad T1/T2, device drift) against
the unitary the nominal pulse implements without noise (projected on the qubit levels, made unitary by polar
decomposition), leakage counted as loss: ``F = (d F_pro + p_stay) / (d + 1)``, ``F_pro = Tr(S_U^dag S_E) / d^2``.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import torch

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.fidelity import qubit_indices
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.propagate import channels, dissipator, evolve_density, unitary
from workbench.quantum.common.pulse.schedule import Schedule
from workbench.quantum.pulse_zne.reversal import reverse

__all__ = [
    "echo",
    "read_zero_probability",
    "return_probability",
    "echo_decay",
    "fit_echo_decay",
    "nominal_unitary",
    "process_fidelity",
    "echo_error",
    "echo_infidelity",
]


def echo(schedule: Schedule, repetitions: int = 1) -> Schedule:
    """``(S S^R)^repetitions``."""
    if repetitions < 1:
        raise ValueError(f"repetitions={repetitions} is out of range: valid range is >= 1")
    base = Schedule(schedule.plays, schedule.duration)
    pair = base.then(reverse(base))
    out = pair
    for _ in range(repetitions - 1):
        out = out.then(pair)
    return out


def read_zero_probability(rho: torch.Tensor, device: PulseDevice, *, readout: bool = True) -> float:
    """P(every qubit reads 0) of a transmon state: level >= 1 reads as 1, then the device's readout error."""
    n, lv = device.num_qubits, device.levels
    pops = torch.diagonal(rho).real.clamp(min=0).reshape((lv,) * n).numpy()
    total = 0.0
    for idx in np.ndindex(*pops.shape):
        w = pops[idx]
        for q, level in enumerate(idx):
            if readout:
                w *= device.readout_p10[q] if level else 1 - device.readout_p01[q]
            elif level:
                w = 0.0
        total += w
    return float(total)


def return_probability(
    device: PulseDevice, schedule: Schedule, repetitions: int = 1, *, readout: bool = False, substeps: int = 2
) -> float:
    """``F_est``: P(read |0...0>) after ``(S S^R)^repetitions`` from |0...0> (T1/T2 of ``device``)."""
    rho = torch.zeros(device.dim, device.dim, dtype=torch.complex128)
    rho[0, 0] = 1
    out = evolve_density(rho, hamiltonian_steps(device, echo(schedule, repetitions), substeps=substeps), device)
    return read_zero_probability(out, device, readout=readout)


def echo_decay(
    device: PulseDevice, schedule: Schedule, repetitions: tuple[int, ...], *, substeps: int = 2
) -> np.ndarray:
    """P(return) after ``(S S^R)^m`` for every ``m`` (one evolution, read at each pair's end)."""
    reps = sorted(set(int(m) for m in repetitions))
    if not reps or reps[0] < 1:
        raise ValueError(f"repetitions={repetitions} must be positive integers")
    rho = torch.zeros(device.dim, device.dim, dtype=torch.complex128)
    rho[0, 0] = 1
    pair = echo(schedule, 1)
    steps = hamiltonian_steps(device, pair, substeps=substeps)
    # with couplings the frames depend on absolute time: then every pair gets its own steps at its offset
    fixed = not device.couplings and not any(p.channel.startswith("u") for p in schedule.plays)
    out, done = {}, 0
    for m in range(1, reps[-1] + 1):
        here = steps if fixed or done == 0 else _tail(hamiltonian_steps(device, _offset(pair, done), substeps=substeps),
                                                      done * substeps)  # fmt: skip
        rho = evolve_density(rho, here, device)
        done += pair.duration
        if m in reps:
            out[m] = read_zero_probability(rho, device, readout=False)
    return np.array([out[m] for m in reps])


def _offset(schedule: Schedule, samples: int) -> Schedule:
    return Schedule.of((), samples).then(schedule)


def _tail(steps, skip: int):
    from workbench.quantum.common.pulse.hamiltonian import HamiltonianSteps

    return HamiltonianSteps(steps.h[skip:], steps.step_ns, steps.times[skip:], steps.substeps)


def fit_echo_decay(repetitions: np.ndarray, probabilities: np.ndarray, dim: int) -> dict[str, float]:
    """Fit ``A p^m + B``; returns ``{"A", "p", "B", "error_per_pair", "error_per_pulse"}``."""
    m = np.asarray(repetitions, dtype=float)
    y = np.asarray(probabilities, dtype=float)
    if m.size < 3:
        raise ValueError(f"repetitions has {m.size} values: the fit A p^m + B needs at least 3")

    def model(x, a, p, b):
        return a * p**x + b

    (a, p, b), _ = scipy.optimize.curve_fit(
        model, m, y, p0=[1 - 1 / dim, 0.99, 1 / dim], bounds=([0, 0, 0], [1, 1, 1]), maxfev=20000
    )
    r = (1 - p) * (dim - 1) / dim
    return {"A": float(a), "p": float(p), "B": float(b), "error_per_pair": float(r), "error_per_pulse": float(r / 2)}


def nominal_unitary(device: PulseDevice, schedule: Schedule, *, substeps: int = 2) -> torch.Tensor:
    """The qubit-subspace unitary the schedule implements without noise (projection, then polar decomposition)."""
    u = unitary(hamiltonian_steps(device.noiseless(), schedule, substeps=substeps))
    idx = qubit_indices(device.num_qubits, device.levels)
    p = u[idx[:, None], idx[None, :]]
    w, _, vh = torch.linalg.svd(p)
    return w @ vh


def process_fidelity(device: PulseDevice, schedule: Schedule, target: torch.Tensor, *, substeps: int = 2) -> float:
    """Average gate fidelity of the noisy channel of ``schedule`` on ``device`` against qubit unitary ``target``."""
    steps = hamiltonian_steps(device, schedule, substeps=substeps)
    half = dissipator(device, steps.step_ns / 2)
    sup = channels(steps.h.unsqueeze(0), steps.step_ns, None if half is None else half.unsqueeze(0))[0]
    dim = device.dim
    idx = qubit_indices(device.num_qubits, device.levels)
    pairs = (idx[:, None] * dim + idx[None, :]).reshape(-1)  # vec indices of the qubit block
    e = sup[pairs[:, None], pairs[None, :]]  # (d^2, d^2) restricted channel, row-major vec
    d = idx.numel()
    t = target.to(torch.complex128)
    s_u = torch.kron(t, t.conj())
    f_pro = torch.trace(s_u.mH @ e).real / d**2
    eye = torch.eye(d, dtype=torch.complex128).reshape(-1) / d
    out = (e @ eye).reshape(d, d)
    p_stay = torch.trace(out).real
    return float((d * f_pro + p_stay) / (d + 1))


def echo_error(device: PulseDevice, schedule: Schedule, *, substeps: int = 2) -> float:
    """``max |U(S S^R) - I|`` (elementwise, full transmon space, noiseless): 0 to rounding without drift."""
    u = unitary(hamiltonian_steps(device.noiseless(), echo(schedule, 1), substeps=substeps))
    return float((u - torch.eye(u.shape[0], dtype=torch.complex128)).abs().max())


def echo_infidelity(device: PulseDevice, schedule: Schedule, *, substeps: int = 2) -> float:
    """``1 - F_avg(U(S S^R), I)`` on the qubit levels (noiseless; leakage counted): the drift's share of the echo."""
    eye = torch.eye(2**device.num_qubits, dtype=torch.complex128)
    return 1.0 - process_fidelity(device.noiseless(), echo(schedule, 1), eye, substeps=substeps)
