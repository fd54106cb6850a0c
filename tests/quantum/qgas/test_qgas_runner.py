"""``workbench run qgas``: the issue's JSON keys, the numbers against the transcript it wrote, and bad input
(exit code 2, one line naming the parameter, no traceback).

Reference: the issue's schema; the transcript file (every raw proposal and score) read back independently.
"""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.quantum.qgas.config import QgasConfig
from workbench.quantum.qgas.runner import TECHNIQUE, QgasResult, format_table, run

FAST = ["--train-steps", "6", "--restarts", "1"]


@pytest.mark.slow
def test_json_has_the_issue_keys_and_matches_the_transcript(tmp_path, capsys):
    out = tmp_path / "t.json"
    argv = ["run", "qgas", "--problem", "portfolio", "--iterations", "3", "--transcript", str(out), "--json", *FAST]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("best_energy_error", "valid_fraction", "best_qasm", "transcript"):
        assert key in data
    assert data["transcript"] == str(out)
    logged = json.loads(out.read_text())["records"]
    assert len(logged) == 3 and data["valid_fraction"] == sum(r["valid"] for r in logged) / 3
    # the best: lowest error (to 1e-9: below that it is round-off), then fewer CNOTs, then earlier
    best = min(
        (r for r in logged if r["valid"]), key=lambda r: (round(r["energy_error"], 9), r["cnots"], r["iteration"])
    )
    assert data["best_energy_error"] == pytest.approx(best["energy_error"], abs=1e-12)
    assert data["best_qasm"] == best["qasm"] and data["best_qasm"].startswith("OPENQASM 3.0;")
    assert data["approximation_ratio"] <= 1 + 1e-9
    lowest = min(r["energy_error"] for r in logged if r["valid"])
    assert data["best_error_curve"][-1] == pytest.approx(lowest, abs=1e-15)
    assert "portfolio" in format_table(data)


def test_replay_through_the_cli_gives_the_same_json(tmp_path, capsys):
    first = tmp_path / "a.json"
    assert (
        main(["run", "qgas", "--problem", "h2", "--iterations", "2", "--transcript", str(first), "--json", *FAST]) == 0
    )
    a = json.loads(capsys.readouterr().out)
    argv = ["run", "qgas", "--problem", "h2", "--proposer", "replay", "--replay", str(first), "--iterations", "2"]
    assert main([*argv, "--transcript", str(tmp_path / "b.json"), "--json", *FAST]) == 0
    b = json.loads(capsys.readouterr().out)
    for key in ("best_energy_error", "valid_fraction", "best_qasm", "best_error_curve", "rows"):
        assert a[key] == b[key]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--problem", "tsp"], "problem='tsp' is not allowed: valid values are"),
        (["--iterations", "0"], "iterations=0 is out of range: valid range is 1..200"),
        (["--proposer", "replay"], "proposer='replay' needs replay=PATH"),
        (["--proposer", "endpoint"], "proposer='endpoint' needs endpoint_url=URL"),
        (["--device", "fake_nowhere"], "device='fake_nowhere' is not allowed: valid values are none, "),
        (["--shots", "100"], "shots=100 applies with a device only: use 0 with device='none'"),
        (
            ["--device", "fake_jakarta", "--shots", "-1"],
            "shots=-1 is out of range: valid range is 0..10_000_000 (shots)",
        ),
        (["--problem", "maxcut", "--bond-length", "1.0"], "bond_length=1 applies to lih and h2 only"),
        (
            ["--problem", "h2", "--bond-length", "0.74"],
            "bond_length=0.74 is not allowed for h2: valid values are 0, 0.3",
        ),
        (["--proposer", "replay", "--replay", "/no/such/file.json"], "replay='/no/such/file.json' does not exist"),
        (["--proposer", "endpoint", "--endpoint-url", "http://127.0.0.1:9/v1", "--timeout-s", "2"], "is unreachable"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert main(["run", "qgas", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.strip().count("\n") == 0


def test_run_returns_a_typed_result(tmp_path):
    result = run(QgasConfig(problem="h2", iterations=1, transcript=str(tmp_path / "x.json"), train_steps=4, restarts=1))
    assert isinstance(result, QgasResult)
    assert TECHNIQUE.config is QgasConfig and TECHNIQUE.processes is False
