"""Shared test setup: the real datasets lie in ../shared/data (never copied into the project); test lanes.

Lanes: ``pytest -m "not slow"`` is the fast lane (unit tests). A test is ``slow`` when it is marked so (a file
that starts worker processes, executes notebooks or runs the benchmarks sets ``pytestmark = pytest.mark.slow``)
or when it drives a browser (``browser``).
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


def pytest_collection_modifyitems(config, items):
    for item in items:  # a browser test is a slow test
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA
