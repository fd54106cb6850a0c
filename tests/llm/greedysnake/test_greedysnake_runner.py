"""``workbench run greedysnake``: the issue's JSON schema in both modes, counted == model bytes in the JSON, and
impossible settings refused with exit 2 and one line naming the parameter.

Reference: the issue's schema (check: schedules with name, max_abs_param_diff, bytes_read, bytes_written,
model_bytes_read, model_bytes_written, seconds; model: per-schedule throughput and speedup_vs_horizontal)."""

import json

import pytest

from workbench.cli import main
from workbench.llm.greedysnake.config import GreedySnakeConfig
from workbench.llm.greedysnake.runner import format_table, run

pytestmark = pytest.mark.slow  # real offloaded training runs (seconds)

SMALL = ["--layers", "1", "--hidden", "8", "--heads", "2", "--seq", "4", "--vocab", "11", "--micro-batches", "3",
         "--steps", "1"]  # fmt: skip


def _json(capsys, argv):
    assert main(["run", "greedysnake", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_check_mode_schema_and_bytes(capsys):
    out = _json(capsys, ["--mode", "check", *SMALL])
    assert [s["name"] for s in out["schedules"]] == ["horizontal", "vertical", "vertical-overlap"]
    for s in out["schedules"]:
        for key in ("max_abs_param_diff", "bytes_read", "bytes_written", "model_bytes_read", "model_bytes_written",
                    "seconds"):  # fmt: skip
            assert key in s
        assert s["bytes_read"] == s["model_bytes_read"] > 0 and s["bytes_written"] == s["model_bytes_written"] > 0
        assert s["max_abs_param_diff"] <= 1e-12 and s["device_peak_bytes"] <= out["budget_bytes"]
    assert out["schedules"][0]["bit_identical"]  # horizontal sums micro-batches in the reference's order
    assert "horizontal" in format_table(out)


def test_model_mode_schema(capsys):
    out = _json(capsys, ["--mode", "model", "--model", "gpt-65b", "--gpus", "4", "--global-batch", "32"])
    assert out["label"] == "MODEL" and out["paper_speedup"] == 1.93
    names = {s["name"]: s for s in out["schedules"]}
    assert set(names) == {"horizontal", "vertical", "vertical-overlap"}
    assert names["horizontal"]["speedup_vs_horizontal"] == 1.0
    assert all(s["throughput"] > 0 for s in out["schedules"])
    assert "MODEL" in format_table(out)


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        (["--mode", "check", *SMALL, "--memory-budget-mb", "0.001"], "memory_budget_mb=0.001"),
        (["--mode", "model", "--cluster.gpu-memory-gb", "1"], "cluster.gpu_memory_gb=1"),
        (["--mode", "model", "--model-micro-batch", "256", "--global-batch", "256"], "model_micro_batch=256"),
        (["--mode", "model", "--gpus", "3", "--global-batch", "64"], "global_batch=64"),
        (["--mode", "check", "--hidden", "10", "--heads", "4"], "heads=4"),
    ],
)
def test_impossible_settings_exit_2_naming_the_parameter(capsys, argv, word):
    assert main(["run", "greedysnake", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_run_returns_a_result_whose_json_round_trips():
    result = run(GreedySnakeConfig(mode="model", model="gpt-175b", global_batch=8, model_micro_batch=2))
    assert json.loads(json.dumps(result.to_json()))["schedules"][2]["name"] == "vertical-overlap"
