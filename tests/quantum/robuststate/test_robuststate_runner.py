"""Runner, CLI and counting (slow: trains). References: the closed-form cost MODEL (counted executions must
equal it), the issue's JSON keys, and the CLI's exit code 2 with one line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.quantum.robuststate import model
from workbench.quantum.robuststate.config import RobustStateConfig
from workbench.quantum.robuststate.runner import format_table, run

pytestmark = pytest.mark.slow

SMALL = {"qubits": 2, "device": "fake_lima", "shots": 32, "bases": 3, "blocks": 1, "target": "random", "seed": 3}


@pytest.mark.parametrize(
    "method,budget", [("robuststate", 2000), ("parameter-shift", 5000), ("spsa", 2000), ("bo", 1000), ("unaware", 999)]
)
def test_counted_executions_equal_the_model(method: str, budget: int) -> None:
    r = run(RobustStateConfig(method=method, budget=budget, **SMALL))
    assert r.machine_executions == r.model_executions <= budget
    assert r.machine_executions == r.circuits * r.shots
    if method == "parameter-shift":
        assert r.steps == budget // (2 * r.num_parameters * 3 * 32)
    if method == "unaware":
        assert r.machine_executions == 0 and r.fidelity_after == r.fidelity_before
    out = r.to_json()
    for key in (
        "fidelity_before",
        "fidelity_after",
        "machine_executions",
        "coherent_error_before",
        "coherent_error_after",
    ):
        assert key in out
    assert json.loads(json.dumps(out)) == out
    assert "fidelity" in format_table(out)


def test_robuststate_reduces_coherent_error_on_a_device() -> None:
    r = run(RobustStateConfig(method="robuststate", budget=60 * 16 * 256, target="ghz", qubits=3, device="fake_perth"))
    assert r.coherent_error_after < 0.5 * r.coherent_error_before
    assert r.fidelity_after > r.fidelity_before


@pytest.mark.parametrize(
    "args,message",
    [
        (["--qubits", "6", "--device", "fake_lima"], "qubits=6 is wider than device='fake_lima'"),
        (["--shots", "0"], "shots=0 is out of range"),
        (["--method", "adam"], "method"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "robuststate", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_model_numbers() -> None:
    assert model.num_parameters(4, model.PAPER_BLOCKS[4]) == 84
    assert model.executions_per_step("parameter-shift", parameters=84, bases=16, shots=256) == 168 * 16 * 256


def test_cli_offers_aers_readout_and_says_which() -> None:
    args = ["--qubits", "2", "--device", "fake_lima", "--budget", "256", "--shots", "32", "--bases", "2"]
    out = {}
    for readout in ("props", "aer"):
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "run", "robuststate", *args, "--blocks", "1"]
            + ["--readout", readout, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        out[readout] = json.loads(proc.stdout)
        assert out[readout]["readout"] == readout
    assert "props file" in out["props"]["readout_model"] and "from_backend" in out["aer"]["readout_model"]
    # the true state does not see readout; the training data (mitigated with the machine's own matrices) does
    assert out["props"]["fidelity_before"] == out["aer"]["fidelity_before"]
    assert out["props"]["fidelity_after"] != out["aer"]["fidelity_after"]
