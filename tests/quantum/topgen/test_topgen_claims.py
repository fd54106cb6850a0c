"""TopGen's claims: the task figures are the shipped study runs', the Sim et al. figures the seed means, each
verdict is pinned with why it is the honest outcome, and the one swept assumption (equal_tolerance) is checked."""

from __future__ import annotations

import pytest

from workbench.claims import evaluate
from workbench.quantum.topgen import study
from workbench.quantum.topgen.claims import CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}


@pytest.fixture(scope="module")
def evaluations():
    return {c.key: evaluate(c) for c in CLAIMS}


def test_task_figures_are_the_studys(evaluations):
    runs = study.study_runs()
    assert [label for label, _ in runs] == ["digits-2/5q/1b", "digits-4/7q/1b", "digits-4/7q/2b"]
    for metric in ("depth_ratio", "cx_ratio"):
        value, where = study.best_ratio_at_equal_accuracy(runs, metric)
        assert evaluations[metric].at_source.ours == value and where == "digits-4/7q/2b vs quantumnas"
    gains = [study.accuracy_gain(out) for _, out in runs]
    assert evaluations["accuracy_gain"].at_source.ours == pytest.approx(sum(gains) / 3)


def test_sim_figures_are_the_seed_means(evaluations):
    for circuit in ("sim-1", "sim-2", "sim-9"):
        spread = study.seed_spread(circuit, 4, 5, 5000, 75)
        assert evaluations[f"{circuit}_kl"].at_source.ours == spread["kl_mean"]
        assert evaluations[f"{circuit}_mw"].at_source.ours == spread["mw_mean"]
        # two-sided as well (the rule's error kind is one-sided): within 2 seed standard deviations
        pub = study.SIM_PUBLISHED[circuit]["expressibility_kl"]
        assert abs(spread["kl_mean"] - pub) <= study.SIM_PUBLISHED["sigmas"] * spread["kl_std"]


def test_verdicts_are_pinned(evaluations):
    status = {k: e.verdict.status for k, e in evaluations.items()}
    assert "not tested here" not in status.values()
    # 1.88x depth vs the QuantumNAS stand-in (7 qubits, 2 blocks; TopGen 0.739 vs 0.733) would meet 2x within the
    # tolerance, but the stand-in (noiseless search score) is weaker than QuantumNAS: the rule refuses "reproduced"
    assert status["depth_ratio"] == "not reproduced" and "weaker than" in evaluations["depth_ratio"].verdict.detail
    # 1.12x CNOTs against 4x; +0.074 accuracy on average (-0.03, +0.19, +0.07) against 17 %
    assert status["cx_ratio"] == "not reproduced"
    assert status["accuracy_gain"] == "not reproduced"
    # our KL within the error tolerance of the published values for circuits 1, 2 and 9; MW exact for 1 and 9
    for key in ("sim-1_kl", "sim-2_kl", "sim-9_kl", "sim-1_mw", "sim-9_mw"):
        assert status[key] == "reproduced", key
    # circuit 2's transcribed MW 0.8104 is not what circuit 2 gives (ours 0.62 = qiskit's partial-trace reference)
    assert status["sim-2_mw"] == "not reproduced"


def test_equal_tolerance_sweep(evaluations):
    # the best ratio sits where TopGen is more accurate than the baseline, so it is at equal accuracy at every
    # tolerance of 0..0.05 and the maximum does not move; the tolerance does move which pairs count (run 1 vs the
    # QuantumNAS stand-in: 0.04 less accurate, counted only at 0.05)
    for key in ("depth_ratio", "cx_ratio"):
        assert len({p.ours for p in evaluations[key].sweeps["equal_tolerance"]}) == 1
    first = study.study_runs()[0][1]
    assert not study.ratios(first, equal_tolerance=0.03)["quantumnas"]["equal"]
    assert study.ratios(first, equal_tolerance=0.05)["quantumnas"]["equal"]
