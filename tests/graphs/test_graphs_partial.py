"""The partial-embedding API: per-anchor exact extension counts, existence queries, MNI support and
frequent-subgraph mining.

References: networkx's VF2 monomorphisms (their number is inj; the data vertices each pattern vertex
takes are the MNI domains), and brute-force mining over every labelled pattern up to 2 edges."""

import itertools

import numpy as np
import pytest
from graph_oracles import injective_maps, mni_domains, nx_graph, nx_pattern, random_labels

from workbench.graphs.generators import erdos_renyi, grid
from workbench.graphs.partial import domains, exists, frequent_subgraphs, mni_support, partial_embeddings
from workbench.graphs.patterns import Pattern, parse_pattern


@pytest.fixture(scope="module")
def graph():
    return erdos_renyi(24, 0.22, seed=4)


@pytest.mark.parametrize(
    "name, cut",
    [
        ("house", (0, 1)),
        ("house", (4,)),
        ("5-path", (2,)),
        ("bull", (0, 1, 2)),
        ("4-cycle", (0,)),
        ("tailed-triangle", (0,)),
        ("diamond", (0, 2)),
    ],
)
def test_exact_extensions_sum_to_inj(graph, name, cut):
    p = parse_pattern(name)
    pe = partial_embeddings(graph, p, cut)
    assert pe.vertices.shape[1] == len(cut) and len(pe.components) == pe.extensions.shape[1]
    assert pe.total == injective_maps(nx_graph(graph), nx_pattern(p.edges, p.k))
    assert (pe.exact >= 0).all() and (pe.exact <= np.prod(pe.extensions, axis=1)).all()


def test_wedge_centre_counts_in_a_grid():
    pe = partial_embeddings(grid(3, 3), parse_pattern("wedge"), (0,))
    by_vertex = dict(zip(pe.vertices[:, 0].tolist(), pe.exact.tolist()))
    assert by_vertex[4] == 12 and by_vertex[0] == 2 and by_vertex[1] == 6  # d (d - 1)


@pytest.mark.parametrize("name", ["house", "bull", "tailed-triangle", "5-path"])
def test_domains_equal_networkx_monomorphism_images(graph, name):
    p = parse_pattern(name)
    want = mni_domains(nx_graph(graph), nx_pattern(p.edges, p.k))
    got = domains(graph, p)
    assert {u: set(v.tolist()) for u, v in got.items()} == want


def test_existence_queries(graph):
    G = nx_graph(graph)
    assert exists(graph, parse_pattern("triangle")) == (injective_maps(G, nx_pattern([(0, 1), (1, 2), (0, 2)], 3)) > 0)
    assert not exists(graph, parse_pattern("6-clique"))
    tri_vertices = {x for c in __import__("networkx").enumerate_all_cliques(G) if len(c) == 3 for x in c}
    for x in range(graph.n):
        assert exists(graph, parse_pattern("triangle"), {0: x}) == (x in tri_vertices)
    with pytest.raises(ValueError, match="anchors must be connected"):
        exists(graph, parse_pattern("4-path"), {0: 1, 3: 2})


def _brute_force_fsm(graph, min_support, max_edges):
    G = nx_graph(graph)
    labels = sorted(set(graph.labels.tolist()))
    found = {}
    shapes = [((0, 1),), ((0, 1), (0, 2))][:max_edges]
    for edges in shapes:
        k = 1 + len(edges)
        for labs in itertools.product(labels, repeat=k):
            p = Pattern(k, edges, labs)
            dom = mni_domains(G, nx_pattern(p.edges, p.k, p.labels))
            support = min(len(d) for d in dom.values())
            if support >= min_support:
                found[p.canonical] = support
    return found


def test_frequent_subgraphs_equal_brute_force_mni():
    g = erdos_renyi(30, 0.15, seed=9).with_labels(random_labels(30, 3, seed=1))
    got = {p.canonical: s for p, s in frequent_subgraphs(g, min_support=4, max_edges=2)}
    assert got == _brute_force_fsm(g, 4, 2) and len(got) > 3
    p = next(iter(frequent_subgraphs(g, min_support=4, max_edges=1)))[0]
    assert mni_support(g, p) >= 4


def test_fsm_needs_labels_and_sane_thresholds(graph):
    with pytest.raises(ValueError, match="needs vertex labels"):
        frequent_subgraphs(graph, min_support=2)
    with pytest.raises(ValueError, match="min_support=0 must be >= 1"):
        frequent_subgraphs(graph.with_labels(np.zeros(graph.n)), min_support=0)
