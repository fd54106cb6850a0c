"""Size of a robuststate run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Training on a ``qubits``-qubit device: the machine forward (``shots`` per basis over ``bases`` bases) until
``budget`` shots are spent, the simulator backward on a density matrix (4^q complex128) and ``blocks`` ansatz
blocks.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.robuststate.config import RobustStateConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 80 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per simulated density-matrix element per step
FIXED_S, UNIT_S = 3.0, 2e-06


def estimate(config: RobustStateConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run robuststate`` with ``config``."""
    dim2 = 4.0**config.qubits
    steps = max(1.0, config.budget / max(config.shots * config.bases, 1))
    blocks = max(config.blocks, config.qubits)
    work = steps * config.bases * blocks * dim2
    return Estimate(BASE_BYTES + 32 * 16 * dim2 * blocks, FIXED_S + work * UNIT_S + config.budget * 2e-8)
