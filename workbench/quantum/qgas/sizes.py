"""Size of a qgas run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

``iterations`` proposals, each validated and trained (``restarts`` x ``train_steps`` statevector energy evaluations
of up to ``max_params`` parameters) on the problem's qubits.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.qgas.config import QgasConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 150 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per gate application on a statevector
FIXED_S, UNIT_S = 3.0, 0.0004

#: qubits of each problem (LiH and H2 in the parity mapping the experiment uses; MaxCut and portfolio instances)
QUBITS = {"h2": 4, "lih": 12, "maxcut": 8, "portfolio": 8}


def estimate(config: QgasConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run qgas`` with ``config``."""
    n = QUBITS.get(config.problem, 12)
    state = 16 * 2.0**n
    gates = config.max_depth * n
    evals = config.iterations * config.restarts * config.train_steps * (1 + config.max_params / 4)
    shots = config.shots * 1e-7 * evals
    return Estimate(BASE_BYTES + 64 * state + gates * 4096, FIXED_S + evals * gates * UNIT_S * state / 256 + shots)
