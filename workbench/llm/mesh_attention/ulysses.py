"""DeepSpeed-Ulysses: all-to-all from sequence-sharded to head-sharded, full attention locally, and back.

Each of the u ranks holds a sequence chunk of all H heads; one all-to-all gives each rank the whole sequence
for H/u heads, where plain (blockwise) attention runs; a second all-to-all returns the output to sequence
sharding. The backward is the transpose: dout goes to head sharding, dq/dk/dv come back. q, k, v travel in one
all-to-all (stacked), as do dq, dk, dv. The head count must be divisible by u.

Per rank (fwd+bwd): 8 (u-1)/u chunks of B*H*L*D elements (``volume.py``). The all-to-all helpers
``seq_to_heads`` / ``heads_to_seq`` are shared with USP (``usp.py``).

Reference: Jacobs et al., "DeepSpeed Ulysses" (2023); yunchang ``comm/all_to_all.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.distributed.comm import Comm
from workbench.llm.mesh_attention.blockwise import attend_ranges, attend_ranges_backward, check_qkv, default_scale
from workbench.llm.mesh_attention.layout import Ranges, inverse, member_ranges, resolve_seq_len, sort_rows
from workbench.llm.mesh_attention.plan import check_ulysses_degree, resolve_order


def seq_to_heads(comm: Comm, x: torch.Tensor) -> torch.Tensor:
    """All-to-all [n, B, H, L, D] (my sequence chunk, all heads) -> [n, B, H/u, u*L, D] (all chunks, my heads).

    The gathered sequence holds member 0's chunk, then member 1's, ... (u = comm.size).
    """
    u = comm.size
    n, b, h, length, d = x.shape
    send = x.reshape(n, b, u, h // u, length, d).permute(2, 0, 1, 3, 4, 5).contiguous()  # [u, n, B, H/u, L, D]
    recv = torch.empty_like(send)  # recv[m]: member m's chunk of my heads
    comm.all_to_all_single(recv, send)
    return recv.permute(1, 2, 3, 0, 4, 5).reshape(n, b, h // u, u * length, d)  # [n, B, H/u, u*L, D]


def heads_to_seq(comm: Comm, x: torch.Tensor) -> torch.Tensor:
    """Inverse all-to-all: [n, B, H/u, u*L, D] -> [n, B, H, L, D]."""
    u = comm.size
    n, b, hu, ulen, d = x.shape
    length = ulen // u
    send = x.reshape(n, b, hu, u, length, d).permute(3, 0, 1, 2, 4, 5).contiguous()  # [u, n, B, H/u, L, D]
    recv = torch.empty_like(send)  # recv[m]: my chunk of member m's heads
    comm.all_to_all_single(recv, send)
    return recv.permute(1, 2, 0, 3, 4, 5).reshape(n, b, hu * u, length, d)  # [n, B, H, L, D]


def gathered_rows(ranges: Sequence[Ranges]) -> tuple[torch.Tensor | None, Ranges]:
    """Sorting permutation and merged ranges of the sequence gathered by ``seq_to_heads`` (members in order)."""
    return sort_rows([r for member in ranges for r in member])


def _take(x: torch.Tensor, perm: torch.Tensor | None) -> torch.Tensor:
    return x if perm is None else x.index_select(-2, perm)


def ulysses_forward(
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Forward pass. Returns out [B, H, L, D] and the head-sharded, position-sorted state for the backward:
    (qkv [3, B, H/u, S_pad, D], out_h [B, H/u, S_pad, D], lse_h [B, H/u, S_pad])."""
    perm, merged = gathered_rows(ranges)
    qkv = _take(seq_to_heads(comm, torch.stack([q, k, v])), perm)  # [3, B, H/u, S_pad, D], sorted by position
    out_h, lse_h = attend_ranges(qkv[0], qkv[1], qkv[2], merged, merged, scale=scale, causal=causal, seq_len=seq_len)
    back = out_h if perm is None else out_h.index_select(-2, inverse(perm))
    out = heads_to_seq(comm, back[None])[0]  # [B, H, L, D]
    return out, (qkv, out_h, lse_h)


def ulysses_backward(
    comm: Comm,
    dout: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    ranges: Sequence[Ranges],
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass: dout [B, H, L, D] -> dq, dk, dv [B, H, L, D]."""
    qkv, out_h, lse_h = state
    perm, merged = gathered_rows(ranges)
    dout_h = _take(seq_to_heads(comm, dout[None])[0], perm)  # [B, H/u, S_pad, D]
    delta = (dout_h * out_h).sum(-1)  # [B, H/u, S_pad]
    grads = torch.stack(
        attend_ranges_backward(
            dout_h,
            qkv[0],
            qkv[1],
            qkv[2],
            delta,
            lse_h,
            merged,
            merged,
            scale=scale,
            causal=causal,
            seq_len=seq_len,
        )
    )  # [3, B, H/u, S_pad, D]
    if perm is not None:
        grads = grads.index_select(-2, inverse(perm))
    dq, dk, dv = heads_to_seq(comm, grads)
    return dq, dk, dv


class _UlyssesFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, scale, causal, seq_len):  # type: ignore[override]
        out, state = ulysses_forward(comm, q, k, v, ranges, scale=scale, causal=causal, seq_len=seq_len)
        ctx.save_for_backward(*state)
        ctx.args = (comm, ranges, scale, causal, seq_len)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        comm, ranges, scale, causal, seq_len = ctx.args
        dq, dk, dv = ulysses_backward(
            comm, dout.contiguous(), tuple(ctx.saved_tensors), ranges, scale=scale, causal=causal, seq_len=seq_len
        )
        return dq, dk, dv, None, None, None, None, None


def ulysses_attention(
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
    """Ulysses attention over ``comm`` (degree u = comm.size) on this rank's sequence chunk; differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (``shard_sequence(order=...)``); H divisible by comm.size.
        comm, causal, seq_len, order, scale: as ``ring_attention``.

    Returns:
        out [B, H, L, D].

    Raises:
        ValueError: ``heads`` not divisible by the degree (message names heads, its value, the degree and
        the rule), bad shapes/dtype, or seq_len inconsistent with L.
    """
    check_qkv(q, k, v, same_length=True)
    check_ulysses_degree(comm.size, gpus=comm.size, heads=q.shape[1])
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _UlyssesFn.apply(
        q.contiguous(), k.contiguous(), v.contiguous(), comm, ranges, default_scale(q.shape[-1], scale), causal, seq_len
    )
