"""Size of a cfp run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Search: the brute-force enumeration (up to ``brute_force_limit`` plans) and the ILP over ``ilp_layers``; check:
``gpus`` gloo processes running the plans of a model of ``layers`` x ``hidden`` over ``batch`` x ``seq`` tokens.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.llm.cfp.config import CfpConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings (lazy imports, the ILP solver)
BASE_BYTES = 60 * MB
#: bytes kept per enumerated plan, seconds per enumerated plan, effective float64 rate (flop/s)
PLAN_BYTES, PLAN_S, FLOPS = 400, 2e-5, 1e9


def estimate(config: CfpConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run cfp`` with ``config``."""
    layers = max(config.layers, 1)
    ilp_s = min(config.ilp_time_limit_s, 0.5 * config.ilp_layers) if config.ilp else 0.0
    search = Estimate(
        BASE_BYTES + PLAN_BYTES * config.brute_force_limit, 1.0 + ilp_s + PLAN_S * config.brute_force_limit
    )
    if config.mode != "check":
        return search
    e = 8 if config.dtype in ("float64", "auto") else 4
    gpus = max(config.gpus, 1)
    params = 4 * layers * config.hidden**2 * (1 + config.ffn_mult / 2)
    acts = layers * config.batch * config.seq * config.hidden * (6 + 2 * config.ffn_mult) * e
    attn = layers * config.batch * config.heads * config.seq**2 * e
    run = 4 * params * e + acts + attn  # weights, gradients and their reference copies; activations
    flops = 6 * params * config.batch * config.seq + 4 * layers * config.batch * config.seq**2 * config.hidden
    return Estimate(
        search.bytes + 2 * run + gpus * PROCESS_BYTES,  # the reference in the parent, the shards in the workers
        search.seconds + 3.0 + gpus + 3 * flops / FLOPS,
    )
