"""Blockwise attention on one device: partial results merged with their log-sum-exp (LSE).

The building block of every distributed kernel here. ``block_attn_forward`` attends a query block to a key
block and returns the partial output with its LSE; ``merge_partials`` combines two partials of the same
query rows exactly (online softmax); ``block_attn_backward`` is the FlashAttention-2 backward of one block
given the *global* LSE and ``delta = rowsum(dout * out)``. ``attend_ranges`` / ``attend_ranges_backward``
run those over a local tensor whose rows are pieces of the global sequence (zigzag half-chunks, padding), so
causal masks and padding come from global positions and fully masked pieces are skipped. They compute each
block with torch's fused attention kernels (``fused.py``: one op per block, forward and backward) when
``fused.usable`` says so, else with ``block_attn_forward`` / ``block_attn_backward`` (the pure-torch
reference path, also what ``fused.ENABLED = False`` forces).

Partials stay in the working dtype (float64 stays float64, float32 partials are float32, never lower).
Layout as ``torch.nn.functional.scaled_dot_product_attention``: q, k, v of shape [B, H, S, D].

Reference: Dao, "FlashAttention-2" (2023), Algorithm 2 (backward); ring-flash-attention ``utils.py`` for the
merge: https://github.com/zhuzilin/ring-flash-attention/blob/main/ring_flash_attn/utils.py
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import torch

from workbench.llm.mesh_attention import fused

Ranges = Sequence[tuple[int, int]]  # (global start, length) of each piece of a local tensor, in order
DTYPES = (torch.float32, torch.float64)
#: ``attend_ranges`` cuts pieces into blocks whose score matrix [B, H, bq, bk] has at most this many
#: elements (32 MiB in float64), so memory stays bounded however long the local sequence is
SCORE_BUDGET = 1 << 22


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, same_length: bool = False) -> None:
    """Validate q, k, v: tensors of shape [B, H, L, D] (k and v alike), float32 or float64, one device.

    ``same_length``: also require q's sequence length to equal k's (local chunks of a distributed kernel).

    Raises:
        TypeError: not tensors. ValueError: wrong rank, mismatched shapes, dtype or device.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of shape [B, H, S, D], got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} has shape {tuple(t.shape)}: expected 4 dims [B, H, S, D]")
        if t.dtype not in DTYPES:
            raise ValueError(f"{name}.dtype={t.dtype} is not supported: valid dtypes are float32, float64")
    if k.shape != v.shape:
        raise ValueError(f"k has shape {tuple(k.shape)} but v has {tuple(v.shape)}: they must match")
    if q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q has shape {tuple(q.shape)} and k {tuple(k.shape)}: batch, heads and head_dim must match")
    if same_length and q.shape != k.shape:
        raise ValueError(f"q has shape {tuple(q.shape)} but k {tuple(k.shape)}: local chunks must have equal shapes")
    if not (q.dtype == k.dtype == v.dtype) or not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v must share dtype and device; got {q.dtype}/{k.dtype}/{v.dtype}")


def default_scale(head_dim: int, scale: float | None) -> float:
    """``scale`` or 1/sqrt(head_dim), like SDPA."""
    return 1.0 / math.sqrt(head_dim) if scale is None else float(scale)


def block_attn_forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of one query block to one key block.

    Parameters:
        q: [B, H, Sq, D]; k, v: [B, H, Sk, D]; scale: score multiplier; mask: bool [Sq, Sk], True = attend.

    Returns:
        out [B, H, Sq, D] (softmax over this block only) and lse [B, H, Sq] (log-sum-exp of the scaled scores),
        in q's dtype. A row with no visible key gets out = 0 and lse = -inf.
    """
    s = torch.matmul(q, k.transpose(-2, -1)) * scale  # [B, H, Sq, Sk]
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)  # [B, H, Sq]; -inf on fully masked rows
    p = torch.exp(s - _finite(lse)[..., None])  # [B, H, Sq, Sk]; exp(-inf) = 0 on masked entries
    return torch.matmul(p, v), lse  # [B, H, Sq, D], [B, H, Sq]


def _finite(lse: torch.Tensor) -> torch.Tensor:
    """LSE with -inf rows replaced by 0 (those rows have only -inf scores, so exp(s - 0) = 0)."""
    return lse.masked_fill(torch.isneginf(lse), 0.0)


def merge_weights(lse: torch.Tensor, block_lse: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight of the block side and the merged LSE ([B, H, S] each) for ``merge_partials``.

    w = sigmoid(block_lse - lse) = exp(block_lse) / (exp(lse) + exp(block_lse)); new_lse = logaddexp(lse,
    block_lse). A side whose LSE is -inf (no visible key) gets weight 0; both -inf gives w = 0, lse -inf.
    """
    both_none = torch.isneginf(lse) & torch.isneginf(block_lse)
    w = torch.sigmoid(torch.where(both_none, float("-inf"), block_lse - lse))  # NaN (-inf - -inf) -> 0
    return w, torch.logaddexp(lse, block_lse)


def merge_partials(
    out: torch.Tensor, lse: torch.Tensor, block_out: torch.Tensor, block_lse: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge two partial attentions of the same query rows (order-independent up to rounding).

    Naive formula (overflows for large LSE):
        new_lse = log(exp(lse) + exp(block_lse))
        out = (exp(lse) * out + exp(block_lse) * block_out) / exp(new_lse)
    Stable formula used here (as ring-flash-attention ``utils.py``, link in the module docstring):
        out = out + sigmoid(block_lse - lse) * (block_out - out)   (one ``torch.lerp``)
        lse = logaddexp(lse, block_lse)
    Rows whose LSE is -inf on one side (a fully masked block) keep the other side exactly; -inf on both
    stays (out, -inf), never NaN.

    Parameters: out, block_out [B, H, S, D]; lse, block_lse [B, H, S]. Returns new (out, lse).
    """
    w, new_lse = merge_weights(lse, block_lse)
    return torch.lerp(out, block_out, w[..., None]), new_lse  # [B, H, S, D], [B, H, S]


def block_attn_backward(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor | None,
    lse: torch.Tensor,
    *,
    scale: float,
    mask: torch.Tensor | None = None,
    delta: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of one block given the global softmax statistics (FlashAttention-2 backward).

    With P = exp(S - lse) (the *global* probabilities restricted to this block) and
    delta = rowsum(dout * out) over the *global* output:
        dV = P^T dout,  dP = dout V^T,  dS = P * (dP - delta),  dQ = scale dS K,  dK = scale dS^T Q.

    Parameters:
        dout, out: [B, H, Sq, D] (``out`` may be None when ``delta`` is given); q: [B, H, Sq, D];
        k, v: [B, H, Sk, D]; lse: global [B, H, Sq]; mask: bool [Sq, Sk]; delta: [B, H, Sq] or None.

    Returns:
        dq [B, H, Sq, D], dk [B, H, Sk, D], dv [B, H, Sk, D]: this block's contributions.
    """
    if delta is None:
        if out is None:
            raise ValueError("block_attn_backward needs out or delta")
        delta = (dout * out).sum(-1)  # [B, H, Sq]
    s = torch.matmul(q, k.transpose(-2, -1)) * scale  # [B, H, Sq, Sk]
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    p = torch.exp(s - _finite(lse)[..., None])  # [B, H, Sq, Sk]
    dv = torch.matmul(p.transpose(-2, -1), dout)  # [B, H, Sk, D]
    dp = torch.matmul(dout, v.transpose(-2, -1))  # [B, H, Sq, Sk]
    ds = p * (dp - delta[..., None])  # [B, H, Sq, Sk]
    dq = torch.matmul(ds, k) * scale  # [B, H, Sq, D]
    dk = torch.matmul(ds.transpose(-2, -1), q) * scale  # [B, H, Sk, D]
    return dq, dk, dv


def _block_len(x: torch.Tensor) -> int:
    """Rows per block so that a [B, H, block, block] score matrix stays within ``SCORE_BUDGET``."""
    return max(64, math.isqrt(SCORE_BUDGET // max(1, x.shape[0] * x.shape[1])))


def _pieces(ranges: Ranges, seq_len: int, block: int) -> list[tuple[int, int, int]]:
    """(local offset, global start, valid length) of each piece, padding (positions >= seq_len) cut off,
    pieces longer than ``block`` cut into blocks."""
    pieces, offset = [], 0
    for start, length in ranges:
        valid = max(0, min(length, seq_len - start))
        for sub in range(0, valid, block):
            pieces.append((offset + sub, start + sub, min(block, valid - sub)))
        offset += length
    return pieces


def _pair_mask(
    q_start: int, q_len: int, k_start: int, k_len: int, causal: bool, device: torch.device
) -> tuple[bool, torch.Tensor | None]:
    """(compute?, mask) for a query piece against a key piece; mask None means all visible."""
    if q_len == 0 or k_len == 0:
        return False, None
    if not causal or k_start + k_len - 1 <= q_start:
        return True, None
    if k_start > q_start + q_len - 1:
        return False, None  # every key is after every query
    rows = torch.arange(q_start, q_start + q_len, device=device)[:, None]
    cols = torch.arange(k_start, k_start + k_len, device=device)[None, :]
    return True, rows >= cols  # [q_len, k_len]


def _tasks(
    q_ranges: Ranges,
    k_ranges: Ranges,
    *,
    seq_len: int,
    causal: bool,
    use_fused: bool,
    like: torch.Tensor,
) -> Iterator[tuple[slice, slice, torch.Tensor | None, bool]]:
    """Blocks to compute: (local rows, local cols, mask, diag).

    Pure path: one block per piece pair (pieces cut to ``_block_len`` rows), ``mask`` from ``_pair_mask``.
    Fused path: pieces uncut (the kernels never hold a whole score matrix), each pair cut by
    ``fused.split_pair`` into fully visible and square causal (``diag``) blocks; ``mask`` is None.
    Fully masked pairs yield nothing.
    """
    block = max(1, seq_len) if use_fused else _block_len(like)
    k_pieces = _pieces(k_ranges, seq_len, block)
    for q_off, q_start, q_len in _pieces(q_ranges, seq_len, block):
        for k_off, k_start, k_len in k_pieces:
            if use_fused:
                for r0, r1, c0, c1, diag in fused.split_pair(q_start, q_len, k_start, k_len, causal):
                    yield slice(q_off + r0, q_off + r1), slice(k_off + c0, k_off + c1), None, diag
                continue
            run, mask = _pair_mask(q_start, q_len, k_start, k_len, causal, like.device)
            if run:
                yield slice(q_off, q_off + q_len), slice(k_off, k_off + k_len), mask, False


def attend_ranges(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_ranges: Ranges,
    k_ranges: Ranges,
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Partial attention of local queries to local keys whose rows are pieces of the global sequence.

    Parameters:
        q: [B, H, Lq, D] whose rows are the global ranges ``q_ranges`` in order; k, v: [B, H, Lk, D] likewise.
        causal: mask key positions after the query position. seq_len: positions >= seq_len are padding
            (padded keys never attended; padded query rows get out 0, lse -inf).

    Returns:
        out [B, H, Lq, D], lse [B, H, Lq]; rows that saw no key have (0, -inf). Fully masked piece pairs
        are skipped; the others are merged with ``merge_partials``. Blocks run on the fused kernels
        (``fused.py``) when ``fused.usable(q)``, else on ``block_attn_forward``.
    """
    use_fused = fused.usable(q)
    out = q.new_zeros(q.shape)  # [B, H, Lq, D]
    lse = q.new_full(q.shape[:-1], float("-inf"))  # [B, H, Lq]
    for rows, cols, mask, diag in _tasks(
        q_ranges, k_ranges, seq_len=seq_len, causal=causal, use_fused=use_fused, like=q
    ):
        q_b, k_b, v_b = q[:, :, rows], k[:, :, cols], v[:, :, cols]
        if use_fused:
            blk_out, blk_lse = fused.forward(q_b, k_b, v_b, scale=scale, causal=diag)
        else:
            blk_out, blk_lse = block_attn_forward(q_b, k_b, v_b, scale=scale, mask=mask)
        # merge in place (one lerp over out); merging into (0, -inf) gives the block exactly
        w, lse[:, :, rows] = merge_weights(lse[:, :, rows], blk_lse)
        out[:, :, rows].lerp_(blk_out, w[..., None])
    return out, lse


def attend_ranges_backward(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    delta: torch.Tensor,
    lse: torch.Tensor,
    q_ranges: Ranges,
    k_ranges: Ranges,
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward of ``attend_ranges`` given the global ``lse`` and ``delta`` ([B, H, Lq]) of the query rows.

    Returns dq [B, H, Lq, D], dk [B, H, Lk, D], dv [B, H, Lk, D] (zero on padding and skipped pieces).
    """
    use_fused = fused.usable(q)
    dq = torch.zeros_like(q)
    dk = torch.zeros_like(k)
    dv = torch.zeros_like(v)
    out = fused.out_for_delta(dout, delta) if use_fused else None  # the kernels read delta off an out
    lse = _finite(lse)  # as block_attn_backward does per block: the kernels need no -inf
    for rows, cols, mask, diag in _tasks(
        q_ranges, k_ranges, seq_len=seq_len, causal=causal, use_fused=use_fused, like=q
    ):
        d_b, q_b, k_b, v_b = dout[:, :, rows], q[:, :, rows], k[:, :, cols], v[:, :, cols]
        if use_fused:
            assert out is not None
            g_q, g_k, g_v = fused.backward(
                d_b, q_b, k_b, v_b, out[:, :, rows], lse[:, :, rows], scale=scale, causal=diag
            )
        else:
            g_q, g_k, g_v = block_attn_backward(
                d_b, q_b, k_b, v_b, None, lse[:, :, rows], scale=scale, mask=mask, delta=delta[:, :, rows]
            )
        dq[:, :, rows] += g_q
        dk[:, :, cols] += g_k
        dv[:, :, cols] += g_v
    return dq, dk, dv


def block_ranges(seq_len: int, block_size: int) -> list[tuple[int, int]]:
    """Split 0..seq_len into consecutive blocks of ``block_size`` (the last one may be shorter)."""
    return [(s, min(block_size, seq_len - s)) for s in range(0, seq_len, block_size)]


class _BlockwiseFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, block_size, scale):  # type: ignore[override]
        seq_q, seq_k = q.shape[2], k.shape[2]
        qr, kr = block_ranges(seq_q, block_size), block_ranges(seq_k, block_size)
        out, lse = attend_ranges(q, k, v, qr, kr, scale=scale, causal=causal, seq_len=max(seq_q, seq_k))
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.args = (qr, kr, scale, causal, max(seq_q, seq_k))
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        q, k, v, out, lse = ctx.saved_tensors
        qr, kr, scale, causal, seq_len = ctx.args
        dout = dout.contiguous()
        delta = (dout * out).sum(-1)  # [B, H, Sq]
        dq, dk, dv = attend_ranges_backward(
            dout, q, k, v, delta, lse, qr, kr, scale=scale, causal=causal, seq_len=seq_len
        )
        return dq, dk, dv, None, None, None


def blockwise_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    block_size: int = 64,
    scale: float | None = None,
) -> torch.Tensor:
    """Single-process blockwise attention with LSE merging; differentiable (custom backward).

    Parameters:
        q: [B, H, Sq, D]; k, v: [B, H, Sk, D]; float32 or float64. causal: top-left aligned causal mask
            (query i sees keys 0..i, as SDPA's ``is_causal``). block_size: rows per block (>= 1).
        scale: score multiplier (default 1/sqrt(D)).

    Returns:
        [B, H, Sq, D], equal to ``F.scaled_dot_product_attention(q, k, v, is_causal=causal)`` up to rounding.

    Example:
        >>> q = k = v = torch.randn(1, 2, 10, 4, dtype=torch.float64)
        >>> out = blockwise_attention(q, k, v, causal=True, block_size=3)
    """
    check_qkv(q, k, v)
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size={block_size!r} is out of range: valid range is >= 1")
    return _BlockwiseFn.apply(q, k, v, causal, block_size, default_scale(q.shape[-1], scale))
