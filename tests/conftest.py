"""Shared test setup: the real datasets lie in ../shared/data (never copied into the project)."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

if SHARED_DATA.is_dir():
    os.environ.setdefault("WORKBENCH_DATA", str(SHARED_DATA))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA
