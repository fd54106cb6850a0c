"""CFP's claims: the data, the figure at its settings (slow: the paper-scale search with both ILPs) and the
computed verdicts as committed in VERDICTS.json (fast: read, not re-evaluated; tests/test_claims_contract.py checks
the file against a fresh evaluation, where every sweep point re-solves Alpa's ILP).

References: the study's paper-scale rows (the runner's search with both ILPs) for our figure; the claim rule of
:mod:`workbench.claims` for the verdicts, pinned here with the reason each is the honest outcome.
"""

from __future__ import annotations

import pytest

from workbench.claims import committed
from workbench.cluster import ClusterSpec
from workbench.llm.cfp.claims import CLAIMS
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.experiment import alpa_assignment
from workbench.llm.cfp.study import paper_rows

BY_KEY = {c.key: c for c in CLAIMS}


def test_claims_are_the_v1_abstracts_numbers_against_the_strongest_baseline():
    assert [(c.key, c.paper) for c in CLAIMS] == [
        ("speedup_vs_alpa_gpt", 1.51),
        ("speedup_vs_alpa_llama", 1.31),
        ("speedup_vs_alpa_moe", 3.43),
    ]
    for c in CLAIMS:
        assert c.paper_source.startswith("arXiv 2504.00598 v1") and c.scale == "model" and c.kind == "speedup"
        assert c.baseline.strongest  # the Alpa-style ILP over the same plan space, same cost model
        # nothing of the setting is readable in the abstract: every assumption is ours, with a range
        assert not [a for a in c.assumptions if a.sourced]
        assert {a.name for a in c.inferred} == {
            "mesh", "batch", "gpu_tflops", "intra_node_bw_gbps", "inter_node_bw_gbps", "gpu_memory_gb",
        }  # fmt: skip


def test_alpa_plan_does_not_depend_on_the_compute_rate():
    # alpa_speedup reuses Alpa's plan across gpu_tflops: valid because Alpa's objective has no compute term
    def config(tflops):
        return CfpConfig(
            mode="search", model="custom", layers=2, hidden=24, heads=6, seq=6, batch=12, gpus=4, mesh="2x2",
            ilp_layers=1, brute_force_limit=0, cluster=ClusterSpec(gpu_tflops=tflops, intra_node_latency_us=0.0),
        )  # fmt: skip

    plans = {alpa_assignment(config(t)) for t in (0.001, 1.0, 400.0)}
    assert len(plans) == 1 and None not in plans


@pytest.mark.slow  # the paper-scale search with both ILPs, three models: about 5 s
def test_speedup_is_the_paper_rows_model():
    # the claim's figure at its settings is the paper-scale row the notebook shows (search with both ILPs)
    rows = {r.model: r for r in paper_rows()}
    for c in CLAIMS:
        model = c.text.split("(")[1].split(")")[0]
        ours = c.measure(**c.settings)
        assert ours.value == pytest.approx(rows[model].speedup_vs_alpa, rel=1e-12), c.key
        assert ours.fit.fits


@pytest.fixture(scope="module")
def records():
    # the committed records (VERDICTS.json, checked against a fresh evaluation by tests/test_claims_contract.py):
    # re-evaluating here would re-solve Alpa's ILP at every sweep point (a minute or more)
    return {r["key"]: r for r in committed("cfp")}


def test_verdicts_are_computed_and_pinned(records):
    assert set(records) == {c.key for c in CLAIMS}
    v = {k: r["status"] for k, r in records.items()}
    # GPT and LLaMA: Alpa's ILP finds CFP's very plan (Megatron + data parallel) at 2 x 8, so ours is 1.0x there
    # (the note says so); where the memory limit binds (40 GB), on a 1-D mesh or at batch 64 CFP's exact search
    # beats Alpa's plan by a little (<= 1.2x), never near the paper's figure: not reproduced, by the rule
    for key in ("speedup_vs_alpa_gpt", "speedup_vs_alpa_llama"):
        assert v[key] == "not reproduced", key
        assert records[key]["ours"] == 1.0 and "finds CFP's very plan" in records[key]["ours_note"]
        everywhere = [p["ours"] for pts in records[key]["sensitivity"].values() for p in pts]
        assert min(everywhere) >= 1.0 - 1e-9 and 1.0 < max(everywhere) < 0.85 * BY_KEY[key].paper
    # MoE: CFP does beat Alpa's objective (1.33x: Alpa prices no compute, so it picks a plan whose expert einsums
    # compute more slowly), but far below 3.43x at every point of every range (at most ~1.7x)
    assert v["speedup_vs_alpa_moe"] == "not reproduced"
    # every figure was measured on a plan that fits (a plan that does not would make the verdict "not
    # reproduced (plan does not fit ...)"; test_speedup_is_the_paper_rows_model checks the fit itself)
    for key, r in records.items():
        assert r["ours"] is not None and "plan does not fit" not in r["verdict"], key


def test_each_inferred_assumption_moves_the_figure(records):
    def spread(r, name):
        ours = [p["ours"] for p in r["sensitivity"][name]]
        return max(ours) - min(ours)

    moe = records["speedup_vs_alpa_moe"]
    for a in BY_KEY["speedup_vs_alpa_moe"].inferred:  # on MoE every setting moves the ratio
        assert spread(moe, a.name) > 0.01, a.name
    for key in ("speedup_vs_alpa_gpt", "speedup_vs_alpa_llama"):
        r = records[key]
        # the mesh and the memory limit move it (a 1-D mesh, a binding limit: the plans differ) ...
        assert spread(r, "mesh") > 0.05 and spread(r, "gpu_memory_gb") > 0.03, key
        # ... FLOP/s and bandwidths do not: both searches land on the same plan at every such point, so the ratio
        # is exactly 1 there (the sweep ran; it has nothing to move)
        for name in ("gpu_tflops", "intra_node_bw_gbps", "inter_node_bw_gbps"):
            assert {p["ours"] for p in r["sensitivity"][name]} == {1.0}, (key, name)
