"""Hybrid QAOA's claims: the "up to 8 %" gain is a maximum over a declared family of seeded instances, and the
60 % shorter mixer is the shortest single pulse that still reaches every mixer angle."""

from __future__ import annotations

import pytest

from workbench.claims import claims_of, evaluate
from workbench.quantum.hybrid_qaoa import claims


def _evaluated(key: str):
    claim = next(c for c in claims_of("hybrid-qaoa") if c.key == key)
    ev = evaluate(claim)
    if ev.verdict.status == "not tested here" and "benchmarks.run" in ev.verdict.detail:
        pytest.skip(f"{key}: comparisons neither cached nor recorded (python -m benchmarks.run --only hybrid_qaoa)")
    return ev


def test_the_family_and_the_grid_are_declared():
    assert len(claims.GRAPHS) * len(claims.P_VALUES) == 10
    assert len(claims.configs()) == 40  # 10 instances x (source, budget 50, budget 200, noiseless)
    assert claims.CLAIMS[0].up_to


@pytest.mark.slow  # ~6 s cold (transpiles the family's layouts)
def test_mixer_reduction():
    ev = _evaluated("mixer_reduction")
    # 32 dt of DRAG at amplitude 1 reach pi on every used qubit of fake_jakarta (90 % shorter than 320 dt; 48 dt
    # on fake_lagos): the 60 % is met on every device swept, and the device moves the figure
    assert ev.verdict.status == "reproduced" and ev.at_source.ours >= 0.6
    assert len({p.ours for p in ev.sweeps["device"]}) == 2


@pytest.mark.slow  # reads 40 cached or recorded trained comparisons
def test_verdicts():
    ev = _evaluated("max_gain")
    # the maximum over 10 instances under device noise is +9.2 % on the 4-node ring with a chord (p = 1), above
    # 0.85 x 8 %; the mean gain is below 1 %. The sweep over budget and noise decides whether it holds everywhere.
    assert ev.at_source.ours > 0.068 and "max over 10 instances" in ev.at_source.note
    assert ev.verdict.status in ("reproduced", "depends on")
    assert len({p.ours for p in ev.sweeps["noise"]}) == 2  # the noise changes the figure
