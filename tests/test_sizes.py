"""Every run is sized before it starts (issue #29's contract).

Each technique's largest allowed configuration (every numeric parameter at the top of its range, the rest at
the smoke settings) runs under an address-space limit a little above what Python and torch need: it must be
refused up front with exit 2 and one line (the estimate and the limit, or the rule the combination breaks), or
finish (exit 0) within the limit, or, when it runs long, show its progress on stderr: never die with a
MemoryError, an abort or the out-of-memory killer, nor run silently.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.registry import catalogue, get_technique

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = [e.name for e in catalogue() if e.status == "ready"]
LIMIT_BYTES = 6 << 30  # address space: enough to import torch, qiskit and the technique, not for a huge run
SECONDS = 90
#: techniques whose largest configuration still runs silently or ends in a traceback (issue #29, open): each
#: needs an estimate (``workbench.memory.require``) before it allocates, or a progress bar; remove an entry
#: when it is fixed (skipped, not run: each would spend the whole 90 s of the suite's time to fail)
UNSIZED = {
    "srt": "GRPO at 512 prompts x 64 rollouts and a 12-layer policy: no estimate, no progress",
    "redox": "10^8 records generated to disk: no estimate of the bytes or the time",
    "dawnpiper": "check mode with a 64-layer traced GPT: no estimate before tracing",
    "hybrid-qaoa": "p=3, budget 5000: no progress while training",
    "dwarvesgraph": "6-motifs over 64 workers: no progress while counting",
}
#: what a progress bar (tqdm) or a progress line prints
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


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.skip(reason=f"open (#29): {UNSIZED[n]}")) if n in UNSIZED else n for n in READY],
)
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
        try:
            proc.wait(timeout=SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            err = log.read_text()
            assert any(p in err for p in PROGRESS), f"{case}: silent after {SECONDS} s (no estimate, no progress)"
            return
    err = log.read_text()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode in (0, 2), f"{case}: exit {proc.returncode}: {err[-1200:]}"
    assert "Traceback" not in err, f"{case}: {err[-1200:]}"
    if proc.returncode == 2:
        assert len(lines) == 1 and lines[0].startswith("error:"), f"{case}: {err[-1200:]}"
