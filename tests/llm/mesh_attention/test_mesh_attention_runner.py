"""Runner schema, config aliases and ranges, the technique's smoke run.

References: JSON saved from ``workbench run mesh-attention ... --json`` before the runner returned typed results
(``data/*.json``: key structure identical, model values equal); the config's declared ranges.
"""

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.config import MeshAttentionConfig
from workbench.llm.mesh_attention.model import model_attention
from workbench.llm.mesh_attention.runner import TECHNIQUE, MeshAttentionResult

DATA = Path(__file__).parent / "data"


def structure(value):
    """The key structure of a JSON value (types of leaves ignored except containers)."""
    if isinstance(value, dict):
        return {k: structure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [structure(v) for v in value]
    return None


def cli_json(capsys, *args):
    assert main(["run", "mesh-attention", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "name, args",
    [
        ("model16", ["--mode", "model", "--gpus", "16", "--seq", "4096"]),
        (
            "model256",
            [
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
            ],
        ),
    ],
)
def test_model_json_is_unchanged(capsys, name, args):
    saved = json.loads((DATA / f"{name}.json").read_text())
    out = cli_json(capsys, *args)
    assert list(out) == list(saved)
    assert out == saved  # the model is deterministic: values equal too


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_check_json_keeps_its_key_structure(capsys):
    saved = json.loads((DATA / "check2.json").read_text())
    out = cli_json(
        capsys, "--mode", "check", "--gpus", "2", "--seq", "20", "--heads", "3", "--head-dim", "4", "--causal"
    )
    assert structure(out) == structure(saved)
    assert [list(r) for r in out["results"]] == [list(r) for r in saved["results"]]  # key order too
    for new, old in zip(out["results"], saved["results"]):
        for key in old:
            if key == "seconds" or key.startswith("max_abs_err"):
                continue  # wall clock; round-off
            assert new[key] == old[key], key


def test_run_returns_a_typed_result():
    result = TECHNIQUE.run(MeshAttentionConfig(mode="model", gpus=8, seq=1024))
    assert isinstance(result, MeshAttentionResult)
    assert result.to_json()["technique"] == "mesh-attention"


def test_smoke_run_round_trips_through_json():
    assert TECHNIQUE.processes is True
    out = TECHNIQUE.run_dict(TECHNIQUE.smoke)
    assert json.loads(json.dumps(out)) == out
    assert all(r["bytes_per_rank"] == r["model_bytes_per_rank"] for r in out["results"] if "error" not in r)


def test_cluster_is_one_group_with_old_names_as_aliases():
    config = MeshAttentionConfig.from_dict({"inter_bw": 12.5, "gpus-per-node": 4, "gpu_tflops": "800"})
    assert config.cluster == ClusterSpec(inter_node_bw_gbps=12.5, gpus_per_node=4, gpu_tflops=800.0)
    assert MeshAttentionConfig().cluster == ClusterSpec()  # the same defaults as the old flat fields
    assert config.replace(**{"cluster.inter_node_bw_gbps": 50.0}).cluster.inter_node_bw_gbps == 50.0
    names = {s.name for s in MeshAttentionConfig.specs()}
    assert not names & set(MeshAttentionConfig.ALIASES)  # no second definition
    assert set(MeshAttentionConfig.ALIASES.values()) <= names


def test_old_cluster_flags_still_work(capsys):
    old = cli_json(
        capsys, "--mode", "model", "--gpus", "16", "--seq", "4096", "--inter-bw", "3.125", "--gpus-per-node", "4"
    )
    new = cli_json(
        capsys,
        "--mode",
        "model",
        "--gpus",
        "16",
        "--seq",
        "4096",
        "--cluster.inter-node-bw-gbps",
        "3.125",
        "--cluster.gpus-per-node",
        "4",
    )
    assert old == new
    default = cli_json(capsys, "--mode", "model", "--gpus", "16", "--seq", "4096")
    assert old != default


def test_heads_out_of_range_is_refused_by_cli_and_library_alike(capsys):
    assert main(["run", "mesh-attention", "--mode", "model", "--heads", "300"]) == 2
    cli_message = capsys.readouterr().err
    with pytest.raises(ValueError) as info:
        model_attention(
            "ring", gpus=4, seq=64, heads=300, head_dim=16, causal=False, dtype_bytes=4, cluster=ClusterSpec()
        )
    assert "heads=300 is out of range: valid range is 1..256" in str(info.value)
    assert str(info.value) in cli_message
