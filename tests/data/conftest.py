"""Fixtures for the data-registry tests: the shared data folder (skipped when absent) and a
clean ``WORKBENCH_DATA``.

Reference: the shared data folder ``../shared/data`` beside the checkout (its README and
``../shared/papers/README.md``, section "Data").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA


@pytest.fixture(autouse=True)
def _no_data_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without WORKBENCH_DATA, so the developer's setting cannot leak in."""
    monkeypatch.delenv("WORKBENCH_DATA", raising=False)


@pytest.fixture
def shared_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared data folder, also set as WORKBENCH_DATA; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    monkeypatch.setenv("WORKBENCH_DATA", str(SHARED_DATA))
    return SHARED_DATA
