"""The `workbench` command: list, run (table and JSON), errors exit 2 with a message and no traceback."""

import json
import subprocess
import sys

import pytest

from workbench.cli import main
from workbench.registry import catalogue

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=300)


def test_list_shows_every_technique(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "mesh-attention" in out and "ready" in out and "refloat" in out
    assert all(e.name in out for e in catalogue())


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "mesh-attention", "--gpus", "0"], "gpus=0 is out of range: valid range is 1..1024 (GPUs)"),
        (["run", "mesh-attention", "--gpus", "lots"], "gpus='lots' is not an integer"),
        (["run", "mesh-attention", "--gpus", "32"], "out of range for mode='check'"),
        (
            ["run", "mesh-attention", "--mode", "fast"],
            "mode='fast' is not allowed: valid values are one of 'check', 'model'",
        ),
        (["run", "mesh-attention", "--gpus", "6", "--tile-a", "4"], "tile_a=4 does not divide gpus=6"),
        (["run", "nope"], "technique='nope' is unknown"),
        (["report", "notebooks/missing.ipynb", "--out", "x.html"], "notebook 'notebooks/missing.ipynb' does not exist"),
    ],
)
def test_bad_input_exits_2_with_message_and_no_traceback(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_run_check_json_schema():
    result = run_cli(
        "run",
        "mesh-attention",
        "--mode",
        "check",
        "--gpus",
        "3",
        "--seq",
        "50",
        "--heads",
        "3",
        "--head-dim",
        "4",
        "--causal",
        "--dtype",
        "float64",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["technique"], out["mode"], out["gpus"], out["seq"]) == ("mesh-attention", "check", 3, 50)
    by_method = {r["method"]: r for r in out["results"]}
    assert set(by_method) == {"ring", "ulysses", "usp", "mesh", "node_mesh"}
    for r in out["results"]:
        assert r["max_abs_err_out"] <= 1e-10 and r["max_abs_err_grad"] <= 1e-10
        assert r["bytes_per_rank"] == r["model_bytes_per_rank"] and len(r["bytes_per_rank"]) == 3
    assert by_method["ring"]["tile"] == [1, 3] and by_method["mesh"]["tile"] in ([1, 3], [3, 1])
    assert by_method["ulysses"]["ulysses_degree"] == 3  # head-sharded: no tile of the block matrix


def test_run_check_reports_indivisible_heads_as_method_error(capsys):
    assert (
        main(["run", "mesh-attention", "--gpus", "2", "--seq", "20", "--heads", "3", "--head-dim", "4", "--json"]) == 0
    )
    by_method = {r["method"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert "heads" in by_method["ulysses"]["error"] and "error" not in by_method["mesh"]


def test_run_model_json_at_paper_scale(capsys):
    assert (
        main(
            [
                "run",
                "mesh-attention",
                "--mode",
                "model",
                "--gpus",
                "256",
                "--seq",
                "1048576",
                "--heads",
                "32",
                "--head-dim",
                "128",
                "--dtype",
                "bfloat16",
                "--causal",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    by_method = {r["method"]: r for r in out["results"]}
    assert {"ring", "mesh", "usp", "startrail"} <= set(by_method)
    for r in by_method.values():
        if "error" not in r:
            assert len(r["model_bytes_per_rank"]) == 256
            assert r["model_peak_memory_bytes"] > 0 and r["model_seconds"] > 0
    assert by_method["mesh"]["model_seconds"] < by_method["ring"]["model_seconds"]


def test_run_table_output(capsys):
    assert main(["run", "mesh-attention", "--mode", "model", "--gpus", "16", "--seq", "4096"]) == 0
    out = capsys.readouterr().out
    assert "mesh" in out and "ring" in out


def test_a_path_the_system_refuses_is_named_by_its_flag():
    """An OSError about a path a user gave (too long, a folder where a file is due) becomes one line naming the
    flag (exit 2); a full disk or a worker's fault is left as it is."""
    import errno

    from workbench.cli import path_error
    from workbench.registry import get_technique

    specs = get_technique("qgas").config.specs()
    err = path_error(
        OSError(errno.ENAMETOOLONG, "File name too long", "/w/" + "a" * 300), specs, {"transcript": "a" * 300}
    )
    assert isinstance(err, ValueError) and str(err).startswith("--transcript='aaa") and "File name too long" in str(err)
    full = OSError(errno.ENOSPC, "No space left on device", "/w/x")
    assert path_error(full, specs, {"transcript": "/w/x"}) is full
