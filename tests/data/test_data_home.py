"""Where the data lies and how a missing dataset arrives: one resolution for every command, fetch on first use.

Reference: scikit-learn's ``get_data_home`` order (explicit, environment, a folder beside the checkout, a
per-user folder); a local ``http.server`` on 127.0.0.1 serving the shared data folder as a mirror (never the
network); the published karate triangle count (45).
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from workbench.data import registry

REPO_ROOT = Path(__file__).resolve().parents[2]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def mirror(shared_data: Path) -> Iterator[str]:
    """Base URL of a local HTTP server serving the shared data folder (an institution's mirror)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(shared_data)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_resolution_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(registry, "BESIDE_CHECKOUT", tmp_path / "beside")
    monkeypatch.setattr(registry, "PROJECT_ROOT", tmp_path / "checkout")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home"))
    root, how = registry.resolve_data_dir()
    assert root == tmp_path / "home" / "research-workbench" / "data" and how == "the per-user data folder"
    (tmp_path / "checkout" / "data" / "graphs").mkdir(parents=True)
    (tmp_path / "checkout" / "data" / "graphs" / "karate.mtx").write_text("x")
    assert registry.resolve_data_dir() == (tmp_path / "checkout" / "data", "the project's data/ folder")
    (tmp_path / "beside").mkdir()
    assert registry.resolve_data_dir()[0] == tmp_path / "beside"
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "env"))
    assert registry.resolve_data_dir()[0] == tmp_path / "env"
    assert registry.resolve_data_dir(tmp_path / "arg")[0] == tmp_path / "arg"


def test_cache_dir_is_per_user_and_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WORKBENCH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = registry.cache_dir("quest")
    assert path == tmp_path / "cache" / "research-workbench" / "quest" and path.is_dir()


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO_ROOT,
    )


@pytest.mark.slow
def test_readme_example_fetches_its_dataset_from_a_mirror_on_first_use(mirror: str, tmp_path: Path) -> None:
    empty = tmp_path / "fresh-data"
    env = {**os.environ, "WORKBENCH_DATA": str(empty), "WORKBENCH_DATA_MIRROR": mirror, "WORKBENCH_DATA_AUTOFETCH": "1"}
    proc = _run(["run", "dwarvesgraph", "--graph", "karate", "--pattern", "triangle", "--json"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["count"] == 45
    assert (empty / "graphs" / "karate.mtx").is_file()
    assert registry.verify("karate", empty) == {f: "ok" for f in registry.verify("karate", empty)}
    again = _run(["run", "dwarvesgraph", "--graph", "karate", "--pattern", "triangle", "--json"], env)
    assert again.returncode == 0 and "downloading" not in again.stderr


@pytest.mark.slow
def test_offline_gives_one_line_naming_the_fetch_command(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "WORKBENCH_DATA": str(tmp_path / "empty"),
        "WORKBENCH_DATA_MIRROR": "http://127.0.0.1:9",
        "WORKBENCH_DATA_AUTOFETCH": "1",
    }
    proc = _run(["run", "dwarvesgraph", "--graph", "karate", "--json"], env)
    assert proc.returncode == 2
    error = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "workbench data fetch karate" in error[0] and "Traceback" not in proc.stderr
