"""Size of a fiited run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

The experiment's own memory model (:func:`workbench.recsys.fiited.experiment.estimate_run_bytes`: the synthetic
generator's peak or the data it leaves, plus the largest method's table with its optimizer state and copies) and
the runner's fixed overhead; seconds: ``epochs`` passes over ``rows`` samples by FIITED and its baselines.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.recsys.fiited.config import FiitedConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings (lazy imports of scikit-learn, the DLRM)
BASE_BYTES = 200 * MB
#: measured: seconds per sample, epoch and method at the smoke batch size
SAMPLE_S = 4e-6
#: FIITED and its five baselines
METHODS = 6


def estimate(config: FiitedConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run fiited`` with ``config``."""
    from workbench.recsys.fiited.experiment import estimate_run_bytes

    methods = METHODS if config.baselines == "all" else 2
    seconds = 2.0 + methods * config.epochs * config.rows * SAMPLE_S * (config.dim / 64) ** 0.5
    return Estimate(BASE_BYTES + estimate_run_bytes(config), seconds, own_progress=config.rows >= 1_000_000)
