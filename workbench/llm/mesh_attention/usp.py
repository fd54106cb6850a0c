"""USP (Unified Sequence Parallelism): Ulysses of degree u inside groups, Ring of degree r = P/u across them.

Ranks g*u .. g*u+u-1 form Ulysses group g (consecutive ranks, so usually one node). An all-to-all inside the
group turns the u sequence chunks of all heads into the group's *super-chunk* (u chunks) of H/u heads; then
Ring-Attention runs across the r groups, member x of each group in a ring with member x of the others
(ranks x, x+u, x+2u, ...), rotating super-chunks of the same size as one rank's chunk; a last all-to-all
returns the output. u = P is Ulysses, u = 1 is Ring. The head count must be divisible by u.

With the zigzag layout a super-chunk is still causally balanced (every rank-pair block is half masked), and
after sorting by position it is two contiguous runs, so the blocks stay few and large.

Per rank (fwd+bwd): 8(u-1)/u + 6(r-1) chunks of B*H*L*D elements (``volume.py``).
Reference: Fang & Zhao, "USP: A Unified Sequence Parallelism Approach for Long Context Generative AI"
(2024); https://github.com/feifeibear/long-context-attention.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from workbench.distributed.comm import Comm
from workbench.llm.mesh_attention.blockwise import check_qkv, default_scale
from workbench.llm.mesh_attention.layout import Ranges, inverse, member_ranges, resolve_seq_len
from workbench.llm.mesh_attention.plan import check_ulysses_degree, default_ulysses_degree, resolve_order
from workbench.llm.mesh_attention.ring import ring_backward, ring_forward
from workbench.llm.mesh_attention.ulysses import gathered_rows, heads_to_seq, seq_to_heads


def usp_comms(comm: Comm, degree: int) -> tuple[Comm, Comm]:
    """(Ulysses group comm with a process group, ring view) of this rank; collective on ``comm``."""
    size = comm.size
    ulysses_parts = [list(range(g * degree, (g + 1) * degree)) for g in range(size // degree)]
    ring_parts = [list(range(x, size, degree)) for x in range(degree)]
    return comm.split(ulysses_parts, collective=True), comm.split(ring_parts, collective=False)


def _group_rows(ranges: Sequence[Ranges], degree: int) -> tuple[list[torch.Tensor | None], list[Ranges]]:
    """Per Ulysses group: the permutation sorting its super-chunk by position, and its merged ranges."""
    perms, merged = [], []
    for g in range(len(ranges) // degree):
        perm, rows = gathered_rows(ranges[g * degree : (g + 1) * degree])
        perms.append(perm)
        merged.append(rows)
    return perms, merged


#: the sequence-parallel kernel run across Ulysses groups: (comm of the member-x ranks, q, k, v [B, H/u, u*L, D],
#: the groups' merged ranges) -> (out, lse); and its backward -> (dq, dk, dv)
InnerForward = Callable[[Comm, torch.Tensor, torch.Tensor, torch.Tensor, list[Ranges]], tuple[torch.Tensor, ...]]
InnerBackward = Callable[..., Sequence[torch.Tensor]]


def ulysses_forward(
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    degree: int,
    inner: InnerForward,
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """Ulysses of degree ``degree`` inside groups around ``inner`` across them (USP's Ring, node-level Mesh's
    Mesh): all-to-all to the group's super-chunk of H/u heads sorted by position, ``inner``, all-to-all back.
    Returns out [B, H, L, D] and the head-sharded state (q, k, v, out, lse of the super-chunk)."""
    ulysses, across = usp_comms(comm, degree)
    perms, merged = _group_rows(ranges, degree)
    perm = perms[across.rank]  # member index across groups = my Ulysses group id
    qkv = seq_to_heads(ulysses, torch.stack([q, k, v]))  # [3, B, H/u, u*L, D]
    if perm is not None:
        qkv = qkv.index_select(-2, perm)  # super-chunk sorted by position: two runs under zigzag
    q_h, k_h, v_h = (t.contiguous() for t in qkv)
    out_h, lse_h = inner(across, q_h, k_h, v_h, merged)
    back = out_h if perm is None else out_h.index_select(-2, inverse(perm))
    out = heads_to_seq(ulysses, back[None])[0]  # [B, H, L, D]
    return out, (q_h, k_h, v_h, out_h, lse_h)


def ulysses_backward(
    comm: Comm,
    dout: torch.Tensor,
    state: Sequence[torch.Tensor],
    ranges: Sequence[Ranges],
    degree: int,
    inner: InnerBackward,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward of :func:`ulysses_forward`: dout [B, H, L, D] -> dq, dk, dv [B, H, L, D]; ``inner(across, dout_h,
    q_h, k_h, v_h, out_h, lse_h, merged)`` is the inner kernel's backward."""
    ulysses, across = usp_comms(comm, degree)
    perms, merged = _group_rows(ranges, degree)
    perm = perms[across.rank]
    dout_h = seq_to_heads(ulysses, dout[None])[0]  # [B, H/u, u*L, D]
    if perm is not None:
        dout_h = dout_h.index_select(-2, perm)
    grads = torch.stack(inner(across, dout_h.contiguous(), *state, merged))  # [3, B, H/u, u*L, D]
    if perm is not None:
        grads = grads.index_select(-2, inverse(perm))
    dq, dk, dv = heads_to_seq(ulysses, grads)
    return dq, dk, dv


def usp_forward(
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    *,
    degree: int,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """Forward pass: Ring across the Ulysses groups. Returns out [B, H, L, D] and the head-sharded state."""

    def ring(across, q_h, k_h, v_h, merged):
        return ring_forward(across, q_h, k_h, v_h, merged, scale=scale, causal=causal, seq_len=seq_len)

    return ulysses_forward(comm, q, k, v, ranges, degree, ring)


def usp_backward(
    comm: Comm,
    dout: torch.Tensor,
    state: Sequence[torch.Tensor],
    ranges: Sequence[Ranges],
    *,
    degree: int,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass: dout [B, H, L, D] -> dq, dk, dv [B, H, L, D]."""

    def ring(across, dout_h, q_h, k_h, v_h, out_h, lse_h, merged):
        return ring_backward(
            across, dout_h, q_h, k_h, v_h, out_h, lse_h, merged, scale=scale, causal=causal, seq_len=seq_len
        )

    return ulysses_backward(comm, dout, state, ranges, degree, ring)


class _UspFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, degree, scale, causal, seq_len):  # type: ignore[override]
        out, state = usp_forward(comm, q, k, v, ranges, degree=degree, scale=scale, causal=causal, seq_len=seq_len)
        ctx.save_for_backward(*state)
        ctx.args = (comm, ranges, degree, scale, causal, seq_len)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        comm, ranges, degree, scale, causal, seq_len = ctx.args
        dq, dk, dv = usp_backward(
            comm,
            dout.contiguous(),
            ctx.saved_tensors,
            ranges,
            degree=degree,
            scale=scale,
            causal=causal,
            seq_len=seq_len,
        )
        return dq, dk, dv, None, None, None, None, None, None


def usp_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    comm: Comm,
    *,
    causal: bool = False,
    ulysses_degree: int | None = None,
    gpus_per_node: int | None = None,
    seq_len: int | None = None,
    order: str | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """USP attention (Ulysses degree u x Ring degree P/u) on this rank's sequence chunk; differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (``shard_sequence(order=...)``).
        comm: all P ranks (collective: the first call creates the Ulysses process groups).
        ulysses_degree: u, dividing P and H; None takes ``plan.default_ulysses_degree(P, H, gpus_per_node)``.
        causal, seq_len, order, scale: as ``ring_attention``.

    Returns:
        out [B, H, L, D].

    Raises:
        ValueError: u not dividing P, ``heads`` not divisible by u (message names both), bad shapes.
    """
    check_qkv(q, k, v, same_length=True)
    heads = q.shape[1]
    if ulysses_degree is None:
        ulysses_degree = default_ulysses_degree(comm.size, heads, gpus_per_node)
    degree = check_ulysses_degree(ulysses_degree, gpus=comm.size, heads=heads)
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _UspFn.apply(
        q.contiguous(),
        k.contiguous(),
        v.contiguous(),
        comm,
        ranges,
        degree,
        default_scale(q.shape[-1], scale),
        causal,
        seq_len,
    )
