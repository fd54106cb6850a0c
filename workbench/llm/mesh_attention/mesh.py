"""Mesh-Attention: each rank computes an a x b tile of the (Q chunk x KV chunk) block matrix, a*b = P.

Plan (``plan.MeshPlan``): tiles form a b x a grid, one per rank (row-first, or placed by the topology-aware
``map_tiles_to_nodes``). Rank r's tile has the Q chunks of its *row group* (a ranks) and the KV chunks of
its *column group* (b ranks); r belongs to both, so its tile holds its own diagonal block (local Q-KV).

Forward, per rank, following ``plan.greedy_schedule``:
  1. post, as one batch, the fetches of the (a-1) remote Q chunks and (b-1) remote KV chunks (and the sends
     of its own q / k+v to the peers that need them), in greedy order and KV Partition Rotation order;
  2. compute the resident block (own Q, own KV) while everything is in flight, then each block as soon as its
     chunks have landed (``Pending.wait_recv``), merging partials per Q row with the LSE rule;
  3. return the (a-1) remote rows' partial (O, LSE) to their owners (one batch), who merge them.
Backward re-fetches rather than keeps the remote chunks (peak memory like the forward, not a+b chunks held
from forward to backward): q, dout, LSE and delta = rowsum(dout*out) from the row peers (delta instead of O
saves D-1 elements per row), k+v from the column peers; it computes the tile's dq/dk/dv partials and sends
dq to the (a-1) Q owners and dk+dv to the (b-1) KV owners, who add them. ``volume.py`` counts exactly this.

KV Partition Rotation (our reading of the paper's KVR, see ``plan.fetch_order``): the member at position m of
a group fetches from m-1, m-2, ... so that at each step every rank serves exactly one peer.
Causal: the zigzag layout makes every block exactly half masked, so all tiles carry equal work; masked
pieces are skipped. With a = 1, b = P, Mesh performs Ring's computation in Ring's order (same outputs).

Reference: Chen et al., "Mesh-Attention" (arXiv 2512.20968); /work/shared/papers/mesh-attention.md.
"""

from __future__ import annotations

from typing import Sequence

import torch

from workbench.llm.mesh_attention.blockwise import (
    attend_ranges,
    attend_ranges_backward,
    check_qkv,
    default_scale,
    merge_partials,
)
from workbench.llm.mesh_attention.layout import Ranges, member_ranges, resolve_seq_len
from workbench.llm.mesh_attention.plan import MeshPlan, choose_tile, fetch_order, greedy_schedule, make_mesh_plan, resolve_order
from workbench.distributed.comm import Comm

TAG_FETCH, TAG_RETURN = 21, 22


def _post_fetches(
    comm: Comm, plan: MeshPlan, steps: list, q_payload: torch.Tensor, kv_payload: torch.Tensor,
    q_buffer: torch.Tensor, kv_buffer: torch.Tensor,
) -> tuple[object, dict[tuple[str, int], int], dict[int, torch.Tensor], dict[int, torch.Tensor]]:
    """Post one batch: my payloads to the peers that fetch them, receives in the schedule's fetch order.

    Returns (pending, recv index of each (kind, position), Q buffers by row position, KV buffers by column).
    """
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    # the peer at position my_row + s fetches from me at its step s (rotation): serve them in that order
    sends = [(q_payload, rows[(my_row + s) % plan.a]) for s in range(1, plan.a)]
    sends += [(kv_payload, cols[(my_col + s) % plan.b]) for s in range(1, plan.b)]
    recvs, index, q_bufs, kv_bufs = [], {}, {}, {}
    for step in steps:
        if step.op != "fetch":
            continue
        if step.kind == "q":
            buf = q_bufs[step.row] = torch.empty_like(q_buffer)
            peer = rows[step.row]
        else:
            buf = kv_bufs[step.col] = torch.empty_like(kv_buffer)
            peer = cols[step.col]
        index[(step.kind, step.row if step.kind == "q" else step.col)] = len(recvs)
        recvs.append((buf, peer))
    return comm.p2p(sends, recvs, tag=TAG_FETCH), index, q_bufs, kv_bufs


def mesh_forward(
    comm: Comm, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ranges: Sequence[Ranges], plan: MeshPlan, *,
    scale: float, causal: bool, seq_len: int, rotate: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward pass of Mesh-Attention: out [B, H, L, D] and lse [B, H, L] of this rank's queries.

    ``rotate``: KV Partition Rotation fetch order (False: every rank fetches in group order).
    """
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    steps = greedy_schedule(plan.a, plan.b, row=my_row, col=my_col, rotate=rotate)
    kv = torch.stack([k, v])  # [2, B, H, L, D]: one message per KV fetch
    pending, index, q_bufs, kv_bufs = _post_fetches(comm, plan, steps, q, kv, q, kv)
    q_of = {my_row: q, **q_bufs}
    kv_of = {my_col: kv, **kv_bufs}
    acc: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # row position -> merged (out, lse)
    for step in steps:
        if step.op == "wait":
            pending.wait_recv(index[(step.kind, step.row if step.kind == "q" else step.col)])
        elif step.op == "compute":
            r, c = step.row, step.col
            kv_c = kv_of[c]
            blk = attend_ranges(q_of[r], kv_c[0], kv_c[1], ranges[rows[r]], ranges[cols[c]],
                                scale=scale, causal=causal, seq_len=seq_len)
            acc[r] = blk if r not in acc else merge_partials(*acc[r], *blk)
    pending.wait()
    out, lse = acc[my_row]
    if plan.a == 1:
        return out, lse
    # return phase: partial (O, LSE) of each remote row to its owner, packed [B, H, L, D+1]
    sends = [(torch.cat([acc[s.row][0], acc[s.row][1][..., None]], -1), rows[s.row])
             for s in steps if s.op == "send"]
    peers = fetch_order(plan.a, my_row)  # merge in rotation order (deterministic)
    bufs = [q.new_empty(*q.shape[:-1], q.shape[-1] + 1) for _ in peers]
    comm.p2p(sends, [(buf, rows[p]) for buf, p in zip(bufs, peers)], tag=TAG_RETURN).wait()
    for buf in bufs:
        out, lse = merge_partials(out, lse, buf[..., :-1], buf[..., -1])
    return out, lse


def mesh_backward(
    comm: Comm, dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
    lse: torch.Tensor, ranges: Sequence[Ranges], plan: MeshPlan, *, scale: float, causal: bool, seq_len: int,
    rotate: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass of Mesh-Attention: dq, dk, dv of this rank's chunk ([B, H, L, D] each)."""
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    steps = greedy_schedule(plan.a, plan.b, row=my_row, col=my_col, backward=True, rotate=rotate)
    delta = (dout * out).sum(-1)  # [B, H, L]
    shape, rows_shape = q.shape, q.shape[:-1]
    n, m = q.numel(), delta.numel()
    # Q-side package: q, dout (N each), lse, delta (M each) flattened into one message
    q_pack = torch.cat([q.reshape(-1), dout.reshape(-1), lse.reshape(-1), delta.reshape(-1)])
    kv = torch.stack([k, v])  # [2, B, H, L, D]
    pending, index, q_bufs, kv_bufs = _post_fetches(comm, plan, steps, q_pack, kv, q_pack, kv)

    def unpack(pack: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (pack[:n].view(shape), pack[n:2 * n].view(shape), pack[2 * n:2 * n + m].view(rows_shape),
                pack[2 * n + m:].view(rows_shape))

    q_of = {my_row: (q, dout, lse, delta)}
    kv_of = {my_col: kv}
    dq_acc: dict[int, torch.Tensor] = {}
    dkv_acc: dict[int, torch.Tensor] = {}
    for step in steps:
        if step.op == "wait":
            pending.wait_recv(index[(step.kind, step.row if step.kind == "q" else step.col)])
            if step.kind == "q":
                q_of[step.row] = unpack(q_bufs[step.row])
            else:
                kv_of[step.col] = kv_bufs[step.col]
        elif step.op == "compute":
            r, c = step.row, step.col
            q_r, dout_r, lse_r, delta_r = q_of[r]
            kv_c = kv_of[c]
            g_q, g_k, g_v = attend_ranges_backward(dout_r, q_r, kv_c[0], kv_c[1], delta_r, lse_r,
                                                   ranges[rows[r]], ranges[cols[c]], scale=scale, causal=causal,
                                                   seq_len=seq_len)
            dq_acc[r] = g_q if r not in dq_acc else dq_acc[r] + g_q
            g_kv = torch.stack([g_k, g_v])
            dkv_acc[c] = g_kv if c not in dkv_acc else dkv_acc[c] + g_kv
    pending.wait()
    dq, dkv = dq_acc[my_row], dkv_acc[my_col]
    # return phase: dq partials to Q owners, dk+dv partials to KV owners, one batch
    sends = [(dq_acc[s.row], rows[s.row]) if s.kind == "dq" else (dkv_acc[s.col], cols[s.col])
             for s in steps if s.op == "send"]
    q_peers, kv_peers = fetch_order(plan.a, my_row), fetch_order(plan.b, my_col)
    dq_bufs = [torch.empty_like(dq) for _ in q_peers]
    dkv_bufs = [torch.empty_like(dkv) for _ in kv_peers]
    recvs = [(b, rows[p]) for b, p in zip(dq_bufs, q_peers)] + [(b, cols[p]) for b, p in zip(dkv_bufs, kv_peers)]
    if sends or recvs:
        comm.p2p(sends, recvs, tag=TAG_RETURN).wait()
    for buf in dq_bufs:
        dq = dq + buf
    for buf in dkv_bufs:
        dkv = dkv + buf
    return dq, dkv[0], dkv[1]


class _MeshFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, plan, scale, causal, seq_len, rotate):  # type: ignore[override]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out, lse = mesh_forward(comm, q, k, v, ranges, plan, scale=scale, causal=causal, seq_len=seq_len,
                                rotate=rotate)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.args = (comm, ranges, plan, scale, causal, seq_len, rotate)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        q, k, v, out, lse = ctx.saved_tensors
        comm, ranges, plan, scale, causal, seq_len, rotate = ctx.args
        dq, dk, dv = mesh_backward(comm, dout.contiguous(), q, k, v, out, lse, ranges, plan, scale=scale,
                                   causal=causal, seq_len=seq_len, rotate=rotate)
        return dq, dk, dv, None, None, None, None, None, None, None


def mesh_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, comm: Comm, *, causal: bool = False,
    tile: tuple[int, int] | None = None, gpus_per_node: int | None = None, seq_len: int | None = None,
    order: str | None = None, scale: float | None = None, kv_rotation: bool = True,
) -> torch.Tensor:
    """Mesh-Attention over ``comm`` on this rank's sequence chunk; differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (``shard_sequence(order=...)``), float32/float64.
        comm: all P ranks. tile: (a, b) with a*b = P; None takes ``plan.choose_tile`` (fewest bytes).
        gpus_per_node: topology-aware placement of tiles (``plan.map_tiles_to_nodes``); None: row-first.
        causal, seq_len, order, scale: as ``ring_attention``.
        kv_rotation: KV Partition Rotation fetch order (``plan.fetch_order``); False fetches in group order
            (same bytes and results; only which link is busy when changes).

    Returns:
        out [B, H, L, D].

    Raises:
        ValueError: bad tile (a*b != P), bad shapes/dtype, seq_len inconsistent with L.

    Communication per rank (fwd+bwd): (a-1)(5N+3M) + 6(b-1)N elements, N = B*H*L*D, M = B*H*L.
    """
    check_qkv(q, k, v, same_length=True)
    if tile is None:
        tile = choose_tile(comm.size, heads=q.shape[1], gpus_per_node=gpus_per_node, head_dim=q.shape[-1])
    plan = make_mesh_plan(comm.size, tile, gpus_per_node)
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _MeshFn.apply(q, k, v, comm, ranges, plan, default_scale(q.shape[-1], scale), causal, seq_len,
                         bool(kv_rotation))
