"""The runner's JSON (the issue's keys), the CLI's bad input (exit 2, one line), the study's view and the panel.
References: the check's own invariants (identical tokens, replay == real counts, chi-square p), the issue's schema."""

import json
import subprocess
import sys

import pytest

from workbench.llm.srt.config import SrtConfig
from workbench.llm.srt.runner import format_table, run

SMALL = dict(prompts=4, batch_prompts=2, group=3, steps=3, sft_steps=20, layers=1, hidden=32)


@pytest.mark.slow
def test_check_json_has_the_issue_keys_and_holds_its_invariants(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from workbench.llm.srt import experiment as study

    study.clear_caches()
    result = run(SrtConfig(**SMALL)).to_json()
    for key in ("greedy_identical", "sampling_chi2_pvalue", "accepted_per_forward", "forwards_saved",
                "speedup_wallclock", "baselines"):  # fmt: skip
        assert key in result
    assert result["greedy_identical"] is True and result["sampling_identical"] is True
    assert result["batched_identical"] is True
    assert result["replay_equals_real"] is True
    assert result["logprob_max_abs_diff"] < 1e-9
    assert result["sampling_chi2_pvalue"] > 1e-3
    assert result["accepted_per_forward"] >= 1.0
    assert set(result["baselines"]) == {"srt", "srt-tree", "global-suffix", "prompt-lookup"}
    assert all(b["tokens_identical"] for b in result["baselines"].values())
    assert result["rewards"]["plain"] == result["rewards"]["srt"]
    assert json.loads(json.dumps(result)) == result
    assert "accepted tokens / forward" in format_table(result)
    study.clear_caches()


@pytest.mark.slow
def test_model_mode_rows_stand_beside_table1():
    result = run(SrtConfig(mode="model")).to_json()
    rows = {r["workload"]: r for r in result["model"]["rows"]}
    assert result["model"]["label"] == "MODEL"
    assert rows["grpo"]["model_srt"] == pytest.approx(rows["grpo"]["paper_srt"], rel=1e-3)  # the calibrated column
    assert rows["dapo"]["paper_srt"] == pytest.approx(44.1 / 31.5)
    assert rows["dapo"]["model_srt"] < rows["ppo"]["model_srt"]  # the predicted DAPO drop
    assert "paper SRT" in format_table(result)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_cli_bad_temperature_exits_2_with_one_line():
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", "run", "srt", "--temperature", "-1"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2
    assert "temperature=-1 is out of range" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("values", "words"), [
    ({"group": 0}, "group=0 is out of range"),
    ({"mode": "nope"}, "mode='nope' is not allowed"),
    ({"batch_prompts": 9}, "batch_prompts=9 is out of range"),
    ({"hidden": 30, "heads": 4}, "heads=4 must divide hidden=30"),
])  # fmt: skip
def test_config_bad_input_names_the_parameter(values, words):
    with pytest.raises(ValueError, match=words):
        SrtConfig.from_dict(values)


def test_a_truncated_policy_cache_is_rebuilt_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from workbench.llm.srt import experiment as study

    study.clear_caches()
    cfg = SrtConfig(sft_steps=0, layers=1, hidden=16)
    first = study.policy(cfg)
    (path,) = (tmp_path / "srt").glob("policy-*.pt")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # cut short
    study.clear_caches()
    again = study.policy(cfg)
    assert all((a == b).all() for a, b in zip(first.state_dict().values(), again.state_dict().values(), strict=True))
    assert path.stat().st_size == len(data)
    study.clear_caches()
