"""DwarvesGraph's study layer without ipywidgets (reference: the miner and cost model called directly, the
networkx motif census via brute force in ``tests/graphs/graph_oracles.py`` is covered by the engine tests)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.graphs.cost_model import GraphStats, plan_cost, predict_seconds
from workbench.graphs.dwarvesgraph import study
from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import parse_pattern


def test_study_imports_no_ui() -> None:
    code = (
        "import sys, workbench.graphs.dwarvesgraph.study; "
        "assert not {'ipywidgets', 'plotly', 'widgets'} & set(sys.modules), 'UI imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize(
    "family, log2n, spec",
    [
        ("synthetic: R-MAT", 11, "rmat-11-8"),
        ("synthetic: Erdos-Renyi", 9, "er-512-0.0157"),
        ("synthetic: grid", 8, "grid-16-16"),
    ],
)
def test_synthetic_spec_and_family(family: str, log2n: int, spec: str) -> None:
    assert study.synthetic_spec(family, log2n) == spec
    assert study.synthetic_family(spec) == family


def test_view_plans_and_sweeps_without_running_a_kernel() -> None:
    config = DwarvesGraphConfig(graph="rmat-9-8", pattern="house")
    view = study.dwarves_view(config)
    miner = Miner(load_graph("rmat-9-8").by_degree(), ordered=True)
    assert [c.describe() for c in view.candidates] == [c.describe() for c in miner.candidates(parse_pattern("house"))]
    assert view.chosen is view.candidates[0]
    sizes, secs = view.sweep["enumerate"]
    assert sizes == [1 << s for s in study.SIZES] and all(b > a for a, b in zip(secs, secs[1:]))
    best = view.best("enumerate")
    stats = GraphStats.of(load_graph(study.synthetic_spec("synthetic: R-MAT", study.SIZES[0])).by_degree())
    assert secs[0] == pytest.approx(predict_seconds(plan_cost(best.kernel, stats)), rel=1e-12)
    assert view.transform == []
    assert study.dwarves_view(config.replace(induced="vertex")).transform  # V = sum c_q E(q)


def test_view_is_memoised_per_data_directory_and_cleared(tmp_path, shared_data) -> None:
    study.clear_caches()
    config = DwarvesGraphConfig(graph="karate", pattern="triangle")
    study.dwarves_view(config)
    study.dwarves_view(config)
    assert study._analysis.cache_info().hits == 1
    with pytest.raises(FileNotFoundError):  # another data directory is another key: read from there
        study.dwarves_view(config.replace(data_dir=str(tmp_path)))
    study.clear_caches()
    assert study._analysis.cache_info().currsize == 0


def test_bad_pattern_raises_in_the_config() -> None:
    with pytest.raises(ValueError, match="not connected"):
        study.dwarves_view(DwarvesGraphConfig(graph="rmat-8-8", pattern="0-1,2-3"))


def test_measure_view_counts_with_both_engines_and_motifs() -> None:
    config = DwarvesGraphConfig(graph="rmat-8-8", pattern="tailed-triangle", motifs=3)
    steps = []
    m = study.measure_view(config, progress=steps.append)
    expected = Miner(load_graph("rmat-8-8")).count(parse_pattern("tailed-triangle")).count
    assert steps == [1, 2, 3] and m.count == expected and m.speedup > 0
    assert m.key == ("rmat-8-8", "tailed-triangle", "edge") and len(m.plans) >= 1
    assert [c["pattern"] for c in m.motifs] == [p.label for p in study.motif_list(3)]
    skipped = study.measure_view(config.replace(motifs=0), enumerate_limit_s=0.0)
    assert skipped.engines is None and skipped.count is None and skipped.speedup is None and skipped.motifs == []


def test_layout_and_roles() -> None:
    pos = study.circle_layout(4)
    assert pos.shape == (4, 2) and pos[0].tolist() == pytest.approx([0.0, 1.0])
    miner = Miner(load_graph("rmat-8-8").by_degree())
    choice = next(c for c in miner.candidates(parse_pattern("house")) if c.kind == "decompose")
    roles = study.decomposition_roles(choice)
    assert set(roles) == set(range(5)) and "cut" in roles.values()
    assert study.decomposition_roles(None) == {}
    assert study.motif_list(0) == () and len(study.motif_list(4)) == 6


def test_resolve_graph_falls_back_with_a_note(tmp_path) -> None:
    g, note = study.resolve_graph("wiki-vote", str(tmp_path), fallback="rmat-8-8")
    assert g.name.startswith("rmat") or g.n == 256
    assert "not available" in note


def test_engine_pair_and_networkx_agree_on_karate_triangles(shared_data) -> None:
    g = load_graph("karate")
    pair = study.engine_pair(g, parse_pattern("triangle"))
    nx_count, nx_seconds = study.networkx_triangles(g)
    assert pair["decompose"]["count"] == pair["enumerate"]["count"] == nx_count == 45 and nx_seconds >= 0
