"""CFP's DP, the ILP and the blocks against brute force (references: exhaustive enumeration of per-operator
strategies and of block strategies on small graphs with awkward sizes, and the closed-form bytes of Megatron)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.cfp.blocks import build_blocks, segments
from workbench.llm.cfp.dp import solve, solve_dp
from workbench.llm.cfp.graph import gpt_graph
from workbench.llm.cfp.ilp import solve_ilp
from workbench.llm.cfp.plans import assignment_of, megatron
from workbench.llm.cfp.problem import build_problem, evaluate
from workbench.llm.cfp.reference import brute_force_blocks, brute_force_ops
from workbench.llm.cfp.sharding import parse_mesh
from workbench.llm.gpt import GPTShape

#: clusters that make different plans optimal at toy sizes: no latency and slow compute (splitting pays), a
#: slow network (replication pays) and the default H800-class node
CLUSTERS = [
    ClusterSpec(gpu_tflops=0.001, intra_node_latency_us=0.0, intra_node_bw_gbps=0.5),
    ClusterSpec(gpu_tflops=0.01, intra_node_latency_us=0.1, intra_node_bw_gbps=0.05),
    ClusterSpec(),
]
#: (mesh, hidden, heads, seq, batch, ffn_mult): per-operator spaces of a few thousand combinations
SMALL = [("3", 6, 3, 4, 2, 1), ("2", 6, 2, 3, 1, 1)]


def small_problem(case, cluster, layers=1):
    mesh, d, h, s, b, f = case
    shape = GPTShape(layers=layers, hidden=d, heads=h, seq=s, vocab=2, ffn_mult=f)
    return build_problem(gpt_graph(shape, batch=b), parse_mesh(mesh), cluster, itemsize=4)


def memory_limits(problem):
    least = sum(int(m.min()) for m in problem.mem)
    most = sum(int(m.max()) for m in problem.mem)
    return [None, least + (most - least) // 3, least]


@pytest.mark.parametrize("case", SMALL)
@pytest.mark.parametrize("cluster", range(len(CLUSTERS)))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_ilp_equals_brute_force_over_operators(case, cluster):
    problem = small_problem(case, CLUSTERS[cluster])
    for limit in memory_limits(problem):
        bf = brute_force_ops(problem, memory_limit=limit)
        ilp = solve_ilp(problem, memory_limit=limit)
        assert ilp.feasible
        got = evaluate(problem, ilp.assignment)
        # HiGHS's objective equals the plan's priced cost; both equal brute force (float sums: 1e-12 relative)
        assert got[0] == pytest.approx(bf.cost, rel=1e-12) and got[0] == pytest.approx(ilp.cost, rel=1e-9)
        assert limit is None or got[1] <= limit


@pytest.mark.parametrize("case", SMALL)
@pytest.mark.parametrize("cluster", range(len(CLUSTERS)))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_dp_equals_brute_force_over_blocks_with_and_without_memory(case, cluster):
    problem = small_problem(case, CLUSTERS[cluster])
    blocks = build_blocks(problem)
    for limit in memory_limits(problem):
        bf = brute_force_blocks(problem, blocks, memory_limit=limit)
        dp = solve_dp(blocks, memory_limit=limit, max_buckets=10**6)
        assert dp.exact_memory
        plan = blocks.expand(dp.choice, len(problem.graph.ops))
        cost, mem, _ = evaluate(problem, plan)
        assert cost == pytest.approx(bf.cost, rel=1e-12) and dp.cost == pytest.approx(cost, rel=1e-12)
        assert limit is None or mem <= limit
        # the per-operator optimum is never worse than the block space's (a superset); without a memory limit
        # it is the same here: CFP's claim that a ParallelBlock's operators share the optimal strategy holds on
        # these cases (under a tight limit it need not: see test_memory_limit_can_break_block_optimality)
        per_op = brute_force_ops(problem, memory_limit=limit).cost
        assert per_op <= bf.cost * (1 + 1e-12)
        if limit is None:
            assert per_op == pytest.approx(bf.cost, rel=1e-12)


def test_infeasible_memory_is_reported():
    problem = small_problem(SMALL[0], CLUSTERS[0])
    blocks = build_blocks(problem)
    least = sum(int(m.min()) for m in problem.mem)
    assert not solve_dp(blocks, memory_limit=least - 1, max_buckets=10**6).feasible
    assert not solve_ilp(problem, memory_limit=least - 1).feasible
    with pytest.raises(ValueError, match="memory_limit=0 is out of range"):
        solve_dp(blocks, memory_limit=0)


@pytest.mark.parametrize("mesh", ["2", "2x2"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_ilp_is_never_worse_than_the_dp_and_lagrangian_plans_fit(mesh):
    shape = GPTShape(layers=2, hidden=8, heads=2, seq=4, vocab=2, ffn_mult=2)
    problem = build_problem(gpt_graph(shape, batch=4), parse_mesh(mesh), CLUSTERS[0], itemsize=4)
    blocks = build_blocks(problem)
    limit = sum(int(m.min()) for m in problem.mem) * 1.3
    dp = solve(blocks, memory_limit=limit, exact_buckets=8, exact=False)  # too few buckets, no Pareto: Lagrangian
    assert dp.method == "lagrangian" and dp.feasible
    plan = blocks.expand(dp.choice, len(problem.graph.ops))
    cost, mem, _ = evaluate(problem, plan)
    assert mem <= limit and dp.cost == pytest.approx(cost, rel=1e-12)
    exact = solve(blocks, memory_limit=limit, exact_buckets=10**6)
    assert exact.method == "exact" and exact.cost <= cost * (1 + 1e-12)
    pareto = solve(blocks, memory_limit=limit, exact_buckets=8)  # too few buckets: the exact Pareto search
    assert pareto.method == "exact" and pareto.cost == pytest.approx(exact.cost, rel=1e-12)
    ilp = solve_ilp(problem, memory_limit=limit)
    assert ilp.cost <= exact.cost * (1 + 1e-9)


def test_blocks_are_communication_free_inside():
    shape = GPTShape(layers=2, hidden=8, heads=2, seq=4, vocab=2, ffn_mult=2)
    problem = build_problem(gpt_graph(shape, batch=4), parse_mesh("2x2"), CLUSTERS[0], itemsize=4)
    blocks = build_blocks(problem)
    inside = {(a, b) for members in blocks.ops for a, b in zip(members, members[1:])}
    assert inside, "some operators must follow their producer"
    for k, (p, c, _) in enumerate(problem.edges):
        if (p, c) in inside:
            kb = next(i for i, m in enumerate(blocks.ops) if p in m)
            pos = blocks.ops[kb].index(p)
            for chain in blocks.strats[kb]:
                assert problem.reshard[k][chain[pos], chain[pos + 1]] == 0.0
    names = [[problem.graph.ops[i].name.split(".")[-1] for i in m] for m in blocks.ops]
    assert ["qkv", "attn"] in names and ["fc", "gelu"] in names
    assert blocks.combinations_log10 < problem.combinations_log10


@pytest.mark.parametrize("layers", [1, 3, 8])
def test_segments_repeat_per_layer_and_profiling_does_not_grow(layers):
    shape = GPTShape(layers=layers, hidden=8, heads=2, seq=4, vocab=2, ffn_mult=2)
    problem = build_problem(gpt_graph(shape, batch=4), parse_mesh("2"), ClusterSpec(), itemsize=4)
    blocks = build_blocks(problem)
    seg = segments(blocks)
    if layers > 1:
        assert (seg.period, seg.repeats, seg.unique) == (8, layers, 2)
    assert seg.unique_blocks == 7  # input, LayerNorm, qkv+attn, proj, add, fc+gelu, out
    assert len(set(blocks.hashes)) == 7


def test_megatron_bytes_match_the_closed_form():
    """Megatron on p ranks: per layer 4 all-reduces of (b, s, d) (2 forward, 2 backward) and 2 of the row-parallel
    biases' gradients (added on one rank), each 2 (p-1) n / p bytes."""
    p, L, b, s, d = 4, 3, 2, 8, 16
    shape = GPTShape(layers=L, hidden=d, heads=4, seq=s, vocab=2, ffn_mult=4)
    graph = gpt_graph(shape, batch=b)
    problem = build_problem(graph, parse_mesh(str(p)), ClusterSpec(), itemsize=8)
    plan = assignment_of(problem, megatron(graph, 1), "megatron")
    ar = lambda n: 2 * (p - 1) * n * 8 // p  # noqa: E731
    assert evaluate(problem, plan)[2] == L * (4 * ar(b * s * d) + 2 * ar(d))


def test_combination_counts_are_products():
    problem = small_problem(SMALL[0], CLUSTERS[0])
    assert problem.combinations_log10 == pytest.approx(math.log10(math.prod(len(s) for s in problem.strats)))
    assert np.all(np.concatenate(problem.cost) >= 0)


def test_memory_limit_can_break_block_optimality():
    """Found here: under a tight memory limit the per-operator optimum mixes strategies inside a block (a follower
    sharded differently from its root, paying a collective to save memory), so CFP's block DP is worse than the
    ILP; without the limit both find the same plan."""
    shape = GPTShape(layers=2, hidden=24, heads=6, seq=6, vocab=2, ffn_mult=2)
    problem = build_problem(gpt_graph(shape, batch=12), parse_mesh("4"), ClusterSpec(), itemsize=4)
    blocks = build_blocks(problem)
    least, most = sum(int(m.min()) for m in problem.mem), sum(int(m.max()) for m in problem.mem)
    free_dp, free_ilp = solve(blocks), solve_ilp(problem)
    assert free_dp.cost == pytest.approx(free_ilp.cost, rel=1e-9)
    limit = least + (most - least) // 4
    dp, ilp = solve(blocks, memory_limit=limit, exact_buckets=20000), solve_ilp(problem, memory_limit=limit)
    assert dp.method == "exact" and dp.cost > ilp.cost * 1.1
