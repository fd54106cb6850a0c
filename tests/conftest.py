"""Shared test setup: the real datasets lie in ../shared/data (never copied into the project); test lanes.

Lanes: ``pytest -m "not slow"`` is the fast lane (unit tests). A test is ``slow`` when it is marked so, when it
drives a browser (``browser``), or when its file starts worker processes, executes notebooks or runs the
benchmarks (the files in :data:`SLOW_FILES`).
"""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

if SHARED_DATA.is_dir():
    os.environ.setdefault("WORKBENCH_DATA", str(SHARED_DATA))
# tests never reach the network: a missing dataset fails at once (tests of the download set their own mirror)
os.environ.setdefault("WORKBENCH_DATA_AUTOFETCH", "0")


#: files whose tests start worker processes or subprocesses, execute notebooks or run benchmarks
SLOW_FILES = {
    "tests/distributed/test_distributed_comm.py",
    "tests/distributed/test_distributed_launch.py",
    "tests/graphs/kudu/test_kudu_counts.py",
    "tests/graphs/kudu/test_kudu_measures.py",
    "tests/graphs/kudu/test_kudu_runner.py",
    "tests/graphs/kudu/test_kudu_torchrun.py",
    "tests/llm/mesh_attention/test_attention_errors.py",
    "tests/llm/mesh_attention/test_attention_kernels.py",
    "tests/llm/mesh_attention/test_attention_mesh.py",
    "tests/llm/mesh_attention/test_attention_torchrun.py",
    "tests/llm/mesh_attention/test_attention_volume.py",
    "tests/quantum/devices/test_devices_runner.py",
    "tests/quantum/quest/test_quest_runner.py",
    "tests/solvers/refloat/test_refloat_runner.py",
    "tests/test_benchmarks.py",
    "tests/test_cli.py",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath)).resolve().relative_to(REPO_ROOT).as_posix()
        executes_notebook = path == "tests/test_notebooks.py" and "runs_top_to_bottom" in item.name
        if path in SLOW_FILES or executes_notebook or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA
