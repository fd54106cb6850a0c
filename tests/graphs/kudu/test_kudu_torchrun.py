"""Kudu under ``torchrun`` (``python -m torch.distributed.run``), two CPU processes.

Reference: the published karate house count from the single-process engine (781) and the karate triangle
count (45).
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
def test_torchrun_entry_prints_one_json_line(shared_data) -> None:
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "workbench.graphs.kudu.torchrun_entry",
        "--graph",
        "karate",
        "--pattern",
        "house",
        "--chunk-size",
        "16",
        "--data-dir",
        str(shared_data),
    ]
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
    assert (report["world_size"], report["backend"], report["count"]) == (2, "gloo", 781)
    assert report["measured"]["messages"] > 0
