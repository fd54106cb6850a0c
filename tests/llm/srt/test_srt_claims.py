"""SRT's claims (workbench/llm/srt/claims.py): each evaluates, its computed verdict is pinned with the reason it is
the honest outcome, and every inferred assumption's sweep moves the figure (or the test says why it cannot).

The verdicts and sweeps are read from the committed records (VERDICTS.json), which tests/test_claims_contract.py
checks against a fresh evaluation; a figure is recomputed here only where a test compares it with an independent
computation, at the claim's sourced setting."""

import json
from dataclasses import replace

import pytest

import workbench.claims as wc
from workbench.claims import committed, evaluate
from workbench.llm.srt import model as m
from workbench.llm.srt.claims import CHECK_CONFIG, CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}
RECORDS = {r["key"]: r for r in committed("srt")}


def detail(r: dict) -> str:
    """The verdict's detail: the string without its status (and the parentheses around the rest)."""
    rest = r["verdict"].removeprefix(r["status"]).strip()
    return rest if r["status"] == "depends on" else rest.removeprefix("(").removesuffix(")")


def test_claims_are_declared_with_existing_evidence():
    assert set(BY_KEY) == {"lossless", "online_runahead_acceptance", "rollout_speedup", "per_prompt_vs_global",
                           "gen_speedup_ppo", "gen_speedup_dapo", "gen_speedup_retool", "suffix_slower_on_dapo",
                           "vs_suffix_n10"}  # fmt: skip
    assert [c.key for c in wc.claims_of("srt")] == [c.key for c in CLAIMS]
    for c in CLAIMS:
        for ev in c.evidence:
            path, _, name = ev.partition("::")
            text = open(path).read()
            assert not name or f"def {name}(" in text, ev


@pytest.mark.slow  # calibrates three workloads' response lengths (a few seconds)
def test_model_claims_are_the_calibrated_models():
    eff = m.calibrate_overhead()
    t = m.TABLE1_GEN_S
    a = m.calibrate_acceptance(t["baseline"]["grpo"] / t["srt"]["grpo"], m.WORKLOADS["grpo"], 24, eff)
    calibrated = m.calibrated_workloads(eff)
    want = m.speedup(calibrated["ppo"], m.Drafting(24, a), eff=eff)["speedup"]
    # every workload's plain generation takes the paper's baseline time (lengths calibrated on it)
    for name, w in calibrated.items():
        assert m.generation(w, m.Drafting(), eff=eff)["seconds"] == pytest.approx(t["baseline"][name], rel=0.01), name
    c = BY_KEY["gen_speedup_ppo"]
    assert c.measure(**c.settings).value == pytest.approx(want, rel=1e-9)
    d = BY_KEY["suffix_slower_on_dapo"]
    assert 0.5 < d.measure(**d.settings).value < 1.0  # SuffixDecoding faster than plain at GRPO's acceptance


@pytest.mark.parametrize(
    ("key", "status", "why"),
    [
        # every workload's response-length median is calibrated on its Table 1 baseline time, so each plain generation
        # takes the paper's seconds (DAPO 44.1 s, ReTool 49.0 s; with max_out / 4 the MODEL took 85.6 s and 142 s).
        # PPO: 2.21x (1.84..2.75 over the ranges) against 2.07x
        ("gen_speedup_ppo", "reproduced", ""),
        # DAPO: with lengths that fit 44.1 s most DAPO responses are short (median ~360 tokens), the batch empties
        # early and the long tail runs at small batch, where speculation pays: 2.12x (1.78..2.65), above the paper's
        # 1.40x (the rule is one-sided for speed-ups): the MODEL does not show the paper's DAPO drop
        ("gen_speedup_dapo", "reproduced", ""),
        # ReTool overshoots too (2.47x vs 1.71x); tool calls are not modelled (one long response)
        ("gen_speedup_retool", "reproduced", ""),
        # at GRPO's acceptance SuffixDecoding is faster than plain decoding on DAPO (0.60 of plain's time; 0.52..0.68
        # over the ranges), never 1.42x slower: the MODEL contradicts the paper's DAPO measurement everywhere in its
        # ranges (the paper's slowdown needs SuffixDecoding's acceptance on DAPO far below its GRPO value)
        ("suffix_slower_on_dapo", "refuted", ""),
        # the MODEL has no mechanism by which 10 responses per prompt raise SRT's acceptance (its online updates
        # share a group's tokens): with n=5's acceptance it saves 22 %, and 33 % needs 10 % more acceptance
        ("vs_suffix_n10", "depends on", "acceptance_transfer"),
    ],
)
def test_model_verdicts(key, status, why):
    r = RECORDS[key]
    assert r["status"] == status, r["verdict"]
    assert detail(r).startswith(why), r["verdict"]


def test_every_inferred_model_assumption_moves_the_figure():
    for key in ("gen_speedup_ppo", "gen_speedup_dapo", "gen_speedup_retool", "suffix_slower_on_dapo"):
        sweeps = RECORDS[key]["sensitivity"]
        assert set(sweeps) == {a.name for a in BY_KEY[key].inferred}, key
        for name, pts in sweeps.items():
            assert len({round(p["ours"], 6) for p in pts}) > 1, (key, name)
    sweeps = RECORDS["vs_suffix_n10"]["sensitivity"]
    assert len({round(p["ours"], 6) for p in sweeps["acceptance_transfer"]}) == 3
    # SRT's and SuffixDecoding's acceptances are calibrated on the same GRPO column at the same draft length and
    # hardware, so both run the n=10 batch at nearly the same per-forward costs: their time ratio barely moves with
    # those three (the gain depends on the acceptances)
    for name in ("draft_len", "mfu", "bw_eff"):
        ours = [p["ours"] for p in sweeps[name]]
        assert max(ours) - min(ours) < 0.005, name


@pytest.mark.parametrize(
    ("values", "status"),
    [
        # faster than batched plain decoding at 16 rollouts only, and never by 0.85 x 2.08: not reproduced
        ({16: 1.2, 64: 0.7, 256: 0.4}, "not reproduced"),
        ({16: 0.9, 64: 0.7, 256: 0.4}, "refuted"),  # slower at every batch size
        ({16: 2.5, 64: 2.0, 256: 1.9}, "reproduced"),  # >= 1.77x at every batch size
    ],
)
def test_rollout_speedup_reads_the_batched_record_against_batched_plain_decoding(tmp_path, monkeypatch, values,
                                                                                 status):  # fmt: skip
    c = BY_KEY["rollout_speedup"]
    assert c.baseline.strongest and "batched plain decoding" in c.baseline.name
    monkeypatch.setattr(wc, "RECORDED_PATH", tmp_path / "recorded.json")
    assert evaluate(c).verdict.status == "not tested here"  # no record: the benchmark has not run
    record = {f"srt.batched_speedup_{n}": {"value": v} for n, v in values.items()}
    (tmp_path / "recorded.json").write_text(json.dumps({"values": record}))
    ev = evaluate(c)
    assert ev.at_source.ours == values[64]
    assert ev.verdict.status == status, ev.verdict


@pytest.mark.slow  # trains the small GRPO run at G = 8 (a few seconds cold)
def test_per_prompt_vs_global_is_the_replayed_ratio():
    from workbench.llm.srt import experiment

    c = BY_KEY["per_prompt_vs_global"]
    cfg = replace(CHECK_CONFIG, group=c.settings["group"])
    srt = experiment.replay(cfg, "srt", history=c.settings["history"]).accepted_per_forward
    glob = experiment.replay(cfg, "global-suffix", history=c.settings["history"]).accepted_per_forward
    assert c.measure(**c.settings).value == pytest.approx(srt / glob)
    rec = RECORDS["per_prompt_vs_global"]
    assert rec["ours"] == pytest.approx(srt / glob, rel=1e-5)
    # the per-prompt trees are ahead at every G and history swept, but only just (0.5 % at G = 16 to 2.3 % with the
    # running group alone): the global tree matches up to 23 context tokens, prompt included, so it mostly finds the
    # prompt's own responses too. "better" states a direction (> 1), so the rule reproduces it
    edges = [p["ours"] for pts in rec["sensitivity"].values() for p in pts]
    assert rec["status"] == "reproduced" and 1.0 < min(edges) and max(edges) < 1.05


def test_lossless_is_reproduced():
    r = RECORDS["lossless"]
    # every sampled SRT rollout equals plain decoding's with the same uniforms (exact, not statistical)
    assert r["ours"] == 1.0
    assert r["status"] == "reproduced"


@pytest.mark.slow  # trains the small GRPO run (about 3 s cold)
def test_fig5_ordering_is_the_replayed_history_curve():
    from workbench.llm.srt import experiment as study

    c = BY_KEY["online_runahead_acceptance"]
    rec = RECORDS["online_runahead_acceptance"]
    depths = (0, 4, 8)
    curve = study.history_curve(CHECK_CONFIG, depths=depths)
    gain = {d: min(o / h, r / o) - 1 for d, h, o, r in zip(depths, curve["history-only"], curve["srt"],
                                                          curve["srt+run-ahead"], strict=True)}  # fmt: skip
    # the figure at the sourced depth is the replayed curve's (computed here), and so is every committed sweep point
    # (rounded to 6 digits in VERDICTS.json)
    assert c.measure(**c.settings).value == pytest.approx(gain[c.settings["history"]])
    sweep = rec["sensitivity"]["history"]
    assert sorted(p["value"] for p in sweep) == list(depths)
    for p in sweep:
        assert p["ours"] == pytest.approx(gain[p["value"]], rel=1e-5)
    # history-only < SRT (online) < SRT + run-ahead at every depth swept: the paper's ordering, with no value to
    # compare (Fig. 5 has none in the text), so any gain above 0 meets it
    assert rec["status"] == "reproduced"
    # the depth moves the figure (0: only the current epoch; from 1 on, our 4-step run's history is all kept, so
    # 4 and 8 agree)
    assert len({round(p["ours"], 6) for p in sweep}) > 1
