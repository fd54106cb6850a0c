"""RobustState's claims: they evaluate from the shipped study, their figures are the study's, each verdict is pinned
with why it is the honest outcome, and each inferred assumption's sweep is checked to move the figure (or why not).
"""

from __future__ import annotations

import pytest

from workbench.claims import evaluate
from workbench.quantum.robuststate import study
from workbench.quantum.robuststate.claims import CLAIMS, PAPER_CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}


@pytest.fixture(scope="module")
def evaluations():
    return {c.key: evaluate(c) for c in CLAIMS}


def test_figures_are_the_studys(evaluations):
    s = study.summary(study.default_study())
    ev = evaluations
    assert ev["coherent_reduction_max"].at_source.ours == pytest.approx(
        max(v["coherent_reduction_max"] for v in s["by_qubits"].values())
    )
    for n in (4, 5):  # the curve's last point is the run's final fidelity (rounded to 1e-6)
        assert ev[f"fidelity_gain_max_{n}q"].at_source.ours == pytest.approx(
            s["by_qubits"][n]["fidelity_gain_max"], abs=1e-5
        )
        assert ev[f"fidelity_gain_mean_{n}q"].at_source.ours == pytest.approx(
            s["by_qubits"][n]["fidelity_gain_mean"], abs=1e-5
        )
    assert ev["incoherent_not_fixable"].at_source.ours == pytest.approx(s["incoherent-only"]["gain_mean"])
    c = s["compare"]
    best = max(v["fidelity_gain_mean"] for m, v in c.items() if m != "robuststate")
    assert ev["beats_noise_aware_optimisers"].at_source.ours == pytest.approx(
        c["robuststate"]["fidelity_gain_mean"] - best, abs=1e-5
    )
    assert BY_KEY["fidelity_gain_max_4q"].paper == PAPER_CLAIMS["fidelity_gain_max"][4] == 0.96


def test_verdicts_are_pinned(evaluations):
    status = {k: e.verdict.status for k, e in evaluations.items()}
    assert "not tested here" not in status.values()
    # 15.8x (fake_perth, W, 4 qubits) against the paper's 7.1x, against the paper's own comparison (before / after
    # training, slide 10); it rests on our coherent-error draw (strength 1), which is not swept (retraining)
    assert status["coherent_reduction_max"] == "reproduced"
    # 3-16 % over the noise-unaware circuit, now the strongest fair baseline (higher fidelity than arithmetic
    # decomposition in 28 of 30 cases): fine-tuning removes only the coherent part (a few % of fidelity)
    for key in ("fidelity_gain_max_4q", "fidelity_gain_mean_4q", "fidelity_gain_max_5q", "fidelity_gain_mean_5q"):
        assert status[key] == "not reproduced", key
        assert BY_KEY[key].baseline.strongest
        # over the paper's own baseline, arithmetic decomposition on the same machine: 8-18 % at 4 qubits (it is
        # close to the variational circuit there), 53 % mean and up to 219 % at 5 (46 cx on fake_geneva); the
        # 5-qubit maximum exceeds the paper's but against a baseline weaker than the variational circuit
        arith = f"{key}_arithmetic"
        assert status[arith] == "not reproduced", arith
        assert not BY_KEY[arith].baseline.strongest
    assert evaluations["fidelity_gain_max_5q_arithmetic"].at_source.ours > PAPER_CLAIMS["fidelity_gain_max"][5]
    # with the coherent strength at 0 the fidelity drops by ~0.01 (the straight-through update is biased)
    assert status["incoherent_not_fixable"] == "reproduced"
    # +0.017 over parameter shift (which finishes one step in 800k executions); SPSA and BO lose fidelity
    assert status["beats_noise_aware_optimisers"] == "reproduced"


def test_inferred_sweeps_move_the_figure(evaluations):
    for key in ("fidelity_gain_max_4q", "fidelity_gain_mean_4q"):
        sweeps = evaluations[key].sweeps
        assert len({round(p.ours, 6) for p in sweeps["budget"]}) == 2  # read from the curve at 100k and 300k
        assert len({round(p.ours, 6) for p in sweeps["definition"]}) == 2  # relative vs infidelity removed
    margin = evaluations["beats_noise_aware_optimisers"].sweeps["budget"]
    assert len({round(p.ours, 6) for p in margin}) == 2
    # single-choice assumptions (the machine model, the readout model, the coherent-error definition) are stated,
    # not swept: another coherent strength or readout model needs retraining every case (~30 s each)
    for c in CLAIMS:
        for a in c.inferred:
            if a.name in ("machine", "readout", "coherent_error"):
                assert len(a.grid(quick=True)) == 1


def test_measures_refuse_an_unknown_definition():
    with pytest.raises(ValueError, match="definition='absolute' is unknown"):
        BY_KEY["fidelity_gain_max_4q"].measure(**{**BY_KEY["fidelity_gain_max_4q"].settings, "definition": "absolute"})
