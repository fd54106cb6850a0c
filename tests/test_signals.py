"""A user's signal in the middle of any run leaves nothing behind (issue #29's contract).

Each technique runs at its smoke settings as ``python -m workbench run NAME ...`` in a session of its own, with
its cache, temporary and working folders in a fresh directory; SIGTERM or SIGINT arrives at a seeded random
point. The command must end within a minute with 0 (it had finished), 130 (SIGINT) or 143 (SIGTERM), print no
traceback, and leave no process of its session, no temporary file and no half-written cache entry.
(``tests/test_faults.py`` covers SIGKILL and SIGSTOP of a worker process.)
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.registry import catalogue, get_technique

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = [e.name for e in catalogue() if e.status == "ready"]
#: names of what a stopped run may have left half done
DEBRIS = (".tmp", ".partial", ".lock")


def _smoke_argv(name: str) -> list[str]:
    technique = get_technique(name)
    specs = {s.name: s for s in technique.config.specs()}
    argv: list[str] = []
    for key, value in technique.smoke.items():
        spec = specs[key]
        if spec.type is bool:
            argv.append(spec.flag if value else "--no-" + spec.flag[2:])
        else:
            argv.append(f"{spec.flag}={value}")
    return argv


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _printed_a_result(out: str) -> bool:
    """Whether the command printed its whole result (the table or the JSON), i.e. it had finished its work."""
    return bool(out.strip())


def _session_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("name", READY)
def test_a_signal_mid_run_leaves_nothing_behind(name, tmp_path):
    rng = random.Random(name)  # a seeded "random point": the same for a technique on every run
    sig = (signal.SIGTERM, signal.SIGINT)[READY.index(name) % 2]
    delay = rng.uniform(2.0, 6.0)  # after the imports (about 2 s), inside the run
    cache, tmp, cwd = tmp_path / "cache", tmp_path / "tmp", tmp_path / "cwd"
    for d in (cache, tmp, cwd):
        d.mkdir()
    env = {
        **os.environ, "WORKBENCH_CACHE": str(cache), "TMPDIR": str(tmp), "PYTHONPATH": str(REPO_ROOT),
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "torchinductor"),  # torch's own compile cache, kept by design
    }  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", name, *_smoke_argv(name)],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    time.sleep(delay)
    finished_first = proc.poll() is not None
    if not finished_first:
        proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    case = f"workbench run {name} stopped by {sig.name} after {delay:.1f} s"
    expected = {0, 2} if finished_first else {0, 128 + sig, 130}
    if proc.returncode == -sig and _printed_a_result(out):
        expected.add(-sig)  # the run had finished: the signal met the interpreter's teardown (handlers reset)
    assert proc.returncode in expected, f"{case}: exit {proc.returncode}: {err[-1500:]}"
    assert "Traceback" not in err, f"{case}: printed a traceback: {err[-1500:]}"
    deadline = time.monotonic() + 10
    while _session_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _session_alive(proc.pid), f"{case}: processes of the run are still alive"
    assert not _files(tmp), f"{case}: left temporary files: {sorted(_files(tmp))[:10]}"
    debris = [p for p in _files(cache) | _files(cwd) if p.endswith(DEBRIS) or Path(p).name.startswith("run-")]
    assert not debris, f"{case}: left half-written files: {debris[:10]}"


def test_a_report_stopped_by_sigterm_says_so_in_one_line(tmp_path):
    """`workbench report` under `timeout`: nbclient shuts its kernel down on SIGTERM itself; the command says so
    in one line (no nbclient traceback), writes no report and leaves no kernel behind."""
    out = tmp_path / "report.html"
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "report", str(REPO_ROOT / "notebooks/quantum/devices.ipynb"), "--out",
         str(out)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    time.sleep(12)  # the kernel is up and executing
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (1, 143), err[-1500:]
    assert "Traceback" not in err and err.strip().startswith("error:"), err[-1500:]
    assert len(err.strip().splitlines()) == 1, err[-1500:]
    assert not out.exists()
    deadline = time.monotonic() + 10
    while _session_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _session_alive(proc.pid), "the notebook's kernel is still alive"


def test_a_run_that_outlives_its_timeout_leaves_nothing_behind(tmp_path):
    """``--timeout-s`` bounds the whole run: the command exits 2 with one line naming the flag, and the workers,
    temporary files and cache entries go as after SIGTERM (mesh-attention's check: gloo worker processes)."""
    cache, tmp = tmp_path / "cache", tmp_path / "tmp"
    cache.mkdir()
    tmp.mkdir()
    env = {**os.environ, "WORKBENCH_CACHE": str(cache), "TMPDIR": str(tmp), "PYTHONPATH": str(REPO_ROOT)}
    argv = ["--mode=check", "--gpus=4", "--seq=2048", "--heads=8", "--head-dim=64", "--timeout-s=2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", "mesh-attention", *argv],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip() and not ln.startswith("progress:")]
    assert proc.returncode == 2, err[-1500:]
    assert "Traceback" not in err and len(lines) == 1, err[-1500:]
    assert "--timeout-s=2" in lines[0] or "timeout_s=2" in lines[0], lines[0]
    deadline = time.monotonic() + 10
    while _session_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _session_alive(proc.pid), "worker processes of the run are still alive"
    assert not _files(tmp), f"left temporary files: {sorted(_files(tmp))[:10]}"
    debris = [p for p in _files(cache) if p.endswith(DEBRIS) or Path(p).name.startswith("run-")]
    assert not debris, f"left half-written files: {debris[:10]}"
