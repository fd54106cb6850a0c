"""Fused attention kernels for one block: torch's private flash / memory-efficient ops, which return the LSE.

``forward`` and ``backward`` compute what ``blockwise.block_attn_forward`` / ``block_attn_backward`` compute,
in one fused kernel instead of separate matmul, logsumexp, exp and matmul ops, for blocks whose mask is
"all visible" or "square causal diagonal"; ``split_pair`` cuts any (query piece, key piece) pair into such
blocks (so no row handed to a kernel is fully masked). ``blockwise.attend_ranges`` and
``attend_ranges_backward`` use them whenever ``usable(q)``; the pure-torch path stays the reference.

Ops (private aten; probed, see below):
  CPU, float32 and float64: ``_scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, *,
  attn_mask, scale) -> (out, lse)`` and ``..._for_cpu_backward(dout, q, k, v, out, lse, dropout_p, is_causal,
  *, attn_mask, scale) -> (dq, dk, dv)``.
  CUDA, float32 only: ``_scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp,
  dropout_p, is_causal, *, scale) -> (out, lse, philox_seed, philox_offset)`` and its ``_backward``. Flash on
  CUDA needs float16/bfloat16, which this package never takes; float64 on CUDA runs the pure path.
  **The CUDA path is untested** (written without a GPU): lse there is float32 [B, H, ceil(Sq/32)*32]
  (padded for the backward's 32-row loads), cut to Sq here and re-padded for the backward.

LSE convention (measured on torch 2.13.0+cpu): natural log of sum_j exp(scale * q_i . k_j), scale included;
shape [B, H, Sq] (stored as [B, Sq, H]: strides (Sq*H, 1, H)), dtype of q; out comes back [B, H, Sq, D]
(contiguous for contiguous q), gradients [B, H, S, D] stored as [B, S, H, D]. ``is_causal`` is top-left (query i sees keys 0..i); only
square blocks get it here, where top-left and bottom-right agree. A row fully masked by an ``attn_mask``
would come back as out 0, lse 0 (not -inf): never used here.

The backward kernels read ``out`` only to form FlashAttention-2's delta = rowsum(dout * out); Mesh ships
delta instead of out, so every caller passes delta and ``out_for_delta`` builds an ``out`` that yields it.

Probe and switch: importing this module runs the CPU ops once on tiny tensors against plain-torch math
(forward, causal, and a two-block backward with the merged LSE); if an op is missing, its signature changed
or its result differs, a one-line ``RuntimeWarning`` says so and CPU runs the pure path. CUDA is probed the
same way on its first use, never at import (``run_workers`` forks, and NCCL needs CUDA untouched before).
``ENABLED`` is the one switch: set it False to force the pure path everywhere (tests, benchmarks).
"""

from __future__ import annotations

import math
import warnings

import torch

#: the one switch: False forces the pure-torch path (probe results are kept apart, in ``_works``)
ENABLED = True
#: dtypes each device's fused ops take
DTYPES = {"cpu": (torch.float32, torch.float64), "cuda": (torch.float32,)}
#: probe result per device type ("cpu" filled at import, "cuda" on first use)
_works: dict[str, bool] = {}
_LSE_ALIGN = 32  # CUDA memory-efficient kernels pad the LSE's query axis to a multiple of this


def usable(x: torch.Tensor) -> bool:
    """Whether blocks of tensors like ``x`` (device, dtype) run on the fused ops."""
    kind = x.device.type
    if not ENABLED or x.dtype not in DTYPES.get(kind, ()):
        return False
    if kind not in _works:
        _works[kind] = probe(kind)
    return _works[kind]


def split_pair(
    q_start: int, q_len: int, k_start: int, k_len: int, causal: bool
) -> list[tuple[int, int, int, int, bool]]:
    """Blocks a fused kernel can run for query positions [q_start, q_start+q_len) against keys [k_start, ...).

    Returns ``(row0, row1, col0, col1, diag)`` offsets into the two pieces: ``diag`` blocks are square with
    equal global starts (causal mask = top-left ``is_causal``), the others fully visible. Rows that see no
    key appear in no block (they keep out 0, lse -inf); keys no row sees are left out. Without ``causal``:
    one block.
    """
    if q_len <= 0 or k_len <= 0:
        return []
    q_end, k_end = q_start + q_len, k_start + k_len
    if not causal or k_end - 1 <= q_start:
        return [(0, q_len, 0, k_len, False)]
    if k_start >= q_end:
        return []
    first = max(q_start, k_start)  # where the diagonal starts
    blocks = []
    if k_start < first:  # keys before the first query: every row sees them
        blocks.append((0, q_len, 0, first - k_start, False))
    n = min(q_end, k_end) - first
    blocks.append((first - q_start, first - q_start + n, first - k_start, first - k_start + n, True))
    if q_end > k_end:  # rows after the last key see all keys from the diagonal on
        blocks.append((first - q_start + n, q_len, first - k_start, k_len, False))
    return blocks


def forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float, causal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """One block: q [B, H, Sq, D], k, v [B, H, Sk, D] -> out [B, H, Sq, D], lse [B, H, Sq] (natural log, in
    q's dtype). ``causal``: top-left mask (used on square blocks only). Softmax over this block only."""
    if q.device.type == "cuda":  # untested: memory-efficient kernel (float32)
        out, lse, _, _ = torch.ops.aten._scaled_dot_product_efficient_attention(
            q.contiguous(), k.contiguous(), v.contiguous(), None, True, 0.0, causal, scale=scale
        )
        return out, lse[..., : q.shape[2]].to(q.dtype)
    q, k, v = (_unit_stride(t) for t in (q, k, v))
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=None, scale=scale)


def backward(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    *,
    scale: float,
    causal: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlashAttention-2 backward of one block given the *global* lse [B, H, Sq] (finite) and an ``out``
    [B, H, Sq, D] whose rowsum(dout * out) is the global delta (``out_for_delta``).

    Returns this block's dq [B, H, Sq, D], dk, dv [B, H, Sk, D]; ``causal`` as in ``forward``.
    """
    if q.device.type == "cuda":  # untested: memory-efficient kernel (float32)
        b, h, sq = lse.shape
        lse_pad = lse.new_zeros(b, h, -(-sq // _LSE_ALIGN) * _LSE_ALIGN, dtype=torch.float32)
        lse_pad[..., :sq] = lse
        seed = torch.empty((), dtype=torch.int64)  # philox state: unused without dropout
        dq, dk, dv, _ = torch.ops.aten._scaled_dot_product_efficient_attention_backward(
            dout.contiguous(),
            q.contiguous(),
            k.contiguous(),
            v.contiguous(),
            None,
            out.contiguous(),
            lse_pad,
            seed,
            seed,
            0.0,
            [True, True, True, False],
            causal,
            scale=scale,
        )
        return dq, dk, dv
    dout, q, k, v, out, lse = (_unit_stride(t) for t in (dout, q, k, v, out, lse))
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        dout, q, k, v, out, lse, 0.0, causal, attn_mask=None, scale=scale
    )


def _unit_stride(x: torch.Tensor) -> torch.Tensor:
    """``x``, copied if its last dimension is strided: the CPU kernels read it as dense and silently return
    wrong numbers otherwise (SDPA's front end copies such inputs before calling them)."""
    return x if x.stride(-1) == 1 else x.contiguous()


def out_for_delta(dout: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """A stand-in output o [B, H, S, D] with rowsum(dout * o) = delta [B, H, S] (to a few ulps).

    o = (delta / m) u / (u . u) with m = max|dout| of the row and u = dout / m (so |u| <= 1, max |u| = 1: no
    overflow, no underflow, and the kernel's rowsum has no cancellation). A row with dout = 0 gets o = 0;
    its delta is rowsum(0 * out) = 0 in every caller.
    """
    m = dout.abs().amax(-1, keepdim=True)  # [B, H, S, 1]
    m = torch.where(m > 0, m, torch.ones_like(m))
    u = dout / m
    return u * (delta[..., None] / m / (u * u).sum(-1, keepdim=True).clamp_min(1.0))


def probe(kind: str) -> bool:
    """Run the fused ops of device type ``kind`` once on tiny tensors against plain-torch math; on any
    failure warn once (one line) and return False."""
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)  # tiny tensors: waking a second thread on a busy machine costs ~100x the work
        device = torch.device(kind)
        for dtype in DTYPES[kind]:
            _check(device, dtype)
    except Exception as err:  # noqa: BLE001 -- missing op, changed signature or convention: use the pure path
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:200]
        warnings.warn(
            f"workbench.llm.mesh_attention.fused: fused attention ops unusable on {kind} with torch "
            f"{torch.__version__} ({reason}); using the pure-torch blockwise path",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    finally:
        torch.set_num_threads(threads)
    return True


def _check(device: torch.device, dtype: torch.dtype) -> None:
    """Raise AssertionError unless forward, causal forward and a two-block backward match plain math."""
    gen = torch.Generator().manual_seed(0)
    q, dout = (torch.randn(1, 2, 5, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    k, v = (torch.randn(1, 2, 7, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    scale, tol = 0.6, (1e-10 if dtype == torch.float64 else 1e-4)
    for t in (q, k, v):
        t.requires_grad_()
    s = q @ k.transpose(-2, -1) * scale  # [1, 2, 5, 7]
    ref_lse = torch.logsumexp(s, -1)
    ref_out = torch.softmax(s, -1) @ v
    ref_grads = torch.autograd.grad(ref_out, (q, k, v), dout)
    causal_s = s[..., :5].masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), -math.inf)
    ref_causal = torch.softmax(causal_s, -1) @ v[:, :, :5]
    named = {"q": q, "k": k, "v": v, "dout": dout, "out": ref_out, "lse": ref_lse}
    x = {name: t.detach().to(device=device, dtype=dtype) for name, t in named.items()}

    def close(name: str, got: torch.Tensor, want: torch.Tensor) -> None:
        err = (got.detach().to("cpu", torch.float64) - want.detach()).abs().max().item()
        assert got.shape == want.shape and err <= tol, f"{name} differs from plain math by {err:.1e}"

    out, lse = forward(x["q"], x["k"], x["v"], scale=scale, causal=False)
    close("out", out, ref_out)
    close("lse (natural log, scale included)", lse, ref_lse)
    close("causal out", forward(x["q"], x["k"][:, :, :5], x["v"][:, :, :5], scale=scale, causal=True)[0], ref_causal)
    stand_in = out_for_delta(x["dout"], (x["dout"] * x["out"]).sum(-1))
    grads = [torch.zeros_like(x[n]) for n in "qkv"]
    for cols in (slice(0, 3), slice(3, 7)):  # two key blocks under the merged (global) lse
        dq, dk, dv = backward(
            x["dout"], x["q"], x["k"][:, :, cols], x["v"][:, :, cols], stand_in, x["lse"], scale=scale, causal=False
        )
        grads[0] += dq
        grads[1][:, :, cols] += dk
        grads[2][:, :, cols] += dv
    for name, got, want in zip(("dq", "dk", "dv"), grads, ref_grads):
        close(name, got, want)


_works["cpu"] = probe("cpu")
