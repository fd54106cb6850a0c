"""Two runs started at once on one machine do not collide (rendezvous, temporary folders, compiled-kernel cache).

Each case starts the same command twice at the same moment (two terminals, two notebook kernels) and checks that
both succeed and both are correct. References: float64 SDPA on the whole sequence (the check's own errors, which
must be at rounding level), the counted bytes against the closed-form volume, the counts of the plain
enumeration engine (one process, no cache), and each other (the two runs' results are identical apart from
timings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def run_twice_at_once(args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    command = [sys.executable, "-m", "workbench.cli", "run", *args, "--json"]
    procs = [
        subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env={**os.environ, **(env or {})},
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=600) for proc in procs]
    for proc, (_out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    return [json.loads(out) for out, _ in outputs]


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_two_mesh_attention_checks_at_once() -> None:
    runs = run_twice_at_once(
        [
            "mesh-attention",
            "--mode",
            "check",
            "--gpus",
            "4",
            "--seq",
            "64",
            "--heads",
            "4",
            "--head-dim",
            "8",
            "--causal",
        ]
    )
    for run in runs:
        for method in run["results"]:
            # float64 kernels against a float64 reference over 64 tokens: rounding only (1e-12 is ~5000 ulp)
            assert method["max_abs_err_out"] < 1e-12 and method["max_abs_err_grad"] < 1e-12, method
            assert method["bytes_per_rank"] == method["model_bytes_per_rank"], method
    assert without_timings(runs[0]) == without_timings(runs[1])


def reference_count(graph: str, pattern: str) -> int:
    from workbench.registry import get_technique

    return get_technique("dwarvesgraph").run_dict({"graph": graph, "pattern": pattern, "engine": "enumerate"})["count"]


@pytest.mark.parametrize("pattern", ["triangle", "4-cycle"])
def test_two_kudu_runs_at_once(pattern: str) -> None:
    count = reference_count("karate", pattern)
    runs = run_twice_at_once(["kudu", "--graph", "karate", "--pattern", pattern, "--workers", "3"])
    assert [run["count"] for run in runs] == [count, count]
    assert without_timings(runs[0]["per_rank"]) == without_timings(runs[1]["per_rank"])


def test_two_runs_compile_the_same_kernel_into_a_fresh_cache(tmp_path: Path) -> None:
    # a fresh HOME gives a fresh ~/.cache/workbench/graph-kernels: both processes write and compile the same kernel
    runs = run_twice_at_once(["dwarvesgraph", "--graph", "karate", "--pattern", "4-cycle"], env={"HOME": str(tmp_path)})
    count = reference_count("karate", "4-cycle")
    assert [run["count"] for run in runs] == [count, count]
    cache = tmp_path / ".cache" / "workbench" / "graph-kernels"
    assert list(cache.glob("wbk_*.py")), "the runs compiled no kernel"
    assert not [p.name for p in cache.rglob("*.tmp")]  # no temporary file was left behind
