"""Tests of ``workbench.llm.mesh_attention.blockwise`` (single-process blockwise attention with LSE merging).

Reference: ``torch.nn.functional.scaled_dot_product_attention`` (forward) and autograd through it (backward).
Tolerances: float64 1e-12 (only rounding of a few merges); float32 1e-5 outputs / 1e-4 gradients (the merge
and the backward's global-LSE recomputation reorder float32 sums).
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from workbench.llm.mesh_attention.blockwise import (
    block_attn_backward,
    block_attn_forward,
    blockwise_attention,
    merge_partials,
)

TOL = {torch.float64: (1e-12, 1e-12), torch.float32: (1e-5, 1e-4)}


def _inputs(shape_q, shape_k, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(*shape_q, generator=gen, dtype=torch.float64).to(dtype).requires_grad_()
    k = torch.randn(*shape_k, generator=gen, dtype=torch.float64).to(dtype).requires_grad_()
    v = torch.randn(*shape_k, generator=gen, dtype=torch.float64).to(dtype).requires_grad_()
    dout = torch.randn(*shape_q, generator=gen, dtype=torch.float64).to(dtype)
    return q, k, v, dout


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq_q, seq_k, block", [(37, 37, 5), (16, 16, 16), (16, 16, 100), (9, 23, 4), (1, 1, 1)])
def test_matches_sdpa_forward_and_backward(dtype, causal, seq_q, seq_k, block) -> None:
    q, k, v, dout = _inputs((2, 3, seq_q, 8), (2, 3, seq_k, 8), dtype)
    out = blockwise_attention(q, k, v, causal=causal, block_size=block)
    grads = torch.autograd.grad(out, (q, k, v), dout)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref_grads = torch.autograd.grad(ref, (q, k, v), dout)
    tol_out, tol_grad = TOL[dtype]
    assert out.dtype == dtype
    assert (out - ref).abs().max().item() <= tol_out
    for name, g, r in zip("qkv", grads, ref_grads):
        assert (g - r).abs().max().item() <= tol_grad, f"d{name}"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_partials_stay_in_working_dtype(dtype) -> None:
    q, k, v, _ = _inputs((1, 2, 4, 8), (1, 2, 6, 8), dtype)
    out, lse = block_attn_forward(q, k, v, scale=0.5)
    assert out.dtype == lse.dtype == dtype
    assert lse.shape == (1, 2, 4)


def test_merge_is_order_independent() -> None:
    """Merging the partials of 5 key blocks in every order gives the same result as one softmax."""
    q, k, v, _ = _inputs((2, 2, 7, 4), (2, 2, 20, 4), torch.float64, seed=3)
    q, k, v = q.detach(), k.detach(), v.detach()
    blocks = [block_attn_forward(q, k[:, :, s : s + 4], v[:, :, s : s + 4], scale=0.5) for s in range(0, 20, 4)]
    full_out, full_lse = block_attn_forward(q, k, v, scale=0.5)
    for perm in itertools.islice(itertools.permutations(range(5)), 0, 120, 7):
        out, lse = blocks[perm[0]]
        for i in perm[1:]:
            out, lse = merge_partials(out, lse, *blocks[i])
        assert (out - full_out).abs().max().item() <= 1e-14
        assert (lse - full_lse).abs().max().item() <= 1e-14


def test_merge_handles_fully_masked_rows_without_nan() -> None:
    q, k, v, _ = _inputs((1, 1, 3, 4), (1, 1, 5, 4), torch.float64)
    q, k, v = q.detach(), k.detach(), v.detach()
    visible = torch.ones(3, 5, dtype=torch.bool)
    hidden = torch.zeros(3, 5, dtype=torch.bool)
    seen_out, seen_lse = block_attn_forward(q, k, v, scale=1.0, mask=visible)
    none_out, none_lse = block_attn_forward(q, k, v, scale=1.0, mask=hidden)
    assert torch.equal(none_out, torch.zeros_like(none_out)) and torch.isneginf(none_lse).all()
    for a, b in [((seen_out, seen_lse), (none_out, none_lse)), ((none_out, none_lse), (seen_out, seen_lse))]:
        out, lse = merge_partials(*a, *b)
        assert torch.equal(out, seen_out) and torch.equal(lse, seen_lse)
    out, lse = merge_partials(none_out, none_lse, none_out, none_lse)
    assert not torch.isnan(out).any() and torch.equal(out, none_out) and torch.isneginf(lse).all()


def test_merge_is_stable_for_large_lse() -> None:
    out1, out2 = torch.ones(1, 1, 1, 2, dtype=torch.float64), 3 * torch.ones(1, 1, 1, 2, dtype=torch.float64)
    lse1, lse2 = torch.full((1, 1, 1), 1000.0, dtype=torch.float64), torch.full((1, 1, 1), 1000.0, dtype=torch.float64)
    out, lse = merge_partials(out1, lse1, out2, lse2)
    assert torch.allclose(out, 2 * torch.ones_like(out)) and abs(lse.item() - (1000 + math.log(2.0))) < 1e-12


def test_block_backward_matches_autograd_of_one_block() -> None:
    """With the block being the whole key set, the global LSE is the block's own: dq, dk, dv = autograd."""
    q, k, v, dout = _inputs((2, 2, 6, 4), (2, 2, 9, 4), torch.float64)
    mask = torch.rand(6, 9, generator=torch.Generator().manual_seed(1)) > 0.3
    mask[:, 0] = True
    out, lse = block_attn_forward(q, k, v, scale=0.7, mask=mask)
    ref = torch.autograd.grad(out, (q, k, v), dout)
    mine = block_attn_backward(
        dout, q.detach(), k.detach(), v.detach(), out.detach(), lse.detach(), scale=0.7, mask=mask
    )
    for g, r in zip(mine, ref):
        assert (g - r).abs().max().item() <= 1e-12


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (
            {"dtype": torch.float16},
            ValueError,
            r"q.dtype=torch.float16 is not supported: valid dtypes are float32, float64",
        ),
        ({"block_size": 0}, ValueError, r"block_size=0 is out of range: valid range is >= 1"),
        ({"shape_k": (1, 3, 5, 4)}, ValueError, r"batch, heads and head_dim must match"),
        ({"shape_q": (3, 5, 4)}, ValueError, r"q has shape \(3, 5, 4\): expected 4 dims \[B, H, S, D\]"),
    ],
)
def test_bad_inputs(kwargs, error, message) -> None:
    shape_q = kwargs.get("shape_q", (1, 2, 5, 4))
    shape_k = kwargs.get("shape_k", (1, 2, 5, 4))
    dtype = kwargs.get("dtype", torch.float64)
    q, k = torch.zeros(shape_q, dtype=dtype), torch.zeros(shape_k, dtype=dtype)
    with pytest.raises(error, match=message):
        blockwise_attention(q, k, k, block_size=kwargs.get("block_size", 4))
