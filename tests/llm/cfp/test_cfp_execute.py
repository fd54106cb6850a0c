"""Plans run for real on gloo processes (reference: the unsharded workbench GPT blocks in one process, and the
cost model's bytes). fp64: every output, input-gradient and parameter-gradient shard within 1e-10 (a few
reductions reordered across ranks: ~1e-15 observed); fp32: 1e-4 (same reorderings at 1e-7 precision)."""

from __future__ import annotations

import random

import pytest

from workbench.cli import main
from workbench.cluster import ClusterSpec
from workbench.llm.cfp.execute import CheckSpec, run_check
from workbench.llm.cfp.graph import gpt_graph
from workbench.llm.cfp.problem import build_problem, evaluate
from workbench.llm.cfp.sharding import parse_mesh
from workbench.llm.gpt import GPTConfig

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "mesh,hidden,heads,seq,batch,dtype,tol",
    [
        ("3", 6, 3, 5, 3, "float64", 1e-10),  # odd process count, odd sequence
        ("2x2", 8, 2, 3, 4, "float64", 1e-10),
        ("2", 8, 2, 4, 2, "float32", 1e-4),
    ],
)
def test_random_plans_match_the_unsharded_model_and_the_byte_model(mesh, hidden, heads, seq, batch, dtype, tol):
    cfg = GPTConfig(layers=2, hidden=hidden, heads=heads, seq=seq, vocab=4, ffn_mult=2, dtype=dtype, seed=3)
    m = parse_mesh(mesh)
    problem = build_problem(
        gpt_graph(cfg.shape, batch=batch), m, ClusterSpec(), itemsize=8 if dtype == "float64" else 4
    )
    rng = random.Random(mesh)
    assign = [rng.randrange(len(s)) for s in problem.strats]  # every operator anywhere in its space
    spec = CheckSpec(cfg, batch, m.shape, tuple(problem.strats[i][a] for i, a in enumerate(assign)), seed=1)
    r = run_check(spec, evaluate(problem, assign)[2], timeout_s=120)
    assert r.max_abs_err_out <= tol and r.max_abs_err_grad <= tol and r.max_abs_err_param_grad <= tol
    assert r.model_bytes_per_rank > 0
    assert r.bytes_per_rank == [r.model_bytes_per_rank] * m.size


def test_check_mode_cli(capsys):
    import json

    rc = main(["run", "cfp", "--mode", "check", "--gpus", "4", "--mesh", "2x2", "--layers", "1", "--hidden", "8",
               "--heads", "2", "--seq", "4", "--batch", "4", "--dtype", "float64", "--no-ilp", "--json"])  # fmt: skip
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["max_abs_err_out"] <= 1e-10 and out["max_abs_err_grad"] <= 1e-10
    assert {c["plan"] for c in out["checks"]} == {"cfp", "data-parallel", "megatron"}
    assert all(c["bytes_match"] for c in out["checks"])
    assert out["bytes_per_rank"] == [out["model_bytes_per_rank"]] * 4
