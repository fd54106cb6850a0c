"""Ring, Ulysses, USP and Mesh on real processes against SDPA on the whole sequence.

Reference: ``torch.nn.functional.scaled_dot_product_attention`` in float64 on the unsplit sequence (outputs)
and autograd through it (dq, dk, dv), computed in one process by ``check.run_check``.
Tolerances: float64 1e-10 (a few LSE merges and partial-gradient sums reorder float64 rounding);
float32 1e-5 outputs and 1e-4 gradients (float32 rounding of merges/sums over up to 16 partials, measured
against the float64 reference).
"""

from __future__ import annotations

import pytest

from attention_cases import CASES, check_results, ids

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
    assert list(results) == ["ring", "ulysses", "usp", "mesh"]
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
