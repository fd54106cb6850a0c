"""DawnPiper's graph, cost model and partitioners. References: brute force over saver sets (activation table),
brute force over cut placements (min-max DP, exhaustive oracle), and the traced graph itself (the generated one)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.llm.dawnpiper.balance import activation_table, min_max_cuts
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import Hardware, StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.generate import generate_graph
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.dawnpiper.runner import run
from workbench.llm.dawnpiper.study import graph_of, hardware_of, traced
from workbench.llm.gpt import GPTConfig

CFG = DawnpiperConfig(layers=2, hidden=16, heads=2, seq=8, vocab=32, micro_batch=2)


@pytest.mark.parametrize(
    "shape", [dict(layers=2, hidden=16, heads=2, seq=8, vocab=32), dict(layers=3, hidden=12, heads=3, seq=5, vocab=11)]
)
def test_generated_graph_equals_traced(shape: dict) -> None:
    cfg = DawnpiperConfig(**shape, micro_batch=3)
    g = traced(cfg)[1]
    q = generate_graph(GPTConfig(**shape).shape, 3, flops_per_s=1e12, hbm_bytes_per_s=1e12, elem_bytes=8,
                       stat_bytes=8, param_elem_bytes=8)  # fmt: skip
    assert g.n == q.n == 10 * shape["layers"] + 6
    assert g.names == q.names and g.value_names == q.value_names and g.value_savers == q.value_savers
    assert (g.value_bytes == q.value_bytes).all() and (g.crossing_bytes == q.crossing_bytes).all()
    assert (g.param_bytes == q.param_bytes).all() and g.value_inputs == q.value_inputs
    assert (g.fwd_s > 0).all() and (g.bwd_s[g.param_bytes > 0] > 0).all()


def test_activation_table_equals_brute_force() -> None:
    g = graph_of(CFG)
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
    g = graph_of(CFG)
    hw = Hardware(memory_bytes=memory, pcie_bytes_per_s=1e8, link_bytes_per_s=1e9, state_bytes_per_param=32,
                  weight_bytes_per_param=8)  # fmt: skip
    ours, account = dawnpiper_partition(StageCache(g, stages, 6, hw, "1f1b"))
    best = exhaustive(StageCache(g, stages, 6, hw, "1f1b"))
    assert ours.iteration_s >= best.iteration_s * (1 - 1e-12)  # the oracle is never beaten
    if best.feasible:
        assert ours.feasible
        assert ours.iteration_s <= 1.25 * best.iteration_s  # the reported gap stays small on these cases
    assert len(account["interval"]) == stages - 1


def test_memory_plan_fits_and_pipedream_stashes_weights() -> None:
    g = graph_of(CFG)
    hw = Hardware(memory_bytes=100e3, pcie_bytes_per_s=1e6, link_bytes_per_s=1e9, state_bytes_per_param=32,
                  weight_bytes_per_param=8)  # fmt: skip
    part, _ = dawnpiper_partition(StageCache(g, 3, 5, hw, "1f1b"))
    for s in part.stages:
        assert s.peak_bytes <= hw.memory_bytes and s.in_flight == min(3 - s.stage, 5)
        assert s.act_bytes == s.act_bytes_before - s.swap_bytes - s.recompute_bytes
    pd = StageCache(g, 3, 5, hw, "pipedream", optimize=False).plan(0, 10, 0)
    plain = StageCache(g, 3, 5, hw, "1f1b", optimize=False).plan(0, 10, 0)
    assert pd.static_bytes - plain.static_bytes == 2 * g.param_bytes[:10].sum()  # (k - 1) fp64 weight versions


def test_partition_mode_json_and_exhaustive_gap() -> None:
    out = run(DawnpiperConfig(mode="partition", stages=3, micro_batches=4, memory_gb=0.00012)).to_json()
    names = [r["name"] for r in out["partitioners"]]
    assert names == ["compute-balanced", "memory-balanced", "pipedream", "vpipe", "dawnpiper"]
    assert set(out["partitioners"][0]) >= {"name", "cuts", "stage_peak_bytes", "iteration_seconds", "max_batch"}
    assert out["exhaustive"] is not None and out["exhaustive"]["dawnpiper_gap"] >= -1e-12


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"stages=20 is more than the 16 nodes"):
        DawnpiperConfig(layers=1, stages=20)
    with pytest.raises(ValueError, match=r"memory_gb=1e-06 is below what one micro-batch needs"):
        run(DawnpiperConfig(mode="partition", memory_gb=1e-6))
    with pytest.raises(ValueError, match=r"model='gpt-13b' cannot run in check mode"):
        DawnpiperConfig(mode="check", model="gpt-13b")
    assert hardware_of(CFG).state_bytes_per_param == 32
