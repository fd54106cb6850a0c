"""Size of a mesh-attention run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Check: ``gpus`` gloo worker processes, each holding its query/key/value/output chunks and their gradients, and the
parent's dense reference (the full score matrix per head, forward and backward); model: the cost model's arrays
only.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.llm.mesh_attention.config import MeshAttentionConfig

__all__ = ["estimate"]

#: the whole run is bounded by this config field (``--timeout-s``)
RUN_LIMIT = "timeout_s"
#: measured: the parent's own peak at the smoke settings (lazy imports, the launch, the reference)
BASE_BYTES = 250 * MB
#: effective float64 rate of the small CPU kernels (flop/s) and the fixed cost of a launch (s)
FLOPS, LAUNCH_S = 1e9, 3.0


def estimate(config: MeshAttentionConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run mesh-attention`` with ``config``."""
    if config.mode != "check":
        return Estimate(BASE_BYTES / 4, 1.0)
    e = 8 if config.dtype == "float64" else 4
    tokens = config.batch * config.seq * config.heads
    qkv = 8 * tokens * config.head_dim * e  # q, k, v, o and their gradients
    scores = 3 * config.batch * config.heads * config.seq**2 * e  # reference: scores, probabilities, gradient
    parent = BASE_BYTES + qkv + scores
    workers = config.gpus * (PROCESS_BYTES + 2 * qkv / config.gpus + scores / config.gpus)
    flops = 12 * config.batch * config.heads * config.seq**2 * config.head_dim
    return Estimate(parent + workers, LAUNCH_S + 0.5 * config.gpus + 2 * flops / FLOPS)
