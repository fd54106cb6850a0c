"""Size of a quest run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Predict: one circuit through the stored model; generate/train/evaluate: ``random_samples`` + ``algorithm_samples``
circuits, each simulated ``noise_draws`` times as a density matrix (qiskit-aer) by ``workers`` processes, kept as
graphs, and the training epochs over them.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.quantum.quest.config import QuestConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 120 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per simulated circuit
FIXED_S, UNIT_S = 5.0, 0.005

#: bytes kept per circuit of the data set (its graph, features and labels)
CIRCUIT_BYTES = 20_000
#: seconds per circuit and epoch of training
TRAIN_S = 2e-4


def estimate(config: QuestConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run quest`` with ``config``."""
    if config.mode == "predict":
        return Estimate(BASE_BYTES, FIXED_S)
    circuits = config.random_samples + config.algorithm_samples
    sims = circuits * config.noise_draws
    data = circuits * CIRCUIT_BYTES * config.noise_draws**0.5
    workers = min(config.workers, 16) * PROCESS_BYTES
    train = 0.0 if config.mode == "generate" else 3 * config.epochs * circuits * TRAIN_S
    return Estimate(BASE_BYTES + data + workers, FIXED_S + sims * UNIT_S / max(1, min(config.workers, 2)) + train)
