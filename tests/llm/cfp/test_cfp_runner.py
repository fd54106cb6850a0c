"""Runner schema (the issue's JSON keys), CLI refusals with exit 2 and one line, paper-scale search.

References: the key list of issue 12; the config's declared ranges; brute force run by the runner itself."""

from __future__ import annotations

import json
import re

import pytest

from workbench.cli import main
from workbench.llm.cfp.config import CUSTOM_LAYERS, CfpConfig
from workbench.llm.cfp.graph import PAPER_MODELS
from workbench.llm.cfp.runner import TECHNIQUE, CfpResult, format_table, run

ISSUE_KEYS = (
    "operators", "blocks", "segments", "combinations_before", "combinations_after", "plan_cost", "brute_force_cost",
    "ilp_cost", "search_seconds", "ilp_seconds", "plan",
)  # fmt: skip


def cli(capsys, *args):
    try:
        rc = main(["run", "cfp", *args])
    except SystemExit as e:  # argparse's own refusals exit from the parser (one line, code 2)
        rc = e.code
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_search_json_has_the_issue_keys_and_the_oracles_agree(capsys):
    rc, out, _ = cli(capsys, "--mesh", "3", "--gpus", "3", "--layers", "1", "--hidden", "6", "--heads", "3",
                     "--seq", "4", "--batch", "2", "--ffn-mult", "1", "--json")  # fmt: skip
    assert rc in (0, None)
    r = json.loads(out)
    assert set(ISSUE_KEYS) <= set(r) and r["label"] == "MODEL"
    assert r["brute_force_cost"] is not None and r["ilp_cost"] == pytest.approx(r["brute_force_cost"], rel=1e-9)
    assert r["brute_force_blocks_cost"] == pytest.approx(r["plan_cost"], rel=1e-12)
    assert r["ilp_cost"] <= r["plan_cost"] * (1 + 1e-9)
    assert r["combinations_after_log10"] < r["combinations_before_log10"]
    assert len(r["plan"]) == r["operators"] == 11 and r["blocks"] < r["operators"]


def test_paper_scale_search_without_ilp():
    r = run(CfpConfig(model="moe-16e", layers=2, gpus=8, mesh="2x4", batch=8, ilp=False, brute_force_limit=0))
    assert isinstance(r, CfpResult) and r.ilp_cost is None and r.brute_force_cost is None
    assert r.speedup_vs_megatron is not None and r.speedup_vs_megatron >= 1 - 1e-12  # Megatron is in CFP's space
    assert r.segments["repeats"] == 2 and r.profile_runs < r.profile_runs_per_layer


@pytest.mark.parametrize(
    "args,words",
    [
        (["--gpus", "4", "--mesh", "2x3"], "mesh='2x3' does not match gpus=4"),
        (["--gpus", "8", "--mesh", "8x1x1"], "mesh='8x1x1' is invalid"),
        (["--hidden", "10", "--heads", "4"], "heads=4 must divide hidden=10"),
        (["--mode", "check", "--gpus", "16", "--mesh", "4x4"], "gpus=16 is out of range for mode='check'"),
        (["--mode", "check", "--gpus", "2", "--mesh", "2", "--dtype", "bfloat16"],
         "dtype='bfloat16' is only for mode='search'"),
        (["--memory-gb", "0.000001", "--gpus", "2", "--mesh", "2", "--no-ilp"], "memory_gb=1e-06 leaves no feasible"),
        (["--gpus", "2", "--mesh", "2", "--seq", "3", "--batch", "1", "--model", "gpt-1.3b", "--layers", "1",
          "--mode", "check", "--dtype", "float64"], "model='gpt-1.3b' is only for mode='search'"),
        (["--mesh", "-2x-2"], "argument --mesh"),  # argparse reads "-2x-2" as a flag: one line naming --mesh
        (["--mesh=-2x-2"], "mesh='-2x-2' is invalid"),
        # memory_gb=0 stands for the device's memory: the error names the limit that applied, not "memory_gb=0.0"
        (["--model", "gpt-1.3b", "--mesh", "2", "--no-ilp", "--cluster.gpu-memory-gb", "0.001"],
         "cluster.gpu_memory_gb=0.001 (the device's memory; memory_gb=0) leaves no feasible plan"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line_naming_the_parameter(capsys, args, words):
    rc, _, err = cli(capsys, *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err
    assert not re.search(r"(?<![\w.])memory_gb=0\.0\b", err)


def test_a_paper_model_keeps_its_own_depth_and_the_mesh_sets_the_gpus(capsys):
    assert CfpConfig(model="gpt-1.3b").layers == 0 and CfpConfig().layers == CUSTOM_LAYERS
    assert CfpConfig(mesh="1x3").gpus == 3 and CfpConfig(mesh="2x4").gpus == 8  # gpus=0: the mesh's devices
    rc, out, _ = cli(capsys, "--model", "gpt-1.3b", "--mesh", "1x3", "--no-ilp", "--brute-force-limit", "0", "--json")
    r = json.loads(out)
    assert rc in (0, None) and r["layers"] == PAPER_MODELS["gpt-1.3b"].layers == 24 and r["gpus"] == 3


def test_an_ilp_time_out_is_reported_as_one(capsys):
    # a time-out without a plan (status "time limit", no cost) reads as such, never as "ILP - (exact)"
    rc, out, _ = cli(capsys, "--mesh", "3", "--layers", "1", "--hidden", "6", "--heads", "3", "--seq", "4",
                     "--batch", "2", "--ffn-mult", "1", "--json")  # fmt: skip
    r = json.loads(out)
    assert r["ilp_status"] == "optimal" and "ILP " in format_table(r) and "optimal, full depth" in format_table(r)
    timed_out = format_table({**r, "ilp_cost": None, "ilp_seconds": None, "ilp_status": "time limit"})
    assert "ILP: no plan (its time limit passed before it found any plan: raise ilp_time_limit_s)" in timed_out
    assert "ILP -" not in timed_out and "(exact)" not in timed_out
    late = format_table({**r, "ilp_status": "time limit"})
    assert "time limit: best found, not proven optimal" in late


def test_smoke_is_a_multi_process_check():
    config = CfpConfig.from_dict(TECHNIQUE.smoke)
    assert config.mode == "check" and config.gpus == 2 and TECHNIQUE.processes
