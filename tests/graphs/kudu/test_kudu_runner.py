"""``workbench run kudu``: JSON schema, table, CLI errors, and the pattern-count hook.

Reference: the single-process engine's counts (``enumerate.count``) and the published karate triangle
count (45).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.cli import main
from workbench.graphs.enumerate import count
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.runner import format_table, pattern_count_engine, run
from workbench.graphs.loaders import load_graph
from workbench.graphs.patterns import parse_pattern
from workbench.registry import get_technique


def test_run_schema_and_table(shared_data) -> None:
    out = run(KuduConfig(graph="karate", pattern="triangle", workers=2, chunk_size=8))
    for key in ("technique", "graph", "pattern", "induced", "workers", "strategy", "count", "plan", "seconds",
                "measured", "per_rank", "model", "label"):
        assert key in out
    assert (out["technique"], out["count"], out["completed"]) == ("kudu", 45, True)
    assert len(out["per_rank"]) == 2 and sum(r["count"] for r in out["per_rank"]) == 45
    for key in ("messages", "bytes", "cache_hit_rate", "peak_embeddings", "rounds", "compute_seconds"):
        assert key in out["measured"]
    assert "MODEL" in out["model"]["label"] and out["model"]["projection"]["strategy"] == "hybrid"
    table = format_table(out)
    assert "count: 45" in table and "MODEL 1e+11 edges on 256 machines" in table
    json.dumps(out)  # the CLI prints it


@pytest.mark.parametrize("strategy", ["dfs", "bfs", "naive"])
def test_cli_json_counts_vertex_induced(shared_data, capsys, strategy: str) -> None:
    assert main(["run", "kudu", "--graph", "karate", "--pattern", "diamond", "--induced", "vertex",
                 "--workers", "3", "--strategy", strategy, "--partition", "range", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    g = load_graph("karate").by_degree()
    assert out["count"] == count(g, parse_pattern("diamond"), "vertex").count
    assert out["strategy"] == strategy and out["workers"] == 3


def test_one_worker_has_no_model(shared_data) -> None:
    out = run(KuduConfig(graph="karate", pattern="4-cycle", workers=1))
    assert out["measured"]["messages"] == 0 and "workers >= 2" in out["model"]["error"]
    assert "MODEL: the model needs" in format_table(out)


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "workers=0 is out of range: valid range is 1..16 (processes)"),
    (["--strategy", "greedy"], "strategy='greedy' is not allowed: valid values are one of 'hybrid', 'dfs', 'bfs', 'naive'"),
    (["--pattern", "0-1,2-3"], "pattern='0-1,2-3' is not connected"),
    (["--chunk-size", "0"], "chunk_size=0 is out of range"),
    (["--graph", "missing/graph.txt"], "graph file missing/graph.txt not found"),
])
def test_cli_errors_exit_2_with_message(capsys, args, message) -> None:
    assert main(["run", "kudu", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_error_in_a_fresh_process_has_no_traceback() -> None:
    result = subprocess.run([sys.executable, "-m", "workbench.cli", "run", "kudu", "--cache-kb", "-1"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "cache_kb=-1 is out of range" in result.stderr and "Traceback" not in result.stderr


def test_registry_and_pattern_count_hook(shared_data) -> None:
    tech = get_technique("kudu")
    assert tech.config is KuduConfig and tech.notebook == "notebooks/graphs/kudu.ipynb"

    class Cfg:  # the fields the pattern-count runner's config passes
        induced, workers = "edge", 2

    out = pattern_count_engine(load_graph("karate"), parse_pattern("house"), Cfg())
    assert out["count"] == 781 and "kudu hybrid, P=2" in out["plan"] and out["kudu"]["messages"] > 0
