"""Every run is sized before it starts (issue #29's contract).

Every ready technique declares ``estimate(config) -> Estimate(bytes, seconds)`` in its ``sizes.py`` (fast checks
below). Each technique's largest allowed configuration (every numeric parameter at the top of its range, the rest
at the smoke settings) runs under an address-space limit a little above what Python and torch need: it must be
refused up front with exit 2 and one line (the estimate and the limit, or the rule the combination breaks), or
finish (exit 0) within the limit, or, when it runs long, show its progress on stderr (the run is stopped as soon as
it has): never die with a MemoryError, an abort or the out-of-memory killer, nor run silently.
"""

from __future__ import annotations

import importlib
import math
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.memory import Estimate
from workbench.registry import catalogue, entry, estimate, get_technique

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = [e.name for e in catalogue() if e.status == "ready"]
LIMIT_BYTES = 6 << 30  # address space: enough to import torch, qiskit and the technique, not for a huge run
#: seconds a largest configuration may take to be refused, to finish or to show progress (imports take ~10 s
#: on a loaded 2-core CI machine; the estimate refuses or the progress line appears a second after them)
SECONDS = 30
#: what a progress bar (tqdm) or the CLI's progress line prints
PROGRESS = ("%|", "it/s", "s/it", "progress")


def largest_argv(name: str) -> list[str]:
    """Flags putting every numeric parameter at the top of its range (``timeout_s`` excepted: a limit)."""
    technique = get_technique(name)
    argv = []
    specs = {s.name: s for s in technique.config.specs()}
    for key, value in technique.smoke.items():
        spec = specs[key]
        if spec.type is bool:
            argv.append(spec.flag if value else "--no-" + spec.flag[2:])
        elif not (spec.type in (int, float) and spec.hi is not None):
            argv.append(f"{spec.flag}={value}")
    for spec in specs.values():
        if spec.type in (int, float) and spec.hi is not None and spec.choices is None and spec.name != "timeout_s":
            argv.append(f"{spec.flag}={spec.hi:g}" if spec.type is float else f"{spec.flag}={int(spec.hi)}")
    return argv


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def largest_config(name: str):
    """The config of :func:`largest_argv`, or None when its combination is refused before any estimate."""
    technique = get_technique(name)
    specs = {s.name: s for s in technique.config.specs()}
    params = dict(technique.smoke)
    for spec in specs.values():
        if spec.type in (int, float) and spec.hi is not None and spec.choices is None and spec.name != "timeout_s":
            params[spec.name] = spec.type(spec.hi)
    try:
        return technique.config.from_dict(params)
    except ValueError:
        return None


@pytest.mark.parametrize("name", READY)
def test_every_technique_declares_an_estimate(name):
    """The registry's hook: ``sizes.py`` beside the runner, ``estimate`` giving positive, finite bytes and seconds
    at the smoke and the largest settings; a declared run limit names a real config field."""
    technique = get_technique(name)
    sizes = importlib.import_module(entry(name).sizes)
    assert callable(sizes.estimate)
    configs = [technique.config.from_dict(dict(technique.smoke)), largest_config(name)]
    for config in filter(None, configs):
        est = estimate(name, config)
        assert isinstance(est, Estimate)
        assert math.isfinite(est.bytes) and est.bytes > 0 and math.isfinite(est.seconds) and est.seconds > 0
    limit = getattr(sizes, "RUN_LIMIT", None)
    assert limit is None or limit in {s.name for s in technique.config.specs()}


def _wait(proc: subprocess.Popen, log: Path) -> bool:
    """Wait up to SECONDS for ``proc`` to end; True when it is still running but has shown progress (then killed)."""
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if any(p in log.read_text(errors="replace") for p in PROGRESS):
            break
        time.sleep(0.25)
    else:
        if proc.poll() is not None:
            return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


@pytest.mark.slow
@pytest.mark.parametrize("name", READY)
def test_largest_configuration_is_refused_before_it_starts(name, tmp_path):
    env = {**os.environ, "WORKBENCH_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO_ROOT)}
    argv = [sys.executable, "-m", "workbench", "run", name, *largest_argv(name)]
    case = " ".join(argv[3:])
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=_limit,
            start_new_session=True,
        )  # fmt: skip
        stopped = _wait(proc, log)
    err = log.read_text(errors="replace")
    if stopped:
        assert any(p in err for p in PROGRESS), f"{case}: silent after {SECONDS} s (no estimate, no progress)"
        assert "Traceback" not in err, f"{case}: {err[-1200:]}"
        return
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode in (0, 2), f"{case}: exit {proc.returncode}: {err[-1200:]}"
    assert "Traceback" not in err, f"{case}: {err[-1200:]}"
    if proc.returncode == 2:
        assert len(lines) == 1 and lines[0].startswith("error:"), f"{case}: {err[-1200:]}"
