"""Type checking: mypy on the files and settings of pyproject's ``[tool.mypy]`` (``workbench/``), in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)  # mypy reads pyproject.toml and resolves `files` from the working directory
    # the default .mypy_cache (gitignored) keeps a rerun incremental: ~10 s instead of ~1 min
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, f"mypy found errors:\n{stdout}{stderr}"
