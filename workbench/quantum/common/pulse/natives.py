"""Native pulses of a device found in our simulator, and circuits compiled to them.

IBM calibrates X and SX as DRAG pulses (160 dt, sigma 40 dt on the Falcon devices) and the two-qubit gate as
an echoed cross-resonance (ECR): ``CR(+) X_control CR(-)``, each CR a GaussianSquare on the control channel
``u<c>-<t>`` with a cancellation tone on the target's drive. The fake backends ship no pulse library, so
:func:`calibrate` finds them here, as the hardware's calibration does:

- **Rabi**: a scan of the X amplitude; the first maximum of P(1) is the pi amplitude (SX starts at half).
- **Fine**: amplitude, DRAG beta and a small frequency correction (AC Stark shift from the third level)
  refined by maximising the gate's average fidelity (gradients through the simulator, L-BFGS-B).
- **ECR**: CR amplitude, phase, flat width and the cancellation tone refined the same way against qiskit's
  ``ECRGate``, with free virtual-Z frames before and after (they cost nothing on hardware). The length of each
  CR half adapts (:func:`calibrate_ecr_adaptive`): 560 dt first, then longer in steps of 160 dt up to 1200 dt until
  the fidelity reaches :data:`ECR_TARGET`; a weakly coupled pair (bogota 0 -> 1: amplitude 0.912 and fidelity
  0.967 at 560 dt) gets the longer pulse it needs, and a pair that misses the target even at 1200 dt is flagged
  (``CrossResonance.meets_target``; :func:`calibration_warnings` words it for results and panels).

:func:`circuit_schedule` turns a circuit over ``rz, sx, x, ecr`` (qiskit's transpiler output for these devices)
into one schedule: ``rz`` is a virtual frame change (later pulses on the qubit's drive and on the control
channels at its frequency get the opposite phase; the accumulated frames are returned and applied at the end).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.optimize
import torch

from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.fidelity import average_gate_fidelity, from_qiskit, leakage
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps, operators
from workbench.quantum.common.pulse.propagate import unitary
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag, gaussian_square

__all__ = [
    "SingleQubitPulse",
    "CrossResonance",
    "NativeGates",
    "rabi_scan",
    "calibrate_single",
    "calibrate_ecr",
    "calibrate_ecr_adaptive",
    "calibration_warnings",
    "ECR_TARGET",
    "ECR_DURATIONS",
    "calibrate",
    "frame_rotation",
    "circuit_schedule",
    "X_DURATION",
    "X_SIGMA",
]

X_DURATION, X_SIGMA = 160, 40  # IBM Falcon X/SX: 160 dt, sigma 40 dt (35.6 ns at dt = 0.222 ns)
#: the noiseless average gate fidelity an ECR calibration must reach (3 levels; coherent error only)
ECR_TARGET = 0.999
#: CR half-lengths tried in order (samples): IBM's Falcon ECRs are 500-1000 dt per half
ECR_DURATIONS = (560, 720, 880, 1040, 1200)
CR_SIGMA = 64  # GaussianSquare rise/fall of IBM's CR pulses (samples)


def _targets() -> dict[str, torch.Tensor]:
    from qiskit.circuit.library import ECRGate, SXGate, XGate
    from qiskit.quantum_info import Operator

    return {
        "x": from_qiskit(Operator(XGate()), 1),
        "sx": from_qiskit(Operator(SXGate()), 1),
        "ecr": from_qiskit(Operator(ECRGate()), 2),
    }


@dataclass(frozen=True)
class SingleQubitPulse:
    """A DRAG pulse on ``d<qubit>``: amplitude, DRAG beta (samples), detuning (rad/ns); fidelity and leakage."""

    qubit: int
    amp: float
    beta: float
    detuning: float
    fidelity: float = float("nan")
    leakage: float = float("nan")

    def play(self, start: int = 0, phase: float = 0.0) -> Play:
        return Play(f"d{self.qubit}", drag(X_DURATION, self.amp, X_SIGMA, self.beta, phase), start, self.detuning)


@dataclass(frozen=True)
class CrossResonance:
    """Echoed CR between ``control`` and ``target``: per half ``duration`` samples, GaussianSquare ``amp``,
    ``phase``, flat ``width``; cancellation tone ``cancel_amp``/``cancel_phase`` on the target; virtual-Z
    frames ``pre``/``post`` (control, target) in rad."""

    control: int
    target: int
    duration: int
    amp: float
    phase: float
    width: float
    cancel_amp: float
    cancel_phase: float
    pre: tuple[float, float]
    post: tuple[float, float]
    fidelity: float = float("nan")
    target_fidelity: float = ECR_TARGET

    @property
    def total_duration(self) -> int:
        return 2 * self.duration + X_DURATION

    @property
    def meets_target(self) -> bool:
        return self.fidelity >= self.target_fidelity


@dataclass(frozen=True)
class NativeGates:
    """The calibrated native set of a device: ``x``/``sx`` per qubit, ``ecr`` per directed coupled pair."""

    device: PulseDevice
    x: dict[int, SingleQubitPulse]
    sx: dict[int, SingleQubitPulse]
    ecr: dict[tuple[int, int], CrossResonance] = field(default_factory=dict)


def _single_schedule(q: int, amp, beta, detuning, phase=0.0) -> Schedule:
    return Schedule.of([Play(f"d{q}", drag(X_DURATION, amp, X_SIGMA, beta, phase), 0, detuning)])


def rabi_scan(device: PulseDevice, qubit: int, amps: np.ndarray) -> np.ndarray:
    """P(1) of ``qubit`` after a DRAG pulse (beta 0) of each amplitude from |0...0> (unitary, no noise)."""
    out = []
    dim = device.dim
    start = torch.zeros(dim, dtype=torch.complex128)
    start[0] = 1
    ops = operators(device.num_qubits, device.levels)
    for a in amps:
        u = unitary(hamiltonian_steps(device, _single_schedule(qubit, float(a), 0.0, 0.0)))
        psi = u @ start
        out.append(float((psi.conj() @ (ops.n[qubit] @ psi)).real.clamp(max=1.0)))
    return np.array(out)


def _minimize(loss, x0: np.ndarray, bounds) -> np.ndarray:
    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        value = loss(t)
        (grad,) = torch.autograd.grad(value, t)
        return float(value.detach()), grad.numpy().copy()

    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 200})
    return res.x


def calibrate_single(device: PulseDevice, qubit: int, gate: str = "x", *, beta0: float = 0.0) -> SingleQubitPulse:
    """Find ``gate`` (``x`` or ``sx``) on ``qubit`` alone: Rabi scan, then amplitude, beta and detuning."""
    if gate not in ("x", "sx"):
        raise ValueError(f"gate={gate!r} is not a single-qubit native: valid gates are x, sx")
    solo = _isolated(device, qubit)
    area = float(drag(X_DURATION, 1.0, X_SIGMA, 0.0).real.sum())
    guess = math.pi / (solo.drive[0] * area * solo.dt)
    amps = np.linspace(0.0, min(1.0, 2.2 * guess), 45)
    p1 = rabi_scan(solo, 0, amps)
    amp_pi = float(amps[int(np.argmax(p1))])
    amp0 = amp_pi if gate == "x" else amp_pi / 2
    target = _targets()[gate]

    def loss(p: torch.Tensor) -> torch.Tensor:
        u = unitary(hamiltonian_steps(solo, _single_schedule(0, p[0], p[1], p[2])))
        return 1 - average_gate_fidelity(u, target, 1, solo.levels)

    x = _minimize(loss, np.array([amp0, beta0, 0.0]), [(0.0, 1.0), (-20.0, 20.0), (-0.05, 0.05)])
    u = unitary(hamiltonian_steps(solo, _single_schedule(0, x[0], x[1], x[2])))
    return SingleQubitPulse(
        qubit, float(x[0]), float(x[1]), float(x[2]),
        float(average_gate_fidelity(u, target, 1, solo.levels)), float(leakage(u, 1, solo.levels)),
    )  # fmt: skip


def _isolated(device: PulseDevice, qubit: int) -> PulseDevice:
    """The one transmon ``qubit`` of ``device`` without its neighbours (single-qubit calibration)."""
    return PulseDevice(
        device.name, (device.qubits[qubit],), device.levels, (device.omega[qubit],),
        (device.anharmonicity[qubit],), (device.drive[qubit],), (), device.dt, (device.t1[qubit],),
        (device.t2[qubit],), (device.readout_p01[qubit],), (device.readout_p10[qubit],), device.source,
    )  # fmt: skip


def frame_rotation(phases: tuple[float, ...] | torch.Tensor, device: PulseDevice) -> torch.Tensor:
    """Virtual-Z frames as a full-space diagonal unitary: level k of qubit q gets ``exp(i k theta_q)``.

    On the computational subspace this is ``rz(theta_q)`` up to a global phase.
    """
    ops = operators(device.num_qubits, device.levels)
    angle = torch.zeros(ops.dim, dtype=torch.float64)
    for q, n in enumerate(ops.n):
        angle = angle + n.diagonal().real * torch.as_tensor(phases[q], dtype=torch.float64)
    return torch.diag(torch.exp(1j * angle.to(torch.complex128)))


def _rz_pair(th0, th1, levels: int) -> torch.Tensor:
    k = torch.arange(levels, dtype=torch.float64)
    d0 = torch.exp(1j * (k * th0).to(torch.complex128))
    d1 = torch.exp(1j * (k * th1).to(torch.complex128))
    return torch.diag(torch.kron(d0, d1))


def ecr_schedule(cr: CrossResonance, x_control: SingleQubitPulse, params: torch.Tensor | None = None) -> Schedule:
    """``CR(+) X_c CR(-)`` on channels ``u<c>-<t>`` (CR) and ``d<t>`` (cancellation), ``d<c>`` (echo)."""
    amp, phase, width, camp, cphase = (
        params[:5] if params is not None else (cr.amp, cr.phase, cr.width, cr.cancel_amp, cr.cancel_phase)
    )
    c, t, d = cr.control, cr.target, cr.duration
    u = f"u{c}-{t}"
    plays = [
        Play(u, gaussian_square(d, amp, CR_SIGMA, width, phase), 0),
        Play(f"d{t}", gaussian_square(d, camp, CR_SIGMA, width, cphase), 0),
        x_control.play(d),
        Play(u, gaussian_square(d, amp, CR_SIGMA, width, phase + math.pi), d + X_DURATION),
        Play(f"d{t}", gaussian_square(d, camp, CR_SIGMA, width, cphase + math.pi), d + X_DURATION),
    ]
    return Schedule.of(plays)


def calibrate_ecr(
    device: PulseDevice, control: int, target: int, x_control: SingleQubitPulse, *, duration: int = 560
) -> CrossResonance:
    """Find the echoed CR between local qubits ``control`` and ``target`` of a two-qubit ``device``."""
    if device.num_qubits != 2:
        raise ValueError(f"calibrate_ecr needs a two-qubit device, got {device.num_qubits} qubits")
    if device.coupling(control, target) == 0.0:
        raise ValueError(f"qubits {control} and {target} are not coupled on {device.name}")
    target_u = _targets()["ecr"]
    if control == 1:  # qiskit's ECR acts with qubit 0 as control: swap the factors
        target_u = target_u.reshape(2, 2, 2, 2).permute(1, 0, 3, 2).reshape(4, 4)
    proto = CrossResonance(control, target, duration, 0.0, 0.0, 0.0, 0.0, 0.0, (0.0, 0.0), (0.0, 0.0))

    def unitary_of(p: torch.Tensor) -> torch.Tensor:
        u = unitary(hamiltonian_steps(device, ecr_schedule(proto, x_control, p)))
        pre = _rz_pair(*_order(p[5], p[6], control), device.levels)
        post = _rz_pair(*_order(p[7], p[8], control), device.levels)
        return post @ u @ pre

    def loss(p: torch.Tensor) -> torch.Tensor:
        return 1 - average_gate_fidelity(unitary_of(p), target_u, 2, device.levels)

    width0 = duration - 4 * CR_SIGMA
    bounds = [(0.0, 1.0), (None, None), (0.0, duration), (0.0, 0.5), (None, None), *[(None, None)] * 4]
    starts = [np.array([0.4, ph, width0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]) for ph in np.arange(8) * math.pi / 4]
    with torch.no_grad():
        x0 = min(starts, key=lambda s: float(loss(torch.tensor(s))))
    x = _minimize(loss, x0, bounds)
    best = (float(loss(torch.tensor(x))), x)
    value, x = best
    return CrossResonance(
        control, target, duration, float(x[0]), float(x[1]), float(x[2]), float(x[3]), float(x[4]),
        (float(x[5]), float(x[6])), (float(x[7]), float(x[8])), 1 - value,
    )  # fmt: skip


def calibrate_ecr_adaptive(
    device: PulseDevice,
    control: int,
    target: int,
    x_control: SingleQubitPulse,
    *,
    target_fidelity: float = ECR_TARGET,
    durations: tuple[int, ...] = ECR_DURATIONS,
) -> CrossResonance:
    """:func:`calibrate_ecr` at each of ``durations`` (samples per CR half) in turn until the fidelity reaches
    ``target_fidelity``; the first that does, else the best of all (``meets_target`` False)."""  # fmt: skip
    best: CrossResonance | None = None
    for d in durations:
        cr = calibrate_ecr(device, control, target, x_control, duration=d)
        cr = dataclasses.replace(cr, target_fidelity=target_fidelity)
        if best is None or cr.fidelity > best.fidelity:
            best = cr
        if cr.meets_target:
            return cr
    assert best is not None, "durations is not empty"
    return best


def calibration_warnings(natives: NativeGates) -> tuple[str, ...]:
    """One line per calibrated ECR below its fidelity target (empty when every calibration met it)."""
    out = []
    for (c, t), cr in natives.ecr.items():
        if not cr.meets_target:
            q = natives.device.qubits
            out.append(
                f"ECR {q[c]}->{q[t]} on {natives.device.name} reaches fidelity {cr.fidelity:.4f} < target "
                f"{cr.target_fidelity} even at {cr.duration} dt per CR half (amplitude {cr.amp:.3f}): every pulse "
                "technique on this pair inherits it"
            )
    return tuple(out)


def _order(a: Any, b: Any, control: int) -> tuple[Any, Any]:
    return (a, b) if control == 0 else (b, a)


def calibrate(device: PulseDevice) -> NativeGates:
    """X and SX on every qubit; the ECR on qubit pair (0, 1) of a two-qubit device when coupled."""
    x = {q: calibrate_single(device, q, "x") for q in range(device.num_qubits)}
    sx = {q: calibrate_single(device, q, "sx", beta0=x[q].beta) for q in range(device.num_qubits)}
    ecr = {}
    if device.num_qubits == 2 and device.coupling(0, 1):
        ecr[(0, 1)] = calibrate_ecr_adaptive(device, 0, 1, x[0])
    return NativeGates(device, x, sx, ecr)


def circuit_schedule(circuit, natives: NativeGates) -> tuple[Schedule, tuple[float, ...]]:
    """One schedule for a circuit over rz, sx, x, ecr (ASAP per qubit), and the final virtual-Z frames (rad).

    The circuit's unitary equals ``frame_rotation(frames) @ U(schedule)`` on the computational subspace up
    to the simulation's gate errors.
    """
    n = natives.device.num_qubits
    if circuit.num_qubits != n:
        raise ValueError(f"circuit has {circuit.num_qubits} qubits, the device {n}")
    frames = [0.0] * n
    cursor = [0] * n
    plays: list[Play] = []

    def channel_phase(frame_qubit: int) -> float:
        return -frames[frame_qubit]

    for inst in circuit.data:
        name = inst.operation.name
        qs = [circuit.find_bit(b).index for b in inst.qubits]
        if name == "rz":
            frames[qs[0]] += float(inst.operation.params[0])
        elif name in ("x", "sx"):
            q = qs[0]
            pulse = (natives.x if name == "x" else natives.sx)[q]
            plays.append(pulse.play(cursor[q], channel_phase(q)))
            cursor[q] += X_DURATION
        elif name == "ecr":
            c, t = qs
            cr = natives.ecr.get((c, t))
            if cr is None:
                raise ValueError(f"no calibrated ecr on qubits ({c}, {t}): calibrated pairs are {list(natives.ecr)}")
            start = max(cursor[c], cursor[t])
            frames[c] += cr.pre[0]
            frames[t] += cr.pre[1]
            for p in ecr_schedule(cr, natives.x[c]).plays:
                frame_q = t if p.channel.startswith("u") or p.channel == f"d{t}" else c
                shift = channel_phase(frame_q)
                plays.append(Play(p.channel, p.samples * complex(math.cos(shift), math.sin(shift)), p.start + start,
                                  p.detuning))  # fmt: skip
            frames[c] += cr.post[0]
            frames[t] += cr.post[1]
            cursor[c] = cursor[t] = start + cr.total_duration
        elif name in ("barrier", "id", "delay", "measure"):
            continue
        else:
            raise ValueError(f"gate {name!r} is not native: compile the circuit to rz, sx, x, ecr first")
    return Schedule.of(plays, max(cursor)), tuple(frames)
