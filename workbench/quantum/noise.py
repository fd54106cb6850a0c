"""One noise description, two consumers: our simulator's channels and an equivalent qiskit-aer ``NoiseModel``.

A :class:`NoiseSpec` describes noise once: depolarizing rates, thermal relaxation (T1, T2, gate times),
readout errors, coherent errors (over-rotation, ZZ) or a real device calibration, all times a ``scale``.
:meth:`NoiseSpec.channel` gives the superoperator applied after an instruction (our simulator, numpy
complex128, cached); :meth:`NoiseSpec.readout_matrices` the per-qubit confusion matrices;
:meth:`NoiseSpec.to_aer` the qiskit-aer ``NoiseModel`` built with aer's own error constructors (for a device,
aer's ``basic_device_gate_errors`` on a ``Target`` rebuilt from the calibration), which the tests show agree.

After every instruction ``name`` on ``qubits`` (as aer applies errors after the gate), in this order:

1. coherent: over-rotation ``U**eps`` for fixed (angle-free) non-virtual gates (``x -> rx(eps*pi)``,
   ``sx -> rx(eps*pi/2)``, ``cx -> cx**eps``; parametric gates are exact, as they are on hardware, where
   ``rz`` is virtual and rotations compile to ``sx``), then ``rzz(zz)`` after two-qubit gates;
2. depolarizing with parameter p (uniform: ``depolarizing`` for one-qubit gates, ``depolarizing_2q`` for
   larger ones; device: aer's rule, the gate error minus the relaxation infidelity, ``p = d (e - r)/(d F_r - 1)``);
3. thermal relaxation of each qubit of the gate over its duration (uniform: ``time_1q`` / ``time_2q``).

Virtual gates (``rz``, ``p``, ``s``, ...), ``reset`` and ``unitary`` get no uniform noise. With a device
calibration, a non-virtual instruction the device has no calibration for raises ValueError (``strict``):
transpile to the device first. Readout errors act on the final probabilities.

Scaling by ``s``: rates x s (depolarizing, readout, gate errors, over-rotation, ZZ) and T1, T2 / s (unless
``scale_relaxation=False``, e.g. QuEst's sweeps that scale only non-T1/T2 errors). Scaled device gate
errors are clipped at ``d/(d+1)`` (as aer does) and readout probabilities at 0.5 (fully random).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from workbench.quantum import channels as ch
from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.gates import GATES, VIRTUAL_GATES, gate_matrix


class _HasCalibration(Protocol):
    """A :class:`~workbench.quantum.device.Device` as this module sees it (device.py imports this module)."""

    @property
    def calibration(self) -> DeviceCalibration: ...


__all__ = ["NoiseSpec", "IDEAL", "device_depolarizing_parameter", "NOISY_GATES"]

#: gates that carry uniform noise: every standard gate except the virtual (software) phase gates
NOISY_GATES = tuple(sorted(set(GATES) - VIRTUAL_GATES))
READOUT_CLIP = 0.5


def device_depolarizing_parameter(error: Any, relax_fidelity: Any, num_qubits: Any) -> Any:
    """Depolarizing p such that depolarizing-then-relaxation has average gate infidelity ``error``
    (aer's rule for device models; 0 when relaxation alone already exceeds the error). Scalars give a float;
    arrays (broadcast together, e.g. one entry per gate) give an array."""
    error, fid = np.asarray(error, dtype=float), np.asarray(relax_fidelity, dtype=float)
    d = 2.0 ** np.asarray(num_qubits, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = d * (np.minimum(error, d / (d + 1)) - (1 - fid)) / (d * fid - 1)
    p = np.where(error <= 1 - fid, 0.0, np.clip(p, 0.0, d * d / (d * d - 1)))  # >= 0 where error is capped
    return float(p) if p.ndim == 0 else p


def _check(name: str, value: float, lo: float, hi: float, unit: str = "") -> None:
    if not (lo <= value <= hi):
        u = f" ({unit})" if unit else ""
        raise ValueError(f"{name}={value:g} is out of range: valid range is {lo:g}..{hi:g}{u}")


@dataclass(frozen=True, kw_only=True)
class NoiseSpec:
    """A noise description (see the module docstring). Build with the class methods, e.g.
    ``NoiseSpec.device(get_device("fake_jakarta"), scale=2)`` or ``NoiseSpec.thermal(t1=50e-6, t2=70e-6)``, and
    combine with :meth:`replace`. Times in seconds, angles in radians, probabilities in 0..1."""

    depolarizing: float = 0.0
    depolarizing_2q: float | None = None
    t1: float = math.inf
    t2: float = math.inf
    time_1q: float = 50e-9
    time_2q: float = 300e-9
    readout_p01: float = 0.0
    readout_p10: float = 0.0
    over_rotation: float = 0.0
    zz: float = 0.0
    calibration: DeviceCalibration | None = None
    scale: float = 1.0
    scale_relaxation: bool = True
    readout: bool = True
    strict: bool = True
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check("scale", self.scale, 0.0, 1e6)
        s = self.scale
        _check("depolarizing*scale", self.depolarizing * s, 0.0, 4 / 3)
        if self.depolarizing_2q is not None:
            _check("depolarizing_2q*scale", self.depolarizing_2q * s, 0.0, 16 / 15)
        _check("t1", self.t1, 1e-12, math.inf, "s")
        _check("t2", self.t2, 1e-12, math.inf, "s")
        if self.t2 > 2 * self.t1:
            raise ValueError(f"t2={self.t2:g} > 2*t1={2 * self.t1:g} is unphysical: valid range is 0 < t2 <= 2*t1 (s)")
        _check("time_1q", self.time_1q, 0.0, 1.0, "s")
        _check("time_2q", self.time_2q, 0.0, 1.0, "s")
        _check("readout_p01*scale", self.readout_p01 * s, 0.0, 1.0)
        _check("readout_p10*scale", self.readout_p10 * s, 0.0, 1.0)
        _check("over_rotation", self.over_rotation, -1.0, 1.0, "fraction of the gate's angle")
        _check("zz", self.zz, -math.pi, math.pi, "rad per two-qubit gate")
        if self.calibration is not None and (
            self.depolarizing
            or self.depolarizing_2q
            or math.isfinite(self.t1)
            or math.isfinite(self.t2)
            or self.readout_p01
            or self.readout_p10
        ):
            raise ValueError(
                "a device calibration sets depolarizing, T1/T2 and readout itself: do not combine it "
                "with depolarizing, t1, t2 or readout_p01/p10 (coherent errors may be added)"
            )

    # ---- constructors -----------------------------------------------------------------------------
    @classmethod
    def ideal(cls) -> NoiseSpec:
        return cls()

    @classmethod
    def depolarizing_noise(cls, p: float, p_2q: float | None = None, *, scale: float = 1.0) -> NoiseSpec:
        """Depolarizing ``p`` after every one-qubit gate and ``p_2q`` (default p) after larger gates."""
        return cls(depolarizing=p, depolarizing_2q=p_2q, scale=scale)

    @classmethod
    def thermal(
        cls, t1: float, t2: float, *, time_1q: float = 50e-9, time_2q: float = 300e-9, scale: float = 1.0
    ) -> NoiseSpec:
        """Thermal relaxation (T1, T2 in s) over each gate's duration."""
        return cls(t1=t1, t2=t2, time_1q=time_1q, time_2q=time_2q, scale=scale)

    @classmethod
    def readout_error(cls, p01: float, p10: float | None = None, *, scale: float = 1.0) -> NoiseSpec:
        """Readout errors ``P(1|0) = p01`` and ``P(0|1) = p10`` (default p01) on every qubit."""
        return cls(readout_p01=p01, readout_p10=p01 if p10 is None else p10, scale=scale)

    @classmethod
    def coherent(cls, over_rotation: float = 0.0, zz: float = 0.0, *, scale: float = 1.0) -> NoiseSpec:
        """Coherent errors: fractional over-rotation of fixed gates, ``rzz(zz)`` after two-qubit gates."""
        return cls(over_rotation=over_rotation, zz=zz, scale=scale)

    @classmethod
    def device(
        cls,
        device: _HasCalibration | DeviceCalibration,
        *,
        scale: float = 1.0,
        scale_relaxation: bool = True,
        readout: bool = True,
        strict: bool = True,
    ) -> NoiseSpec:
        """A device snapshot (a :class:`~workbench.quantum.device.Device` or a :class:`DeviceCalibration`) times
        ``scale``. A name is resolved to a Device at the config boundary (``get_device(name).noise()``), not here:
        TypeError for a string."""
        if isinstance(device, DeviceCalibration):
            cal = device
        elif isinstance(device, str) or not hasattr(device, "calibration"):
            raise TypeError(
                f"NoiseSpec.device({device!r}): pass a Device or a DeviceCalibration (a name resolves with "
                "workbench.quantum.device.get_device(name).noise())"
            )
        else:  # a Device (not imported here: device.py builds NoiseSpecs)
            cal = device.calibration
        return cls(calibration=cal, scale=scale, scale_relaxation=scale_relaxation, readout=readout, strict=strict)

    def replace(self, **changes: Any) -> NoiseSpec:
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)

    # ---- what it is -------------------------------------------------------------------------------
    @property
    def is_ideal(self) -> bool:
        """True when no channel and no readout error would be applied."""
        if self.scale == 0:
            return True
        uniform = (
            self.depolarizing
            or self.depolarizing_2q
            or math.isfinite(self.t1)
            or math.isfinite(self.t2)
            or (self.readout and (self.readout_p01 or self.readout_p10))
            or self.over_rotation
            or self.zz
        )
        return not uniform and self.calibration is None

    def describe(self) -> str:
        """Short text for legends and logs."""
        parts = []
        if self.calibration is not None:
            parts.append(self.calibration.name)
        if self.depolarizing or self.depolarizing_2q:
            parts.append(f"depolarizing {self.depolarizing:g}/{self._p2:g}")
        if math.isfinite(self.t1) or math.isfinite(self.t2):
            parts.append(f"T1 {self.t1 * 1e6:g} us, T2 {self.t2 * 1e6:g} us")
        if self.readout_p01 or self.readout_p10:
            parts.append(f"readout {self.readout_p01:g}/{self.readout_p10:g}")
        if self.over_rotation or self.zz:
            parts.append(f"over-rotation {self.over_rotation:g}, zz {self.zz:g} rad")
        text = ", ".join(parts) or "ideal"
        return text + (f" x{self.scale:g}" if self.scale != 1 else "")

    @property
    def _p2(self) -> float:
        return self.depolarizing if self.depolarizing_2q is None else self.depolarizing_2q

    @functools.cached_property
    def scaled_calibration(self) -> DeviceCalibration | None:
        """The calibration with ``scale`` applied (None without a device)."""
        if self.calibration is None:
            return None
        if self.scale == 1:
            return self.calibration
        return self.calibration.scaled(self.scale, relaxation=self.scale_relaxation)

    # ---- our channels -----------------------------------------------------------------------------
    def channel(self, name: str, qubits: tuple[int, ...]) -> np.ndarray | None:
        """Superoperator ``[4**k, 4**k]`` (complex128) applied after ``name`` on ``qubits``; None if noiseless.

        Raises ValueError (device, ``strict``) for a non-virtual instruction without calibration on ``qubits``.
        """
        key = (name, tuple(qubits))
        if key not in self._cache:
            self._cache[key] = self._build_channel(name, tuple(qubits))
        return self._cache[key]

    def _coherent_parts(self, name: str, k: int) -> list[np.ndarray]:
        parts = []
        eps, zz = self.over_rotation * self.scale, self.zz * self.scale
        gate = GATES.get(name)
        if eps and gate is not None and gate.num_params == 0 and name not in VIRTUAL_GATES:
            u = gate_matrix(name).numpy()
            parts.append(np.kron(ch.unitary_power(u, eps), ch.unitary_power(u, eps).conj()))
        if zz and k == 2 and gate is not None:
            u = gate_matrix("rzz", [zz]).numpy()
            parts.append(np.kron(u, u.conj()))
        return parts

    def _build_channel(self, name: str, qubits: tuple[int, ...]) -> np.ndarray | None:
        k = len(qubits)
        if self.scale == 0 or k == 0:
            return None
        parts = self._coherent_parts(name, k)
        cal = self.scaled_calibration
        if cal is not None:
            if any(q >= cal.num_qubits for q in qubits):
                raise ValueError(f"{name} on qubits {list(qubits)}: device {cal.name} has {cal.num_qubits} qubits")
            g = cal.gate(name, qubits)
            if g is None:
                if self.strict and name not in VIRTUAL_GATES:
                    raise ValueError(
                        f"{name} on qubits {list(qubits)} has no calibration on {cal.name} (basis gates "
                        f"{', '.join(cal.basis_gates)}; two-qubit gates on coupling-map edges only): transpile the "
                        "circuit to the device first, or use strict=False to leave such gates noiseless"
                    )
            else:
                relax = None
                if g.duration > 0:
                    relax = ch.tensor_superops(
                        [
                            ch.thermal_relaxation_superop(cal.t1[q], min(cal.t2[q], 2 * cal.t1[q]), g.duration)
                            for q in qubits
                        ]
                    )
                fid = ch.average_gate_fidelity(relax) if relax is not None else 1.0
                if g.error and name in GATES:  # aer: gate errors for Gates only (not reset)
                    p = device_depolarizing_parameter(g.error, fid, k)
                    if p > 0:
                        parts.append(ch.depolarizing_superop(p, k))
                if relax is not None:
                    parts.append(relax)
        elif name in NOISY_GATES:
            p = (self.depolarizing if k == 1 else self._p2) * self.scale
            if p:
                parts.append(ch.depolarizing_superop(p, k))
            if math.isfinite(self.t1) or math.isfinite(self.t2):
                t1, t2 = self._scaled_t()
                time = self.time_1q if k == 1 else self.time_2q
                if time > 0:
                    parts.append(ch.tensor_superops([ch.thermal_relaxation_superop(t1, t2, time)] * k))
        if not parts:
            return None
        out = parts[0]
        for part in parts[1:]:
            out = part @ out
        return out

    def _scaled_t(self) -> tuple[float, float]:
        s = self.scale if self.scale_relaxation else 1.0
        return self.t1 / s, self.t2 / s

    def readout_matrices(self, num_qubits: int) -> np.ndarray | None:
        """Confusion matrices ``[n, 2, 2]`` (``A[q, measured, prepared]``), or None without readout error."""
        if not self.readout or self.scale == 0:
            return None
        cal = self.scaled_calibration
        if cal is not None:
            if num_qubits > cal.num_qubits:
                raise ValueError(f"circuit has {num_qubits} qubits: device {cal.name} has {cal.num_qubits}")
            p01 = [min(cal.readout_p01[q], READOUT_CLIP) for q in range(num_qubits)]
            p10 = [min(cal.readout_p10[q], READOUT_CLIP) for q in range(num_qubits)]
        else:
            if not (self.readout_p01 or self.readout_p10):
                return None
            p01 = [self.readout_p01 * self.scale] * num_qubits
            p10 = [self.readout_p10 * self.scale] * num_qubits
        return np.stack([ch.readout_matrix(a, b) for a, b in zip(p01, p10)])

    # ---- the equivalent qiskit-aer model -------------------------------------------------------------
    def to_aer(
        self, gate_names: Iterable[str] | None = None, num_qubits: int | None = None, *, exact: bool = True
    ) -> Any:
        """The equivalent ``qiskit_aer.noise.NoiseModel``, built with aer's own error constructors.

        gate_names: instructions to attach uniform noise to (default: :data:`NOISY_GATES`); num_qubits: qubits
        that get readout errors for a device (default: all of the device's). exact: hand each error to aer as
        one Kraus channel (``QuantumError(Kraus(SuperOp(error)))``, the same channel). aer's engine drops the
        low-probability terms of its mixture form without renormalising: with ``exact=False`` a 100-gate device
        circuit loses ~1e-7 of trace and differs by ~2e-8 (tests/quantum/test_quantum_noise_vs_aer.py).
        """
        from qiskit_aer.noise import NoiseModel, ReadoutError

        names = sorted(set(gate_names) & set(NOISY_GATES) if gate_names is not None else NOISY_GATES)
        model = NoiseModel(basis_gates=sorted(set(names) | {"rz", "sx", "x", "cx", "id"}))
        cal = self.scaled_calibration
        if self.scale == 0:
            return model
        if cal is not None:
            for (gname, qubits), error in _aer_device_errors(self, cal).items():
                model.add_quantum_error(_exact(error) if exact else error, gname, list(qubits))
            if self.readout:
                for q in range(cal.num_qubits if num_qubits is None else num_qubits):
                    p01, p10 = min(cal.readout_p01[q], READOUT_CLIP), min(cal.readout_p10[q], READOUT_CLIP)
                    model.add_readout_error(ReadoutError([[1 - p01, p01], [p10, 1 - p10]]), [q])
            return model
        for gname in names:
            error = _aer_uniform_error(self, gname)
            if error is not None:
                model.add_all_qubit_quantum_error(_exact(error) if exact else error, gname)
        if self.readout and (self.readout_p01 or self.readout_p10):
            p01, p10 = self.readout_p01 * self.scale, self.readout_p10 * self.scale
            model.add_all_qubit_readout_error(ReadoutError([[1 - p01, p01], [p10, 1 - p10]]))
        return model


def _exact(error: Any) -> Any:
    """The same channel as one Kraus ``QuantumError`` (applied exactly by aer's engine)."""
    from qiskit.quantum_info import Kraus, SuperOp
    from qiskit_aer.noise import QuantumError

    return QuantumError(Kraus(SuperOp(error)))


def _aer_coherent(spec: NoiseSpec, name: str, k: int) -> Any:
    from qiskit.circuit.library import RZZGate, get_standard_gate_name_mapping
    from qiskit.quantum_info import Operator
    from qiskit_aer.noise import coherent_unitary_error

    error = None
    eps, zz = spec.over_rotation * spec.scale, spec.zz * spec.scale
    gate = get_standard_gate_name_mapping().get(name)
    if eps and gate is not None and not gate.params and name not in VIRTUAL_GATES:
        error = coherent_unitary_error(ch.unitary_power(Operator(gate).data, eps))
    if zz and k == 2 and name in GATES:
        zz_error = coherent_unitary_error(Operator(RZZGate(zz)).data)
        error = zz_error if error is None else error.compose(zz_error)
    return error


def _aer_uniform_error(spec: NoiseSpec, name: str) -> Any:
    from qiskit_aer.noise import depolarizing_error, thermal_relaxation_error

    k = GATES[name].num_qubits if name in GATES else 1
    error = _aer_coherent(spec, name, k)
    p = (spec.depolarizing if k == 1 else spec._p2) * spec.scale
    parts = [depolarizing_error(p, k)] if p else []
    if math.isfinite(spec.t1) or math.isfinite(spec.t2):
        t1, t2 = spec._scaled_t()
        time = spec.time_1q if k == 1 else spec.time_2q
        if time > 0:
            relax = thermal_relaxation_error(t1, t2, time)
            for _ in range(k - 1):
                relax = relax.expand(thermal_relaxation_error(t1, t2, time))
            parts.append(relax)
    for part in parts:
        error = part if error is None else error.compose(part)
    return error


def _aer_device_errors(spec: NoiseSpec, cal: DeviceCalibration) -> dict[tuple[str, tuple[int, ...]], Any]:
    """aer's ``basic_device_gate_errors`` on a qiskit ``Target`` rebuilt from the (scaled) calibration,
    with the coherent errors composed in front."""
    from qiskit.circuit import Parameter, Reset
    from qiskit.circuit.library import get_standard_gate_name_mapping
    from qiskit.providers import QubitProperties
    from qiskit.transpiler import InstructionProperties, Target
    from qiskit_aer.noise.device import basic_device_gate_errors

    def none_if_inf(x: float) -> float | None:
        return None if math.isinf(x) else x

    target = Target(
        num_qubits=cal.num_qubits,
        qubit_properties=[
            QubitProperties(
                t1=none_if_inf(cal.t1[q]), t2=none_if_inf(cal.t2[q]), frequency=none_if_inf(cal.frequency[q])
            )
            for q in range(cal.num_qubits)
        ],
    )
    mapping = get_standard_gate_name_mapping()
    by_name: dict[str, dict] = {}
    for g in cal.gates:
        by_name.setdefault(g.name, {})[g.qubits] = InstructionProperties(
            duration=g.duration or None, error=g.error or None
        )
    for gname, props in by_name.items():
        op = Reset() if gname == "reset" else mapping.get(gname)
        if op is None:
            continue
        if op.params:
            op = type(op)(*[Parameter(f"p{i}") for i in range(len(op.params))])
        target.add_instruction(op, props)
    errors = {(label, tuple(q)): e for label, q, e in basic_device_gate_errors(target=target)}
    for gname, qubits in list(errors):
        coherent = _aer_coherent(spec, gname, len(qubits))
        if coherent is not None:
            errors[(gname, qubits)] = coherent.compose(errors[(gname, qubits)])
    for g in cal.gates:  # gates with only a coherent error
        key = (g.name, g.qubits)
        if key not in errors:
            coherent = _aer_coherent(spec, g.name, len(g.qubits))
            if coherent is not None:
                errors[key] = coherent
    return errors


#: the ideal (noiseless) description
IDEAL = NoiseSpec()
