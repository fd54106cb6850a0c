"""Transmon parameters of a real device, read from the Hamiltonian that ships with its fake backend.

Every ``qiskit-ibm-runtime`` fake backend whose ``conf_<name>.json`` has a ``hamiltonian`` section (50 of them
in qiskit-ibm-runtime 0.51) carries the model IBM published for OpenPulse simulation::

    H/hbar = sum_q wq{q}/2 (I - Z_q) + delta{q}/2 O_q O_q - delta{q}/2 O_q + omegad{q} X_q D_q(t)
             + sum_(i,j) jq{i}q{j} (S+_i S-_j + S-_i S+_j)

with every value in rad/ns (``wq0 = 32.9`` rad/ns = 5.237 GHz on fake_jakarta) and ``dt`` in ns. Here ``O = a^dag a``
is the number operator, so ``delta`` is the anharmonicity (negative), ``omegad`` the drive strength in rad/ns per
unit of dimensionless amplitude, ``jq`` the exchange coupling. T1, T2 and readout errors come from the same
snapshot's calibration (:func:`workbench.quantum.calibration.load_calibration`).

A :class:`PulseDevice` holds a chosen subset of qubits, re-indexed 0..n-1, with 2 or 3 levels each.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
from dataclasses import dataclass

from workbench.quantum.calibration import _resolve, device_names, load_calibration

__all__ = [
    "PulseDevice",
    "load_pulse_device",
    "pulse_device_names",
    "conf_path",
    "device_qubit_count",
    "coupled_qubits",
]

#: the largest dimensionless drive amplitude (IBM's pulse amplitudes are normalised to |amp| <= 1)
MAX_AMP = 1.0


@dataclass(frozen=True)
class PulseDevice:
    """Transmons of ``device`` (rad/ns, ns), local qubit ``i`` = device qubit ``qubits[i]``.

    ``omega``: qubit frequencies; ``anharmonicity`` (negative); ``drive``: rad/ns per unit amplitude;
    ``couplings``: {(i, j): J} over local indices with i < j; ``t1``/``t2`` in ns (``inf`` when unreported);
    ``readout_p01`` = P(read 1 | prepared 0), ``readout_p10`` = P(read 0 | prepared 1); ``source``: the file.
    """

    name: str
    qubits: tuple[int, ...]
    levels: int
    omega: tuple[float, ...]
    anharmonicity: tuple[float, ...]
    drive: tuple[float, ...]
    couplings: tuple[tuple[int, int, float], ...]
    dt: float
    t1: tuple[float, ...]
    t2: tuple[float, ...]
    readout_p01: tuple[float, ...]
    readout_p10: tuple[float, ...]
    source: str

    @property
    def num_qubits(self) -> int:
        return len(self.qubits)

    @property
    def dim(self) -> int:
        return self.levels**self.num_qubits

    @property
    def source_name(self) -> str:
        """The Hamiltonian file relative to the installed packages (``qiskit_ibm_runtime/.../conf_x.json``)."""
        marker = os.sep + "qiskit_ibm_runtime" + os.sep
        return "qiskit_ibm_runtime" + os.sep + self.source.split(marker, 1)[1] if marker in self.source else self.source

    def frequency_ghz(self, q: int) -> float:
        return self.omega[q] / (2 * math.pi)

    def coupling(self, i: int, j: int) -> float:
        """The exchange coupling J between local qubits i and j (rad/ns; 0 when not coupled)."""
        a, b = min(i, j), max(i, j)
        return next((J for x, y, J in self.couplings if (x, y) == (a, b)), 0.0)

    def noiseless(self) -> PulseDevice:
        """The same device without T1/T2 and readout error."""
        n = self.num_qubits
        return PulseDevice(
            self.name, self.qubits, self.levels, self.omega, self.anharmonicity, self.drive, self.couplings,
            self.dt, (math.inf,) * n, (math.inf,) * n, (0.0,) * n, (0.0,) * n, self.source,
        )  # fmt: skip

    def scaled_noise(self, factor: float) -> PulseDevice:
        """T1, T2 divided by ``factor`` (``factor`` >= 0; 0 = no relaxation), readout errors kept."""
        if factor < 0.0:
            raise ValueError(f"noise_scale={factor} is out of range: valid range is >= 0")
        if factor == 0.0:
            return self.noiseless()._replace_readout(self.readout_p01, self.readout_p10)
        return PulseDevice(
            self.name, self.qubits, self.levels, self.omega, self.anharmonicity, self.drive, self.couplings,
            self.dt, tuple(t / factor for t in self.t1), tuple(t / factor for t in self.t2), self.readout_p01,
            self.readout_p10, self.source,
        )  # fmt: skip

    def _replace_readout(self, p01: tuple[float, ...], p10: tuple[float, ...]) -> PulseDevice:
        return PulseDevice(
            self.name, self.qubits, self.levels, self.omega, self.anharmonicity, self.drive, self.couplings,
            self.dt, self.t1, self.t2, p01, p10, self.source,
        )  # fmt: skip


def conf_path(device: str) -> str:
    """The ``conf_*.json`` file of ``device`` inside the installed qiskit-ibm-runtime."""
    _, cls = _resolve(device)
    return os.path.join(os.path.dirname(inspect.getfile(cls)), cls.conf_filename)


@functools.lru_cache(maxsize=128)
def _hamiltonian_vars(device: str) -> tuple[dict[str, float], float, int]:
    path = conf_path(device)
    with open(path) as f:
        conf = json.load(f)
    ham = conf.get("hamiltonian") or {}
    if not ham.get("vars"):
        raise ValueError(
            f"device={device!r} has no Hamiltonian data in {os.path.basename(path)}: devices with Hamiltonian "
            f"data are {', '.join(pulse_device_names())}"
        )
    return dict(ham["vars"]), float(conf["dt"]), int(conf["n_qubits"])


@functools.lru_cache(maxsize=1)
def pulse_device_names() -> tuple[str, ...]:
    """Device snapshots whose configuration carries a transmon Hamiltonian (sorted)."""
    out = []
    for name in device_names():
        try:
            with open(conf_path(name)) as f:
                if (json.load(f).get("hamiltonian") or {}).get("vars"):
                    out.append(name)
        except (OSError, ValueError):
            continue
    return tuple(out)


def load_pulse_device(device: str, qubits: tuple[int, ...] = (0,), *, levels: int = 3) -> PulseDevice:
    """The transmons ``qubits`` of ``device`` with ``levels`` (2 or 3) levels each.

    Raises ValueError naming the parameter for an unknown device, a device without Hamiltonian data, a qubit
    outside the device, repeated qubits or a bad level count.
    """
    if levels not in (2, 3):
        raise ValueError(f"levels={levels} is not allowed: valid values are 2, 3")
    qubits = tuple(int(q) for q in qubits)
    if not 1 <= len(qubits) <= 4:
        raise ValueError(f"qubits={qubits} is out of range: valid range is 1..4 qubits")
    if len(set(qubits)) != len(qubits):
        raise ValueError(f"qubits={qubits} repeats a qubit")
    name, _ = _resolve(device)
    v, dt, n = _hamiltonian_vars(name)
    for q in qubits:
        if not 0 <= q < n:
            raise ValueError(f"qubits={qubits} is out of range for {name}: valid qubits are 0..{n - 1}")
    couplings = []
    for i in range(len(qubits)):
        for j in range(i + 1, len(qubits)):
            J = v.get(f"jq{qubits[i]}q{qubits[j]}", v.get(f"jq{qubits[j]}q{qubits[i]}"))
            if J:
                couplings.append((i, j, float(J)))
    cal = load_calibration(name)
    ns = 1e9
    return PulseDevice(
        name=name,
        qubits=qubits,
        levels=levels,
        omega=tuple(float(v[f"wq{q}"]) for q in qubits),
        anharmonicity=tuple(float(v[f"delta{q}"]) for q in qubits),
        drive=tuple(float(v[f"omegad{q}"]) for q in qubits),
        couplings=tuple(couplings),
        dt=dt,
        t1=tuple(cal.t1[q] * ns for q in qubits),
        t2=tuple(cal.t2[q] * ns for q in qubits),
        readout_p01=tuple(cal.readout_p01[q] for q in qubits),
        readout_p10=tuple(cal.readout_p10[q] for q in qubits),
        source=conf_path(name),
    )


def device_qubit_count(device: str) -> int:
    """Qubits of ``device`` with Hamiltonian data (ValueError naming the valid devices otherwise)."""
    name, _ = _resolve(device)
    return _hamiltonian_vars(name)[2]


def coupled_qubits(device: str, qubit: int) -> tuple[int, ...]:
    """The qubits with an exchange coupling ``jq`` to ``qubit`` in the device's Hamiltonian."""
    name, _ = _resolve(device)
    v = _hamiltonian_vars(name)[0]
    n = _hamiltonian_vars(name)[2]
    return tuple(q for q in range(n) if q != qubit and (v.get(f"jq{qubit}q{q}") or v.get(f"jq{q}q{qubit}")))
