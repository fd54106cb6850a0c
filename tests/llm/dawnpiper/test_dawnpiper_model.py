"""Paper-scale MODEL: generated graphs (sizes from the shape formulas in gpt.py), the max-batch search against a
linear scan, the peers' memory rules, and a paper-scale point. References: gpt.param_count, brute-force scans."""

from __future__ import annotations

import math

import pytest

from workbench.llm.dawnpiper.config import A100, DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageCache
from workbench.llm.dawnpiper.experiment import paper_point
from workbench.llm.dawnpiper.model import PARTITIONERS, max_batch, paper_budget, paper_graph, run_partitioner
from workbench.llm.gpt import PAPER_SHAPES, flops_per_token, param_count

HW = paper_budget(40, A100, 125)  # A100 40 GB, PCIe 25 GB/s, NVLink 300 GB/s and 5 us, 125 GB host


@pytest.mark.parametrize("model", ["gpt-1.3b", "gpt-13b"])
def test_generated_graph_has_the_model_parameters_and_flops(model: str) -> None:
    g = paper_graph(model, 1, 150, 1555)
    shape = PAPER_SHAPES[model]
    assert g.param_count.sum() == param_count(shape)
    assert g.n == 10 * shape.layers + 6
    g4 = paper_graph(model, 4, 150, 1555)
    assert (g4.value_bytes >= g.value_bytes).all()
    # the matmul and attention nodes' forward time is exactly gpt.flops_per_token (forward) at 150 TFLOP/s
    matmul = [i for i, n in enumerate(g4.names) if n.split(".")[1].startswith(("linear", "attn"))]
    flops = g4.fwd_s[matmul].sum() * 150e12
    assert flops == pytest.approx(flops_per_token(shape, backward=False) * 4 * shape.seq, rel=1e-12)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_max_batch_search_equals_a_linear_scan() -> None:
    def graph_at(b: int):
        return paper_graph("gpt-1.3b", b, 150, 1555)

    for name in ("memory-balanced", "pipedream"):
        got, part = max_batch(name, graph_at, 4, 16, HW, "1f1b", cap=64)
        scan = [b for b in range(1, 65) if run_partitioner(name, graph_at(b), 4, 16, HW, "1f1b").feasible]
        assert got == max(scan, default=0) and (part is None) == (got == 0)
    # DawnPiper's search asks the greedy feasibility check, not the whole search, at each b: the same answer as
    # scanning the whole search (16 GB stages, so the answer lies below the cap)
    small = paper_budget(16, A100, 125)
    got, part = max_batch("dawnpiper", graph_at, 4, 16, small, "1f1b", cap=48)
    scan = [b for b in range(1, 49) if run_partitioner("dawnpiper", graph_at(b), 4, 16, small, "1f1b").feasible]
    assert 1 < got == max(scan) < 48 and part is not None and part.feasible


def test_partitioners_keep_their_memory_rules() -> None:
    g = paper_graph("gpt-1.3b", 8, 150, 1555)
    parts = {name: run_partitioner(name, g, 4, 16, HW, "1f1b") for name in PARTITIONERS}
    for name in ("compute-balanced", "memory-balanced", "pipedream"):
        assert all(not s.swap and not s.recompute for s in parts[name].stages)  # no memory management
    layer_starts = {int(i) + 1 for i in range(g.n - 1) if g.layer[i] != g.layer[i + 1]}
    parts["dawnpiper-layer"] = run_partitioner("dawnpiper-layer", g, 4, 16, HW, "1f1b")
    for name in ("pipedream", "vpipe", "dawnpiper-layer"):
        assert set(parts[name].cuts) <= layer_starts, name
    assert not set(parts["dawnpiper"].cuts) <= layer_starts  # node-level cuts fall inside layers here
    assert parts["dawnpiper"].iteration_s <= parts["dawnpiper-layer"].iteration_s
    assert parts["dawnpiper"].feasible and all(s.peak_bytes <= HW.memory_bytes for s in parts["dawnpiper"].stages)
    # 1F1B: the first stage holds S micro-batches, the last one
    assert [s.in_flight for s in parts["dawnpiper"].stages] == [4, 3, 2, 1]
    gpipe = StageCache(g, 4, 16, HW, "gpipe").plan(0, 10, 0)
    assert gpipe.in_flight == 16


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_paper_point() -> None:
    point = paper_point(DawnpiperConfig(mode="model", model="gpt-1.3b", stages=4, micro_batches=16, micro_batch=1))
    mb = point.max_batch
    assert mb["dawnpiper"] >= mb["vpipe"] >= 1 and mb["dawnpiper"] > mb["pipedream"] > 0
    assert point.equal_batch == mb["vpipe"] and point.speedup_vs_vpipe is not None and point.speedup_vs_vpipe >= 1
    assert 0 <= point.compute_balanced_idle < 1
    assert 1 <= point.max_batch_layer_cuts <= mb["dawnpiper"]
    assert math.isfinite(mb["dawnpiper"] / mb["pipedream"])
