"""Mesh-Attention: each rank computes an a x b tile of the (Q chunk x KV chunk) block matrix, a*b = P.

Plan (``plan.MeshPlan``): tiles form a b x a grid, one per rank (row-first, or placed by the topology-aware
``map_tiles_to_nodes``). Rank r's tile has the Q chunks of its *row group* (a ranks) and the KV chunks of
its *column group* (b ranks); r belongs to both, so its tile holds its own diagonal block (local Q-KV).

Forward, per rank, following ``plan.greedy_schedule``:
  1. post, as one batch, the fetches of the (a-1) remote Q chunks and (b-1) remote KV chunks (and the sends
     of its own q / k+v to the peers that need them), in greedy order and KV Partition Rotation order;
  2. compute the resident block (own Q, own KV) while everything is in flight, then each block as soon as its
     chunks have landed (``Pending.wait_recv``), merging partials per Q row with the LSE rule; with
     ``schedule="greedy-backlog"`` the blocks of its own row are held back and computed only where the
     planner expects a communication wait, or at the end while the partials travel (INFERENCE about the
     paper's greedy rule, ``plan.greedy_schedule``);
  3. return each remote row's partial (O, LSE) to its owner as soon as the row's last block is done (one
     batch per round, overlapped with the remaining compute; ``_Returns`` has the no-deadlock argument),
     and merge the partials of its own row in round order.
Backward re-fetches rather than keeps the remote chunks (peak memory like the forward, not a+b chunks held
from forward to backward): q, dout, LSE and delta = rowsum(dout*out) from the row peers (delta instead of O
saves D-1 elements per row), k+v from the column peers; it computes the tile's dq/dk/dv partials and sends
dq to the (a-1) Q owners and dk+dv to the (b-1) KV owners (each as soon as its row or column is done),
who add them. ``volume.py`` counts exactly this.

KV Partition Rotation (our reading of the paper's KVR, see ``plan.fetch_order``): the member at position m of
a group fetches from m-1, m-2, ... so that at each step every rank serves exactly one peer.
Causal: the zigzag layout makes every block exactly half masked, so all tiles carry equal work; masked
pieces are skipped. With a = 1, b = P, Mesh performs Ring's computation in Ring's order (same outputs).

Reference: Chen et al., "Mesh-Attention" (arXiv 2512.20968); /work/shared/papers/mesh-attention.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.distributed.comm import Comm, Pending
from workbench.llm.mesh_attention.blockwise import (
    attend_ranges,
    attend_ranges_backward,
    check_qkv,
    default_scale,
    merge_partials,
)
from workbench.llm.mesh_attention.layout import Ranges, member_ranges, resolve_seq_len
from workbench.llm.mesh_attention.plan import (
    MeshPlan,
    check_schedule,
    choose_tile,
    greedy_schedule,
    make_mesh_plan,
    resolve_order,
)

TAG_FETCH, TAG_RETURN = 21, 22


def _post_fetches(
    comm: Comm,
    plan: MeshPlan,
    steps: list,
    q_payload: torch.Tensor,
    kv_payload: torch.Tensor,
    q_buffer: torch.Tensor,
    kv_buffer: torch.Tensor,
) -> tuple[Pending, dict[tuple[str, int], int], dict[int, torch.Tensor], dict[int, torch.Tensor]]:
    """Post one batch: my payloads to the peers that fetch them, receives in the schedule's fetch order.

    Returns (pending, recv index of each (kind, position), Q buffers by row position, KV buffers by column).
    """
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    # the peer at position my_row + s fetches from me at its step s (rotation): serve them in that order
    sends = [(q_payload, rows[(my_row + s) % plan.a]) for s in range(1, plan.a)]
    sends += [(kv_payload, cols[(my_col + s) % plan.b]) for s in range(1, plan.b)]
    recvs: list[tuple[torch.Tensor, int]] = []
    index: dict[tuple[str, int], int] = {}
    q_bufs: dict[int, torch.Tensor] = {}
    kv_bufs: dict[int, torch.Tensor] = {}
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
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    plan: MeshPlan,
    *,
    scale: float,
    causal: bool,
    seq_len: int,
    rotate: bool = True,
    schedule: str = "current",
    comm_blocks: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward pass of Mesh-Attention: out [B, H, L, D] and lse [B, H, L] of this rank's queries.

    ``rotate``: KV Partition Rotation fetch order (False: every rank fetches in group order).
    ``schedule``, ``comm_blocks``: the tile schedule (``plan.greedy_schedule``; "greedy-backlog" holds back the
    own row's blocks to fill communication waits, INFERENCE about the paper's rule); every rank must pass the
    same values (the early returns rely on every position running the same program, see ``_Returns``).
    """
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    steps = greedy_schedule(
        plan.a, plan.b, row=my_row, col=my_col, rotate=rotate, schedule=schedule, comm_blocks=comm_blocks
    )
    kv = torch.stack([k, v])  # [2, B, H, L, D]: one message per KV fetch
    pending, index, q_bufs, kv_bufs = _post_fetches(comm, plan, steps, q, kv, q, kv)
    q_of = {my_row: q, **q_bufs}
    kv_of = {my_col: kv, **kv_bufs}
    acc: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # row position -> merged (out, lse)
    returns = _Returns(comm, rotate)

    def packed(r: int) -> torch.Tensor:  # partial (O, LSE) of row r, packed [B, H, L, D+1]
        return torch.cat([acc[r][0], acc[r][1][..., None]], -1)

    for step in steps:
        if step.op == "wait":
            pending.wait_recv(index[(step.kind, step.row if step.kind == "q" else step.col)])
        elif step.op == "compute":
            r, c = step.row, step.col
            kv_c = kv_of[c]
            blk = attend_ranges(
                q_of[r], kv_c[0], kv_c[1], ranges[rows[r]], ranges[cols[c]], scale=scale, causal=causal, seq_len=seq_len
            )
            acc[r] = blk if r not in acc else merge_partials(*acc[r], *blk)
        elif step.op == "send":  # row step.row is complete: its partial leaves now (overlapped with compute)
            returns.post(rows, my_row, step.row, packed(step.row), q.new_empty(*q.shape[:-1], q.shape[-1] + 1))
    pending.wait()
    out, lse = acc[my_row]
    (bufs,) = returns.finish_all([(rows, my_row, q.new_empty(*q.shape[:-1], q.shape[-1] + 1))])
    for buf in bufs:  # merge in round order (deterministic)
        out, lse = merge_partials(out, lse, buf[..., :-1], buf[..., -1])
    return out, lse


class _Returns:
    """Partial results travelling back to their owners (O + LSE forward; dQ, dK/dV backward).

    With the rotation order (``rotate=True``) each partial leaves as soon as the greedy schedule has computed
    its last block: ``post`` sends my partial of group position ``target`` and, in the same batch, receives
    the partial of my own chunk from position ``my + s``, where ``s = my - target`` (mod the group size):
    round s of a group is a permutation (everyone sends s positions back and receives from s ahead).

    Why this cannot deadlock under NCCL (operations of one communicator run in issue order on one stream; a
    batch completes only when all its sends and receives have matched): (1) the fetch batch that every rank
    posts first matches only the other ranks' fetch batches, so it completes whatever happens later;
    (2) every tile position runs the same greedy program, shifted (rotation fetch order, ties broken by
    *relative* position in ``plan.greedy_schedule``), so every rank issues its return batches in the same
    sequence of (kind, s); the k-th batch of a rank matches only the k-th batches of its two peers, which
    they issue after their own first k-1 batches, and compute never waits for a return, so by induction on
    k every batch is issued and matched: no cycle of waits. Between two ranks at most one partial of a kind
    travels each way per pass, so gloo's (peer, tag) matching is unambiguous too.
    The greedy compute backlog (``schedule="greedy-backlog"``) keeps (2): which blocks it holds back (the own
    row forward, the diagonal backward), the order it holds them in (relative positions) and where it spends
    them (an estimated clock built from ``comm_blocks`` and the fetch kinds, which are the same sequence on
    every position because ``fetch_order`` is a rotation) depend only on positions relative to the rank's
    own, so every position still runs one program, shifted, and issues its return batches in the same
    (kind, s) sequence (``mesh_attention`` requires every rank to pass the same ``comm_blocks``); compute
    still never waits for a return, so the induction above holds unchanged. Tested on real gloo runs in
    ``tests/llm/mesh_attention/test_attention_backlog.py``. With ``rotate=False`` the
    programs differ per position, so all returns go out as one batch after the last block (``post`` only
    queues them; ``finish`` sends), which is safe by (1) alone.
    """

    def __init__(self, comm: Comm, rotate: bool) -> None:
        self.comm, self.rotate = comm, rotate
        self.rounds: dict[tuple[tuple[int, ...], int], tuple[torch.Tensor, Pending]] = {}  # (group, s) -> (buf, handle)
        self.queued: list[tuple[torch.Tensor, int]] = []  # rotate=False: sends held for the final batch
        self.keep: list[torch.Tensor] = []  # payloads in flight (alive until finish)

    def post(self, group: list[int], my: int, target: int, payload: torch.Tensor, like: torch.Tensor) -> None:
        size = len(group)
        s = (my - target) % size
        if not self.rotate:
            self.queued.append((payload, group[target]))
            return
        buf = torch.empty_like(like)
        handle = self.comm.p2p([(payload, group[target])], [(buf, group[(my + s) % size])], tag=TAG_RETURN)
        self.rounds[(tuple(group), s)] = (buf, handle)
        self.keep.append(payload)

    def finish(self, group: list[int], my: int) -> list[torch.Tensor]:
        """Wait for the partials of my chunk from ``group`` (rounds s = 1..size-1, in order) and return them."""
        size = len(group)
        out = []
        for s in range(1, size):
            buf, handle = self.rounds.pop((tuple(group), s))
            handle.wait()
            out.append(buf)
        return out

    def finish_all(self, groups: list[tuple[list[int], int, torch.Tensor]]) -> list[list[torch.Tensor]]:
        """All groups at once: with ``rotate=False`` one batch of every queued send and every receive
        (positions my+1, my+2, ... of each group), else :meth:`finish` per group."""
        if self.rotate:
            return [self.finish(group, my) for group, my, _ in groups]
        bufs = [[torch.empty_like(like) for _ in range(1, len(group))] for group, _, like in groups]
        recvs = [
            (buf, group[(my + s) % len(group)])
            for (group, my, _), gb in zip(groups, bufs)
            for s, buf in enumerate(gb, start=1)
        ]
        if self.queued or recvs:
            self.comm.p2p(self.queued, recvs, tag=TAG_RETURN).wait()
        return bufs


def mesh_backward(
    comm: Comm,
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    ranges: Sequence[Ranges],
    plan: MeshPlan,
    *,
    scale: float,
    causal: bool,
    seq_len: int,
    rotate: bool = True,
    schedule: str = "current",
    comm_blocks: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass of Mesh-Attention: dq, dk, dv of this rank's chunk ([B, H, L, D] each).

    ``schedule``, ``comm_blocks``: as :func:`mesh_forward` (in the backward pass the greedy backlog holds only
    the diagonal block: every other block feeds a dQ or dK/dV partial that must leave)."""
    me = comm.rank
    rows, cols = plan.row_group(me), plan.col_group(me)
    my_row, my_col = rows.index(me), cols.index(me)
    steps = greedy_schedule(
        plan.a, plan.b, row=my_row, col=my_col, backward=True, rotate=rotate, schedule=schedule, comm_blocks=comm_blocks
    )
    delta = (dout * out).sum(-1)  # [B, H, L]
    q_pack = _pack_q_side(q, dout, lse, delta)
    kv = torch.stack([k, v])  # [2, B, H, L, D]
    pending, index, q_bufs, kv_bufs = _post_fetches(comm, plan, steps, q_pack, kv, q_pack, kv)
    q_of = {my_row: (q, dout, lse, delta)}
    kv_of = {my_col: kv}
    dq_acc: dict[int, torch.Tensor] = {}
    dkv_acc: dict[int, torch.Tensor] = {}
    returns = _Returns(comm, rotate)
    for step in steps:
        if step.op == "wait":
            pending.wait_recv(index[(step.kind, step.row if step.kind == "q" else step.col)])
            if step.kind == "q":
                q_of[step.row] = _unpack_q_side(q_bufs[step.row], q.shape)
            else:
                kv_of[step.col] = kv_bufs[step.col]
        elif step.op == "compute":
            r, c = step.row, step.col
            q_range, kv_range = ranges[rows[r]], ranges[cols[c]]
            g_q, g_kv = _block_grads(q_of[r], kv_of[c], q_range, kv_range, scale=scale, causal=causal, seq_len=seq_len)
            dq_acc[r] = g_q if r not in dq_acc else dq_acc[r] + g_q
            dkv_acc[c] = g_kv if c not in dkv_acc else dkv_acc[c] + g_kv
        elif step.op == "send" and step.kind == "dq":  # row complete: its dq partial leaves now
            returns.post(rows, my_row, step.row, dq_acc[step.row], q)
        elif step.op == "send":  # column complete: its dk+dv partial leaves now
            returns.post(cols, my_col, step.col, dkv_acc[step.col], kv)
    pending.wait()
    dq, dkv = dq_acc[my_row], dkv_acc[my_col]
    dq_bufs, dkv_bufs = returns.finish_all([(rows, my_row, q), (cols, my_col, kv)])
    for buf in dq_bufs:
        dq = dq + buf
    for buf in dkv_bufs:
        dkv = dkv + buf
    return dq, dkv[0], dkv[1]


def _pack_q_side(q: torch.Tensor, dout: torch.Tensor, lse: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """The backward Q-side package as one message: q, dout (N elements each), lse, delta (M each), flat."""
    return torch.cat([q.reshape(-1), dout.reshape(-1), lse.reshape(-1), delta.reshape(-1)])


def _unpack_q_side(pack: torch.Tensor, shape: torch.Size) -> tuple[torch.Tensor, ...]:
    """Views (q, dout [B, H, L, D], lse, delta [B, H, L]) of a package built by :func:`_pack_q_side`."""
    rows_shape = shape[:-1]
    n, m = shape.numel(), rows_shape.numel()
    return (
        pack[:n].view(shape),
        pack[n : 2 * n].view(shape),
        pack[2 * n : 2 * n + m].view(rows_shape),
        pack[2 * n + m :].view(rows_shape),
    )


def _block_grads(
    q_side: tuple[torch.Tensor, ...],
    kv: torch.Tensor,
    q_range: Ranges,
    kv_range: Ranges,
    *,
    scale: float,
    causal: bool,
    seq_len: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of one (Q_r, KV_c) block: dq [B, H, L, D] and the stacked dk+dv [2, B, H, L, D].

    ``q_side`` = (q, dout, lse, delta) of row r, ``kv`` = the stacked [2, B, H, L, D] k+v of column c."""
    q_r, dout_r, lse_r, delta_r = q_side
    g_q, g_k, g_v = attend_ranges_backward(
        dout_r, q_r, kv[0], kv[1], delta_r, lse_r, q_range, kv_range, scale=scale, causal=causal, seq_len=seq_len
    )
    return g_q, torch.stack([g_k, g_v])


class _MeshFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, plan, scale, causal, seq_len, rotate, sched):  # type: ignore[override]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out, lse = mesh_forward(
            comm, q, k, v, ranges, plan, scale=scale, causal=causal, seq_len=seq_len, rotate=rotate,
            schedule=sched[0], comm_blocks=sched[1],
        )  # fmt: skip
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.args = (comm, ranges, plan, scale, causal, seq_len, rotate, sched)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        q, k, v, out, lse = ctx.saved_tensors
        comm, ranges, plan, scale, causal, seq_len, rotate, sched = ctx.args
        dq, dk, dv = mesh_backward(
            comm,
            dout.contiguous(),
            q,
            k,
            v,
            out,
            lse,
            ranges,
            plan,
            scale=scale,
            causal=causal,
            seq_len=seq_len,
            rotate=rotate,
            schedule=sched[0],
            comm_blocks=sched[1],
        )
        return dq, dk, dv, None, None, None, None, None, None, None, None


def mesh_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    comm: Comm,
    *,
    causal: bool = False,
    tile: tuple[int, int] | None = None,
    gpus_per_node: int | None = None,
    seq_len: int | None = None,
    order: str | None = None,
    scale: float | None = None,
    kv_rotation: bool = True,
    schedule: str = "current",
    comm_blocks: float = 1.0,
) -> torch.Tensor:
    """Mesh-Attention over ``comm`` on this rank's sequence chunk; differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (``shard_sequence(order=...)``), float32/float64.
        comm: all P ranks. tile: (a, b) with a*b = P; None takes ``plan.choose_tile`` (fewest bytes).
        gpus_per_node: topology-aware placement of tiles (``plan.map_tiles_to_nodes``); None: row-first.
        causal, seq_len, order, scale: as ``ring_attention``.
        kv_rotation: KV Partition Rotation fetch order (``plan.fetch_order``); False fetches in group order
            (same bytes and results; only which link is busy when changes).
        schedule: tile schedule, one of ``plan.SCHEDULES``: "current" (each block as soon as its chunks are
            resident) or "greedy-backlog" (ready blocks whose result stays local are held back to fill
            communication waits; INFERENCE about the paper's greedy rule, see ``plan.greedy_schedule``).
            Same blocks, same bytes; only the compute order and when partials leave change.
        comm_blocks: the greedy-backlog planner's estimate of one Q-chunk transfer in block times (the same
            on every rank); ignored by "current".

    Returns:
        out [B, H, L, D].

    Raises:
        ValueError: bad tile (a*b != P), bad shapes/dtype, seq_len inconsistent with L.

    Communication per rank (fwd+bwd): (a-1)(5N+3M) + 6(b-1)N elements, N = B*H*L*D, M = B*H*L.
    """
    check_qkv(q, k, v, same_length=True)
    sched = check_schedule(schedule, comm_blocks)
    if tile is None:
        tile = choose_tile(comm.size, heads=q.shape[1], gpus_per_node=gpus_per_node, head_dim=q.shape[-1])
    plan = make_mesh_plan(comm.size, tile, gpus_per_node)
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _MeshFn.apply(
        q, k, v, comm, ranges, plan, default_scale(q.shape[-1], scale), causal, seq_len, bool(kv_rotation), sched
    )
