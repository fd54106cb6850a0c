"""A fresh clone without the shared data folder, offline: the fast lane passes, and every test that needs a
dataset skips with the registry's reason (one rule: ``DatasetMissing`` -> skip, in ``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
#: the test folders whose kernels, panels and examples read datasets (graphs, matrices, Planetoid, Criteo-like)
DATA_READERS = ["tests/graphs", "tests/recsys", "tests/solvers", "tests/data", "tests/test_readme_examples.py"]


def test_fast_lane_of_the_data_readers_passes_without_the_data_folder(tmp_path):
    env = {**os.environ, "WORKBENCH_DATA": str(tmp_path / "no-data-here"), "WORKBENCH_DATA_AUTOFETCH": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-m", "not slow", "-p", "no:cacheprovider", *DATA_READERS],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    tail = done.stdout[-3000:]
    assert done.returncode == 0, f"the fast lane failed without data:\n{tail}"
    assert " skipped" in tail.splitlines()[-1], f"no test skipped for want of data:\n{tail}"
