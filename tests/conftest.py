"""Shared test setup: the real datasets lie in ../shared/data (never copied into the project); test lanes.

Lanes: ``pytest -m "not slow"`` is the fast lane (unit tests). A test is ``slow`` when it is marked so (a file
that starts worker processes, executes notebooks or runs the benchmarks sets ``pytestmark = pytest.mark.slow``)
or when it drives a browser (``browser``).
"""

import os
from pathlib import Path

import pytest

from workbench.data import DatasetMissing

REPO_ROOT = Path(__file__).resolve().parents[1]
#: the data folder tests read: WORKBENCH_DATA when set (a run "without data" points it at an empty folder),
#: else the checkout's shared copy
SHARED_DATA = Path(os.environ.get("WORKBENCH_DATA") or REPO_ROOT.parent / "shared" / "data")

if SHARED_DATA.is_dir():
    os.environ.setdefault("WORKBENCH_DATA", str(SHARED_DATA))
# tests never reach the network: a missing dataset fails at once (tests of the download set their own mirror)
os.environ.setdefault("WORKBENCH_DATA_AUTOFETCH", "0")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """One rule for every test that needs a dataset: a dataset that is neither present nor fetchable
    (``DatasetMissing``, raised by the registry) skips the test with the registry's reason, in setup or call."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and call.excinfo.errisinstance(DatasetMissing) and report.failed:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {str(call.excinfo.value).splitlines()[0]}")


def pytest_collection_modifyitems(config, items):
    for item in items:  # a browser test is a slow test
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


def require_shared_data() -> Path:
    """The shared data folder, or skip the test (any scope) when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture
def shared_data() -> Path:
    return require_shared_data()
