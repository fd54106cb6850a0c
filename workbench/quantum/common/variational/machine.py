"""The "machine": a noisy device in the loop, simulated, that counts every execution.

:class:`Machine` runs a parameterised circuit on a density-matrix simulation of a device snapshot (its
calibrated incoherent noise: depolarizing gate errors, thermal relaxation, readout errors, through
:class:`~workbench.quantum.noise.NoiseSpec`) plus seeded **coherent** errors (:class:`CoherentErrors`:
systematic over-rotation of the ``sx``/``x``/``cx`` pulses, ZZ crosstalk after two-qubit gates, detuning
phases accumulated over every gate's duration, and an optional offset of every parameter). Measurements are
sampled with a finite number of shots in Pauli bases (:mod:`~workbench.quantum.common.variational.shadows`); the
basis-change gates carry the same noise. Every call of :meth:`Machine.measure` is counted:
``circuits`` (one per parameter set and setting) and ``executions = circuits x shots``.

What a real device could not give, and the machine gives only for evaluation (never counted and never used
by a training method): :meth:`Machine.density`, the true noisy state, and :meth:`Machine.probabilities`, the
exact outcome distribution.

Example::

    >>> from workbench.quantum.common.variational import Ansatz, Machine
    >>> a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=1)
    >>> m = Machine(a.circuit(), shots=100, seed=0)
    >>> f = m.measure(torch.zeros(a.num_parameters), np.zeros((3, 2), dtype=int))
    >>> f.shape, m.executions
    (torch.Size([3, 4]), 300)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.channels import unitary_power, unitary_superop, virtual_targets
from workbench.quantum.circuit import Step, bind, from_qiskit, resolve_params
from workbench.quantum.common.variational.shadows import BASIS_STEPS
from workbench.quantum.density import apply_readout, diagonal, run_density
from workbench.quantum.gates import gate_matrix
from workbench.quantum.noise import NoiseSpec

__all__ = ["CoherentErrors", "Machine", "DEFAULT_DURATIONS"]

#: gate durations (s) used for detuning phases when the calibration has none (IBM Falcon typical values)
DEFAULT_DURATIONS = {"sx": 35.6e-9, "x": 35.6e-9, "cx": 300e-9}


@dataclass(frozen=True, kw_only=True)
class CoherentErrors:
    """Systematic (unitary) errors of a machine; all zero by default.

    over_rotation[q]: fractional over-rotation of qubit q's pulses (``sx -> rx(pi/2 (1 + e))``, ``x`` likewise);
    cx_over_rotation: fraction for every ``cx`` (``cx -> cx**(1 + e)``); zz[(a, b)]: ``rzz`` angle (rad) after
    every two-qubit gate on that pair (crosstalk of the always-on ZZ coupling during the gate); detuning[q]:
    frequency offset (Hz) of qubit q, giving ``rz(2 pi f t)`` after every gate of duration t on q;
    parameter_offset: added to every parameter (rad; a miscalibrated rotation angle, the analytic check).
    """

    over_rotation: tuple[float, ...] = ()
    cx_over_rotation: float = 0.0
    zz: tuple[tuple[tuple[int, int], float], ...] = ()
    detuning: tuple[float, ...] = ()
    parameter_offset: tuple[float, ...] | float = 0.0

    @classmethod
    def draw(cls, num_qubits: int, edges: tuple[tuple[int, int], ...], *, strength: float, seed: int) -> CoherentErrors:
        """Seeded random errors of typical size x ``strength``: over-rotation ``N(0, 0.02)`` per qubit,
        cx over-rotation ``N(0, 0.02)``, ZZ ``N(0, 0.04)`` rad per edge, detuning ``N(0, 25 kHz)`` per qubit
        (ours: sized so that strength 1 gives a coherent infidelity of a few percent on the 4-5 qubit ansatze,
        the paper's slide-10 range 0.04-0.10)."""
        if not (0 <= strength <= 10 and math.isfinite(strength)):
            raise ValueError(f"coherent_strength={strength} is out of range: valid range is 0..10")
        rng = np.random.default_rng(seed)
        s = float(strength)
        return cls(
            over_rotation=tuple(float(x) for x in s * rng.normal(0, 0.02, num_qubits)),
            cx_over_rotation=float(s * rng.normal(0, 0.02)),
            zz=tuple(((int(a), int(b)), float(s * rng.normal(0, 0.04))) for a, b in edges),
            detuning=tuple(float(x) for x in s * rng.normal(0, 25e3, num_qubits)),
        )

    @property
    def is_zero(self) -> bool:
        return not (
            any(self.over_rotation)
            or self.cx_over_rotation
            or any(v for _, v in self.zz)
            or any(self.detuning)
            or np.any(np.asarray(self.parameter_offset))
        )


@dataclass
class Machine:
    """A counted, shot-sampled, noisy execution of ``circuit`` (a parameterised qiskit circuit in the device's
    native gates on qubits ``0..n-1``; see the module docstring).

    noise: incoherent noise (a :class:`NoiseSpec`, e.g. ``NoiseSpec.device(calibration_subset(...))``) or None;
    coherent: :class:`CoherentErrors` or None; shots: per circuit (None: exact probabilities, each circuit
    counted as one execution); seed: of the shot sampler; measurement_noise: False makes the measurement ideal
    (basis-change gates without noise or coherent errors, no readout errors), so the outcomes are those of the
    circuit's noisy state itself (QGAS's noisy score; :meth:`qiskit_circuit` does not model this).

    Any gate the simulator knows and the calibration covers is accepted (a transpiled circuit on a ``cx``,
    ``ecr`` or ``cz`` device, ``u1``/``u2``/``u3`` on older ones); the coherent over-rotations model ``sx``,
    ``x`` and ``cx`` only. A bound circuit (no parameters) takes ``theta = torch.zeros(0)``.
    """

    circuit: Any  # a qiskit QuantumCircuit
    noise: NoiseSpec | None = None
    coherent: CoherentErrors | None = None
    shots: int | None = 1024
    seed: int = 0
    measurement_noise: bool = True
    circuits: int = field(default=0, init=False)
    executions: int = field(default=0, init=False)
    calls: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        shots = self.shots
        if shots is not None and (isinstance(shots, bool) or not isinstance(shots, (int, np.integer)) or shots < 1):
            raise ValueError(
                f"shots={shots!r} is out of range: valid values are None (exact) or integers >= 1 (shots per circuit)"
            )
        self.program = from_qiskit(self.circuit)
        self.num_qubits = self.program.num_qubits
        if self.noise is not None and self.noise.calibration is not None:
            cal = self.noise.calibration
            if self.num_qubits > cal.num_qubits:
                raise ValueError(
                    f"circuit has {self.num_qubits} qubits but device {cal.name} has {cal.num_qubits}: "
                    f"valid widths are 1..{cal.num_qubits}"
                )
            # every non-virtual gate must be calibrated (strict), checked once here; the inserted coherent
            # error steps carry no noise of their own
            for op in self.program.ops:
                if op.qubits:
                    self.noise.channel(op.name, op.qubits)
        self._rng = np.random.default_rng(self.seed)
        self._extra: dict[tuple, list[Step]] = {}
        self._basis_cache: dict[tuple[int, int], Tensor] = {}
        self._offset = torch.zeros(self.program.num_parameters, dtype=torch.float64)
        if self.coherent is not None:
            off = torch.as_tensor(self.coherent.parameter_offset, dtype=torch.float64)
            self._offset = self._offset + off

    # ---- the coherent errors as extra steps ----------------------------------------------------------------
    def _duration(self, name: str, qubits: tuple[int, ...]) -> float:
        cal = self.noise.calibration if self.noise is not None else None
        g = cal.gate(name, qubits) if cal is not None else None
        return g.duration if g is not None and g.duration else DEFAULT_DURATIONS.get(name, 0.0)

    def _error_steps(self, name: str, qubits: tuple[int, ...]) -> list[Step]:
        """Fixed unitary steps (no noise attached) that follow ``name`` on ``qubits``."""
        key = (name, qubits)
        if key in self._extra:
            return self._extra[key]
        c = self.coherent
        out: list[Step] = []
        if c is not None and name not in ("rz", "p", "id", "") and qubits:
            if name in ("sx", "x") and c.over_rotation:
                e = c.over_rotation[qubits[0]]
                if e:
                    angle = (math.pi / 2 if name == "sx" else math.pi) * e
                    out.append(Step(qubits, gate_matrix("rx", [angle])[None]))
            if name == "cx" and c.cx_over_rotation:
                u = unitary_power(gate_matrix("cx").numpy(), c.cx_over_rotation)
                out.append(Step(qubits, torch.as_tensor(u)[None]))
            if len(qubits) == 2 and c.zz:
                zz = dict(c.zz)
                v = zz.get(tuple(qubits), zz.get(tuple(reversed(qubits)), 0.0))
                if v:
                    out.append(Step(qubits, gate_matrix("rzz", [v])[None]))
            if c.detuning:
                t = self._duration(name, qubits)
                for q in qubits:
                    phi = 2 * math.pi * c.detuning[q] * t
                    if phi:
                        out.append(Step((q,), gate_matrix("rz", [phi])[None]))
        self._extra[key] = out
        return out

    def _with_errors(self, steps: list[Step]) -> list[Step]:
        out: list[Step] = []
        for s in steps:
            out.append(s)
            out.extend(self._error_steps(s.name, s.qubits))
        return out

    def _noise_spec(self) -> NoiseSpec | None:
        return None if self.noise is None or self.noise.is_ideal else self.noise

    # ---- what the simulation knows ------------------------------------------------------------------------
    def density(self, theta: Tensor) -> Tensor:
        """The true noisy state after the circuit (no measurement), ``[2**n, 2**n]`` or ``[B, ...]``. NOT
        counted: an evaluation privilege of the simulation."""
        t, batched = resolve_params(self.program, theta, dtype=torch.complex128)
        t = t + self._offset
        steps, _ = bind(self.program, t)
        rho = run_density(self._with_errors(steps), self.num_qubits, batch=t.shape[0], noise=self._noise_spec())
        return rho if batched else rho[0]

    def _basis_superop(self, q: int, basis: int) -> Tensor:
        """``[4, 4]`` superoperator of the basis change of qubit q (gates, their noise and coherent errors)."""
        key = (q, basis)
        if key not in self._basis_cache:
            s = torch.eye(4, dtype=torch.complex128)
            spec = self._noise_spec() if self.measurement_noise else None
            for name, angle in BASIS_STEPS[basis]:
                u = gate_matrix(name, [angle] if angle is not None else [])
                steps = [Step((q,), u[None], name=name)]
                if self.measurement_noise:
                    steps += self._error_steps(name, (q,))
                for i, st in enumerate(steps):
                    m = unitary_superop(st.matrix)[0]
                    if i == 0 and spec is not None:
                        ch = spec.channel(name, (q,))
                        if ch is not None:
                            m = torch.as_tensor(ch) @ m
                    s = m @ s
            self._basis_cache[key] = s
        return self._basis_cache[key]

    def probabilities(self, theta: Tensor, settings: np.ndarray) -> Tensor:
        """Exact outcome probabilities ``[K, 2**n]`` (``[B, K, 2**n]`` for a batch) in each setting,
        readout errors included (unless ``measurement_noise`` is False). NOT counted (used by :meth:`measure`
        and for evaluation)."""
        settings = np.asarray(settings, dtype=np.int64).reshape(-1, self.num_qubits)
        rho = self.density(theta)
        batched = rho.dim() == 3
        rho = rho if batched else rho[None]
        b, d = rho.shape[0], rho.shape[-1]
        n = self.num_qubits
        k = settings.shape[0]
        vec = rho.reshape(b, 1, d * d).expand(b, k, d * d)
        for q in range(n):
            if not settings[:, q].any():
                continue
            mats = torch.stack([self._basis_superop(q, int(x)) for x in settings[:, q]])  # [K, 4, 4]
            vec = _apply(vec, mats, virtual_targets((q,), n), 2 * n)
        probs = diagonal(vec.reshape(b, k, d, d)).clamp_min(0)
        spec = self._noise_spec() if self.measurement_noise else None
        if spec is not None:
            conf = spec.readout_matrices(n)
            if conf is not None:
                probs = apply_readout(probs.reshape(b * k, d), conf, n).reshape(b, k, d)
        probs = probs / probs.sum(-1, keepdim=True)
        return probs if batched else probs[0]

    def measure(self, theta: Tensor, settings: np.ndarray) -> Tensor:
        """Run the circuit once per setting (and per parameter set of a batch ``[B, P]``) with ``shots`` shots:
        outcome frequencies ``[K, 2**n]`` (``[B, K, 2**n]``), each row summing to 1. Counted."""
        probs = self.probabilities(theta, settings).detach()
        rows = probs.reshape(-1, probs.shape[-1])
        self.calls += 1
        self.circuits += rows.shape[0]
        if self.shots is None:
            self.executions += rows.shape[0]
            return probs
        self.executions += rows.shape[0] * self.shots
        counts = self._rng.multinomial(self.shots, rows.numpy())
        return torch.as_tensor(counts / self.shots, dtype=torch.float64).reshape(probs.shape)

    def readout_inverse(self) -> Tensor | None:
        """Per-qubit inverses of the calibrated confusion matrices ``[n, 2, 2]`` (None without readout error or
        with ``measurement_noise`` False): what a user of the device applies for readout-error mitigation (the
        snapshot's published values)."""
        spec = self._noise_spec() if self.measurement_noise else None
        conf = spec.readout_matrices(self.num_qubits) if spec is not None else None
        if conf is None:
            return None
        return torch.linalg.inv(torch.as_tensor(conf, dtype=torch.float64))

    def without_coherent(self) -> Machine:
        """The same machine with only its incoherent noise (a fresh counter)."""
        return Machine(
            self.circuit,
            noise=self.noise,
            coherent=None,
            shots=self.shots,
            seed=self.seed,
            measurement_noise=self.measurement_noise,
        )

    def qiskit_circuit(self, theta: Tensor, settings: np.ndarray | None = None) -> object:
        """The bound circuit the machine executes, as a qiskit circuit: the coherent errors inserted as
        ``unitary`` gates (which a ``NoiseSpec.to_aer()`` model leaves noiseless) and, for a setting ``[n]``, the
        basis-change gates. Running it on qiskit-aer with ``noise.to_aer()`` is the independent reference."""
        from qiskit import QuantumCircuit
        from qiskit.circuit.library import UnitaryGate

        t = torch.as_tensor(theta, dtype=torch.float64).reshape(-1) + self._offset
        bound = self.circuit.assign_parameters([float(x) for x in t])
        out = QuantumCircuit(self.num_qubits)
        bit = {q: i for i, q in enumerate(bound.qubits)}

        def errors(name: str, qubits: tuple[int, ...]) -> None:
            for st in self._error_steps(name, qubits):
                out.append(UnitaryGate(st.matrix[0].numpy(), check_input=False), list(st.qubits))

        for inst in bound.data:
            qubits = tuple(bit[q] for q in inst.qubits)
            out.append(inst.operation, list(qubits))
            errors(inst.name, qubits)
        if settings is not None:
            for q, basis in enumerate(np.asarray(settings).reshape(-1)):
                for name, angle in BASIS_STEPS[int(basis)]:
                    if name == "rz":
                        out.rz(angle, q)
                    else:
                        out.sx(q)
                    errors(name, (q,))
        return out

    def reset_counts(self) -> None:
        self.circuits = self.executions = self.calls = 0


def _apply(vec: Tensor, mats: Tensor, targets: tuple[int, ...], num_virtual: int) -> Tensor:
    """``mats[k]`` ``[K, 4, 4]`` on virtual ``targets`` of ``vec`` ``[B, K, 4**n]``."""
    from workbench.quantum.apply import apply_matrix

    return apply_matrix(vec, mats, targets, num_virtual)
