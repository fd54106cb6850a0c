"""Size of a napa run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

VQE on two transmons (9 dimensions at 3 levels): ``starts`` x ``budget`` energy evaluations of ``layers`` native
pulse layers (gradient through the torch simulator), against gate ansaetze compiled to the same pulses.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.napa.config import NapaConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 420 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per energy evaluation per layer
FIXED_S, UNIT_S = 3.0, 0.02


def estimate(config: NapaConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run napa`` with ``config``."""
    evals = 3 * config.starts * config.budget  # the native ansatz and two gate ansaetze
    sampling = config.shots * 1e-8 * evals
    return Estimate(BASE_BYTES + config.layers * 4 * MB, FIXED_S + evals * config.layers * UNIT_S + sampling)
