"""Real device calibration snapshots from the ``qiskit-ibm-runtime`` fake backends.

Each fake backend carries a snapshot of an IBM device: per-qubit T1, T2 and frequency, per-gate error and
duration on every qubit (or coupled pair), readout errors and the coupling map. :func:`load_calibration`
reads one into an immutable :class:`DeviceCalibration` (SI units: seconds, hertz) through the public
``Target`` API (``target[gate][qargs].error/.duration``, ``qubit_properties``); the asymmetric readout
probabilities ``prob_meas1_prep0`` / ``prob_meas0_prep1`` come from the backend's ``props_*.json`` (the
``Target`` keeps only their mean). :func:`list_devices` summarises every snapshot.

A calibration can be rescaled (:meth:`DeviceCalibration.scaled`) or randomised per value
(:meth:`DeviceCalibration.randomized`, QuEst's ``x U(0.5, 1.5)``); :class:`workbench.quantum.noise.NoiseSpec`
turns it into noise channels for our simulator and into a qiskit-aer ``NoiseModel``.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import math
import os
import statistics
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

__all__ = [
    "GateCalibration",
    "DeviceCalibration",
    "device_names",
    "device_basis",
    "load_calibration",
    "list_devices",
    "device_summary",
    "calibration_subset",
    "fake_backend",
    "resolve_device",
]

#: instructions of a Target that are not noisy gates of the calibration
_NOT_GATES = frozenset({"measure", "delay", "if_else", "for_loop", "while_loop", "switch_case", "measure_2", "reset_2"})


@dataclass(frozen=True)
class GateCalibration:
    """One calibrated instruction: ``name`` on ``qubits``; ``error`` = 1 - average gate fidelity (0 if none
    reported); ``duration`` in seconds (0 for virtual gates)."""

    name: str
    qubits: tuple[int, ...]
    error: float
    duration: float


@dataclass(frozen=True)
class DeviceCalibration:
    """A device snapshot (all tuples indexed by qubit; times in seconds, frequencies in Hz).

    readout_p01[q] = P(read 1 | prepared 0), readout_p10[q] = P(read 0 | prepared 1). ``math.inf`` stands for
    an unreported T1/T2. ``coupling_map`` lists the directed pairs of the two-qubit gate.
    """

    name: str
    num_qubits: int
    t1: tuple[float, ...]
    t2: tuple[float, ...]
    frequency: tuple[float, ...]
    readout_p01: tuple[float, ...]
    readout_p10: tuple[float, ...]
    gates: tuple[GateCalibration, ...]
    coupling_map: tuple[tuple[int, int], ...]
    basis_gates: tuple[str, ...]
    dt: float | None = None
    date: str = ""

    @functools.cached_property
    def _by_key(self) -> dict[tuple[str, tuple[int, ...]], GateCalibration]:
        return {(g.name, g.qubits): g for g in self.gates}

    def gate(self, name: str, qubits: tuple[int, ...]) -> GateCalibration | None:
        """The calibration of ``name`` on ``qubits`` (ordered), or None when the device has none."""
        return self._by_key.get((name, tuple(qubits)))

    @property
    def two_qubit_gate(self) -> str | None:
        """Name of the native two-qubit gate (``cx``, ``ecr`` or ``cz``), None for a 1-qubit device."""
        names = sorted({g.name for g in self.gates if len(g.qubits) == 2})
        return names[0] if names else None

    def scaled(self, factor: float, *, relaxation: bool = True) -> DeviceCalibration:
        """All error rates times ``factor``: gate and readout errors x factor, and (if ``relaxation``) T1 and
        T2 / factor. Values are not clipped here; :class:`~workbench.quantum.noise.NoiseSpec` clips gate
        errors at the depolarizing bound and readout errors at 0.5, as aer does for gate errors."""
        if not (factor >= 0 and math.isfinite(factor)):
            raise ValueError(f"scale={factor} is out of range: valid range is 0..inf (finite)")
        div = (lambda t: math.inf if factor == 0 else t / factor) if relaxation else (lambda t: t)
        return replace(
            self,
            t1=tuple(div(t) for t in self.t1),
            t2=tuple(div(t) for t in self.t2),
            readout_p01=tuple(p * factor for p in self.readout_p01),
            readout_p10=tuple(p * factor for p in self.readout_p10),
            gates=tuple(replace(g, error=g.error * factor) for g in self.gates),
        )

    def durations_scaled(self, factor: float) -> DeviceCalibration:
        """Every gate duration times ``factor`` (errors, T1 and T2 kept): the same gates run slower or faster, so
        thermal relaxation over each gate grows or shrinks."""
        if not (factor > 0 and math.isfinite(factor)):
            raise ValueError(f"factor={factor} is out of range: valid range is > 0 (finite)")
        return replace(self, gates=tuple(replace(g, duration=g.duration * factor) for g in self.gates))

    def randomized(self, seed: int | np.random.Generator, low: float = 0.5, high: float = 1.5) -> DeviceCalibration:
        """Every T1, T2, gate error and readout probability multiplied by its own ``U(low, high)`` draw
        (QuEst's noise randomisation); reproducible from ``seed``."""
        if not 0 <= low <= high:
            raise ValueError(f"low={low}, high={high}: valid values satisfy 0 <= low <= high")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        n = self.num_qubits

        def draw(k: int) -> np.ndarray:
            return rng.uniform(low, high, size=k)

        t1, t2, p01, p10, ge = draw(n), draw(n), draw(n), draw(n), draw(len(self.gates))
        return replace(
            self,
            t1=tuple(float(a * b) for a, b in zip(self.t1, t1)),
            t2=tuple(float(a * b) for a, b in zip(self.t2, t2)),
            readout_p01=tuple(float(a * b) for a, b in zip(self.readout_p01, p01)),
            readout_p10=tuple(float(a * b) for a, b in zip(self.readout_p10, p10)),
            gates=tuple(replace(g, error=float(g.error * f)) for g, f in zip(self.gates, ge)),
        )

    def medians(self) -> dict[str, float | None]:
        """Median T1, T2 (us), single-qubit (``sx``, else any 1-qubit gate with duration) and two-qubit gate
        error, readout error (mean of p01 and p10), and gate durations (ns)."""
        one = [g for g in self.gates if len(g.qubits) == 1 and g.name == "sx"] or [
            g for g in self.gates if len(g.qubits) == 1 and g.duration > 0 and g.name not in ("reset", "id")
        ]
        two = [g for g in self.gates if len(g.qubits) == 2]

        def med(xs: list[float]) -> float | None:
            xs = [x for x in xs if math.isfinite(x)]
            return float(statistics.median(xs)) if xs else None

        return {
            "t1_us": _scale(med(list(self.t1)), 1e6),
            "t2_us": _scale(med(list(self.t2)), 1e6),
            "error_1q": med([g.error for g in one]),
            "error_2q": med([g.error for g in two]),
            "readout_error": med([(a + b) / 2 for a, b in zip(self.readout_p01, self.readout_p10)]),
            "duration_1q_ns": _scale(med([g.duration for g in one]), 1e9),
            "duration_2q_ns": _scale(med([g.duration for g in two]), 1e9),
        }


def _scale(x: float | None, factor: float) -> float | None:
    return None if x is None else x * factor


@functools.lru_cache(maxsize=1)
def _backend_classes() -> tuple[tuple[str, type], ...]:
    """(device name, fake backend class) for every snapshot shipped with qiskit-ibm-runtime, sorted by name."""
    from qiskit_ibm_runtime import fake_provider

    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for attr in dir(fake_provider):
            cls: Any = getattr(fake_provider, attr)  # a qiskit fake backend class (no stubs)
            if not (attr.startswith("Fake") and inspect.isclass(cls) and hasattr(cls, "props_filename")):
                continue
            if getattr(cls, "conf_filename", None) is None:
                continue
            out.append((getattr(cls, "backend_name", None) or _instance_name(cls), cls))
    return tuple(sorted(out))


def _instance_name(cls: Any) -> str:
    return cls().name


def device_names() -> tuple[str, ...]:
    """Names of all device snapshots (``fake_jakarta``, ...), sorted."""
    return tuple(name for name, _ in _backend_classes())


def resolve_device(name: str) -> tuple[str, Any]:
    """``(snapshot name, fake backend class)`` of a device name (``jakarta``, ``FakeJakartaV2``, ``fake_jakarta``)."""
    key = name.strip().lower().removesuffix("v2").removeprefix("fake").strip("_")
    for device, cls in _backend_classes():
        if device.removeprefix("fake_") == key or device == name:
            return device, cls
    raise ValueError(f"device={name!r} is unknown: valid devices are {', '.join(device_names())}")


@functools.lru_cache(maxsize=256)
def device_basis(name: str) -> tuple[str, ...]:
    """The basis gates of device ``name`` from its snapshot's ``conf_*.json`` (fast: no backend is built)."""
    _, cls = resolve_device(name)
    path = os.path.join(os.path.dirname(inspect.getfile(cls)), cls.conf_filename)
    try:
        with open(path) as f:
            return tuple(json.load(f)["basis_gates"])
    except (OSError, ValueError, KeyError):
        return load_calibration(name).basis_gates


def _props_json(cls: Any) -> dict[str, Any]:
    """The backend's ``props_*.json`` (the calibration snapshot), or {} when it cannot be read."""
    path = os.path.join(os.path.dirname(inspect.getfile(cls)), cls.props_filename)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as exc:  # fall back to the Target's symmetric readout error, and say so
        log.warning("could not read %s (%s): using symmetric readout errors", path, exc)
        return {}


def _readout(props: dict[str, Any], q: int, key: str) -> float | None:
    qubits = props.get("qubits", [])
    if q >= len(qubits):
        return None
    value = {e.get("name"): e.get("value") for e in qubits[q]}.get(key)
    return None if value is None else float(value)


@functools.lru_cache(maxsize=128)
def load_calibration(name: str) -> DeviceCalibration:
    """The calibration snapshot of device ``name`` (``fake_jakarta``, ``FakeJakartaV2`` or ``jakarta``).

    Raises ValueError naming the valid devices for an unknown name. Example::

        >>> cal = load_calibration("fake_jakarta")
        >>> cal.num_qubits, round(cal.t1[0] * 1e6, 1)
        (7, 81.8)
    """
    device, cls = resolve_device(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend = cls()
        target = backend.target
    n = target.num_qubits
    qprops = target.qubit_properties or [None] * n

    def prop(q: int, attr: str) -> float:
        value = getattr(qprops[q], attr, None) if qprops[q] is not None else None
        return math.inf if value is None else float(value)

    gates = []
    for op_name in sorted(target.operation_names):
        if op_name in _NOT_GATES:
            continue
        props = target[op_name]
        if not props:
            continue
        for qargs, ip in sorted(props.items(), key=lambda kv: kv[0] or ()):
            if ip is None or qargs is None:
                continue
            gates.append(GateCalibration(op_name, tuple(qargs), float(ip.error or 0.0), float(ip.duration or 0.0)))
    measure = target["measure"] if "measure" in target.operation_names else {}
    sym = [float(getattr(measure.get((q,)), "error", None) or 0.0) for q in range(n)]
    props_json = _props_json(cls)
    p01 = [_readout(props_json, q, "prob_meas1_prep0") for q in range(n)]
    p10 = [_readout(props_json, q, "prob_meas0_prep1") for q in range(n)]
    coupling = tuple(sorted(tuple(e) for e in (backend.coupling_map.get_edges() if backend.coupling_map else ())))
    return DeviceCalibration(
        name=device,
        num_qubits=n,
        t1=tuple(prop(q, "t1") for q in range(n)),
        t2=tuple(prop(q, "t2") for q in range(n)),
        frequency=tuple(prop(q, "frequency") for q in range(n)),
        readout_p01=tuple(sym[q] if p01[q] is None else float(p01[q]) for q in range(n)),
        readout_p10=tuple(sym[q] if p10[q] is None else float(p10[q]) for q in range(n)),
        gates=tuple(gates),
        coupling_map=coupling,
        basis_gates=tuple(sorted(set(target.operation_names) - _NOT_GATES | {"measure"})),
        dt=float(backend.dt) if getattr(backend, "dt", None) else None,
        date=str(props_json.get("last_update_date", "")),
    )


def device_summary(cal: DeviceCalibration, *, coupling: bool = True) -> dict[str, Any]:
    """One device as a JSON-ready dict: name, num_qubits, two-qubit gate, basis gates, medians, coupling map."""
    out: dict[str, Any] = {
        "name": cal.name,
        "num_qubits": cal.num_qubits,
        "two_qubit_gate": cal.two_qubit_gate,
        "basis_gates": list(cal.basis_gates),
        **{f"median_{k}": v for k, v in cal.medians().items()},
        "num_edges": len({tuple(sorted(e)) for e in cal.coupling_map}),
        "calibration_date": cal.date,
    }
    if coupling:
        out["coupling_map"] = [list(e) for e in cal.coupling_map]
    return out


def list_devices(*, min_qubits: int = 1, max_qubits: int | None = None, coupling: bool = True) -> list[dict[str, Any]]:
    """:func:`device_summary` of every snapshot with ``min_qubits <= num_qubits <= max_qubits``, by name."""
    out = []
    for name in device_names():
        cal = load_calibration(name)
        if cal.num_qubits >= min_qubits and (max_qubits is None or cal.num_qubits <= max_qubits):
            out.append(device_summary(cal, coupling=coupling))
    return out


def calibration_subset(cal: DeviceCalibration, qubits: tuple[int, ...]) -> DeviceCalibration:
    """The calibration of physical ``qubits`` only, renumbered ``0..k-1`` in the given order (gates and
    coupling edges among them kept); the name records the physical qubits, e.g. ``fake_jakarta[1,3,5]``."""
    qubits = tuple(int(q) for q in qubits)
    if len(set(qubits)) != len(qubits) or any(not 0 <= q < cal.num_qubits for q in qubits):
        raise ValueError(
            f"qubits={list(qubits)} must be distinct qubits of {cal.name}: valid range is 0..{cal.num_qubits - 1}"
        )
    new = {q: i for i, q in enumerate(qubits)}
    pick = lambda values: tuple(values[q] for q in qubits)  # noqa: E731
    gates = tuple(
        replace(g, qubits=tuple(new[q] for q in g.qubits)) for g in cal.gates if all(q in new for q in g.qubits)
    )
    edges = tuple((new[a], new[b]) for a, b in cal.coupling_map if a in new and b in new)
    return replace(
        cal,
        name=f"{cal.name}[{','.join(map(str, qubits))}]",
        num_qubits=len(qubits),
        t1=pick(cal.t1),
        t2=pick(cal.t2),
        frequency=pick(cal.frequency),
        readout_p01=pick(cal.readout_p01),
        readout_p10=pick(cal.readout_p10),
        gates=gates,
        coupling_map=edges,
    )


@functools.lru_cache(maxsize=16)
def fake_backend(name: str) -> Any:
    """The fake backend of device ``name`` (one instance per name, as parsing its target takes ~0.3 s;
    treat it as read-only: for qiskit's transpiler and aer's ``NoiseModel.from_backend``)."""
    _, cls = resolve_device(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls()
