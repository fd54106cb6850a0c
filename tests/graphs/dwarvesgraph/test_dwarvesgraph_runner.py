"""``workbench run pattern-count``: schema, engines, errors, and the published counts on the shared data.

References: the published triangle counts (Wiki-Vote 608,389, GraphPi's ``Wiki_Vote_tri_cnt``; karate 45,
LAGraph), ``networkx.triangles``, closed forms computed here with numpy/scipy independently of the
engines (3-star: sum C(d, 3); 4-path: sum over edges (d_u - 1)(d_v - 1) - 3 triangles; 4-cycle:
sum over vertex pairs C(c_uv, 2) / 2 with c = A^2), and subset enumeration for karate's 4-motifs."""

import json
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from graph_oracles import census_count, nx_graph, nx_pattern, vertex_census

from workbench.cli import main
from workbench.graphs.dwarvesgraph.config import ENGINES, DwarvesGraphConfig
from workbench.graphs.dwarvesgraph.runner import TECHNIQUE, format_table, run
from workbench.graphs.engines import engine_names
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import motifs, parse_pattern
from workbench.registry import get_technique


def test_pattern_json_has_the_issue_schema():
    out = run(DwarvesGraphConfig(graph="grid-4-4", pattern="4-cycle")).to_json()
    assert {"technique", "graph", "pattern", "induced", "count", "plan", "seconds"} <= set(out)
    assert out["technique"] == "pattern-count" and out["count"] == 9 and out["induced"] == "edge"
    assert json.loads(json.dumps(out)) == out
    assert "9" in format_table(out)


def test_motifs_json_lists_every_pattern():
    out = run(DwarvesGraphConfig(graph="grid-4-4", motifs=4, induced="vertex")).to_json()
    assert [c["pattern"] for c in out["counts"]] == [p.label for p in motifs(4)]
    by = {c["pattern"]: c["count"] for c in out["counts"]}
    # 4 inner vertices of degree 4 give C(4, 3) stars each, 8 side vertices of degree 3 one each
    assert by["4-cycle"] == 9 and by["3-star"] == 4 * 4 + 8 * 1 and by["4-clique"] == 0
    assert "4-cycle" in format_table(out)


def test_registry_and_cli(capsys):
    assert get_technique("pattern-count") is TECHNIQUE and get_technique("dwarvesgraph").name == "dwarvesgraph"
    assert main(["run", "pattern-count", "--graph", "grid-3-3", "--pattern", "0-1,1-2,2-3,3-0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 4


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pattern", "0-1,2-3"], "is not connected"),
        (["--graph", "no-such-graph"], "graph='no-such-graph' is neither a dataset"),
        (["--motifs", "2"], "motifs=2 is out of range"),
        (["--induced", "both"], "induced='both' is not allowed"),
    ],
)
def test_cli_errors_exit_2_with_a_message(capsys, args, message):
    base = ["run", "pattern-count", "--graph", "grid-3-3", "--pattern", "triangle"]
    assert main(base + args) == 2
    assert message in capsys.readouterr().err


def test_engines_register_themselves_and_match_the_config_choices():
    assert set(engine_names()) == set(ENGINES) == {"decompose", "enumerate", "kudu"}


def test_kudu_engine_counts_like_the_single_process_engines():
    kudu = run(DwarvesGraphConfig(graph="grid-4-4", pattern="4-cycle", engine="kudu", workers=2)).to_json()
    assert kudu["count"] == run(DwarvesGraphConfig(graph="grid-4-4", pattern="4-cycle")).count == 9


def test_wiki_vote_triangles_and_karate(shared_data):
    wiki = run(DwarvesGraphConfig(graph="wiki-vote", pattern="triangle", data_dir=str(shared_data))).to_json()
    assert wiki["count"] == 608_389
    karate = load_graph("karate", data_dir=shared_data)
    assert (
        Miner(karate).count(parse_pattern("triangle")).count
        == 45
        == sum(nx.triangles(karate.to_networkx()).values()) // 3
    )


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_karate_four_motifs_equal_subset_enumeration(shared_data):
    g = load_graph("karate", data_dir=shared_data)
    census = vertex_census(nx_graph(g), 4)
    m = Miner(g)
    for p in motifs(4):
        assert m.count(p, "vertex").count == census_count(census, nx_pattern(p.edges, 4)), p.label


def _closed_forms(g):
    d = g.degrees.astype(np.int64)
    tri = sum(nx.triangles(g.to_networkx()).values()) // 3
    e = g.edges()
    a = sp.csr_matrix((np.ones(2 * g.m), g.indices, g.indptr), shape=(g.n, g.n))
    c = (a @ a).tocoo()
    off = c.row < c.col
    c4 = int(sum(math.comb(int(x), 2) for x in c.data[off])) // 2
    return {
        "triangle": tri,
        "3-star": int(sum(math.comb(int(x), 3) for x in d)),
        "4-path": int(((d[e[:, 0]] - 1) * (d[e[:, 1]] - 1)).sum()) - 3 * tri,
        "4-cycle": c4,
    }


@pytest.mark.parametrize("name", ["planetoid-citeseer", pytest.param("wiki-vote", marks=pytest.mark.slow)])
def test_real_graphs_edge_counts_equal_closed_forms(shared_data, name):
    g = load_graph(name, data_dir=shared_data)
    m = Miner(g, workers=2)
    for pattern, expected in _closed_forms(g).items():
        assert m.count(parse_pattern(pattern)).count == expected, pattern


def test_citeseer_vertex_induced_four_motifs_engines_agree(shared_data):
    g = load_graph("planetoid-citeseer", data_dir=shared_data)
    dec = Miner(g).motif_counts(4, "vertex", "decompose")
    enu = Miner(g).motif_counts(4, "vertex", "enumerate")
    assert [r.count for r in dec] == [r.count for r in enu]


# The JSON keys scripts depend on, in order, for each shape of the output, as printed before the result became
# typed (saved from ``workbench run pattern-count --graph karate ... --json``).
HEAD = ["technique", "graph", "induced", "engine", "workers", "graph_info", "load_seconds"]
SHAPES = {
    "pattern": (
        dict(pattern="triangle"),
        HEAD
        + [
            "pattern",
            "pattern_edges",
            "count",
            "plan",
            "seconds",
            "compile_seconds",
            "plan_seconds",
            "predicted_seconds",
            "steps",
        ],
    ),
    "motifs": (
        dict(motifs=4),
        HEAD + ["motifs", "counts", "count", "plan", "seconds", "compile_seconds", "plan_seconds", "kernel_seconds"],
    ),
    "kudu pattern": (
        dict(pattern="4-cycle", engine="kudu", workers=2),
        HEAD + ["pattern", "pattern_edges", "count", "plan", "seconds", "launch_seconds", "kudu"],
    ),
    "kudu motifs": (
        dict(motifs=3, engine="kudu", workers=2),
        HEAD + ["motifs", "counts", "count", "plan", "seconds", "compile_seconds", "plan_seconds"],
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_typed_result_keeps_the_json_keys(shared_data, shape):
    from workbench.graphs.dwarvesgraph.runner import PatternCountResult

    params, keys = SHAPES[shape]
    result = run(DwarvesGraphConfig(graph="karate", **params))
    assert isinstance(result, PatternCountResult)
    out = json.loads(json.dumps(result.to_json()))
    assert list(out) == keys and out["technique"] == "pattern-count"
    assert out["graph_info"] == {
        "name": "karate",
        "vertices": 34,
        "edges": 78,
        "max_degree": 17,
        "dropped_self_loops": 0,
        "dropped_duplicate_edges": 0,
    }
    if "steps" in out:
        assert out["count"] == 45 and [list(s) for s in out["steps"]] == [
            ["pattern", "plan", "inj", "seconds", "predicted_seconds", "compile_seconds"]
        ] * len(out["steps"])
    if "counts" in out:
        assert all(list(c) == ["pattern", "edges", "count", "plan"] for c in out["counts"])
        assert out["count"] == sum(c["count"] for c in out["counts"])
    assert format_table(out)


def test_smoke_parameters_run_and_round_trip(shared_data):
    assert dict(TECHNIQUE.smoke) == {"graph": "karate", "pattern": "triangle"} and not TECHNIQUE.processes
    out = TECHNIQUE.run_dict(TECHNIQUE.smoke)
    assert json.loads(json.dumps(out)) == out and out["count"] == 45
