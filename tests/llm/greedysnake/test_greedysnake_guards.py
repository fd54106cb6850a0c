"""Guards of ``workbench run greedysnake --mode check``: bad run folders and oversized runs are refused with one
line naming the parameter (exit 2); a full disk during set-up does not claim a commit record that does not exist;
SIGTERM cleans up the temporary run folder as Ctrl-C does.

References: the CLI's exit codes (2 for bad input, 143 = 128 + SIGTERM); the process's own peak RSS
(``ru_maxrss``, measured in a child) for the host-memory estimate, which must be within 2x of it.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gs_cases import run_dir

from workbench.cli import main
from workbench.llm.greedysnake import experiment

HERE = Path(__file__).parent
SMALL = ["--layers", "1", "--hidden", "8", "--heads", "2", "--seq", "4", "--vocab", "11", "--micro-batches", "2",
         "--steps", "1"]  # fmt: skip


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("workdir", ["/etc/passwd", "/proc/nope"])
def test_unusable_workdir_is_one_line_naming_workdir(capsys, workdir):
    assert main(["run", "greedysnake", "--mode", "check", *SMALL, "--workdir", workdir]) == 2
    line = _error_line(capsys)
    assert line.startswith("error: workdir=") and workdir in line and "valid values" in line


def test_oversized_check_is_refused_with_estimate_and_limit(capsys, monkeypatch):
    from workbench.llm.greedysnake.config import GreedySnakeConfig

    monkeypatch.setattr(experiment, "available_host_memory", lambda: 16 * 10**9)
    config = GreedySnakeConfig(mode="check", layers=64, hidden=2048, micro_batches=256)
    with pytest.raises(ValueError) as err:  # the experiment's own guard, whatever the CLI checks before it
        experiment.check_run(config)
    line = str(err.value)
    assert "layers=64" in line and "hidden=2048" in line and "micro_batches=256" in line
    assert "GB of host memory" in line and "16 GB available" in line
    argv = ["--layers", "64", "--hidden", "2048", "--micro-batches", "256"]
    assert main(["run", "greedysnake", "--mode", "check", *argv]) == 2
    assert " GB" in _error_line(capsys)


_RSS_CHILD = """
import resource, sys, psutil, torch
from workbench.llm.greedysnake.config import GreedySnakeConfig
from workbench.llm.greedysnake.experiment import check_run, host_memory_estimate
torch.set_num_threads(1)
cfg = GreedySnakeConfig(mode="check", layers=4, hidden=256, heads=4, seq=16, vocab=4096, micro_batches=4,
                        micro_batch_size=2, steps=1, memory_budget_mb=1e4)
def status(key):  # bytes, from /proc/self/status
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1]) * 1024
base = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) restarts here: import-time peaks do not count
check_run(cfg)
print(status("VmHWM") - base, host_memory_estimate(cfg.gpt(), micro_batches=4, micro_batch_size=2))
"""


@pytest.mark.slow  # a real check of a 4-layer, 256-wide GPT in a child process (seconds)
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_host_memory_estimate_within_2x_of_measured_peak(tmp_path):
    env = dict(os.environ, WORKBENCH_CACHE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    measured, estimate = map(int, out.stdout.split())
    assert estimate / 2 <= measured <= 2 * estimate, (measured, estimate)


@pytest.mark.slow  # a child process hitting a file-size limit
def test_full_disk_during_setup_does_not_claim_a_commit():
    with run_dir() as d:
        folder = d / "fresh"
        proc = subprocess.run([sys.executable, str(HERE / "gs_crash_child.py"), str(folder), "1", "fsize", "2000"],
                              capture_output=True, text=True, timeout=120, cwd=HERE)  # fmt: skip
        assert proc.returncode == 3, proc.stderr
        line = proc.stderr.strip().splitlines()[-1]
        assert "no space left" in line and "no state was committed yet" in line and "intact" not in line
        assert not (folder / "commit.json").exists()


_CLI = "import sys; from workbench.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.slow  # a real check killed mid-run (seconds)
def test_sigterm_leaves_no_run_folder(tmp_path):
    env = dict(os.environ, WORKBENCH_CACHE=str(tmp_path))
    argv = ["run", "greedysnake", "--mode", "check", "--layers", "2", "--hidden", "16", "--heads", "2", "--seq", "8",
            "--vocab", "32", "--micro-batches", "4", "--steps", "6", "--sync", "write"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", _CLI, *argv], env=env, stderr=subprocess.PIPE)
    try:
        cache = tmp_path / "greedysnake"
        deadline = time.monotonic() + 240
        while not list(cache.glob("run-*/*/commit.json")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert list(cache.glob("run-*")), "the run folder never appeared"
        proc.send_signal(signal.SIGTERM)  # inside the offloaded training
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert not list(cache.glob("run-*"))
