"""SRT's claims (workbench/llm/srt/claims.py): each evaluates, its computed verdict is pinned with the reason it is
the honest outcome, and every inferred assumption's sweep moves the figure (or the test says why it cannot).

The verdicts and sweeps are read from the committed records (VERDICTS.json), which tests/test_claims_contract.py
checks against a fresh evaluation; a figure is recomputed here only where a test compares it with an independent
computation, at the claim's sourced setting."""

import json

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
    assert set(BY_KEY) == {"lossless", "online_runahead_acceptance", "rollout_speedup", "gen_speedup_ppo",
                           "gen_speedup_dapo", "gen_speedup_retool", "suffix_slower_on_dapo", "vs_suffix_n10"}  # fmt: skip
    assert [c.key for c in wc.claims_of("srt")] == [c.key for c in CLAIMS]
    for c in CLAIMS:
        for ev in c.evidence:
            path, _, name = ev.partition("::")
            text = open(path).read()
            assert not name or f"def {name}(" in text, ev


def test_model_claims_are_the_calibrated_models():
    eff = m.calibrate_overhead()
    t = m.TABLE1_GEN_S
    a = m.calibrate_acceptance(t["baseline"]["grpo"] / t["srt"]["grpo"], m.WORKLOADS["grpo"], 24, eff)
    want = m.speedup(m.WORKLOADS["ppo"], m.Drafting(24, a), eff=eff)["speedup"]
    c = BY_KEY["gen_speedup_ppo"]
    assert c.measure(**c.settings).value == pytest.approx(want, rel=1e-9)
    d = BY_KEY["suffix_slower_on_dapo"]
    assert 0.5 < d.measure(**d.settings).value < 1.0  # SuffixDecoding faster than plain at GRPO's acceptance


@pytest.mark.parametrize(
    ("key", "status", "why"),
    [
        # the MODEL predicts 2.27x (2.12..2.34 over draft length, 1.90 at -10 % acceptance): above 0.85 x 2.07
        ("gen_speedup_ppo", "reproduced", ""),
        # 1.39x at the sourced setting, but 10 % less acceptance than on GRPO gives 1.16x < 0.85 x 1.40: the match
        # rests on the acceptance transferring from GRPO. The draft length does not flip it: the acceptance is
        # recalibrated on GRPO at each length (1.86x at 8, 1.29x at 32)
        ("gen_speedup_dapo", "depends on", "acceptance_transfer"),
        # the MODEL overshoots (2.37x vs 1.71x; the rule is one-sided for speed-ups); its plain ReTool generation
        # takes 142 s against the paper's 49 s and tool calls are not modelled: see the workload assumption's why
        ("gen_speedup_retool", "reproduced", ""),
        # at GRPO's acceptance SuffixDecoding is faster than plain decoding on DAPO (0.92 of plain's time), not
        # 1.42x slower; it is slower (1.04, 1.01) only at low acceptance or MFU, never by the paper's margin.
        # Not refuted: a MODEL with a transferred acceptance cannot overrule the paper's measurement
        ("suffix_slower_on_dapo", "not reproduced", ""),
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


def test_rollout_speedup_is_recorded_against_a_weaker_baseline(tmp_path, monkeypatch):
    c = BY_KEY["rollout_speedup"]
    monkeypatch.setattr(wc, "RECORDED_PATH", tmp_path / "recorded.json")
    ev = evaluate(c)
    assert ev.verdict.status == "not tested here"
    (tmp_path / "recorded.json").write_text(json.dumps({"values": {"srt.rollout_speedup": {"value": 2.66}}}))
    ev = evaluate(c)
    # 2.66x meets 2.08x, but against batch-1 decoding: the batched plain decoder (the paper's vLLM baseline) is
    # 3.6x..5.4x faster than batch-1, so the rule cannot reproduce it
    assert ev.at_source.ours == 2.66
    assert ev.verdict.status == "not reproduced" and "weaker than batched plain decoding" in ev.verdict.detail


def test_lossless_is_reproduced():
    r = RECORDS["lossless"]
    # every sampled SRT rollout equals plain decoding's with the same uniforms (exact, not statistical)
    assert r["ours"] == 1.0
    assert r["status"] == "reproduced"


@pytest.mark.slow  # trains the small GRPO run (about 3 s cold)
def test_fig5_ordering_is_the_replayed_history_curve():
    from workbench.llm.srt import study

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
