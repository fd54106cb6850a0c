"""NAPA's claims: they evaluate (from the study's cache or the recorded benchmark figures), their verdicts are
pinned, each inferred assumption's sweep is declared, and the figures rest on a metric that can fail."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.claims import claims_of, evaluate
from workbench.quantum.napa import claims
from workbench.quantum.napa.hamiltonians import load


def _evaluated(key: str):
    claim = next(c for c in claims_of("napa") if c.key == key)
    ev = evaluate(claim)
    if ev.verdict.status == "not tested here" and "benchmarks.run" in ev.verdict.detail:
        pytest.skip(f"{key}: the VQE runs are neither cached nor recorded (python -m benchmarks.run --only napa)")
    return ev


def test_the_paper_metric_cannot_tell_hartree_fock_from_an_ansatz():
    """Why the verdicts rest on mHa: Hartree-Fock alone scores 98.2 % (H2) and 99.75 % (HeH+) on the paper's
    accuracy, and PAN's H2 96.482 % means ~40 mHa, worse than Hartree-Fock's 20.3 mHa."""
    for molecule, bond, hf_accuracy in (("H2", 0.735, 0.982), ("HeH+", 1.0, 0.9975)):
        h = load(molecule, bond)
        hf = float(np.min(np.real(np.diag(h.matrix()))))
        assert 1 - abs(hf - h.exact) / abs(h.exact) == pytest.approx(hf_accuracy, abs=5e-4)
    h2 = load("H2", 0.735)
    assert (1 - claims.PAPER["H2"]) * abs(h2.exact) * 1e3 > claims._hartree_fock_mha("H2") > 20


def test_claims_are_declared_with_a_figure_that_can_fail():
    keys = {c.key: c for c in claims.CLAIMS}
    assert set(keys) == {"h2_chemical_accuracy", "heh_best_error", "latency_reduction"}
    assert keys["h2_chemical_accuracy"].paper == 1.6 and keys["h2_chemical_accuracy"].kind == "error"
    assert keys["heh_best_error"].up_to and keys["heh_best_error"].paper == 3.0
    assert not keys["latency_reduction"].baseline.strongest  # pulse-efficient compilation is stronger
    assert len(claims.configs()) == 21  # the runs the benchmark records


@pytest.mark.slow  # reads ~20 cached or recorded VQE runs; computing one takes about a minute
def test_verdicts():
    # H2: NAPA stops at Hartree-Fock (20.7 mHa against HF's 20.3; the HEA baseline reaches 0.72 mHa) at every
    # layer count, budget, noise and seed swept: chemical accuracy (1.6 mHa) is missed everywhere
    ev = _evaluated("h2_chemical_accuracy")
    assert ev.verdict.status == "not reproduced" and ev.at_source.ours > 15
    assert "Hartree-Fock 20.31 mHa" in ev.at_source.note
    # the sweep varies the figure (a little: it never leaves Hartree-Fock's neighbourhood)
    assert len({round(p.ours, 6) for pts in ev.sweeps.values() for p in pts}) > 1
    # HeH+: the best of two seeds is also at Hartree-Fock (7.7 vs 7.3 mHa), above slide 48's 3 mHa
    ev = _evaluated("heh_best_error")
    assert ev.verdict.status == "not reproduced" and ev.at_source.ours > 5
    # latency: NAPA's schedule saves nothing where it does not improve on Hartree-Fock (no result to be
    # shorter than): 0 everywhere swept, which the rule calls refuted
    ev = _evaluated("latency_reduction")
    assert ev.verdict.status == "refuted" and ev.at_source.ours == 0
