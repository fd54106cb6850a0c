"""The block search is exact under a memory limit (references: exhaustive enumeration of block strategies, written
here over the Blocks' own tables; scipy's HiGHS ILP over per-operator strategies, whose space contains the blocks').

The family: the block structure of toy GPT graphs (residual edges, 1-D and 2-D meshes) with seeded random block
seconds, bytes and resharding matrices, at memory limits from the least plan's bytes to above the unconstrained
plan's; the Pareto path is forced (no bucket DP) so the exact search itself is what is compared.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.cfp.blocks import Blocks, build_blocks
from workbench.llm.cfp.dp import lagrangian, solve, solve_dp
from workbench.llm.cfp.graph import gpt_graph
from workbench.llm.cfp.ilp import solve_ilp
from workbench.llm.cfp.problem import build_problem, evaluate
from workbench.llm.cfp.reference import brute_force_blocks
from workbench.llm.cfp.sharding import parse_mesh
from workbench.llm.gpt import GPTShape

TOY = ClusterSpec(gpu_tflops=0.001, intra_node_latency_us=0.0, intra_node_bw_gbps=0.5)


def toy_blocks(mesh: str, layers: int = 1) -> Blocks:
    shape = GPTShape(layers=layers, hidden=6, heads=2, seq=4, vocab=2, ffn_mult=1)
    return build_blocks(build_problem(gpt_graph(shape, batch=2), parse_mesh(mesh), TOY, itemsize=4))


def randomised(blocks: Blocks, keep: int = 3, *, seed: int) -> Blocks:
    """The same block graph (at most ``keep`` strategies per block, so it can be enumerated) with random seconds
    (0..1), bytes (1..10^6: no common divisor worth bucketing) and resharding seconds (zero on a third of the
    pairs, as where placements agree)."""
    rng = np.random.default_rng(seed)
    strats = [s[:keep] for s in blocks.strats]
    cost = [rng.uniform(0, 1, len(s)) for s in strats]
    mem = [rng.integers(1, 10**6, len(s)).astype(np.int64) for s in strats]
    edges = [
        [(bp, k, rng.uniform(0, 0.5, (len(strats[bp]), len(strats[c]))) * (rng.uniform(size=(len(strats[bp]), len(strats[c]))) > 0.33))
         for bp, k, _ in ins]
        for c, ins in enumerate(blocks.in_edges)
    ]  # fmt: skip
    return Blocks(blocks.ops, strats, cost, mem, edges, blocks.consumers, blocks.hashes)


def brute(blocks: Blocks, limit: float) -> tuple[float, np.ndarray]:
    """Every combination of block strategies, priced at once (numpy): the cheapest within ``limit`` bytes (inf when
    none fits)."""
    combos = np.array(list(itertools.product(*(range(len(s)) for s in blocks.strats))))  # [combinations, blocks]
    secs = sum(blocks.cost[k][combos[:, k]] for k in range(combos.shape[1]))
    secs = secs + sum(R[combos[:, bp], combos[:, k]] for k in range(combos.shape[1]) for bp, _, R in blocks.in_edges[k])
    mem = sum(blocks.mem[k][combos[:, k]] for k in range(combos.shape[1]))
    secs = np.where(mem <= limit, secs, np.inf)
    i = int(np.argmin(secs))
    return float(secs[i]), combos[i]


def limits(blocks: Blocks) -> list[float]:
    least = sum(int(m.min()) for m in blocks.mem)
    free = solve_dp(blocks)
    top = sum(int(blocks.mem[k][c]) for k, c in enumerate(free.choice))
    return [least, least + (top - least) // 4, least + (top - least) // 2, top - 1]


#: block structures of the family -> strategies kept per block (the enumeration stays under ~10^5 plans)
STRUCTURES = {
    "2": (toy_blocks("2"), 3), "3": (toy_blocks("3"), 3), "2x2": (toy_blocks("2x2"), 3),
    "2, two layers": (toy_blocks("2", 2), 2),
}  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "mesh", [pytest.param(m, marks=pytest.mark.slow) if "two" in m else m for m in STRUCTURES]
)  # the two-layer structure enumerates 2^18 plans per limit: ~3 s, slow lane
def test_exact_search_equals_brute_force_on_random_blocks(mesh, seed):
    blocks = randomised(*STRUCTURES[mesh], seed=seed)
    assert math.prod(len(s) for s in blocks.strats) <= 300_000  # small enough to enumerate
    for limit in limits(blocks):
        want, _ = brute(blocks, limit)
        got = solve(blocks, memory_limit=limit, exact_buckets=0)  # exact_buckets=0: never the bucket DP
        assert got.feasible and got.method == "exact" and got.gap_bound == 0.0
        # the same optimum (float sums in another order: 1e-12 relative) with a plan that fits
        assert got.cost == pytest.approx(want, rel=1e-12)
        assert sum(int(blocks.mem[k][c]) for k, c in enumerate(got.choice)) <= limit


@pytest.mark.parametrize("seed", range(4))
def test_lagrangian_loss_is_within_its_certified_bound(seed):
    blocks = randomised(*STRUCTURES["2x2"], seed=seed)
    losses = []
    for limit in limits(blocks)[1:]:
        free = solve_dp(blocks)
        lag, _, lower = lagrangian(blocks, limit, free)
        want, _ = brute(blocks, limit)
        assert lower <= want * (1 + 1e-12)  # weak duality: the dual bound is below the optimum
        assert want <= lag.cost * (1 + 1e-12) and lag.cost <= want * (1 + lag.gap_bound) * (1 + 1e-12)
        losses.append(lag.cost / want - 1)
    assert all(x >= -1e-12 for x in losses)


def test_infeasible_limit_is_reported_by_the_exact_path():
    blocks = randomised(*STRUCTURES["2"], seed=0)
    least = sum(int(m.min()) for m in blocks.mem)
    assert not solve(blocks, memory_limit=least - 1, exact_buckets=0).feasible


@pytest.mark.parametrize("mesh", ["2", "3"])
@pytest.mark.parametrize("fraction", [0.25, 0.5])
@pytest.mark.slow  # brute force over blocks in Python: a few seconds
def test_exact_search_matches_brute_force_and_the_ilp_on_priced_graphs(mesh, fraction):
    # the cost model's own tables (real block structure, real bytes): the exact DP equals brute force over blocks
    # and is never better than the per-operator ILP (its space is a superset); the gap to it is what grouping costs
    shape = GPTShape(layers=1, hidden=6, heads=2, seq=4, vocab=2, ffn_mult=1)
    problem = build_problem(gpt_graph(shape, batch=2), parse_mesh(mesh), TOY, itemsize=4)
    blocks = build_blocks(problem)
    least, most = sum(int(m.min()) for m in blocks.mem), sum(int(m.max()) for m in blocks.mem)
    limit = least + int(fraction * (most - least))  # within the block space's range, so a block plan fits
    got = solve(blocks, memory_limit=limit, exact_buckets=0)
    bf = brute_force_blocks(problem, blocks, memory_limit=limit)
    plan = blocks.expand(got.choice, len(problem.graph.ops))
    secs, mem, _ = evaluate(problem, plan)
    assert secs == pytest.approx(bf.cost, rel=1e-12) and mem <= limit
    assert solve_ilp(problem, memory_limit=limit).cost <= secs * (1 + 1e-9)
