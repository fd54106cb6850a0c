"""Size of a greedysnake run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Check: the experiment's own host-memory model (:func:`workbench.llm.greedysnake.experiment.host_memory_estimate`:
the in-memory reference with Adam, the offloaded runs' copies, one micro-batch's activations, the inter-layer
tensors) plus the run's fixed overhead; model: the schedule model's arrays.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.llm.greedysnake.config import GreedySnakeConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings (lazy imports, the SSD files' buffers)
BASE_BYTES = 20 * MB
#: effective rate of the CPU training steps (flop/s; float64, small matrices)
FLOPS = 1e9


def estimate(config: GreedySnakeConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run greedysnake`` with ``config``."""
    if config.mode != "check":
        return Estimate(BASE_BYTES, 2.0)
    from workbench.llm.greedysnake.experiment import host_memory_estimate

    gpt = config.gpt()
    need = host_memory_estimate(gpt, micro_batches=config.micro_batches, micro_batch_size=config.micro_batch_size,
                                compute_dtype=config.compute_dtype, layout=config.layout)  # fmt: skip
    params = 12 * config.layers * config.hidden**2 + config.vocab * config.hidden
    tokens = config.micro_batches * config.micro_batch_size * config.seq * config.steps
    runs = 4  # the in-memory reference, the horizontal and the snake schedules, the deferred optimizer
    return Estimate(BASE_BYTES + need, 2.0 + runs * 6 * params * tokens / FLOPS)
