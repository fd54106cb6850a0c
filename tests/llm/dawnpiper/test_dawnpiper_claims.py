"""DawnPiper's claims: the live-memory count (by hand on a tiny generated graph, which equals the traced one; the
cost model's against the independent walk), the plans behind the max-batch figure at paper scale (a few seconds),
and the computed verdicts as committed in VERDICTS.json (read, not re-evaluated: the searches behind them take
minutes)."""

from __future__ import annotations

import math
import re

import pytest

from workbench.claims import committed
from workbench.cluster import ClusterSpec
from workbench.llm.dawnpiper.claims import CLAIMS, max_batch_of, plan_at
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageBudget
from workbench.llm.dawnpiper.costs import evaluate as evaluate_cuts
from workbench.llm.dawnpiper.experiment import PAPER_SWEEP, graph_of
from workbench.llm.dawnpiper.feasibility import partition_peaks, stage_peak
from workbench.llm.dawnpiper.generate import generate_graph
from workbench.llm.gpt import GPTShape

#: 1 block, d = 4, 2 tokens, vocabulary 8; fp64 everything (as the traced GPT): 16 units, the head is 13..15
TINY = generate_graph(GPTShape(layers=1, hidden=4, heads=1, seq=2, vocab=8), 1, flops_per_s=1e9,
                      hbm_bytes_per_s=1e9, elem_bytes=8, stat_bytes=8, param_elem_bytes=8)  # fmt: skip
#: a toy GPU: 1 GB/s PCIe and stage link, no latency
TOY = ClusterSpec(pcie_bw_gbps=1.0, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0)
HW = StageBudget(memory_bytes=1e9, cluster=TOY, state_bytes_per_param=32, weight_bytes_per_param=8)


def test_fit_counts_logits_and_loss_buffer_by_hand() -> None:
    part = evaluate_cuts(TINY, [13], HW, micro_batches=2)  # stage 1 = head.ln, head.linear, head.loss; k = 1
    head = part.stages[1]
    assert (head.start, head.stop, head.in_flight, head.swap, head.recompute) == (13, 16, 1, (), ())
    # by hand (b = 1, s = 2, d = 4, V = 8, 8 bytes an element): static = (2d + dV) params x 32 bytes = 1280;
    # at the loss's forward: the block's output x (b s d e = 64), head.ln's mean and rstd (16 + 16), its output
    # (64), the targets (16), the loss's log-softmax buffer (b s V e = 128) and its second buffer (8), all saved;
    # the logits (128, read by the loss, saved by nobody) and the loss value (8) in the working set
    peak = stage_peak(TINY, head)
    assert peak.phase == "forward of head.loss"
    assert peak.total == 1280 + (64 + 16 + 16 + 64 + 16 + 128 + 8) + (128 + 8) == 1728
    # the cost model prices the same live count; its saved tensors alone miss the logits and the loss value
    assert head.peak_bytes == 1728 and head.saved_peak_bytes == 1280 + 312
    assert any(k.startswith("linear_4 (head.linear; forward working set") and v == 128 for k, v in peak.live.items())


def test_a_plan_whose_working_set_overflows_is_refused() -> None:
    # 1480 bytes: swapping every saved tensor brings the saved bytes to the static 1280, but the loss's forward
    # still holds the logits (128), its own buffers and the head's output while they wait to be swapped out: even
    # with everything swapped, 1568 bytes are live at once, so no choice fits
    tight = StageBudget(memory_bytes=1280 + 200, cluster=TOY, state_bytes_per_param=32, weight_bytes_per_param=8)
    head = evaluate_cuts(TINY, [13], tight, micro_batches=2).stages[1]
    assert not head.feasible and head.saved_peak_bytes == 1280 and head.peak_bytes == 1568
    # with room for that working set, the plan moves bytes and fits
    roomy = StageBudget(memory_bytes=1600, cluster=TOY, state_bytes_per_param=32, weight_bytes_per_param=8)
    fits = evaluate_cuts(TINY, [13], roomy, micro_batches=2).stages[1]
    assert fits.feasible and fits.swap_bytes + fits.recompute_bytes > 0 and fits.peak_bytes <= 1600


def test_the_cost_models_peak_is_the_independent_count() -> None:
    g = generate_graph(GPTShape(layers=3, hidden=8, heads=2, seq=4, vocab=16), 2, flops_per_s=1e9,
                       hbm_bytes_per_s=1e9)  # fmt: skip
    tight = StageBudget(memory_bytes=33e3, cluster=TOY, state_bytes_per_param=32, weight_bytes_per_param=8)
    moved = 0
    for hw in (HW, tight):
        for cuts in ([5, 17], [12, 20], [3, 30]):
            part = evaluate_cuts(g, cuts, hw, micro_batches=4)
            for s, pk in zip(part.stages, partition_peaks(g, part), strict=True):
                assert pk.total == pytest.approx(s.peak_bytes, rel=1e-12)
                moved += len(s.swap) + len(s.recompute)
    assert moved > 0  # the tight budget makes plans swap or recompute


@pytest.mark.slow  # two paper-scale searches, ~8 s
def test_the_old_max_batch_does_not_fit_and_the_new_one_does() -> None:
    # GPT-13B on 8 stages, 40 GB: priced by saved tensors only, the search's largest micro-batch was 94, whose
    # plan swapped every activation of the LM-head stage; but the loss runs with the logits and its log-softmax
    # buffer (19.4 GB each at b = 94) on the device: 58.7 GB. Priced by the live count, b = 94 fits nowhere
    part = plan_at("dawnpiper", "gpt-13b", 8, 94, 40.0, 125.0)
    assert not part.feasible
    head = part.stages[-1]  # whatever its cuts, the last stage runs the loss: its static state plus 38.7 GB
    assert head.peak_bytes >= head.static_bytes + 2 * 94 * 2048 * 50257 * 2 > 40e9
    # the largest micro-batch the search now finds fits by the independent count, on every stage
    b, best = max_batch_of("dawnpiper", "gpt-13b", 8, 40.0, 125.0)
    assert 1 <= b < 94 and best is not None and best.feasible
    peaks = partition_peaks(graph_of(DawnpiperConfig(mode="model", model="gpt-13b", stages=8), b), best)
    assert max(p.total for p in peaks) <= 40e9


def test_verdicts() -> None:
    # the committed records (VERDICTS.json, checked against a fresh evaluation by tests/test_claims_contract.py):
    # re-running the max-batch searches over the family and the assumption grids here would take minutes
    records = {r["key"]: r for r in committed("dawnpiper")}
    assert set(records) == {c.key for c in CLAIMS}
    # every plan behind a figure fits the 40 GB device by the independent count (the searches price the same
    # live tensors), so no verdict is "plan does not fit"
    for key, r in records.items():
        fit = re.search(r"its plan needs ([\d.]+) GB on (dawnpiper|vpipe) stage \d+ \(.+\) of 40 GB$", r["ours_note"])
        assert fit and float(fit[1]) <= 40.0, (key, r["ours_note"])
        assert "does not fit" not in r["verdict"], key
    # GPT-13B on 8 stages: DawnPiper's micro-batch 51 against vPipe's 15 (3.4x, within the 0.85 tolerance of the
    # paper's 4x); at 80 GB the ratio falls to 2.3x, so the verdict depends on the device memory
    vp = records["max_batch_vs_vpipe"]
    assert vp["ours"] == pytest.approx(51 / 15) and "micro-batch 51, vpipe 15" in vp["ours_note"]
    assert vp["status"] == "depends on" and vp["depends_on"] == "memory_gb"
    pd = records["max_batch_vs_pipedream"]
    assert math.isinf(pd["ours"]) and pd["status"] == "not reproduced"  # PipeDream trains nothing on GPT-13B / 8,
    assert "weaker than" in pd["verdict"]  # and it is not the strongest fair baseline
    sp = records["speedup_vs_vpipe"]
    assert sp["ours"] == pytest.approx(1.3771, rel=1e-3) and sp["status"] == "depends on"
    assert sp["depends_on"] == "host_gb"
    # the sweeps: each inferred assumption moves the figure, except where said
    varies = {
        k: {a: len({round(p["ours"], 6) for p in pts}) > 1 for a, pts in r["sensitivity"].items()}
        for k, r in records.items()
    }
    assert varies["max_batch_vs_vpipe"] == {"memory_gb": True, "host_gb": True}
    # PipeDream trains nothing on GPT-13B at 8 x 40 GB at any host memory (it neither swaps nor recomputes), so
    # the ratio is infinite across host_gb; 80 GB lets it train
    assert varies["max_batch_vs_pipedream"] == {"memory_gb": True, "host_gb": False}
    # PCIe barely moves the speed-up (1.376-1.377x: at vPipe's largest batch the bottleneck stages' swaps hide
    # under compute at 12-32 GB/s; the exposed part is recompute)
    pcie = [p["ours"] for p in sp["sensitivity"]["pcie_gbps"]]
    assert max(pcie) - min(pcie) < 0.01
    assert varies["speedup_vs_vpipe"]["host_gb"] and varies["speedup_vs_vpipe"]["tflops"]
    assert {s for s, _ in PAPER_SWEEP} >= {"gpt-13b"}
