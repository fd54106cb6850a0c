"""CSR graphs, loaders and generators.

References: hand-written files with known edge sets; networkx for the same graphs (edge sets, degree
sums); the published sizes of the shared datasets (karate 34/78, Wiki-Vote 7115/100762, CiteSeer
3327/4552, Cora 2708/5278, PubMed 19717/44324)."""

import pickle

import networkx as nx
import numpy as np
import pytest

from workbench.graphs.generators import erdos_renyi, from_spec, grid, rmat
from workbench.graphs.graph import from_edges, from_networkx
from workbench.graphs.loaders import RestrictedUnpickler, load_edge_list, load_graph, load_mtx, load_planetoid


def test_from_edges_drops_and_reports_self_loops_and_duplicates():
    g = from_edges([0, 1, 1, 2, 2, 3], [1, 0, 1, 3, 3, 0])
    assert (g.n, g.m) == (4, 3)
    assert (g.report.self_loops, g.report.duplicates, g.report.raw_edges) == (1, 2, 6)
    assert g.neighbors(0).tolist() == [1, 3] and g.indices.dtype == np.int32


def test_relabel_and_by_degree_keep_the_graph():
    g = erdos_renyi(40, 0.2, seed=3)
    h = g.by_degree()
    assert np.all(np.diff(h.degrees) <= 0)
    back = {tuple(sorted((int(h.original_ids[a]), int(h.original_ids[b])))) for a, b in h.edges()}
    assert back == {tuple(e) for e in g.edges().tolist()}
    assert nx.is_isomorphic(g.to_networkx(), h.to_networkx())


def test_edge_list_with_comments_header_and_any_ids(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("# comment\n% another\n4 5\n10 20\n20 30\n30 10\n10 10\n30 20\n")
    g = load_edge_list(f)
    assert (g.n, g.m) == (3, 3) and g.report.self_loops == 1 and g.report.duplicates == 1
    assert g.original_ids.tolist() == [10, 20, 30]


def test_edge_list_without_header_and_with_weights(tmp_path):
    f = tmp_path / "g.tsv"
    f.write_text("1\t2\t0.5\n2\t3\t1.5\n")
    assert load_edge_list(f).m == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 2\n3 x\n", "line 2: vertex ids must be integers"),
        ("1 2\n3\n", "line 2: expected two vertex ids"),
        ("1 2\n-3 4\n", "line 2: vertex ids must be >= 0"),
        ("# only a comment\n", "no edges found"),
    ],
)
def test_malformed_edge_list_names_the_line(tmp_path, text, message):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_edge_list(f)


def test_mtx_pattern_symmetric_and_real_general(tmp_path):
    a = tmp_path / "a.mtx"
    a.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 3\n2 1\n3 2\n3 3\n")
    g = load_mtx(a)
    assert (g.n, g.m, g.report.self_loops) == (3, 2, 1)
    b = tmp_path / "b.mtx"
    b.write_text("%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 1.5\n2 1 -2\n1 3 4e-1\n3 1 1\n")
    h = load_mtx(b)
    assert (h.m, h.report.duplicates) == (2, 2)


@pytest.mark.parametrize(
    "text, message",
    [
        ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "format 'array' is not supported"),
        ("%%MatrixMarket matrix coordinate pattern symmetric\n2 3 1\n1 2\n", "line 2: matrix is 2 x 3"),
        (
            "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n",
            r"line 4: entry \(4, 1\) is out of range",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n",
            "size line says 3 entries but the file has 2",
        ),
        ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 x\n", "line 3: expected 'row col"),
        ("hello\n", "line 1: expected '%%MatrixMarket"),
    ],
)
def test_malformed_mtx_names_the_line(tmp_path, text, message):
    f = tmp_path / "bad.mtx"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_mtx(f)


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_code(tmp_path):
    (tmp_path / "ind.x.graph").write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(ValueError, match="global posix.system is not allowed|global os.system is not allowed"):
        load_planetoid(tmp_path, "x")


def test_restricted_unpickler_reads_a_planetoid_style_dict(tmp_path):
    from collections import defaultdict

    d = defaultdict(list, {0: [1, 2], 1: [0], 2: [0, 2], 3: []})
    (tmp_path / "ind.toy.graph").write_bytes(pickle.dumps(d, protocol=2))
    g = load_planetoid(tmp_path, "toy")
    assert (g.n, g.m, g.report.self_loops) == (4, 2, 1)
    assert issubclass(RestrictedUnpickler, pickle.Unpickler)


def test_load_graph_errors_name_the_valid_forms(tmp_path):
    with pytest.raises(ValueError, match="neither a dataset .* a synthetic spec"):
        load_graph("not-a-graph")
    with pytest.raises(ValueError, match="not a valid synthetic spec"):
        load_graph("er-10")
    with pytest.raises(FileNotFoundError, match="graph file .* not found"):
        load_graph(str(tmp_path / "missing.mtx"))
    with pytest.raises(FileNotFoundError, match="dataset 'karate'"):
        load_graph("karate", data_dir=tmp_path)


@pytest.mark.parametrize("n, p", [(200, 0.05), (50, 0.5), (30, 1.0), (30, 0.0)])
def test_erdos_renyi_is_seeded_and_has_the_expected_density(n, p):
    g, h = erdos_renyi(n, p, seed=5), erdos_renyi(n, p, seed=5)
    assert np.array_equal(g.indices, h.indices)
    pairs = n * (n - 1) / 2
    # binomial(pairs, p): 5 standard deviations (+1 for p in {0, 1}) make a false failure negligible
    assert abs(g.m - p * pairs) <= 5 * (pairs * p * (1 - p)) ** 0.5 + 1
    assert g.report.duplicates == 0 and g.report.self_loops == 0


def test_rmat_is_skewed_and_grid_is_exact():
    g = rmat(12, 8, seed=0)
    assert g.n == 4096 and g.max_degree > 10 * 2 * g.m / g.n
    assert g.report.self_loops + g.report.duplicates > 0
    gr = grid(4, 5)
    assert gr.m == 4 * 4 + 3 * 5 and nx.is_isomorphic(gr.to_networkx(), nx.grid_2d_graph(4, 5))
    assert from_spec("grid-4-5").m == gr.m and from_spec("rmat-6-4-3").n == 64


def test_from_networkx_round_trip():
    G = nx.karate_club_graph()
    g = from_networkx(G)
    assert (g.n, g.m) == (34, 78) and sum(nx.triangles(G).values()) // 3 == 45


@pytest.mark.parametrize(
    "name, n, m",
    [
        ("karate", 34, 78),
        ("wiki-vote", 7115, 100762),
        ("planetoid-citeseer", 3327, 4552),
        ("planetoid-cora", 2708, 5278),
        ("planetoid-pubmed", 19717, 44324),
    ],
)
def test_shared_datasets_have_their_published_sizes(shared_data, name, n, m):
    g = load_graph(name, data_dir=shared_data)
    assert (g.n, g.m) == (n, m)
    if name.startswith("planetoid"):
        assert g.labels is not None and g.labels.max() >= 2
