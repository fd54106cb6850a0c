"""Size of a topgen run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

The generated ansatz and its baselines trained as QNNs for ``epochs`` over ``max_train`` samples on ``qubits``
qubits (density matrices under device noise), the ``candidates`` of the search scored on ``score_pairs`` pairs and
the expressibility estimate over ``pairs`` pairs and ``bins`` bins.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.topgen.config import TopgenConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 150 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per density-matrix element per sample, layer and epoch
FIXED_S, UNIT_S = 4.0, 1e-07


def estimate(config: TopgenConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run topgen`` with ``config``."""
    dim2 = 4.0 ** min(config.qubits, 16)
    layers = config.layers * config.max_blocks
    train = 3 * config.epochs * (config.max_train + config.max_test) * layers * dim2
    search = config.candidates * (config.search_epochs * config.max_train + config.score_pairs) * layers * dim2
    expr = 3 * config.pairs * layers * 2.0 ** min(config.qubits, 16) * 16
    batch = min(config.batch, config.max_train) * dim2 * 16 * layers * 4  # a batch's states and their gradients
    return Estimate(BASE_BYTES + batch, FIXED_S + (train + search + expr) * UNIT_S)
