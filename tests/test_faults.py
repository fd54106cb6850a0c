"""Faults of multi-process runs, for every registered technique that starts worker processes (the contract).

Each technique with ``processes=True`` gets its ``smoke`` run from the CLI, with one fault injected through the
launcher's only hook, ``WORKBENCH_FAULT=RANK:SIGNAL:WHEN`` (see ``workbench.distributed.launch``), at a seeded
random rank and communication step:

- SIGKILL (what the kernel's out-of-memory killer sends): one line ``error: worker rank R of P was killed by
  SIGKILL ...`` naming the likely cause and a smaller setting, exit status 1, no traceback, within seconds;
- SIGSTOP (a worker that stops responding, as in a deadlock): the run ends at its ``timeout_s`` (CLI
  ``--timeout-s``, a parameter every multi-process technique has) with one line naming that parameter.

Afterwards no worker process is left, the run's temporary folder is gone (``TMPDIR`` points at a fresh folder)
and no shared-memory segment was added to /dev/shm. Reference: the expected message text, exit status and the
file system. A technique names its process count with a parameter whose unit is "processes" or "GPUs".
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from workbench.registry import catalogue, get_technique

REPO_ROOT = Path(__file__).resolve().parents[1]
MULTI_PROCESS = [e.name for e in catalogue() if e.status == "ready" and get_technique(e.name).processes]
FAULTS = ("SIGKILL", "SIGSTOP")
#: the --timeout-s of the SIGSTOP runs (seconds): short, yet far above a smoke run's few tenths of a second
STOP_TIMEOUT_S = 6
#: shared-memory names torch, gloo or a SharedMemory block would leave behind (multiprocessing's ``sem.mp-*``
#: semaphores are left out: the fork launcher makes none, and spawn pools of other processes on the machine make
#: them at any time)
SHM_PREFIXES = ("torch_", "workbench", "gloo", "psm_")

pytestmark = pytest.mark.slow


def test_every_multi_process_technique_is_covered() -> None:
    assert {"mesh-attention", "kudu"} <= set(MULTI_PROCESS)


def world_size(name: str) -> int:
    """The process count of the technique's smoke run: its one parameter counted in processes (or GPUs)."""
    technique = get_technique(name)
    config = technique.config.from_dict(technique.smoke)
    counts = [s.name for s in technique.config.specs() if s.unit in ("processes", "GPUs") and "." not in s.name]
    assert len(counts) == 1, f"{name}: name the process count with unit='processes' (found {counts})"
    return int(getattr(config, counts[0]))


def cli_args(name: str, params: dict) -> list[str]:
    specs = {s.name: s for s in get_technique(name).config.specs()}
    args = []
    for key, value in params.items():
        flag = specs[key].flag
        if specs[key].type is bool:
            args.append(flag if value else "--no-" + flag[2:])
        else:
            args += [flag, str(value)]
    return args


def _shm() -> set[str]:
    return {p for p in os.listdir("/dev/shm") if p.startswith(SHM_PREFIXES)} if os.path.isdir("/dev/shm") else set()


def _processes_with(marker: str) -> list[int]:
    """Pids whose environment carries ``marker`` (the run's leftover workers, if any)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def run_with_fault(
    name: str, fault: str, tmp_path: Path, extra: dict | None = None
) -> tuple[subprocess.CompletedProcess, float]:
    technique = get_technique(name)
    params = {**technique.smoke, **(extra or {})}
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    marker = f"WORKBENCH_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, "WORKBENCH_FAULT": fault, "TMPDIR": str(tmpdir), marker.split("=")[0]: marker.split("=")[1]}
    shm_before = _shm()
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", name, *cli_args(name, params)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    seconds = time.monotonic() - start
    time.sleep(0.2)
    assert _processes_with(marker) == [], "worker processes outlived the run"
    assert list(tmpdir.iterdir()) == [], f"temporary files left: {list(tmpdir.iterdir())}"
    assert _shm() - shm_before == set(), "shared-memory segments left in /dev/shm"
    return done, seconds


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", MULTI_PROCESS)
def test_killed_or_stopped_worker_gives_one_line(name: str, fault: str, tmp_path: Path) -> None:
    rng = random.Random(f"{name}:{fault}")  # seeded: a failure names the same rank and step on every run
    rank, step = rng.randrange(world_size(name)), rng.randrange(4)
    specs = {s.name for s in get_technique(name).config.specs()}
    assert "timeout_s" in specs, f"{name} starts processes, so it needs a timeout_s parameter (--timeout-s)"
    timeout = STOP_TIMEOUT_S if fault == "SIGSTOP" else 120
    done, seconds = run_with_fault(name, f"{rank}:{fault}:{step}", tmp_path, {"timeout_s": timeout})
    lines = [  # the error's one line; the CLI's progress line (a run estimated over 2 s) is not part of it
        ln for ln in done.stderr.replace("\r", "\n").splitlines() if ln.strip() and not ln.startswith("progress:")
    ]
    assert done.returncode == (2 if fault == "SIGSTOP" else 1), done.stderr  # a timeout is a limit: exit 2
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr  # one line, no traceback
    world = world_size(name)
    if fault == "SIGKILL":
        assert f"worker rank {rank} of {world} was killed by SIGKILL" in lines[0]
        assert "out-of-memory killer" in lines[0] and "try a smaller" in lines[0]
        assert seconds < 60  # start-up (imports, data) dominates; the failure itself is seen within 0.5 s
    else:
        assert (
            f"did not finish within timeout_s={timeout} s: worker rank {rank} of {world} was stopped (SIGSTOP)"
            in lines[0]
        )
        assert "--timeout-s" in lines[0]
        assert timeout <= seconds < timeout + 60
    print(f"{name} {fault} rank {rank} step {step}: {seconds:.1f} s to a clean error: {lines[0]}")


def test_fault_by_seconds_and_bad_fault_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.distributed import WorkerFailed, run_workers
    from workbench.distributed.launch import parse_fault

    assert parse_fault("1:KILL:0.5s")[1:] == (9, 0.5, None) and parse_fault("0:SIGSTOP:3")[2:] == (None, 3)
    with pytest.raises(ValueError, match=r"WORKBENCH_FAULT='1:NOPE:2' is not valid: expected RANK:SIGNAL:WHEN"):
        parse_fault("1:NOPE:2")
    monkeypatch.setenv("WORKBENCH_FAULT", "1:TERM:0.1s")  # (SIGSEGV would make pytest's faulthandler print a stack)
    with pytest.raises(WorkerFailed, match=r"rank 1 of 2 was killed by SIGTERM .*stopped from outside") as err:
        run_workers(_sleeper, 2, timeout_s=60)
    assert err.value.rank == 1 and err.value.signal_name == "SIGTERM"


def _sleeper(rank: int, world: int, comm) -> int:
    time.sleep(5)
    return rank


def test_kudu_panel_status_line_names_the_killed_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    from widgets.graphs.kudu import KuduPanel
    from workbench.distributed import WorkerFailed
    from workbench.graphs.kudu.study import clear_caches

    clear_caches()  # a measurement memoised by an earlier test in this process would not start workers
    panel = KuduPanel(measure_now=False, graph="karate", pattern="triangle", workers=2)
    monkeypatch.setenv("WORKBENCH_FAULT", "1:KILL:2")
    with pytest.raises(WorkerFailed):
        panel.measure()
    assert "worker rank 1 of 2 was killed by SIGKILL" in panel.status.value
    assert "Traceback" not in panel.status.value and "\n" not in panel.status.value
    panel._measure_clicked()  # the button swallows it: the status line already says why
