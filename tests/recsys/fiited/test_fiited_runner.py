"""The runner's JSON (the issue's schema), the memory counter against the pool, the CLI's refusals (exit 2 with
one line), the study's confidence intervals against scipy's t interval. Reference: the schema in the issue and
``scipy.stats.t.interval``."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from workbench.recsys.fiited.config import FiitedConfig
from workbench.recsys.fiited.runner import format_table, run
from workbench.recsys.fiited.study import mean_ci

pytestmark = pytest.mark.slow
REPO_ROOT = Path(__file__).resolve().parents[3]
SMALL = {"rows": 3000, "vocab_scale": 0.0005, "batch_size": 256, "interval": 3}


def test_json_has_the_issue_schema_and_the_budget_is_met():
    result = run(FiitedConfig.from_dict({**SMALL, "budget_fraction": 0.6})).to_json()
    for key in ("auc", "logloss", "embedding_bytes", "baseline_bytes", "baselines"):
        assert key in result
    names = [b["name"] for b in result["baselines"]]
    assert names == ["full", "uniform", "row-prune", "mixed-dim", "hashing", "elem-prune"]
    for b in result["baselines"]:
        assert set(b) >= {"name", "auc", "embedding_bytes"}
        if b["name"] != "full":
            assert b["embedding_bytes"] <= 0.6 * result["baseline_bytes"] + 1
    assert result["embedding_bytes"] <= 0.6 * result["baseline_bytes"] + 1
    assert result["memory"]["counter_matches_pool"] is True
    assert 0.4 < result["auc"] < 1 and result["logloss"] > 0
    assert json.loads(json.dumps(result)) == result
    assert "FIITED" in format_table(result)


def test_sample_run_says_it_is_too_small():
    result = run(FiitedConfig(dataset="criteo-sample", baselines="none", batch_size=32, interval=1)).to_json()
    assert "too small" in result["note"] and result["baselines"] == []


@pytest.mark.parametrize(
    "args,words",
    [
        (["--budget-fraction", "0.05"], "budget_fraction=0.05 is below one chunk per row"),
        (["--chunk", "5"], "chunk=5 does not divide dim=64"),
        (["--rows", "10"], "rows=10 is out of range"),
    ],
)
def test_cli_refuses_bad_input_with_exit_2(args, words):
    proc = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "fiited", "--rows", "2000", *args, "--json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_cli_refuses_a_corrupt_sample(tmp_path):
    folder = tmp_path / "ctr"
    folder.mkdir()
    for name in ("criteo_sample.txt", "avazu_sample.txt", "movielens_sample.txt", "LICENSE"):
        (folder / name).write_text("label\n1\n")
    (folder / "criteo_sample.txt").write_text("label,I1\n0,1,2\n")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "fiited", "--dataset", "criteo-sample"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "WORKBENCH_DATA": str(tmp_path)},
    )
    assert proc.returncode == 2 and "criteo_sample.txt line 2" in proc.stderr


def test_confidence_interval_matches_scipy():
    x = [0.71, 0.73, 0.7, 0.74]
    mean, half = mean_ci(x)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
    assert mean == pytest.approx((lo + hi) / 2) and half == pytest.approx((hi - lo) / 2)
