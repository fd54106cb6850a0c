"""QuEst's claims: the accuracy figures are the shipped checkpoint's held-out metrics, the speed-up is read from the
benchmark's record, each verdict is pinned with why it is the honest outcome, and the one swept assumption moves
the figure."""

from __future__ import annotations

import json

import pytest

import workbench.claims as claims
from workbench.claims import evaluate
from workbench.quantum.quest.checkpoint import load_checkpoint
from workbench.quantum.quest.claims import CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}


@pytest.fixture(scope="module")
def evaluations():
    return {c.key: evaluate(c) for c in CLAIMS if c.key != "speedup"}


def test_figures_are_the_checkpoints(evaluations):
    m = load_checkpoint().metrics
    t = m["transformer"]
    assert evaluations["rmse"].at_source.ours == pytest.approx(t["all"]["rmse"])
    assert evaluations["rmse_gain_over_liu"].at_source.ours == pytest.approx(m["liu"]["all"]["rmse"] - t["all"]["rmse"])
    assert evaluations["r2_random"].at_source.ours == pytest.approx(t["random"]["r2"])
    assert evaluations["r2_algorithm"].at_source.ours == pytest.approx(t["algorithm"]["r2"])


def test_verdicts_are_pinned(evaluations):
    status = {k: e.verdict.status for k, e in evaluations.items()}
    # 0.026 against 0.04 on held-out circuits (split by circuit and noise draw), on seen and unseen devices alike
    assert status["rmse"] == "reproduced"
    # R^2 0.991 (random) and 0.999 (algorithm) against 0.99 and 0.95
    assert status["r2_random"] == status["r2_algorithm"] == "reproduced"
    # 0.23 lower than Liu's MLP (the paper: 0.02), but Liu's MLP sees no noise: it is not the strongest baseline
    # (a noise-aware estimate is), so the rule does not call a win over it reproduced
    assert status["rmse_gain_over_liu"] == "not reproduced"
    assert "weaker than" in evaluations["rmse_gain_over_liu"].verdict.detail


def test_speedup_is_the_recorded_benchmark(tmp_path, monkeypatch):
    missing = tmp_path / "none.json"
    monkeypatch.setattr(claims, "RECORDED_PATH", missing)
    assert evaluate(BY_KEY["speedup"]).verdict.status == "not tested here"
    path = tmp_path / "recorded.json"  # BENCHMARKS.md's like-for-like 17.2x; one vs one ~20x
    values = {"quest.speedup_like_for_like": {"value": 17.2}, "quest.speedup_one_vs_one": {"value": 20.0}}
    path.write_text(json.dumps({"values": values}))
    monkeypatch.setattr(claims, "RECORDED_PATH", path)
    ev = evaluate(BY_KEY["speedup"])  # the width sweep is not recorded: its command is named
    assert ev.verdict.status == "not tested here" and "--only quest" in ev.verdict.detail
    # the width sweep (batched vs batched at 5, 8, 10 qubits): aer's 4^width against the predictor's flat cost
    values |= {f"quest.speedup_width_{w}": {"value": v} for w, v in ((5, 40.0), (8, 150.0), (10, 320.0))}
    values |= {"quest.speedup_width_12_projected": {"value": 900.0}}  # aer at 12 over QuEst at 10
    path.write_text(json.dumps({"values": values}))
    ev = evaluate(BY_KEY["speedup"])
    assert ev.at_source.ours == 17.2
    assert [p.ours for p in ev.sweeps["pairing"]] == [17.2, 20.0]
    assert [p.ours for p in ev.sweeps["width"]] == [17.2, 40.0, 150.0, 320.0, 900.0]
    assert "projected" in ev.claim.assumptions[1].choices[-1]
    # 17-20x on the paper's 1-5-qubit circuits against its >200x, reached at 10 qubits: the verdict names width
    assert ev.verdict.status == "depends on" and ev.verdict.detail.startswith("width")


def test_device_subset_moves_the_figure(evaluations):
    # the only swept assumption: all / seen / unseen devices; dataset and labels need retraining (hours)
    for key in ("rmse", "rmse_gain_over_liu"):
        assert len({p.ours for p in evaluations[key].sweeps["devices"]}) == 3
    for c in CLAIMS:
        for a in c.inferred:
            if a.name in ("dataset", "label"):
                assert len(a.grid(quick=True)) == 1
