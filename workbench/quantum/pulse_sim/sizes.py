"""Size of a pulse-sim run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Pulse: one transmon of ``levels`` levels driven for ``duration`` samples (``substeps`` propagators each); check:
the two-transmon cross-resonance (levels^2 dimensions), the calibrations and qutip's reference.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.pulse_sim.config import PulseSimConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 12 * MB
#: the check mode's reference (qutip and its solvers imported, the calibration's sweeps): an upper bound
CHECK_BYTES = 150 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per propagator step
FIXED_S, UNIT_S = 2.0, 2e-05


def estimate(config: PulseSimConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run pulse-sim`` with ``config``."""
    dim = config.levels ** (2 if config.mode == "check" else 1)
    steps = (config.duration + config.width) * max(config.substeps, 4)
    kept = steps * dim**2 * 16 * 4  # propagators and states kept along the pulse
    calib = 40 if config.mode == "check" else 1  # calibration sweeps and the qutip reference
    qutip = CHECK_BYTES if config.mode == "check" else 0
    return Estimate(BASE_BYTES + qutip + kept, FIXED_S + calib * steps * UNIT_S * dim)
