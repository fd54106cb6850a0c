"""Kudu's study layer without ipywidgets.

Reference: the single-process engine (``enumerate.count``), the model functions called directly and
hand-built rows for the pure helpers (pick, ratios).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import require_shared_data
from workbench.graphs.enumerate import count
from workbench.graphs.kudu import study
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.model import project_all
from workbench.graphs.loaders import load_graph
from workbench.graphs.patterns import parse_pattern


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_study_imports_no_ui() -> None:
    code = (
        "import sys, workbench.graphs.kudu.study; "
        "assert not {'ipywidgets', 'plotly', 'widgets'} & set(sys.modules), 'UI imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def row(strategy: str, chunk: int, **values) -> dict:
    base = {
        "strategy": strategy,
        "chunk_size": chunk,
        "bytes": 10,
        "messages": 10,
        "peak_embeddings": 10,
        "seconds": 1.0,
        "workers": 2,
    }
    return {**base, **values}


def test_pick_takes_one_run_per_strategy_nearest_chunk() -> None:
    rows = [row("hybrid", 4), row("hybrid", 64), row("naive", 64), row("bfs", 1), row("dfs", 1)]
    assert [(r["strategy"], r["chunk_size"]) for r in study.pick(rows, 64)] == [
        ("dfs", 1),
        ("bfs", 1),
        ("naive", 64),
        ("hybrid", 64),
    ]
    assert study.pick(rows, 8)[-1]["chunk_size"] == 4


def test_headline_ratios() -> None:
    rows = [
        row("dfs", 1, messages=50, seconds=4.0),
        row("bfs", 1, peak_embeddings=30),
        row("naive", 16, bytes=20),
        row("hybrid", 16, bytes=0, messages=10, peak_embeddings=10, seconds=2.0),
    ]
    r = study.headline_ratios(rows, 16)
    assert r == {
        "naive_over_hybrid_bytes": float("inf"),
        "dfs_over_hybrid_messages": 5.0,
        "bfs_over_hybrid_peak_embeddings": 3.0,
        "dfs_over_hybrid_seconds": 2.0,
    }


@pytest.fixture(scope="module")
def measured():
    require_shared_data()
    study.clear_caches()
    config = KuduConfig(graph="karate", pattern="triangle", workers=2, chunk_size=16)
    assert study.measured_rows(config) is None
    assert study.kudu_view(config).rows is None  # nothing runs for a view
    return config, study.measure(config)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_measure_is_memoised_per_setting(measured) -> None:
    config, rows = measured
    assert {r["count"] for r in rows} == {45}
    assert study.measure(config) is rows and study.measured_rows(config) is rows
    # the chunk size, strategy and model pick and price rows; they do not re-measure
    assert study.measured_rows(config.replace(chunk_size=256, strategy="dfs", model_machines=8)) is rows
    assert study.measured_rows(config.replace(workers=3)) is None
    assert study.measured_rows(config.replace(data_dir="/nonexistent-data")) is None  # keyed by the data directory


def test_view_prices_the_chosen_runs_on_the_config_cluster(measured) -> None:
    config, rows = measured
    cfg = config.replace(model_machines=32, **{"cluster.inter_node_bw_gbps": 1.25})
    view = study.kudu_view(cfg)
    expected = project_all([r["measured"] for r in study.pick(rows, 16)], cfg.model_edges, cfg.cluster, 32)
    assert [p.seconds for p in view.projections] == [p.seconds for p in expected]
    assert view.ratios == study.headline_ratios(rows, 16) and len(view.chosen) == 4
    series = study.scaling_projections(rows, 16, 1e10, cfg.cluster, [8, 64])
    assert set(series) == {"dfs", "bfs", "naive", "hybrid", "replicated"} and all(len(v) == 2 for v in series.values())


def test_clear_caches(measured) -> None:
    config, _ = measured
    study.clear_caches()
    assert study.measured_rows(config) is None


def test_check_counts_equal_the_single_process_engine(shared_data) -> None:
    g = load_graph("karate")
    rows = study.check_counts(g, ["triangle"], [1, 2])
    assert [(r["pattern"], r["induced"]) for r in rows] == [("triangle", "edge"), ("triangle", "vertex")]
    assert all(r["equal"] and r["reference"] == count(g.by_degree(), parse_pattern("triangle")).count for r in rows)
