"""Size of a dawnpiper run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Partition and model: the fx node graph of the traced GPT and the partition's tables; check: the traced model (P =
12 L H^2 + 2 V H parameters), its single-process reference step over ``micro_batches`` x ``micro_batch`` sequences
(activations per layer, logits of V per token) and ``stages`` gloo processes holding their stages.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.llm.dawnpiper.config import DawnpiperConfig

__all__ = ["estimate"]

#: the whole run is bounded by this config field (``--timeout-s``)
RUN_LIMIT = "timeout_s"
#: measured: the run's fixed overhead at the smoke settings (lazy imports, fx tracing)
BASE_BYTES = 80 * MB
#: effective float64 rate (flop/s); seconds per traced node and stage
FLOPS, NODE_S = 1e9, 2e-3


def estimate(config: DawnpiperConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run dawnpiper`` with ``config``."""
    e = 8 if config.dtype == "float64" else 4
    h, layers = config.hidden, config.layers
    params = 12 * layers * h**2 + 2 * config.vocab * h
    nodes = 40 * layers + 10
    plan = Estimate(BASE_BYTES + 4 * params * e + nodes * 4096, 2.0 + NODE_S * nodes * config.stages)
    if config.mode != "check":
        return plan
    tokens = config.micro_batch * config.seq  # one micro-batch
    acts = layers * tokens * (16 * h + 2 * config.heads * config.seq) * e + 4 * tokens * config.vocab * e
    workers = config.stages * PROCESS_BYTES + 4 * params * e + config.stages * acts
    flops = 6 * params * tokens * config.micro_batches
    return Estimate(
        plan.bytes + 4 * params * e + acts + workers, plan.seconds + 3.0 + config.stages + 2 * flops / FLOPS
    )
