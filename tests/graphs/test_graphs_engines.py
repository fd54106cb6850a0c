"""Exactness of both engines against brute force, for every connected pattern with 2..5 vertices.

References (independent of workbench.graphs' counting code): networkx's VF2 monomorphism matcher for
edge-induced counts (injective maps / automorphisms, both from networkx) and exhaustive enumeration of
vertex subsets with ``networkx.is_isomorphic`` for vertex-induced counts. Counts are integers: equality
is exact.
"""

import pytest
from graph_oracles import census_count, edge_induced, injective_maps, nx_graph, nx_pattern, vertex_census

from workbench.graphs.miner import Miner
from workbench.graphs.patterns import motifs

PATTERNS = [p for k in (2, 3, 4, 5) for p in motifs(k)]
IDS = [p.label for p in PATTERNS]
EDGE_GRAPHS = ("er-14-0.4", "rmat-5-3", "star-clique")
VERTEX_GRAPHS = ("er-14-0.4", "star-clique", "grid-3-4")


@pytest.fixture(scope="module")
def miners(small_graphs):
    return {name: Miner(g) for name, g in small_graphs.items()}


@pytest.fixture(scope="module")
def nx_graphs(small_graphs):
    return {name: nx_graph(g) for name, g in small_graphs.items()}


@pytest.fixture(scope="module")
def censuses(nx_graphs):
    return {(name, k): vertex_census(nx_graphs[name], k) for name in VERTEX_GRAPHS for k in (2, 3, 4, 5)}


@pytest.mark.parametrize("graph", EDGE_GRAPHS)
@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_edge_induced_counts_equal_networkx(graph, pattern, miners, nx_graphs):
    expected = edge_induced(nx_graphs[graph], nx_pattern(pattern.edges, pattern.k))
    miner = miners[graph]
    assert miner.count(pattern, "edge", "decompose").count == expected
    assert miner.count(pattern, "edge", "enumerate").count == expected


@pytest.mark.parametrize("pattern", [p for p in PATTERNS if p.k >= 3], ids=[p.label for p in PATTERNS if p.k >= 3])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_best_decomposition_is_exact_even_where_enumeration_is_cheaper(pattern, miners, nx_graphs):
    """The cost model may prefer enumeration on tiny graphs; force the cheapest decomposition."""
    miner = miners["rmat-5-3"]
    decs = [c for c in miner.candidates(pattern) if c.kind == "decompose"]
    if not decs:
        assert pattern.m == pattern.k * (pattern.k - 1) // 2, "only cliques have no cutting set"
        return
    expected = injective_maps(nx_graphs["rmat-5-3"], nx_pattern(pattern.edges, pattern.k))
    assert miner.inj_with(decs[0]) == expected


@pytest.mark.parametrize("graph", VERTEX_GRAPHS)
@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_vertex_induced_counts_equal_subset_enumeration(graph, pattern, miners, censuses):
    expected = census_count(censuses[(graph, pattern.k)], nx_pattern(pattern.edges, pattern.k))
    miner = miners[graph]
    assert miner.count(pattern, "vertex", "decompose").count == expected
    assert miner.count(pattern, "vertex", "enumerate").count == expected
