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

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def test_run_schema_and_table(shared_data) -> None:
    out = run(KuduConfig(graph="karate", pattern="triangle", workers=2, chunk_size=8)).to_json()
    for key in (
        "technique",
        "graph",
        "pattern",
        "induced",
        "workers",
        "strategy",
        "count",
        "plan",
        "seconds",
        "measured",
        "per_rank",
        "model",
        "label",
    ):
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
    assert (
        main(
            [
                "run",
                "kudu",
                "--graph",
                "karate",
                "--pattern",
                "diamond",
                "--induced",
                "vertex",
                "--workers",
                "3",
                "--strategy",
                strategy,
                "--partition",
                "range",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    g = load_graph("karate").by_degree()
    assert out["count"] == count(g, parse_pattern("diamond"), "vertex").count
    assert out["strategy"] == strategy and out["workers"] == 3


def test_one_worker_has_no_model(shared_data) -> None:
    out = run(KuduConfig(graph="karate", pattern="4-cycle", workers=1)).to_json()
    assert out["measured"]["messages"] == 0 and "workers >= 2" in out["model"]["error"]
    assert "MODEL: the model needs" in format_table(out)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--workers", "0"], "workers=0 is out of range: valid range is 1..16 (processes)"),
        (
            ["--strategy", "greedy"],
            "strategy='greedy' is not allowed: valid values are one of 'hybrid', 'dfs', 'bfs', 'naive'",
        ),
        (["--pattern", "0-1,2-3"], "pattern='0-1,2-3' is not connected"),
        (["--chunk-size", "0"], "chunk_size=0 is out of range"),
        (["--graph", "missing/graph.txt"], "graph file missing/graph.txt not found"),
    ],
)
def test_cli_errors_exit_2_with_message(capsys, args, message) -> None:
    assert main(["run", "kudu", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_error_in_a_fresh_process_has_no_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "kudu", "--cache-kb", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "cache_kb=-1 is out of range" in result.stderr and "Traceback" not in result.stderr


def test_registry_and_pattern_count_hook(shared_data) -> None:
    tech = get_technique("kudu")
    assert tech.config is KuduConfig and tech.notebook == "notebooks/graphs/kudu.ipynb"

    class Cfg:  # the fields the pattern-count runner's config passes
        induced, workers = "edge", 2

    out = pattern_count_engine(load_graph("karate"), parse_pattern("house"), Cfg())
    assert out["count"] == 781 and "kudu hybrid, P=2" in out["plan"] and out["kudu"]["messages"] > 0


# The JSON keys scripts depend on, in order, as printed before the result became typed (saved from
# ``workbench run kudu --graph karate --pattern triangle --workers {2,1} --json``).
TOP_KEYS = [
    "technique",
    "graph",
    "pattern",
    "pattern_edges",
    "induced",
    "workers",
    "strategy",
    "chunk_size",
    "cache_kb",
    "graph_info",
    "label",
    "load_seconds",
    "count",
    "completed",
    "plan",
    "partition",
    "seconds",
    "launch_seconds",
    "measured",
    "per_rank",
    "model",
]
RANK_KEYS = [
    "rank",
    "count",
    "owned_vertices",
    "owned_entries",
    "lists_fetched",
    "lists_served",
    "bytes_fetched",
    "cache_hit_rate",
    "peak_embeddings",
    "compute_seconds",
    "sync_seconds",
    "wait_seconds",
    "idle_seconds",
    "seconds",
]
MEASURED_KEYS = [
    "messages",
    "header_messages",
    "rounds",
    "bytes",
    "request_bytes",
    "response_bytes",
    "header_bytes",
    "remote_uses",
    "lists_fetched",
    "entries_fetched",
    "cache_lookups",
    "cache_hits",
    "cache_hit_rate",
    "reuse_rate",
    "cache_peak_bytes",
    "peak_embeddings",
    "peak_set_bytes",
    "partition_bytes",
    "embeddings",
    "chunks",
    "compute_seconds",
    "compute_seconds_total",
    "sync_seconds",
    "wait_seconds",
    "idle_seconds",
    "seconds",
    "load_imbalance",
]
PROJECTION_KEYS = [
    "strategy",
    "edges",
    "machines",
    "compute_seconds",
    "bandwidth_seconds",
    "latency_seconds",
    "seconds",
    "bytes_per_machine",
    "rounds_per_machine",
    "lists_per_machine",
    "hit_rate",
    "partition_bytes",
    "cache_bytes",
    "embedding_bytes",
    "memory_bytes",
    "fits",
    "label",
]


@pytest.mark.parametrize(
    "workers, model_keys",
    [
        (2, ["label", "edges", "cluster", "per_edge", "projection", "replicated"]),
        (1, ["label", "edges", "cluster", "per_edge", "error"]),
    ],
)
def test_typed_result_keeps_the_json_keys(shared_data, workers: int, model_keys: list[str]) -> None:
    from workbench.graphs.kudu.runner import KuduRun

    result = run(KuduConfig(graph="karate", pattern="triangle", workers=workers))
    assert isinstance(result, KuduRun)
    out = json.loads(json.dumps(result.to_json()))
    assert list(out) == TOP_KEYS and out["technique"] == "kudu" and out["count"] == 45
    assert list(out["graph_info"]) == ["vertices", "edges", "max_degree"]
    assert out["graph_info"] == {"vertices": 34, "edges": 78, "max_degree": 17}
    assert [list(r) for r in out["per_rank"]] == [RANK_KEYS] * workers
    assert list(out["measured"]) == MEASURED_KEYS
    assert list(out["model"]) == model_keys
    assert out["model"]["cluster"] == {
        "machines": 256,
        "cores": 32,
        "bandwidth_gbps": 12.5,
        "latency_us": 5.0,
        "memory_gb": 256.0,
    }
    if workers == 2:
        assert list(out["model"]["projection"]) == PROJECTION_KEYS == list(out["model"]["replicated"])
    assert out["plan"] == "order [0, 1, 2], restrictions v0>v1, v0>v2, v1>v2, edge-induced"


def test_old_model_flags_still_set_the_cluster(shared_data, capsys) -> None:
    assert (
        main(
            [
                "run",
                "kudu",
                "--graph",
                "karate",
                "--pattern",
                "triangle",
                "--workers",
                "2",
                "--model-cores",
                "16",
                "--model-bandwidth-gbps",
                "3",
                "--model-latency-us",
                "7",
                "--model-memory-gb",
                "100",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["cluster"] == {
        "machines": 256,
        "cores": 16,
        "bandwidth_gbps": 3.0,
        "latency_us": 7.0,
        "memory_gb": 100.0,
    }
    assert (
        main(
            [
                "run",
                "kudu",
                "--graph",
                "karate",
                "--pattern",
                "triangle",
                "--workers",
                "2",
                "--cluster.cpu-cores",
                "16",
                "--cluster.inter-node-bw-gbps",
                "3",
                "--json",
            ]
        )
        == 0
    )
    new = json.loads(capsys.readouterr().out)["model"]["cluster"]
    assert (new["cores"], new["bandwidth_gbps"]) == (16, 3.0)


def test_smoke_parameters_run_and_round_trip(shared_data) -> None:
    tech = get_technique("kudu")
    assert tech.processes and dict(tech.smoke) == {"graph": "karate", "pattern": "triangle", "workers": 2}
    out = tech.run_dict(tech.smoke)
    assert json.loads(json.dumps(out)) == out and out["count"] == 45
    assert "count: 45" in tech.format_table(out)
