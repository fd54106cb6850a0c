"""Crash consistency of the offloaded state (issue 18's disk part).

- A child process SIGKILLs itself in the middle of an optimizer-state write (half of the bytes land as garbage)
  at a random one of the run's optimizer writes (initial state included); training resumed from the commit record ends with exactly (bit for bit) the
  parameters of an uninterrupted run, which equal plain in-memory training.
- A child killed by the parent at a random time: the same.
- A file-size limit (RLIMIT_FSIZE in a child, SIGXFSZ ignored so writes fail with EFBIG) stops training with
  WriteError naming the file; the last commit record's state is intact and resuming reaches the same end.
"""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.reference import train_in_memory

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
STEPS = 3


def _child(folder, *args, timeout=120):
    return subprocess.run([sys.executable, str(HERE / "gs_crash_child.py"), str(folder), str(STEPS), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=HERE)  # fmt: skip


def _resume(folder):
    t = trainer(tiny(layers=2), folder, "vertical-overlap", 3, checkpoints="ssd")
    start = t.step
    t.train(STEPS)
    out = t.parameters()
    t.close()
    return start, out


@pytest.fixture(scope="module")
def expected():
    return train_in_memory(
        tiny(layers=2), micro_batches=3, micro_batch_size=2, steps=STEPS, lr=1e-3, data_seed=0, accumulation="snake"
    )  # the vertical order sums micro-batches in snake order


def _writes_per_run():
    with run_dir() as d:
        n = [0]
        t = trainer(
            tiny(layers=2),
            d,
            "vertical-overlap",
            3,
            checkpoints="ssd",
            on_write=lambda p, b: n.__setitem__(0, n[0] + str(p).endswith(".optim")),
        )
        t.train(STEPS)
        t.close()
    return n[0]


def test_kill_in_the_middle_of_a_write_then_resume(expected):
    total = _writes_per_run()
    rng = random.Random(12)
    for target in [rng.randrange(1, total + 1)]:
        with run_dir() as d:
            proc = _child(d, "kill-at-write", str(target))
            assert proc.returncode == -signal.SIGKILL, proc.stderr
            record = json.loads((d / "commit.json").read_text()) if (d / "commit.json").exists() else None
            assert record is None or record["pending"] or record["step"] < STEPS  # the run was cut short
            _, got = _resume(d)
            for a, b in zip(got, expected, strict=True):
                assert torch.equal(a, b)


def test_kill_at_a_random_time_then_resume(expected):
    with run_dir() as d:
        proc = subprocess.Popen([sys.executable, str(HERE / "gs_crash_child.py"), str(d), str(STEPS), "run"], cwd=HERE)
        time.sleep(random.Random(3).uniform(1.0, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        _, got = _resume(d)
        for a, b in zip(got, expected, strict=True):
            assert torch.equal(a, b)


def test_file_size_limit_stops_with_a_clear_error_and_keeps_the_last_state(expected):
    with run_dir() as d:
        t = trainer(tiny(layers=2), d, "vertical-overlap", 3, checkpoints="ssd")
        t.train(1)  # a committed state at step 1
        t.close()
        record = (d / "commit.json").read_text()
        proc = _child(d, "fsize", "2000")
        assert proc.returncode == 3, proc.stderr
        line = proc.stderr.strip().splitlines()[-1]
        assert line.startswith("error: ") and f"could not write {d}/" in line and "no space left" in line
        assert (d / "commit.json").read_text() == record
        start, got = _resume(d)
        assert start == 1
        for a, b in zip(got, expected, strict=True):
            assert torch.equal(a, b)
