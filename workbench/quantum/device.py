"""One quantum device, resolved once by name and passed down: calibration, backend, coupling map, Hamiltonian.

A technique's config holds the device's *name* (``fake_jakarta``); the config boundary resolves it once
(:meth:`OnDevice.resolved_device` on the technique's ``Config``, or a claim that pins a named device) with
:func:`get_device` (memoised per device: ``get_device("jakarta") is get_device("fake_jakarta")``) and hands the
:class:`Device` down: kernels, studies' inner functions and panels take the Device (or its calibration), never a
name (``tests/quantum/test_device_boundary.py`` greps for lookups elsewhere). Every part loads lazily, on first
use, and is kept on the object:

- ``calibration``: the :class:`~workbench.quantum.calibration.DeviceCalibration` snapshot (T1/T2, gate errors
  and durations, readout, coupling map, basis gates);
- ``backend``: the qiskit-ibm-runtime fake backend (read-only: for qiskit's transpiler and aer);
- ``hamiltonian``: the transmon model of pulse devices (:class:`Hamiltonian`), None for a device without one;
  :meth:`Device.transmons` reads qubits of it as a :class:`~workbench.quantum.common.pulse.device.PulseDevice`;
- :meth:`Device.noise`: the calibrated :class:`~workbench.quantum.noise.NoiseSpec` (all qubits or a subset).

Devices without Hamiltonian data are not offered where one is needed: :func:`pulse_device_names` lists the
ones that have it (the ``device`` choices of the pulse techniques' configs).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.quantum.calibration import (
    DeviceCalibration,
    calibration_subset,
    device_basis,
    device_names,
    fake_backend,
    load_calibration,
    resolve_device,
)

if TYPE_CHECKING:
    from workbench.quantum.common.pulse.device import PulseDevice
    from workbench.quantum.noise import NoiseSpec

__all__ = [
    "Device",
    "Hamiltonian",
    "OnDevice",
    "get_device",
    "all_devices",
    "require_device",
    "pulse_device_names",
    "load_pulse_device",
    "conf_path",
    "device_qubit_count",
    "coupled_qubits",
]


@dataclass(frozen=True)
class Hamiltonian:
    """A device's published transmon model: ``vars`` (``wq{q}``, ``delta{q}``, ``omegad{q}``, ``jq{i}q{j}``;
    rad/ns), the sample time ``dt`` (ns), its qubit count and ``source`` (the ``conf_*.json`` read)."""

    vars: Mapping[str, float]
    dt: float
    num_qubits: int
    source: str

    def coupling(self, a: int, b: int) -> float | None:
        """The exchange coupling ``jq`` between device qubits ``a`` and ``b`` (rad/ns), None when not coupled."""
        return self.vars.get(f"jq{a}q{b}", self.vars.get(f"jq{b}q{a}"))

    def coupled_qubits(self, qubit: int) -> tuple[int, ...]:
        """The qubits with an exchange coupling to ``qubit``."""
        v = self.vars
        return tuple(
            q for q in range(self.num_qubits) if q != qubit and (v.get(f"jq{qubit}q{q}") or v.get(f"jq{q}q{qubit}"))
        )


def _conf_path(cls: Any) -> str:
    return os.path.join(os.path.dirname(inspect.getfile(cls)), cls.conf_filename)


@dataclass(frozen=True)
class Device:
    """A device snapshot by its canonical ``name``; get one with :func:`get_device` (one object per device).

    Equal and hashed by name, so it keys memoised kernels; pickles as its name.
    """

    name: str

    def __reduce__(self) -> tuple[Any, ...]:
        return get_device, (self.name,)

    # ---- lazily loaded parts ----------------------------------------------------------------------------------
    @functools.cached_property
    def _backend_class(self) -> type:
        return resolve_device(self.name)[1]

    @functools.cached_property
    def calibration(self) -> DeviceCalibration:
        """The calibration snapshot (SI units)."""
        return load_calibration(self.name)

    @property
    def backend(self) -> Any:
        """The fake backend (one instance per device; read-only: qiskit's transpiler, aer's ``from_backend``)."""
        return fake_backend(self.name)

    @functools.cached_property
    def conf_path(self) -> str:
        """The ``conf_*.json`` of the snapshot inside the installed qiskit-ibm-runtime."""
        return _conf_path(self._backend_class)

    @functools.cached_property
    def hamiltonian(self) -> Hamiltonian | None:
        """The transmon Hamiltonian of the snapshot, None when its configuration has none."""
        with open(self.conf_path) as f:
            conf = json.load(f)
        ham = conf.get("hamiltonian") or {}
        if not ham.get("vars"):
            return None
        return Hamiltonian(dict(ham["vars"]), float(conf["dt"]), int(conf["n_qubits"]), self.conf_path)

    # ---- what it is -------------------------------------------------------------------------------------------
    @property
    def num_qubits(self) -> int:
        return self.calibration.num_qubits

    @property
    def coupling_map(self) -> tuple[tuple[int, int], ...]:
        """Directed pairs of the native two-qubit gate."""
        return self.calibration.coupling_map

    @property
    def basis_gates(self) -> tuple[str, ...]:
        """Basis gates from the snapshot's configuration (fast: no backend is built)."""
        return device_basis(self.name)

    @property
    def has_hamiltonian(self) -> bool:
        return self.hamiltonian is not None

    def require_hamiltonian(self) -> Hamiltonian:
        """The Hamiltonian; ValueError naming the devices that have one when this device has none."""
        if self.hamiltonian is None:
            raise ValueError(
                f"device={self.name!r} has no Hamiltonian data in {os.path.basename(self.conf_path)}: devices with "
                f"Hamiltonian data are {', '.join(pulse_device_names())}"
            )
        return self.hamiltonian

    def subset(self, qubits: tuple[int, ...]) -> DeviceCalibration:
        """The calibration of physical ``qubits`` only, renumbered 0..k-1 (see ``calibration_subset``)."""
        return calibration_subset(self.calibration, tuple(qubits))

    def noise(self, qubits: tuple[int, ...] | None = None, **options: Any) -> NoiseSpec:
        """``NoiseSpec.device`` of the calibration (of ``qubits`` only when given); ``options`` as there."""
        from workbench.quantum.noise import NoiseSpec

        return NoiseSpec.device(self.calibration if qubits is None else self.subset(qubits), **options)

    def transmons(self, qubits: tuple[int, ...] = (0,), *, levels: int = 3) -> PulseDevice:
        """The transmons ``qubits`` with ``levels`` (2 or 3) levels each, re-indexed 0..n-1.

        Raises ValueError naming the parameter for a bad level count, qubit count, repeated qubit, a device
        without Hamiltonian data (naming the valid devices) or a qubit outside the device.
        """
        from workbench.quantum.common.pulse.device import PulseDevice

        if levels not in (2, 3):
            raise ValueError(f"levels={levels} is not allowed: valid values are 2, 3")
        qubits = tuple(int(q) for q in qubits)
        if not 1 <= len(qubits) <= 4:
            raise ValueError(f"qubits={qubits} is out of range: valid range is 1..4 qubits")
        if len(set(qubits)) != len(qubits):
            raise ValueError(f"qubits={qubits} repeats a qubit")
        ham = self.require_hamiltonian()
        v, n = ham.vars, ham.num_qubits
        for q in qubits:
            if not 0 <= q < n:
                raise ValueError(f"qubits={qubits} is out of range for {self.name}: valid qubits are 0..{n - 1}")
        couplings = []
        for i in range(len(qubits)):
            for j in range(i + 1, len(qubits)):
                J = ham.coupling(qubits[i], qubits[j])
                if J:
                    couplings.append((i, j, float(J)))
        cal = self.calibration
        ns = 1e9
        return PulseDevice(
            name=self.name,
            qubits=qubits,
            levels=levels,
            omega=tuple(float(v[f"wq{q}"]) for q in qubits),
            anharmonicity=tuple(float(v[f"delta{q}"]) for q in qubits),
            drive=tuple(float(v[f"omegad{q}"]) for q in qubits),
            couplings=tuple(couplings),
            dt=ham.dt,
            t1=tuple(cal.t1[q] * ns for q in qubits),
            t2=tuple(cal.t2[q] * ns for q in qubits),
            readout_p01=tuple(cal.readout_p01[q] for q in qubits),
            readout_p10=tuple(cal.readout_p10[q] for q in qubits),
            source=ham.source,
        )

    def coupled_qubits(self, qubit: int) -> tuple[int, ...]:
        """Qubits with an exchange coupling to ``qubit`` in the Hamiltonian (ValueError when there is none)."""
        return self.require_hamiltonian().coupled_qubits(qubit)

    def check_qubit(self, name: str, qubit: int, *, pulse: bool = False) -> None:
        """ValueError naming parameter ``name`` when ``qubit`` is not a qubit of the device (of its
        Hamiltonian with ``pulse``)."""
        count = self.require_hamiltonian().num_qubits if pulse else self.num_qubits
        if not 0 <= qubit < count:
            raise ValueError(f"{name}={qubit} is out of range for {self.name}: valid range is 0..{count - 1}")


@functools.cache
def _named(canonical: str) -> Device:
    return Device(canonical)


def get_device(name: str | Device) -> Device:
    """The :class:`Device` of ``name`` (``fake_jakarta``, ``FakeJakartaV2`` or ``jakarta``; a Device is
    returned as is), one object per device. Raises ValueError naming the valid devices for an unknown name."""
    if isinstance(name, Device):
        return name
    return _named(resolve_device(name)[0])


class OnDevice:
    """Mixin of a technique's ``Config`` whose ``device`` field names a snapshot: :meth:`resolved_device` is the
    config boundary, the one place a run, a study view or a panel turns that name into a :class:`Device`; the
    kernels below it take the Device (or its calibration), never the name."""

    def resolved_device(self) -> Device:
        """The :class:`Device` of this config's ``device`` name (memoised: one object per device)."""
        return get_device(self.device)  # type: ignore[attr-defined]


def all_devices() -> Iterator[Device]:
    """Every device snapshot of the installed qiskit-ibm-runtime, as :class:`Device` objects (sorted by name; each
    part still loads lazily): the catalogue, for code that searches it (devices with a given topology, widths)."""
    for name in device_names():
        yield get_device(name)


def require_device(device: Any, what: str = "device") -> Device:
    """``device`` itself when it is a :class:`Device`; TypeError naming ``what`` otherwise (a kernel takes the
    Device its caller resolved once at the config boundary, never a name)."""
    if not isinstance(device, Device):
        raise TypeError(
            f"{what}={device!r} is a {type(device).__name__}: pass a Device (resolve a name once at the config "
            "boundary with workbench.quantum.device.get_device)"
        )
    return device


@functools.lru_cache(maxsize=1)
def pulse_device_names() -> tuple[str, ...]:
    """Device snapshots whose configuration carries a transmon Hamiltonian (sorted)."""
    out = []
    for name in device_names():
        try:
            if get_device(name).has_hamiltonian:
                out.append(name)
        except (OSError, ValueError):
            continue
    return tuple(out)


# ---- by-name helpers (the resolver's own: for tests, benchmarks and notebooks); each resolves through get_device
def conf_path(device: str | Device) -> str:
    """The ``conf_*.json`` file of ``device`` inside the installed qiskit-ibm-runtime."""
    return get_device(device).conf_path


def load_pulse_device(device: str | Device, qubits: tuple[int, ...] = (0,), *, levels: int = 3) -> PulseDevice:
    """The transmons ``qubits`` of ``device`` with ``levels`` (2 or 3) levels each: ``Device.transmons``.

    Raises ValueError naming the parameter for an unknown device, a device without Hamiltonian data, a qubit
    outside the device, repeated qubits or a bad level count.
    """
    if levels not in (2, 3):
        raise ValueError(f"levels={levels} is not allowed: valid values are 2, 3")
    return get_device(device).transmons(tuple(qubits), levels=levels)


def device_qubit_count(device: str | Device) -> int:
    """Qubits of ``device`` with Hamiltonian data (ValueError naming the valid devices otherwise)."""
    return get_device(device).require_hamiltonian().num_qubits


def coupled_qubits(device: str | Device, qubit: int) -> tuple[int, ...]:
    """The qubits with an exchange coupling ``jq`` to ``qubit`` in the device's Hamiltonian."""
    return get_device(device).coupled_qubits(qubit)
