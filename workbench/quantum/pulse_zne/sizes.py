"""Size of a pulse-zne run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

The NAPA H2 ansatz trained for ``budget`` evaluations of ``layers`` pulse layers, then each scale factor's folded
or stretched schedule simulated (two transmons), the reversed-pulse fidelity and the optional baselines.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.pulse_zne.config import PulseZneConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 450 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per evaluation per layer
FIXED_S, UNIT_S = 3.0, 0.02


def estimate(config: PulseZneConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run pulse-zne`` with ``config``."""
    factors = [float(f) for f in config.scale_factors.split(",") if f.strip()] or [1.0]
    stretch = sum(min(max(f, 1.0), 1e3) for f in factors)
    evals = config.budget * (2 if config.gate_baseline else 1) + 4 * stretch * (2 if config.true_fidelity else 1)
    return Estimate(BASE_BYTES + config.layers * stretch * 2 * MB, FIXED_S + evals * config.layers * UNIT_S)
