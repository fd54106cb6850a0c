"""Ring, Ulysses, USP and Mesh on real processes against SDPA on the whole sequence.

Reference: ``torch.nn.functional.scaled_dot_product_attention`` in float64 on the unsplit sequence (outputs)
and autograd through it (dq, dk, dv), computed in one process by ``check.run_check``; padded positions
must come out exactly zero (output and gradients).
Tolerances: float64 1e-10 (a few LSE merges and partial-gradient sums reorder float64 rounding);
float32 1e-5 outputs and 1e-4 gradients (float32 rounding of merges/sums over up to 16 partials, measured
against the float64 reference).
"""

from __future__ import annotations

import pytest
import torch
from attention_cases import CASES, check_results, ids

from workbench.distributed import run_workers
from workbench.llm.mesh_attention.check import KERNELS, make_inputs
from workbench.llm.mesh_attention.layout import shard_sequence
from workbench.llm.mesh_attention.plan import local_length, rank_ranges, resolve_order

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow

TOL_OUT = {"float64": 1e-10, "float32": 1e-5}
TOL_GRAD = {"float64": 1e-10, "float32": 1e-4}


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_outputs_match_sdpa(case) -> None:
    dtype = case[5]
    for res in check_results(case):
        if "error" in res:
            continue
        assert res["max_abs_err_out"] <= TOL_OUT[dtype], res["method"]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_gradients_match_sdpa(case) -> None:
    dtype = case[5]
    for res in check_results(case):
        if "error" in res:
            continue
        for grad in ("dq", "dk", "dv"):
            assert res[f"max_abs_err_{grad}"] <= TOL_GRAD[dtype], (res["method"], grad)
        assert res["max_abs_err_grad"] == max(res[f"max_abs_err_{g}"] for g in ("dq", "dk", "dv"))


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_every_method_reports_its_plan(case) -> None:
    gpus, _, heads, _, _, _, extra = case
    results = {r["method"]: r for r in check_results(case)}
    assert list(results) == ["ring", "ulysses", "usp", "mesh", "node_mesh"]
    assert results["ring"]["tile"] == [1, gpus]
    a, b = results["mesh"]["tile"]
    assert a * b == gpus and (list(extra["tile"]) == [a, b] if "tile" in extra else True)
    if heads % gpus:
        assert "heads=" in results["ulysses"]["error"]
    else:
        assert results["ulysses"]["ulysses_degree"] == gpus and results["ulysses"]["tile"] is None
    u = results["usp"]["ulysses_degree"]
    assert gpus % u == 0 and heads % u == 0
    if "ulysses_degree" in extra:
        assert u == extra["ulysses_degree"]
    node = results["node_mesh"]  # Ulysses degree as USP's, tile over the P/u groups
    assert node["ulysses_degree"] == u and node["tile"][0] * node["tile"][1] == gpus // u


def _padding(rank: int, world: int, comm, seq: int, causal: bool) -> list:
    order = resolve_order(None, causal)
    inputs = make_inputs(batch=1, heads=world, seq=seq, head_dim=4, dtype=torch.float64, seed=1)
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order) for t in inputs)
    dout = torch.randn_like(dout)  # nonzero upstream gradient on padded rows too: they must still get none
    length = local_length(seq, world, order)
    pos = torch.cat([torch.arange(s, s + n) for s, n in rank_ranges(rank, world, length, order)])
    pad = pos >= seq
    found = []
    for name, fn in KERNELS.items():
        local = [t.clone().requires_grad_() for t in (q, k, v)]
        out = fn(*local, comm, causal=causal, seq_len=seq)
        out.backward(dout)
        found.append(
            (
                name,
                int(pad.sum()),
                [float(t[:, :, pad].abs().max()) if pad.any() else 0.0 for t in (out, *[x.grad for x in local])],
            )
        )
    return found


@pytest.mark.parametrize("causal", [False, True])
def test_padding_rows_have_zero_output_and_gradient(causal: bool) -> None:
    results = run_workers(_padding, 3, 10, causal)  # padded to 12 tokens (multiple of P=3 and of 2P=6)
    assert sum(rank[0][1] for rank in results) == 2
    for rank in results:
        for name, _, maxima in rank:
            assert maxima == [0.0, 0.0, 0.0, 0.0], name
