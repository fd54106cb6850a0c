"""Mesh-Attention's claims: each measure is the study's sweep (model_attention over the family), and the
verdicts the claim rule computes from them, pinned with why each is the honest outcome."""

from __future__ import annotations

import statistics

import pytest

from workbench.claims import evaluate
from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.claims import CLAIMS, FAMILY, GPUS
from workbench.llm.mesh_attention.model import model_attention

BY_KEY = {c.key: c for c in CLAIMS}


def _seconds(method: str, seq: int, **kw) -> float:
    cluster = ClusterSpec(gpus_per_node=8, inter_node_bw_gbps=25.0, intra_node_bw_gbps=200.0, gpu_tflops=400.0)
    return model_attention(method, gpus=GPUS, seq=seq, heads=32, head_dim=128, causal=True, dtype_bytes=2,
                           cluster=cluster, **kw).total_seconds  # fmt: skip


def test_speedups_are_the_sweeps() -> None:
    # reference: model_attention called directly at the sourced settings (USP at the paper's degree 8)
    usp = [_seconds("usp", s, ulysses_degree=8) / _seconds("mesh", s) for s in FAMILY]
    c = BY_KEY["speedup_usp_avg_v2"]
    assert c.measure(**c.settings).value == pytest.approx(statistics.fmean(usp), rel=1e-12)
    c = BY_KEY["speedup_usp_max_v2"]
    assert c.measure(**c.settings).value == pytest.approx(max(usp), rel=1e-12)
    ring = [_seconds("ring", s) / _seconds("mesh", s) for s in FAMILY]
    c = BY_KEY["speedup_ring_max_v1"]
    assert c.measure(**c.settings).value == pytest.approx(max(ring), rel=1e-12)


def test_verdicts() -> None:
    evs = {c.key: evaluate(c) for c in CLAIMS}
    status = {k: (ev.verdict.status, ev.verdict.detail) for k, ev in evs.items()}
    # the communication volume (exact kernel counts: 89 % less than Ring at P = 256) and the v1 speed-ups over
    # Ring (ours 9.4x average, 12.1x at most, above 2.9x / 3.4x) meet the paper's numbers, but Ring is not what a
    # practitioner runs at 256 GPUs (USP is), so the rule refuses "reproduced"
    for key in ("volume_avg_v1", "volume_max_v1", "speedup_ring_avg_v1", "speedup_ring_max_v1"):
        assert status[key][0] == "not reproduced" and "weaker than USP" in status[key][1], key
        assert all(p.meets for pts in evs[key].sweeps.values() for p in pts), key
    # v2's numbers are out of reach of the flat tiling at every grid point: the inter-node bytes cap it near
    # 12.4x over Ring and 1.5x over USP (issue 11); StarTrail is also a weaker baseline than USP in this model
    for key in ("speedup_ring_avg_v2", "speedup_ring_max_v2", "speedup_usp_avg_v2", "speedup_usp_max_v2",
                "speedup_startrail_avg_v2", "speedup_startrail_max_v2"):  # fmt: skip
        assert status[key][0] == "not reproduced" and status[key][1].startswith("ours"), key
        assert not any(p.meets for pts in evs[key].sweeps.values() for p in pts), key
    assert evs["speedup_usp_avg_v2"].at_source.ours == pytest.approx(1.194, abs=2e-3)
    assert evs["volume_avg_v1"].at_source.ours == pytest.approx(0.892, abs=1e-3)


def test_each_inferred_assumption_moves_the_figure_or_says_why_not() -> None:
    def varies(key: str) -> dict[str, bool]:
        ev = evaluate(BY_KEY[key])
        return {a: max(p.ours for p in pts) - min(p.ours for p in pts) > 1e-9 for a, pts in ev.sweeps.items()}

    # bytes are exact counts that scale with H and are the same chunks whatever the mask or the node size, so
    # the volume cut depends on P alone (sourced: 256)
    assert not any(varies("volume_avg_v1").values())
    # the time-based figures move with every setting, except NVLink for Ring: Ring and flat Mesh are bound by
    # the network (every rank's off-node chunks), so the NVLink bandwidth cancels out of their ratio
    assert varies("speedup_usp_avg_v2") == dict.fromkeys(
        ("heads", "causal", "gpus_per_node", "inter_bw", "intra_bw", "tflops"), True
    )
    assert varies("speedup_ring_avg_v2") == {**dict.fromkeys(("heads", "causal", "gpus_per_node", "inter_bw",
                                                              "tflops"), True), "intra_bw": False}  # fmt: skip


def test_startrail_is_slower_than_usp_at_most_sweep_settings() -> None:
    # what the StarTrail baseline's "weaker than USP" rests on: the notebook's 16-setting sweep
    from workbench.llm.mesh_attention.study import verdict_sweep

    pts = verdict_sweep()
    assert sum(p.seconds["usp"] < p.seconds["startrail"] for p in pts) == 12
