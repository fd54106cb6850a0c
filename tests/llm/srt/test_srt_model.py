"""The paper-scale MODEL: its factorisation (speed-up = iterations ratio x per-iteration cost ratio, exactly), the
expected tokens per forward against a Monte-Carlo of i.i.d. acceptance, limits, and the calibrations."""

import dataclasses

import numpy as np
import pytest

from workbench.llm.srt import model as m


@pytest.mark.parametrize(("k", "a"), [(1, 0.5), (8, 0.3), (24, 0.7), (5, 0.0)])
def test_tokens_per_forward_matches_a_monte_carlo_of_iid_acceptance(k, a):
    rng = np.random.default_rng(0)
    n = 200_000
    accepted = np.zeros(n, dtype=int)
    alive = np.ones(n, dtype=bool)
    for _ in range(k):
        alive &= rng.random(n) < a
        accepted += alive
    mc = 1 + accepted.mean()  # +1: the token sampled after the last accepted draft
    assert m.tokens_per_forward(m.Drafting(k, a)) == pytest.approx(mc, abs=4 * np.sqrt(accepted.var() / n) + 1e-12)


def test_speedup_factors_exactly_and_has_the_right_limits():
    for w in m.WORKLOADS.values():
        s = m.speedup(w, m.Drafting(16, 0.6), eff=m.EFFICIENCY, cluster=m.H800)
        assert s["speedup"] == pytest.approx(s["iterations_ratio"] * s["cost_ratio"], rel=1e-12)
        assert m.speedup(w, m.Drafting(0, 0.9), cluster=m.H800)["speedup"] == pytest.approx(1.0)
    assert m.tokens_per_forward(m.Drafting(7, 1.0)) == 8.0
    # a verification forward costs more than a plain one (more FLOPs), most at DAPO's 256 sequences per GPU
    dapo = m.speedup(m.WORKLOADS["dapo"], m.Drafting(24, 0.5))["cost_ratio"]
    grpo = m.speedup(m.WORKLOADS["grpo"], m.Drafting(24, 0.5))["cost_ratio"]
    assert dapo < grpo < 1.0
    # no acceptance and long drafts at large batch: slower than plain decoding
    assert m.speedup(m.WORKLOADS["dapo"], m.Drafting(24, 0.0))["speedup"] < 1.0


def test_calibrations_reproduce_their_targets():
    eff = m.calibrate_overhead()
    assert m.generation(m.WORKLOADS["grpo"], m.Drafting(), eff=eff)["seconds"] == pytest.approx(31.8, rel=1e-6)
    a = m.calibrate_acceptance(2.06, m.WORKLOADS["grpo"], 24, eff)
    assert 0 < a < 1
    assert m.speedup(m.WORKLOADS["grpo"], m.Drafting(24, a), eff=eff)["speedup"] == pytest.approx(2.06, rel=1e-4)
    assert m.calibrate_acceptance(1000.0, m.WORKLOADS["grpo"], 24, eff) is None


def test_the_rollout_gpu_is_the_h800_preset():
    from workbench.cluster import PRESETS

    assert m.H800 is PRESETS["h800-sxm-nvlink-ib"]
    assert (m.H800.peak_tflops, m.H800.hbm_bw_gbps) == (989.0, 3350.0)  # H100/H800 SXM datasheet
    # a faster memory system shortens the memory-bound plain decoding
    fast = dataclasses.replace(m.H800, hbm_bw_gbps=2 * m.H800.hbm_bw_gbps)
    w = m.WORKLOADS["grpo"]
    assert m.generation(w, m.Drafting(), cluster=fast)["seconds"] < m.generation(w, m.Drafting())["seconds"]
