"""The CLI: check mode's JSON (a real pipeline run: slow), bad input as one line and exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.runner import format_table, run

pytestmark = pytest.mark.slow


def test_check_mode_json() -> None:
    out = run(DawnpiperConfig(mode="check", stages=3, micro_batches=5, memory_gb=0.0001, schedule="gpipe")).to_json()
    assert out["max_abs_loss_diff"] <= 1e-14 and out["max_rel_grad_diff"] <= 1e-12
    assert len(out["stages_check"]) == 3
    for s in out["stages_check"]:
        assert s["measured_peak_bytes"] == s["model_peak_bytes"]
        assert s["measured_live_peak_bytes"] == s["model_live_peak_no_grad_bytes"]
    assert "measured peak" in format_table(out) and "output gradients" in format_table(out)


@pytest.mark.parametrize(
    "args,words", [(["--memory-gb", "0.000001"], "memory_gb=1e-06 is below what one micro-batch needs")]
)
def test_bad_input_exits_2_with_one_line(args: list[str], words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "dawnpiper", *args], capture_output=True, text=True, check=False
    )
    # the CLI's progress line (rewritten in place with carriage returns) is not part of the error
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.strip().startswith("progress:")]
    assert done.returncode == 2 and len(lines) == 1 and words in lines[0], done.stderr
