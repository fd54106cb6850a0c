"""The k-clique kernels (workbench.graphs.cliques) and the engine's use of them.

References: networkx's ``enumerate_all_cliques`` (brute force over seeded random graphs, odd sizes included)
and closed forms (K_n has C(n, k) k-cliques; K_n minus a perfect matching has C(n / 2, k) 2^k). Counts are
integers: equality is exact.
"""

import math

import networkx as nx
import numpy as np
import pytest

from workbench.graphs import cliques
from workbench.graphs import miner as miner_module
from workbench.graphs.cliques import (
    CliqueIndex,
    count_cliques,
    count_cliques_dag,
    count_triangles_dag,
    forward_ends,
    hub_rows,
    warm,
)
from workbench.graphs.generators import erdos_renyi, rmat
from workbench.graphs.graph import from_edges
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import Pattern, parse_pattern

RANDOM = {
    "er-1": erdos_renyi(1, 0.5, seed=1),
    "er-7": erdos_renyi(7, 0.6, seed=2),
    "er-13": erdos_renyi(13, 0.5, seed=3),
    "er-31": erdos_renyi(31, 0.3, seed=4),
    "er-65": erdos_renyi(65, 0.2, seed=5),
    "er-97": erdos_renyi(97, 0.15, seed=6),
    "rmat-7-6": rmat(7, 6, seed=7),
}


def brute_cliques(graph, k: int) -> int:
    """k-cliques by networkx (every clique listed once, by increasing size)."""
    total = 0
    for c in nx.enumerate_all_cliques(graph.to_networkx()):
        if len(c) > k:
            break
        total += len(c) == k
    return total


def complete(n: int, *, minus_matching: bool = False):
    """K_n, or K_n without the edges (2i, 2i + 1) (n even)."""
    a, b = np.triu_indices(n, 1)
    keep = ~((a % 2 == 0) & (b == a + 1)) if minus_matching else np.ones(a.shape, bool)
    return from_edges(a[keep], b[keep], n, name=f"K{n}")


@pytest.mark.parametrize("ordered", [True, False], ids=["by-degree", "as-loaded"])
@pytest.mark.parametrize("k", [3, 4, 5])
@pytest.mark.parametrize("name", list(RANDOM))
def test_counts_equal_networkx_on_random_graphs(name, k, ordered):
    g = RANDOM[name].by_degree() if ordered else RANDOM[name]
    assert count_cliques(g, k) == brute_cliques(g, k)


@pytest.mark.parametrize("hubs", ["none", "some", "all"])
@pytest.mark.parametrize("name", ["er-97", "rmat-7-6"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_every_intersection_path_is_exact(name, hubs):
    """Hub rows for none, some or all vertices: scans, hub-row lookups and AND-popcounts all run."""
    g = RANDOM[name].by_degree()
    end = forward_ends(g.indptr, g.indices)
    hub = hub_rows(g.indptr, g.indices, end, {"none": 0, "some": 5, "all": g.n}[hubs])
    roots = np.arange(g.n, dtype=np.int64)
    assert count_triangles_dag(g.indptr, g.indices, end, hub, roots) == brute_cliques(g, 3)
    for k in (3, 4, 5):
        assert count_cliques_dag(g.indptr, g.indices, end, hub, k, roots) == brute_cliques(g, k)


@pytest.mark.parametrize("hubs", [0, None], ids=["scan", "hub-rows"])
@pytest.mark.parametrize("n, minus", [(70, False), (131, False), (140, True)], ids=["K70", "K131", "K140-matching"])
def test_dense_graphs_need_several_words_per_local_row(n, minus, hubs):
    """Forward lists longer than 64 (several uint64 words per bit row) against the closed forms."""
    g = complete(n, minus_matching=minus).by_degree()
    end = forward_ends(g.indptr, g.indices)
    hub = hub_rows(g.indptr, g.indices, end, g.n if hubs is None else hubs)
    roots = np.arange(g.n, dtype=np.int64)
    for k in (3, 4, 5):
        expected = math.comb(n // 2, k) * 2**k if minus else math.comb(n, k)
        assert count_cliques_dag(g.indptr, g.indices, end, hub, k, roots) == expected
    expected3 = math.comb(n // 2, 3) * 8 if minus else math.comb(n, 3)
    assert count_triangles_dag(g.indptr, g.indices, end, hub, roots) == expected3


@pytest.mark.parametrize(
    "graph, expected",
    [
        (from_edges([], [], 0, name="empty"), (0, 0, 0, 0, 0)),
        (from_edges([], [], 5, name="isolated"), (5, 0, 0, 0, 0)),
        (from_edges([0, 0, 1, 4], [1, 2, 2, 5], 9, name="triangle+edge+isolated"), (9, 4, 1, 0, 0)),
    ],
    ids=["empty", "isolated", "triangle-edge-isolated"],
)
def test_small_and_degenerate_graphs(graph, expected):
    assert tuple(count_cliques(graph.by_degree(), k) for k in range(1, 6)) == expected


@pytest.mark.parametrize("k", [3, 4, 5])
def test_threads_agree_with_one_thread(k, monkeypatch):
    monkeypatch.setattr(cliques, "PARALLEL_MIN_EDGES", 0)  # threads even on this small graph
    g = rmat(9, 8, seed=3).by_degree()
    one = count_cliques(g, k, workers=1)
    assert one == count_cliques(g, k, workers=2) == count_cliques(g, k, workers=3)
    assert one == count_cliques(g, k, workers=2, index=CliqueIndex.of(g))


def test_index_records_the_forward_lists():
    g = RANDOM["rmat-7-6"].by_degree()
    index = CliqueIndex.of(g)
    for v in range(g.n):
        row = g.neighbors(v)
        assert np.array_equal(g.indices[g.indptr[v] : index.end[v]], row[row < v])
    assert index.max_forward == max(int((g.neighbors(v) < v).sum()) for v in range(g.n))
    assert index.hub.shape == (g.n, (g.n + 63) // 64)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(k=0), "k=0 is not allowed"),
        (dict(k=2.5), "k=2.5 is not allowed"),
        (dict(k=3, workers=0), "workers=0 is not allowed"),
    ],
)
def test_bad_arguments_name_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        count_cliques(RANDOM["er-7"], **kwargs)


def test_forward_lists_beyond_the_limit_raise_and_the_engine_falls_back(monkeypatch):
    g = RANDOM["er-31"].by_degree()
    k4 = parse_pattern("4-clique")
    monkeypatch.setattr(cliques, "MAX_FORWARD", 2)
    with pytest.raises(ValueError, match="MAX_FORWARD=2"):
        count_cliques(g, 4)
    monkeypatch.setattr(miner_module, "MAX_FORWARD", 2)
    m = Miner(g, ordered=True)
    assert m.plan(k4).kind == "enumerate"
    assert m.count(k4).count == brute_cliques(g, 4)
    assert m.plan(parse_pattern("triangle")).kind == "clique"  # triangles have no such limit


def test_a_hub_longer_than_the_limit_is_fine_when_its_forward_lists_are_short(monkeypatch):
    """A star's centre has degree 10 but, relabelled by degree, every forward list has at most 3 vertices."""
    g = from_edges([0] * 10 + [1, 1, 2], list(range(1, 11)) + [2, 3, 3], name="star+K4")
    monkeypatch.setattr(miner_module, "MAX_FORWARD", 3)
    m = Miner(g)
    assert m.graph.max_degree == 10 and m.clique_index.max_forward == 3
    assert m.plan(parse_pattern("4-clique")).kind == "clique"
    assert m.count(parse_pattern("4-clique")).count == 1


@pytest.mark.parametrize("induced", ["edge", "vertex"])
@pytest.mark.parametrize("name", ["triangle", "4-clique", "5-clique"])
@pytest.mark.parametrize("graph", ["er-13", "er-65", "rmat-7-6"])
def test_engine_counts_cliques_with_the_clique_kernel(graph, name, induced):
    g, p = RANDOM[graph], parse_pattern(name)
    expected = brute_cliques(g, p.k)  # a clique's vertex-induced count is its edge-induced count
    for workers in (1, 2):
        res = Miner(g, workers=workers).count(p, induced)
        assert res.count == expected
        assert "clique:" in res.plan
    assert Miner(g).count(p, induced, "enumerate").count == expected  # the plain engine is unchanged


def test_clique_shrinkages_use_the_clique_kernel_and_labelled_cliques_do_not():
    g = RANDOM["rmat-7-6"]
    m = Miner(g)
    diamond = m.count(parse_pattern("diamond"), "vertex")  # its transform needs E(4-clique)
    assert any(s.plan.startswith("clique:") for s in diamond.steps)
    labelled = Pattern(3, ((0, 1), (1, 2), (0, 2)), labels=(0, 1, 1))
    assert m.plan(labelled).kind != "clique"


def test_prepare_warms_the_clique_kernels_so_counting_compiles_nothing():
    g = RANDOM["er-65"]
    m = Miner(g)
    assert m.prepare([parse_pattern("5-clique")]) >= 0.0
    assert warm() == 0.0  # already compiled or loaded in this process
    assert m.needed_plans([parse_pattern("5-clique")]) == []
    res = m.count(parse_pattern("5-clique"))
    assert res.compile_seconds == 0.0 and res.count == brute_cliques(g, 5)
