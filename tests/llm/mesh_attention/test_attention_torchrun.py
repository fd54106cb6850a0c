"""The check under ``torchrun`` (``python -m torch.distributed.run``), two CPU processes.

Reference: float64 SDPA on the whole sequence (errors) and ``volume.py`` (bytes), as reported on rank 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_torchrun_entry_prints_one_json_report() -> None:
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "workbench.llm.mesh_attention.torchrun_entry",
        "--seq",
        "21",
        "--heads",
        "2",
        "--head-dim",
        "4",
        "--causal",
    ]
    # own process group, so a hung run can be killed with its workers
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 0, stderr[-2000:]
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1  # only rank 0 prints
    report = json.loads(lines[0])
    assert report["world_size"] == 2 and report["backend"] == "gloo"
    assert [r["method"] for r in report["results"]] == ["ring", "ulysses", "usp", "mesh", "node_mesh"]
    for res in report["results"]:
        assert res["max_abs_err_out"] <= 1e-10 and res["max_abs_err_grad"] <= 1e-10
        assert res["bytes_per_rank"] == res["model_bytes_per_rank"]
