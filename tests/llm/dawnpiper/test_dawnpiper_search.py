"""DawnPiper's search against the exhaustive oracle on a seeded family of random graphs (random costs, sizes,
savers and recompute inputs; swaps priced at 1-100 KB/s so swap and recompute cost time), and the cost model's
vectorised live-memory count against the independent walk of ``feasibility.stage_peak``. References: the
exhaustive oracle (every cut placement, same cost model) and the per-unit walk."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.llm.dawnpiper.costs import StagePlan, live_bytes
from workbench.llm.dawnpiper.dawnpiper import cut_positions, exact_cuts
from workbench.llm.dawnpiper.feasibility import stage_peak
from workbench.llm.dawnpiper.generate import generate_graph, random_graph
from workbench.llm.dawnpiper.graph import layer_cuts
from workbench.llm.dawnpiper.model import cannot_cut
from workbench.llm.dawnpiper.study import gap_family
from workbench.llm.gpt import GPTShape

#: relative tolerance of an iteration time "equal" to the oracle's: both are the same float sums of the same
#: stage plans, so they agree to rounding of the max over stages (one ulp would do; 1e-12 is generous)
EXACT = 1e-12


def _check_family(rows) -> np.ndarray:
    """Every row: DawnPiper fits where the oracle does and nowhere else, and equals it there; returns the
    interval search's own gaps (inf where it found nothing that fits)."""
    interval = []
    for r in rows:
        assert r.dawnpiper_feasible == r.optimum_feasible, r
        if r.optimum_feasible:
            assert abs(r.gap) <= EXACT, r
            assert r.interval_search_gap >= -EXACT, r  # the oracle is never beaten
            interval.append(r.interval_search_gap)
    return np.array(interval)


def test_search_equals_the_oracle_on_a_random_family() -> None:
    rows = gap_family(20)
    interval = _check_family(rows)
    assert len(interval) >= 30  # enough settings where something fits
    # the family is hard enough to matter: the interval search alone misses the optimum somewhere by > 5 %
    assert (interval > 0.05).any()


@pytest.mark.slow
def test_search_equals_the_oracle_on_a_larger_family() -> None:
    interval = _check_family(gap_family(100, first_seed=20))
    assert (interval > 0.05).sum() >= 5


def test_exact_cuts_under_a_bound_below_the_optimum_finds_nothing() -> None:
    from workbench.cluster import ClusterSpec
    from workbench.llm.dawnpiper.costs import StageBudget, StageCache
    from workbench.llm.dawnpiper.reference import exhaustive

    g = random_graph(3, 10)
    hw = StageBudget(memory_bytes=1e9, cluster=ClusterSpec(pcie_bw_gbps=1e-5), state_bytes_per_param=32)
    cache = StageCache(g, 3, 4, hw, "1f1b")
    best = exhaustive(cache)
    ok = cut_positions(g.n)
    assert exact_cuts(cache, ok, best.bottleneck_s * (1 - 1e-9)) is None
    found = exact_cuts(cache, ok, best.bottleneck_s)
    assert found is not None and cache.partition("x", found).bottleneck_s == best.bottleneck_s


def _plan(a: int, b: int, swap, recompute) -> StagePlan:
    return StagePlan(
        start=a, stop=b, stage=0, in_flight=1, compute_s=0.0, static_bytes=0.0, act_bytes=0, act_bytes_before=0,
        peak_bytes=0.0, saved_peak_bytes=0.0, swap=tuple(swap), recompute=tuple(recompute), swap_bytes=0,
        recompute_bytes=0, added_s=0.0, comm_s=0.0, time_s=0.0, feasible=True,
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_live_bytes_equals_the_walk(seed: int) -> None:
    graphs = [
        random_graph(seed, 12),
        generate_graph(GPTShape(layers=2, hidden=8, heads=2, seq=4, vocab=16), 2, flops_per_s=1e9,
                       hbm_bytes_per_s=1e9),
    ]  # fmt: skip
    rng = np.random.default_rng(seed)
    for g in graphs:
        for _ in range(25):
            a = int(rng.integers(0, g.n - 1))
            b = int(rng.integers(a + 1, g.n + 1))
            held = g.saved_in(a, b).tolist()
            moved = sorted(rng.choice(held, size=int(rng.integers(0, len(held) + 1)), replace=False).tolist())
            rec = [v for v in moved if g.value_inputs[v] is not None and rng.random() < 0.6]  # chains included
            swap = [v for v in moved if v not in rec]
            walk = stage_peak(g, _plan(a, b, swap, rec), name_above=1.0).total
            assert live_bytes(g, a, b, swap, rec) == pytest.approx(walk, rel=0, abs=1e-6)


def test_layer_granular_peers_cannot_cut_more_stages_than_layers() -> None:
    g = generate_graph(GPTShape(layers=2, hidden=8, heads=2, seq=4, vocab=16), 1, flops_per_s=1e9,
                       hbm_bytes_per_s=1e9)  # fmt: skip
    assert len(layer_cuts(g)) + 1 == 4  # embedding, two blocks, head
    for name in ("pipedream", "vpipe", "dawnpiper-layer"):
        assert cannot_cut(name, g, 4) is None
        assert "allow at most 4 stages, not 5" in cannot_cut(name, g, 5)
    for name in ("dawnpiper", "compute-balanced", "memory-balanced"):
        assert cannot_cut(name, g, 5) is None
