"""The devices claim: our simulator against qiskit-aer, evaluated by the claim rule (its verdict pinned) and the
noise-model sweep checked to give a figure per model."""

from __future__ import annotations

import pytest

from workbench.claims import evaluate
from workbench.quantum.devices.claims import AGREEMENT, CLAIMS, max_abs_diff


@pytest.mark.slow  # four noise models on both simulators: a few seconds
def test_matches_aer_is_reproduced_for_every_noise_model():
    ev = evaluate(CLAIMS[0])
    # round-off (~1e-14) against the 1e-8 agreement target: the same channels, applied the same way
    assert ev.verdict.status == "reproduced"
    assert ev.at_source.ours == max_abs_diff("device") < AGREEMENT
    pts = ev.sweeps["noise_model"]
    # every model is evaluated and agrees; the differences are round-off, so the sweep cannot flip the verdict
    assert [p.value for p in pts] == ["device", "depolarizing", "thermal", "coherent"]
    assert all(0 <= p.ours < AGREEMENT and p.meets for p in pts)
