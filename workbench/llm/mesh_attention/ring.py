"""Ring-Attention: rank i computes row i of the (Q chunk x KV chunk) block matrix, rotating KV round a ring.

Forward: at step t rank i holds KV of rank i-t; it posts the transfer of that chunk to rank i+1 (and the
receive of the next from rank i-1) *before* computing on it, so the transfer overlaps the compute; partial
results are merged with their LSE (``blockwise.merge_partials``). Causal runs use the zigzag layout (rank i
holds half-chunks i and 2P-1-i), so every step has the same work: half of each block is masked, and the
masked pieces are skipped (``blockwise.attend_ranges``).

Backward (as ring-flash-attention): KV rotates again; dq accumulates locally; the dk/dv of chunk j travel
with it as an accumulator: created at rank j+1, summed into at j+2, ..., and the last hop lands on j, which
adds its own block's share. Per rank: (P-1) KV messages forward, (P-1) KV + (P-1) dKV messages backward.

Layout: pure ``ring_forward`` / ``ring_backward`` taking the ``Comm``, a thin autograd wrapper, and the
public ``ring_attention``. Reference: Liu et al., "Ring Attention with Blockwise Transformers" (2023);
https://github.com/zhuzilin/ring-flash-attention (zigzag_ring_flash_attn.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.distributed.comm import Comm
from workbench.llm.mesh_attention.blockwise import (
    attend_ranges,
    attend_ranges_backward,
    check_qkv,
    default_scale,
    merge_partials,
)
from workbench.llm.mesh_attention.layout import Ranges, member_ranges, resolve_seq_len
from workbench.llm.mesh_attention.plan import resolve_order, ring_source

TAG_KV, TAG_DKV = 11, 12


def ring_forward(
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward pass of Ring-Attention on this member's chunk.

    Parameters:
        comm: the ring (member m sends to m+1); q, k, v: local [B, H, L, D]; ranges[m]: global ranges of
        member m's chunk (``layout.member_ranges``); scale, causal, seq_len: as ``blockwise.attend_ranges``.

    Returns:
        out [B, H, L, D] and lse [B, H, L] of the local queries over the whole sequence.
    """
    size, me = comm.size, comm.rank
    nxt, prv = (me + 1) % size, (me - 1) % size
    kv = torch.stack([k, v])  # [2, B, H, L, D]: one message per step
    out = lse = None
    for step in range(size):
        src = ring_source(me, step, size)  # owner of the KV chunk held at this step
        if step + 1 < size:
            buf = torch.empty_like(kv)
            pending = comm.p2p([(kv, nxt)], [(buf, prv)], tag=TAG_KV)  # next chunk in flight during compute
        blk_out, blk_lse = attend_ranges(
            q, kv[0], kv[1], ranges[me], ranges[src], scale=scale, causal=causal, seq_len=seq_len
        )
        if out is None:
            out, lse = blk_out, blk_lse
        else:
            out, lse = merge_partials(out, lse, blk_out, blk_lse)
        if step + 1 < size:
            pending.wait()
            kv = buf
    assert out is not None and lse is not None
    return out, lse


def ring_backward(
    comm: Comm,
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    ranges: Sequence[Ranges],
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass of Ring-Attention: returns dq, dk, dv of the local chunk ([B, H, L, D] each).

    Every rank issues, per step, the same sequence of batches (KV rotation, then the dKV accumulator hop),
    which keeps the code deadlock-free under NCCL as well as gloo.
    """
    size, me = comm.size, comm.rank
    nxt, prv = (me + 1) % size, (me - 1) % size
    delta = (dout * out).sum(-1)  # [B, H, L]: rowsum(dout * out), the softmax-gradient correction
    kv = torch.stack([k, v])  # [2, B, H, L, D]
    dq = torch.zeros_like(q)
    dkv_own = None  # my chunk's gradient from my own queries
    acc_in = acc_pending = None  # travelling dk/dv accumulator of the chunk I will hold next
    for step in range(size):
        src = ring_source(me, step, size)
        if step + 1 < size:
            buf = torch.empty_like(kv)
            kv_pending = comm.p2p([(kv, nxt)], [(buf, prv)], tag=TAG_KV)
        g_q, g_k, g_v = attend_ranges_backward(
            dout,
            q,
            kv[0],
            kv[1],
            delta,
            lse,
            ranges[me],
            ranges[src],
            scale=scale,
            causal=causal,
            seq_len=seq_len,
        )
        dq += g_q
        contrib = torch.stack([g_k, g_v])  # [2, B, H, L, D]
        if step == 0:
            dkv_own = contrib
        else:
            if acc_pending is not None:
                acc_pending.wait()
                contrib = contrib + acc_in
            acc_in = torch.empty_like(contrib)
            acc_pending = comm.p2p([(contrib, nxt)], [(acc_in, prv)], tag=TAG_DKV)
        if step + 1 < size:
            kv_pending.wait()
            kv = buf
    assert dkv_own is not None
    if acc_pending is not None:  # the last hop brings my own chunk's accumulated gradient home
        acc_pending.wait()
        dkv_own = dkv_own + acc_in
    return dq, dkv_own[0], dkv_own[1]


class _RingFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, scale, causal, seq_len):  # type: ignore[override]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out, lse = ring_forward(comm, q, k, v, ranges, scale=scale, causal=causal, seq_len=seq_len)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.args = (comm, ranges, scale, causal, seq_len)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        q, k, v, out, lse = ctx.saved_tensors
        comm, ranges, scale, causal, seq_len = ctx.args
        dq, dk, dv = ring_backward(
            comm, dout.contiguous(), q, k, v, out, lse, ranges, scale=scale, causal=causal, seq_len=seq_len
        )
        return dq, dk, dv, None, None, None, None, None


def ring_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    comm: Comm,
    *,
    causal: bool = False,
    seq_len: int | None = None,
    order: str | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """Ring-Attention over ``comm`` on this rank's sequence chunk; differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (float32/float64), laid out by ``shard_sequence(order=...)``.
        comm: all ranks of the ring. causal: causal mask over global positions.
        seq_len: true sequence length S (positions >= S are padding); None means P*L (no padding).
        order: "contiguous" or "zigzag" (None: zigzag iff causal). scale: default 1/sqrt(D).

    Returns:
        out [B, H, L, D]: attention of the local queries over the whole sequence (zeros on padding rows).

    Raises:
        ValueError: bad shapes/dtype, or seq_len inconsistent with L.

    Example (inside ``run_workers``):
        >>> q_loc = shard_sequence(q, rank=rank, world_size=P, order="zigzag")  # doctest: +SKIP
        >>> out_loc = ring_attention(q_loc, k_loc, v_loc, comm, causal=True, seq_len=S)  # doctest: +SKIP

    Communication per rank (fwd+bwd): 6(P-1) chunks of B*H*L*D elements (``volume.py``).
    """
    check_qkv(q, k, v, same_length=True)
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _RingFn.apply(q, k, v, comm, ranges, default_scale(q.shape[-1], scale), causal, seq_len)
