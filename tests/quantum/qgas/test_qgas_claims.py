"""QGAS's claims: they evaluate from the shipped summary, their figures are the summary's, each verdict is pinned
with why it is the honest outcome, the swept assumption moves the figure, and the shipped summary is what the study
computes (slow)."""

from __future__ import annotations

import math

import pytest

from workbench.claims import evaluate
from workbench.quantum.qgas import study
from workbench.quantum.qgas.claims import CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}


@pytest.fixture(scope="module")
def evaluations():
    return {c.key: evaluate(c) for c in CLAIMS}


def test_figures_are_the_summarys(evaluations):
    s = study.default_summary()
    assert s["settings"]["iterations"] == study.STUDY["iterations"] and set(s["problems"]) == {
        "lih",
        "h2",
        "maxcut",
        "portfolio",
    }
    excess, _ = study.excess_over_baselines(s, 12)
    assert evaluations["comparable"].at_source.ours == excess
    assert evaluations["benchmarks"].at_source.ours == pytest.approx(3 / 5)  # LiH, portfolio, MaxCut; not H2O, TSP
    assert evaluations["noise"].at_source.ours == 1.0
    with pytest.raises(ValueError, match="proposals=13 is out of range: valid range is 1..12"):
        study.best_error_after(s["problems"]["h2"]["curves"]["local"], 13)
    assert study.best_error_after([None, 0.5], 1) == math.inf


def test_verdicts_are_pinned(evaluations):
    status = {k: e.verdict.status for k, e in evaluations.items()}
    # within a target of random and evolutionary search on every problem (at 4-5 qubits every method is near
    # exact), but those stand in for QuantumNAS, which is not run: the rule does not call it reproduced
    assert status["comparable"] == "not reproduced"
    assert "weaker than" in evaluations["comparable"].verdict.detail
    # 3 of the paper's 5 benchmarks are run (H2O needs more qubits, TSP is not implemented)
    assert status["benchmarks"] == "not reproduced"
    # every best ansatz loses accuracy under fake_jakarta's calibrated noise
    assert status["noise"] == "reproduced"
    # no language model is called: a model's invalid share is genuinely not measured here
    assert status["validity"] == "not tested here"


def test_proposals_sweep_moves_the_figure(evaluations):
    # 4 proposals: the local proposer is 2e-8 targets above a baseline; 12: 0.004 targets above on LiH (random
    # search found 7e-6 Ha against its 1.4e-5): both far below one target
    pts = {p.value: p.ours for p in evaluations["comparable"].sweeps["proposals"]}
    assert pts[4] != pts[12] and 0 <= pts[4] < 1e-6 and 0 < pts[12] < 0.01
    # proposer and setting are single choices: another proposer (a language model) or seeds need new searches
    for c in CLAIMS:
        for a in c.inferred:
            if a.name in ("proposer", "setting"):
                assert len(a.grid(quick=True)) == 1


@pytest.mark.slow  # computes one problem's comparison (~25 s)
def test_shipped_summary_is_what_the_study_computes(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    study.clear_caches()
    try:
        fresh = study.claim_summary([study.compare("h2")])["problems"]["h2"]
    finally:
        study.clear_caches()
    shipped = study.default_summary()["problems"]["h2"]
    for name, curve in shipped["curves"].items():
        assert fresh["curves"][name] == pytest.approx(curve, rel=1e-6, abs=1e-9)
    assert fresh["local_best"]["cnots"] == shipped["local_best"]["cnots"]
    assert fresh["local_best"]["noisy_error"] == pytest.approx(shipped["local_best"]["noisy_error"], rel=1e-6)
