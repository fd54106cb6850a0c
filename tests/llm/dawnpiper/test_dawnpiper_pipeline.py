"""The real pipeline on gloo processes against single-process training (build_gpt, same micro-batches): losses
and gradients, and the measured saved-tensor peak, live peak and swapped bytes per stage against the cost
model's plan."""

from __future__ import annotations

import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.dawnpiper.check import run_check
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.experiment import traced

pytestmark = pytest.mark.slow

SMALL = dict(layers=2, hidden=16, heads=2, seq=8, vocab=32, micro_batch=2)
#: odd everything: 3 blocks, d = 12 over 3 heads, 5 tokens, vocabulary 11, 3 samples per micro-batch
AWKWARD = dict(layers=3, hidden=12, heads=3, seq=5, vocab=11, micro_batch=3)


@pytest.mark.parametrize(
    "gpt,dtype,schedule,stages,micro_batches,memory,pcie",
    [
        (SMALL, "float64", "1f1b", 3, 5, 110e3, 1e4),  # swap and recompute chains
        (SMALL, "float64", "gpipe", 3, 5, 150e3, 1e6),  # GPipe holds all 5 micro-batches
        (AWKWARD, "float64", "1f1b", 4, 5, 70e3, 1e4),
        (AWKWARD, "float32", "1f1b", 2, 3, 70e3, 1e4),
        (AWKWARD, "float64", "gpipe", 5, 4, 70e3, 1e4),  # 5 stages over 3 blocks, swap and recompute in 4 of them
    ],
)
def test_pipeline_equals_single_process(
    gpt: dict, dtype: str, schedule: str, stages: int, micro_batches: int, memory: float, pcie: float
) -> None:
    t, g = traced(DawnpiperConfig(**gpt, dtype=dtype))
    elem = 8 if dtype == "float64" else 4
    hw = StageBudget(memory_bytes=memory, cluster=ClusterSpec(pcie_bw_gbps=pcie / 1e9, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0), state_bytes_per_param=4 * elem,
                     weight_bytes_per_param=elem)  # fmt: skip
    part, _ = dawnpiper_partition(StageCache(g, stages, micro_batches, hw, schedule))
    assert part.feasible
    assert sum(len(s.swap) + len(s.recompute) for s in part.stages) > 0  # the budget forces memory management
    out = run_check(t, g, part, schedule=schedule, micro_batches=micro_batches, torch_memory=stages == 5)
    # the same ops on the same micro-batches, gradients accumulated in the same order, one thread each: equal to
    # rounding only where a value's gradient sums over consumers in different stages (none reorders here);
    # fp32 keeps a tolerance of a few ulps of the largest gradient for the same reason
    tol = 1e-12 if dtype == "float64" else 1e-6
    assert out.max_abs_loss_diff <= tol
    assert out.max_rel_grad_diff <= tol
    for s in out.stages:
        assert s.measured_peak_bytes == s.model_peak_bytes  # saved-tensor accounting == the model, exactly
        assert s.swapped_out_bytes == s.model_swap_bytes
        # everything live (saved tensors, the working set with received and sent values, values swapped back in or
        # recomputed): the ledger equals the model's live peak without output gradients, to the byte
        assert s.measured_live_peak_bytes == s.model_live_peak_no_grad_bytes
        assert s.measured_peak_bytes <= s.measured_live_peak_bytes <= s.model_live_peak_bytes
        # torch's own allocation count sees all of that (and gradients, .grad, buffers, temporaries besides)
        assert s.torch_peak_bytes is None or s.measured_live_peak_bytes <= s.torch_peak_bytes
    if stages == 5:
        assert all(s.torch_peak_bytes is not None for s in out.stages)
        assert sum(s.swap_values for s in out.stages) > 0 and sum(s.recompute_values for s in out.stages) > 0
