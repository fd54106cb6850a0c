"""DawnPiper's cost model and partitioners on small generated graphs (the traced graph's structure: equal to it,
tested in test_dawnpiper_traced.py; times from FLOPs, so the cases are deterministic). References: brute force
over saver sets (activation table) and over cut placements (min-max DP, exhaustive oracle)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.dawnpiper.balance import activation_table, min_max_cuts
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.generate import generate_graph
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.gpt import GPTConfig

#: the traced GPT's shape at fp64, generated: 26 nodes
GRAPH = generate_graph(
    GPTConfig(layers=2, hidden=16, heads=2, seq=8, vocab=32).shape, 2, flops_per_s=1e9, hbm_bytes_per_s=1e10,
    elem_bytes=8, stat_bytes=8, param_elem_bytes=8,
)  # fmt: skip


def test_activation_table_equals_brute_force() -> None:
    g = GRAPH
    table = activation_table(g)
    for a in range(g.n):
        for b in range(a + 1, g.n + 1):
            brute = sum(int(g.value_bytes[v]) for v, s in enumerate(g.value_savers) if any(a <= x < b for x in s))
            assert table[a, b] == brute


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_max_dp_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, S = 11, 3
    w = rng.random(n)
    prefix = np.concatenate([[0], np.cumsum(w)])
    tables = [(prefix[None, :] - prefix[:, None]) * (1 + x) for x in range(S)]  # position-dependent costs
    cuts = min_max_cuts(tables, n)
    best = min(
        max(tables[x][b0, b1] for x, (b0, b1) in enumerate(zip((0, *c), (*c, n), strict=True)))
        for c in itertools.combinations(range(1, n), S - 1)
    )
    got = max(tables[x][b0, b1] for x, (b0, b1) in enumerate(zip((0, *cuts), (*cuts, n), strict=True)))
    assert got == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("stages,memory", [(2, 1e9), (3, 120e3), (3, 100e3), (4, 90e3)])
def test_dawnpiper_against_exhaustive(stages: int, memory: float) -> None:
    g = GRAPH
    hw = StageBudget(memory_bytes=memory, cluster=ClusterSpec(pcie_bw_gbps=0.1, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0), state_bytes_per_param=32,
                     weight_bytes_per_param=8)  # fmt: skip
    ours, account = dawnpiper_partition(StageCache(g, stages, 6, hw, "1f1b"))
    best = exhaustive(StageCache(g, stages, 6, hw, "1f1b"))
    assert ours.feasible == best.feasible  # (3, 100e3): the working set of the head fits no partition
    if best.feasible:  # the exact refinement: the oracle's time, to rounding
        assert ours.iteration_s == pytest.approx(best.iteration_s, rel=1e-12)
        assert account["interval_iteration_s"] >= best.iteration_s * (1 - 1e-12)  # the oracle is never beaten
    assert len(account["interval"]) == stages - 1


def test_memory_plan_fits_and_pipedream_stashes_weights() -> None:
    g = GRAPH
    hw = StageBudget(memory_bytes=130e3, cluster=ClusterSpec(pcie_bw_gbps=0.001, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0), state_bytes_per_param=32,
                     weight_bytes_per_param=8)  # fmt: skip
    part, _ = dawnpiper_partition(StageCache(g, 3, 5, hw, "1f1b"))
    assert part.feasible and sum(len(s.swap) + len(s.recompute) for s in part.stages) > 0
    for s in part.stages:
        assert s.peak_bytes <= hw.memory_bytes and s.in_flight == min(3 - s.stage, 5)
        assert s.saved_peak_bytes == s.static_bytes + s.in_flight * s.act_bytes <= s.peak_bytes
        assert s.act_bytes == s.act_bytes_before - s.swap_bytes - s.recompute_bytes
    pd = StageCache(g, 3, 5, hw, "pipedream", optimize=False).plan(0, 10, 0)
    plain = StageCache(g, 3, 5, hw, "1f1b", optimize=False).plan(0, 10, 0)
    assert pd.static_bytes - plain.static_bytes == 2 * g.param_bytes[:10].sum()  # (k - 1) fp64 weight versions


def test_config_refusals_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"stages=20 is more than the 16 nodes"):
        DawnpiperConfig(layers=1, stages=20)
    with pytest.raises(ValueError, match=r"model='gpt-13b' cannot run in check mode"):
        DawnpiperConfig(mode="check", model="gpt-13b")
    with pytest.raises(ValueError, match=r"model='traced' has no paper-scale model: valid models for mode 'model'"):
        DawnpiperConfig(mode="model")
    with pytest.raises(ValueError, match=r"heads=3 must divide hidden=16"):
        DawnpiperConfig(heads=3)


def test_interval_restricted_oracle_and_the_slice_sweep() -> None:
    from workbench.llm.dawnpiper.study import theorem_sweep_slice

    hw = StageBudget(memory_bytes=100e3, cluster=ClusterSpec(pcie_bw_gbps=0.001, intra_node_bw_gbps=1.0, intra_node_latency_us=0.0), state_bytes_per_param=32,
                     weight_bytes_per_param=8)  # fmt: skip
    cache = StageCache(GRAPH, 3, 5, hw, "1f1b")
    best = exhaustive(cache)
    inside = exhaustive(cache, [(c, c) for c in best.cuts])
    assert inside.cuts == best.cuts  # bounds that admit only the optimum return it
    wide = exhaustive(cache, [(1, 12), (13, 25)])
    assert wide.iteration_s >= best.iteration_s
    with pytest.raises(ValueError, match="admit no partition"):
        exhaustive(cache, [(5, 5), (4, 4)])
    rows = theorem_sweep_slice(stage_counts=(3,), budgets_gb=(6.0, 4.0))
    for r in rows:  # DawnPiper reaches the oracle (at 4 GB the interval search alone finds nothing that fits)
        assert r["gap"] is not None and -1e-12 <= r["gap"] <= 1e-12
        assert r["optimum_inside_interval"] in (True, False)
    assert rows[1]["interval_search_gap"] == float("inf") and rows[1]["optimum_inside_interval"] is False
