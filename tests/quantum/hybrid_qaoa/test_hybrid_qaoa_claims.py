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
    import networkx as nx

    from workbench.quantum.hybrid_qaoa.maxcut import parse_graph

    graphs = [parse_graph(g) for g in claims.GRAPHS]
    assert len(graphs) >= 30 and {g.n for g in graphs} == {4, 5, 6, 7}
    assert sum(g.n == 4 for g in graphs) == 6  # every connected 4-node graph
    for i, g in enumerate(graphs):  # pairwise non-isomorphic
        assert not any(nx.is_isomorphic(g.networkx(), h.networkx()) for h in graphs[:i] if h.n == g.n)
    assert len(claims.configs()) == 4 * len(graphs)  # source, budget 50, budget 200, noiseless
    assert claims.CLAIMS[0].up_to


@pytest.mark.slow  # ~6 s cold (transpiles the family's layouts)
def test_mixer_reduction():
    ev = _evaluated("mixer_reduction")
    # 32 dt of DRAG at amplitude 1 reach pi on every used qubit of fake_jakarta (90 % shorter than 320 dt; 48 dt
    # on fake_lagos): the 60 % is met on every device swept, and the device moves the figure
    assert ev.verdict.status == "reproduced" and ev.at_source.ours >= 0.6
    assert len({p.ours for p in ev.sweeps["device"]}) == 2


@pytest.mark.slow  # reads 120 recorded trained comparisons
def test_verdicts():
    ev = _evaluated("max_gain")
    # under device noise the hybrid gains on every one of the 30 graphs: median +3.1 %, maximum +27.8 % (a 4-node
    # graph; the hybrid's per-qubit amplitude and phase are 8 mixer parameters against the gate QAOA's one). The
    # maximum is what "up to 8 %" is compared with; the note carries the distribution.
    assert ev.at_source.ours > 0.2 and "max over 30 graphs" in ev.at_source.note
    assert "median +3." in ev.at_source.note and "0 of 30 lose" in ev.at_source.note
    assert ev.verdict.status in ("reproduced", "depends on")
    assert len({p.ours for p in ev.sweeps["noise"]}) == 2  # the noise changes the figure
