"""Transmon parameters of a real device, read from the Hamiltonian that ships with its fake backend.

Every ``qiskit-ibm-runtime`` fake backend whose ``conf_<name>.json`` has a ``hamiltonian`` section (50 of them
in qiskit-ibm-runtime 0.51) carries the model IBM published for OpenPulse simulation::

    H/hbar = sum_q wq{q}/2 (I - Z_q) + delta{q}/2 O_q O_q - delta{q}/2 O_q + omegad{q} X_q D_q(t)
             + sum_(i,j) jq{i}q{j} (S+_i S-_j + S-_i S+_j)

with every value in rad/ns (``wq0 = 32.9`` rad/ns = 5.237 GHz on fake_jakarta) and ``dt`` in ns. Here ``O = a^dag a``
is the number operator, so ``delta`` is the anharmonicity (negative), ``omegad`` the drive strength in rad/ns per
unit of dimensionless amplitude, ``jq`` the exchange coupling. T1, T2 and readout errors come from the same
snapshot's calibration. :meth:`workbench.quantum.device.Device.transmons` reads them (and
:mod:`workbench.quantum.device` has the by-name helpers for config boundaries).

A :class:`PulseDevice` holds a chosen subset of qubits, re-indexed 0..n-1, with 2 or 3 levels each.

**Cross-resonance drive strength.** The conf files disagree on it: ``h_latex`` writes the CR channel of control
``c`` and target ``t`` as ``Omega_{d,c} U(t) sigma^X_c``, ``h_str`` as ``omegad{t}*X{c}||U`` (the *target's*
strength; on fake_bogota 0 -> 1: 0.998 vs 1.056 rad/ns, 5.7 % in the CR rate). We use the **control's**
``omegad{c}`` (``h_latex``): a u channel is a second tone on the control's own drive line (``u_channel_lo`` only
borrows the target's frequency), so an amplitude reaches the control transmon through that line's coupling, the
same one its d channel uses; nothing carries the target line's constant onto an operator of the control.
:meth:`PulseDevice.cr_drive_note` words the choice for results.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

__all__ = ["PulseDevice", "MAX_AMP"]

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

    def cr_drive_note(self, control: int, target: int) -> str:
        """Which drive strength the CR ``control -> target`` (local indices) uses, and the alternative."""
        qc, qt = self.qubits[control], self.qubits[target]
        return (f"CR drive strength: the control's omegad{qc} = {self.drive[control]:.4f} rad/ns (conf h_latex; h_str "
                f"would use the target's omegad{qt} = {self.drive[target]:.4f})")  # fmt: skip

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
            return self.noiseless().with_readout(self.readout_p01, self.readout_p10)
        return PulseDevice(
            self.name, self.qubits, self.levels, self.omega, self.anharmonicity, self.drive, self.couplings,
            self.dt, tuple(t / factor for t in self.t1), tuple(t / factor for t in self.t2), self.readout_p01,
            self.readout_p10, self.source,
        )  # fmt: skip

    def with_readout(self, p01: tuple[float, ...], p10: tuple[float, ...]) -> PulseDevice:
        """The same device with readout errors ``P(1|0)`` = ``p01`` and ``P(0|1)`` = ``p10`` per qubit."""
        return PulseDevice(
            self.name, self.qubits, self.levels, self.omega, self.anharmonicity, self.drive, self.couplings,
            self.dt, self.t1, self.t2, p01, p10, self.source,
        )  # fmt: skip
