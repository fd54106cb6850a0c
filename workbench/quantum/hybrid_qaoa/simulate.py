"""Expected cut of the gate QAOA and of the hybrid QAOA on one device, same cost layers, two mixers.

Both run on the active physical qubits as density matrices:

- **cost segments** (identical in both): the transpiled gates with the device's calibrated noise
  (``NoiseSpec.device``: depolarizing + thermal relaxation per gate from the snapshot), our density-matrix
  simulator;
- **mixer**, simulated as *pulses* in both, on each transmon (3 levels, its T1/T2 as Lindblad terms, leakage read
  out as |1> as a discriminator would), one channel per qubit:
  - gate QAOA: the transpiler's ``rz sx rz(2 beta + pi) sx rz`` played with our calibrated SX pulses (virtual
    ``rz`` as frame changes, the remaining frame applied at the end), 2 x 160 dt;
  - hybrid: one DRAG pulse of ``mixer_dt`` samples per qubit with trainable amplitude and phase (sigma =
    duration / 4, beta = -1 / (2 anharmonicity dt)).
- readout error from the device on the final probabilities (noisy setting only).

Neglected, and said so: crosstalk between simultaneous mixer pulses (the exchange coupling J ~ 2 MHz acts
during the 28-71 ns mixers on both sides alike).
"""

from __future__ import annotations

import cmath
import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from workbench.quantum.apply import apply_matrix
from workbench.quantum.channels import virtual_targets
from workbench.quantum.circuit import bind, from_qiskit, resolve_params
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import X_DURATION, SingleQubitPulse, calibrate_single
from workbench.quantum.common.pulse.propagate import channels, dissipator, unitary
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag
from workbench.quantum.density import apply_readout, diagonal, run_density
from workbench.quantum.device import Device
from workbench.quantum.hybrid_qaoa.circuits import QaoaLayout
from workbench.quantum.hybrid_qaoa.maxcut import cut_values
from workbench.quantum.noise import NoiseSpec
from workbench.threads import one_thread

__all__ = ["Evaluator", "calibrated_sx", "fold_to_qubit", "GATE_MIXER_DT"]

GATE_MIXER_DT = 2 * X_DURATION  # sx - rz - sx


@functools.lru_cache(maxsize=256)
def calibrated_sx(device: Device, qubit: int, levels: int = 3) -> SingleQubitPulse:
    """The SX pulse of physical ``qubit`` found in our simulator (Rabi + fine calibration, no relaxation)."""
    transmon = device.transmons((qubit,), levels=levels).noiseless()
    x = calibrate_single(transmon, 0, "x")
    return calibrate_single(transmon, 0, "sx", beta0=x.beta)


def fold_to_qubit(s: torch.Tensor, levels: int) -> torch.Tensor:
    """A transmon process ``(..., L^2, L^2)`` as a qubit channel ``(..., 4, 4)``: inputs in the qubit subspace,
    output populations above |1> read as |1>, coherences with them dropped (row-major vec)."""
    if levels == 2:
        return s
    lv = levels
    cols = [lv * r + c for r in (0, 1) for c in (0, 1)]
    sub = s[..., :, cols]  # (..., L^2, 4)
    out = torch.zeros(*s.shape[:-2], 4, 4, dtype=s.dtype)
    out[..., 0, :] = sub[..., 0, :]
    out[..., 1, :] = sub[..., 1, :]
    out[..., 2, :] = sub[..., lv, :]
    out[..., 3, :] = sum(sub[..., (lv + 1) * k, :] for k in range(1, lv))
    return out


@dataclass(frozen=True, eq=False)
class Evaluator:
    """Expected cut for parameter vectors of either ansatz on one layout (see the module docstring).

    Gate parameters: ``(gamma_1..gamma_p, beta_1..beta_p)``. Hybrid parameters: ``(gamma_1..gamma_p)`` then,
    per layer and mixed qubit, ``(theta, phase)``: the pulse's rotation angle by the area rule (rad; amplitude
    ``theta / (drive * area * dt)``, clipped to the device's limit 1: short pulses cannot rotate far) and its
    phase (rad). Angles keep the optimiser's steps on one scale.
    """

    layout: QaoaLayout
    noisy: bool
    mixer_dt: int
    levels: int = 3

    @functools.cached_property
    def _programs(self) -> list:
        return [from_qiskit(c) for c in self.layout.cost]

    @functools.cached_property
    def _spec(self) -> NoiseSpec | None:
        if not self.noisy:
            return None
        return self.layout.device.noise(self.layout.active)

    @functools.cached_property
    def transmons(self) -> tuple[PulseDevice, ...]:
        out = []
        for q in self.layout.active:
            t = self.layout.device.transmons((q,), levels=self.levels)
            out.append(t if self.noisy else t.noiseless())
        return tuple(out)

    @functools.cached_property
    def cuts(self) -> np.ndarray:
        """Cut of every basis state of the active qubits (node i is read from active index final[i])."""
        k = len(self.layout.active)
        x = np.arange(2**k)
        logical = np.zeros(2**k, dtype=np.int64)
        for node, a in enumerate(self.layout.final):
            logical |= ((x >> a) & 1) << node
        return cut_values(self.layout.graph)[logical]

    @property
    def num_active(self) -> int:
        return len(self.layout.active)

    def mixed_qubits(self, layer: int) -> tuple[int, ...]:
        return tuple(sorted(self.layout.mixers[layer]))

    def num_params(self, kind: str) -> int:
        p = self.layout.p
        return 2 * p if kind == "gate" else p + 2 * sum(len(self.mixed_qubits(l)) for l in range(p))

    # ---- mixers ---------------------------------------------------------------------------------
    def _processes(self, qubits: tuple[int, ...], schedules: list[Schedule]) -> torch.Tensor:
        """Transmon processes ``(len(qubits), L^2, L^2)``. One interval per sample is exact here: a resonant
        drive on one transmon has no frame phase, and the envelope is constant over a sample."""
        hs = [hamiltonian_steps(self.transmons[q], s, substeps=1) for q, s in zip(qubits, schedules)]
        h = torch.stack([x.h for x in hs])
        halves = None
        if self.noisy:
            halves = torch.stack([self._half_dissipator(q, hs[0].step_ns) for q in qubits])
        return channels(h, hs[0].step_ns, halves)

    def _half_dissipator(self, q: int, step_ns: float) -> torch.Tensor:
        """``exp(step/2 L_D)`` of active qubit ``q`` (memoised: the same for every pulse on that transmon)."""
        key = (q, step_ns)
        if key not in self._dissipators:
            self._dissipators[key] = dissipator(self.transmons[q], step_ns / 2)
        return self._dissipators[key]  # type: ignore[return-value]  # not None on a noisy simulator

    @functools.cached_property
    def _dissipators(self) -> dict[tuple[int, float], torch.Tensor | None]:
        return {}

    @functools.cached_property
    def _sx_processes(self) -> dict[int, torch.Tensor]:
        qubits = tuple(range(self.num_active))
        sx = [calibrated_sx(self.layout.device, self.layout.active[q], self.levels) for q in qubits]
        procs = self._processes(qubits, [Schedule.of([p.play()]) for p in sx])
        return dict(zip(qubits, procs))

    def _frame(self, theta: float) -> torch.Tensor:
        """A virtual ``rz(theta)`` on a transmon: level k gets ``exp(i k theta)`` (process ``U x conj U``)."""
        u = torch.diag(torch.exp(1j * theta * torch.arange(self.levels, dtype=torch.float64)).to(torch.complex128))
        return torch.kron(u, u.conj())

    def gate_mixer(self, layer: int, beta: float) -> dict[int, torch.Tensor]:
        """Per mixed qubit, the channel of the transpiled ``rx(2 beta)`` played as calibrated SX pulses.

        A drive phase shift is a frame rotation of the transmon (exact: the drive term is conjugated by
        ``exp(-i phi n)`` and T1/dephasing commute with it), so the played sequence is the product of the SX
        pulse's process and virtual-Z frames, computed once per qubit."""
        param = self.layout.betas[layer]
        out = {}
        for q in self.mixed_qubits(layer):
            proc = torch.eye(self.levels**2, dtype=torch.complex128)
            for name, angle in self.layout.mixers[layer][q]:
                if name == "rz":
                    theta = float(angle.bind({param: beta})) if hasattr(angle, "bind") else float(angle)
                    proc = self._frame(theta) @ proc
                else:
                    for _ in range(2 if name == "x" else 1):
                        proc = self._sx_processes[q] @ proc
            out[q] = fold_to_qubit(proc, self.levels)
        return out

    @functools.cached_property
    def _unit_area(self) -> float:
        """Area (samples) of the mixer's DRAG envelope at amplitude 1 (its in-phase part)."""
        return float(drag(self.mixer_dt, 1.0, self.mixer_dt / 4, 0.0).real.sum())

    def max_rotation(self, q: int) -> float:
        """The largest rotation (rad) one mixer pulse can make on active qubit ``q`` (amplitude 1)."""
        t = self.transmons[q]
        return t.drive[0] * self._unit_area * t.dt

    def mixer_pulse(self, q: int, theta: float, phase: float) -> Schedule:
        """The hybrid's DRAG pulse on active qubit ``q`` for rotation ``theta`` (rad, area rule) and ``phase``."""
        t = self.transmons[q]
        d = self.mixer_dt
        beta = -1 / (2 * t.anharmonicity[0] * t.dt) if self.levels == 3 else 0.0
        amp = float(np.clip(abs(theta) / self.max_rotation(q), 0.0, 1.0))
        phase = phase + (math.pi if theta < 0 else 0.0)
        return Schedule.of([Play("d0", drag(d, amp, d / 4, beta, phase))])

    def hybrid_mixer(self, layer: int, thetas: np.ndarray, phases: np.ndarray) -> dict[int, torch.Tensor]:
        """Per mixed qubit, the channel of one DRAG pulse of ``mixer_dt`` samples: rotation angle and phase."""
        qubits = self.mixed_qubits(layer)
        schedules = [self.mixer_pulse(q, float(thetas[i]), float(phases[i])) for i, q in enumerate(qubits)]
        s = fold_to_qubit(self._processes(qubits, schedules), self.levels)
        return {q: s[i] for i, q in enumerate(qubits)}

    def _euler(self, q: int, theta: float) -> tuple[float, float, float]:
        """The noiseless qubit block of the pulse ``(theta, phase 0)`` on active qubit ``q`` as
        ``Rz(a) Rx(t) Rz(b)`` (global phase and leakage dropped): ``(t, a, b)`` in rad."""
        coherent = self.transmons[q].noiseless()
        u = unitary(hamiltonian_steps(coherent, self.mixer_pulse(q, theta, 0.0), substeps=1))[:2, :2]
        u00, u01, u10, u11 = (complex(u[i, j]) for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)))
        t = 2 * math.atan2(abs(u10), abs(u00))
        a_plus_b = cmath.phase(u11 / u00) if abs(u00) > 1e-9 else 0.0
        a_minus_b = cmath.phase(u10 / u01) if abs(u01) > 1e-9 else 0.0
        return t, (a_plus_b + a_minus_b) / 2, (a_plus_b - a_minus_b) / 2

    def equivalent_pulse(self, q: int, angle: float) -> tuple[float, float]:
        """Pulse parameters ``(theta, phase)`` on active qubit ``q`` whose qubit block is ``Rz(c) Rx(angle)``:
        the area rule corrected for the transmon's third level (a 3-level DRAG pulse of 2.98 rad rotates ~0.3 %
        short and leaves a ~9 mrad Z phase split before and after it). The amplitude is rescaled (secant steps)
        until the rotation is ``angle``; the phase ``b`` moves the leading ``Rz(b)`` behind the pulse, where it
        commutes with the diagonal cost layer and the measurement (exact at p = 1; at p >= 2 routing swaps carry
        it to a neighbour, a residual below 1e-4 in the expected cut). ``angle`` is wrapped to ``(-pi, pi]``
        (``rx(a + 2 pi) = -rx(a)``)."""
        wrapped = math.remainder(angle, 2 * math.pi)
        target = abs(wrapped)
        if target < 1e-9:
            return 0.0, 0.0
        theta, b = target, 0.0
        for _ in range(3):
            t, _, b = self._euler(q, theta)
            theta = theta * target / t if t > 1e-9 else theta
        _, _, b = self._euler(q, theta)
        return (theta if wrapped > 0 else -theta), b

    # ---- the circuit -----------------------------------------------------------------------------
    def _cost(self, rho: torch.Tensor | None, layer: int, gamma: float) -> torch.Tensor:
        program = self._programs[layer]
        theta, _ = resolve_params(program, [gamma], dtype=torch.complex128)
        steps, _ = bind(program, theta)
        return run_density(steps, self.num_active, noise=self._spec, initial=rho)

    def _mix(self, rho: torch.Tensor, superops: dict[int, torch.Tensor]) -> torch.Tensor:
        k = self.num_active
        vec = rho.reshape(1, -1)
        for q, s in superops.items():
            vec = apply_matrix(vec, s, virtual_targets((q,), k), 2 * k)
        return vec.reshape(1, 2**k, 2**k)

    @one_thread()
    def probabilities(self, kind: str, params: np.ndarray) -> np.ndarray:
        """Outcome probabilities over the active qubits (readout error included when noisy)."""
        params = np.asarray(params, dtype=float)
        if params.shape != (self.num_params(kind),):
            raise ValueError(f"params has shape {params.shape}: the {kind} ansatz takes {self.num_params(kind)}")
        p = self.layout.p
        rho, offset = None, p
        for layer in range(p):
            rho = self._cost(rho, layer, float(params[layer]))
            if kind == "gate":
                mix = self.gate_mixer(layer, float(params[p + layer]))
            else:
                m = len(self.mixed_qubits(layer))
                thetas, phases = params[offset : offset + 2 * m : 2], params[offset + 1 : offset + 2 * m : 2]
                offset += 2 * m
                mix = self.hybrid_mixer(layer, thetas, phases)
            rho = self._mix(rho, mix)
        probs = diagonal(rho)
        if self._spec is not None:
            confusion = self._spec.readout_matrices(self.num_active)
            if confusion is not None:
                probs = apply_readout(probs, confusion, self.num_active)
        return probs[0].numpy()

    def expected_cut(self, kind: str, params: np.ndarray) -> float:
        return float(self.probabilities(kind, params) @ self.cuts)

    def hybrid_from_gate(self, params: np.ndarray) -> np.ndarray:
        """Hybrid parameters doing what the gate mixer does: ``rx(2 beta)`` on every mixed qubit, each pulse
        calibrated by :meth:`equivalent_pulse` (the bare area rule errs by up to 4e-3 in the expected cut at
        ``beta`` = 1.49)."""
        p = self.layout.p
        out = list(params[:p])
        for layer in range(p):
            for q in self.mixed_qubits(layer):
                out += list(self.equivalent_pulse(q, 2 * float(params[p + layer])))
        return np.array(out)
