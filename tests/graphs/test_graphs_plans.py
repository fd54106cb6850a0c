"""Every kind of generated kernel gives the same injective-map count: all decomposition shapes (count
tables, bridges, both), all matching orders, hoisting on and off.

Reference: networkx's VF2 monomorphism count of the pattern in the same graph (exact integers).
"""

import pytest
from graph_oracles import injective_maps, nx_graph, nx_pattern

from workbench.graphs.compiler import KernelPlan, generate_source
from workbench.graphs.decompose import decompositions
from workbench.graphs.enumerate import Schedule, connected_orders, count, count_reference, symmetry_restrictions
from workbench.graphs.miner import Miner, PlanChoice
from workbench.graphs.patterns import parse_pattern


def _has_table(plan: KernelPlan) -> bool:
    return any(b.table for f in plan.factors for b in f.binds)


def _variety(name: str) -> list:
    """Up to four decompositions of one pattern covering plain, table, bridge and bridge+table kernels."""
    picked, seen = {}, set()
    for d in decompositions(parse_pattern(name)):
        kind = (bool(d.bridge), _has_table(d.kernel))
        src = generate_source(d.kernel)[0]
        if kind not in picked and src not in seen:
            picked[kind] = d
            seen.add(src)
    return list(picked.values())


CASES = [
    (name, d)
    for name in ("4-cycle", "diamond", "house", "5-cycle", "tailed-4-cycle", "bull", "5-path", "4-star")
    for d in _variety(name)
]


@pytest.fixture(scope="module")
def miner(small_graphs):
    return Miner(small_graphs["rmat-5-3"])


@pytest.mark.parametrize("name, decomposition", CASES, ids=[f"{n}:{d.describe()[:60]}" for n, d in CASES])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_every_decomposition_shape_is_exact(name, decomposition, miner, small_graphs):
    expected = injective_maps(
        nx_graph(small_graphs["rmat-5-3"]), nx_pattern(decomposition.pattern.edges, decomposition.pattern.k)
    )
    choice = PlanChoice(decomposition.pattern, "decompose", decomposition.kernel, 0.0, 0.0, decomposition=decomposition)
    assert miner.inj_with(choice) == expected


def test_case_list_covers_tables_bridges_and_both():
    kinds = {(bool(d.bridge), _has_table(d.kernel)) for _, d in CASES}
    assert kinds == {(False, False), (False, True), (True, False), (True, True)}


@pytest.mark.parametrize("name", ["tailed-triangle", "house", "bull"])
def test_every_matching_order_counts_the_same(name, small_graphs):
    p = parse_pattern(name)
    g = small_graphs["er-14-0.4"].by_degree()
    expected = injective_maps(nx_graph(g), nx_pattern(p.edges, p.k)) // p.n_automorphisms
    orders = connected_orders(p)
    assert len(orders) > len(connected_orders(p, greedy=True)) >= 1
    for order in orders[:: max(len(orders) // 6, 1)]:
        s = Schedule(p, order, "edge", symmetry_restrictions(p, order))
        assert count(g, p, schedule=s).count == expected, s.describe()


@pytest.mark.parametrize("induced", ["edge", "vertex"])
@pytest.mark.parametrize("name", ["diamond", "house", "5-cycle"])
def test_hoisting_off_and_pure_python_reference_agree(name, induced, small_graphs):
    p = parse_pattern(name)
    g = small_graphs["er-14-0.4"].by_degree()
    s = Schedule(
        p, connected_orders(p, greedy=True)[0], induced, symmetry_restrictions(p, connected_orders(p, greedy=True)[0])
    )
    a = count(g, p, induced, schedule=s).count
    assert count(g, p, induced, schedule=s, hoist=False).count == a
    assert count_reference(g, s) == a


def test_restrictions_make_each_subgraph_count_once():
    """inj(p) / |Aut(p)| = number of restricted embeddings, for every order of the 4-cycle."""
    p = parse_pattern("4-cycle")
    for order in connected_orders(p):
        r = symmetry_restrictions(p, order)
        assert len(r) > 0 and all(order.index(a) < order.index(b) for a, b in r)
