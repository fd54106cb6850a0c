"""Node-level Mesh (the workbench's extension, not the paper's): Ulysses inside a node x Mesh across nodes.

Why: with the flat per-rank tiling every GPU of a node fetches the same off-node Q and KV chunks itself, so
the bytes that cross the network per rank stay at Mesh's ``5(a-1) + 6(b-1)`` chunks with a*b = P. This form
makes the *node* the unit of the Mesh tile, as USP (``usp.py``) makes it the unit of the Ring:

1. an all-to-all inside each Ulysses group of u consecutive ranks (u = gpus_per_node by default, so NVLink
   only) turns the u sequence chunks of all H heads into the group's *super-chunk* (u chunks) of H/u heads;
2. Mesh-Attention (``mesh.mesh_forward``/``mesh_backward``, unchanged: greedy schedule, KV Partition Rotation,
   LSE merge) runs across the P/u groups: member x of every group joins the Mesh of member-x ranks
   (ranks x, x+u, x+2u, ...), with an a x b tile over the P/u super-chunks (a*b = P/u); a super-chunk has as
   many elements as one rank's chunk (u*L tokens x H/u heads), so each message is chunk-sized;
3. the all-to-all back returns the output (backward: dout in, dq/dk/dv back, as USP).

Per rank: 8(u-1)/u chunks inside the node (all-to-alls) plus ``5(a-1) + 6(b-1)`` chunks (plus LSE rows) across
nodes with a*b = P/u instead of P: at P = 256, u = 8 that is 53 chunks against the flat Mesh's 123 (the
off-node chunks are fetched once per node and shared through the all-to-all). The price: H must be divisible
by u (Ulysses's head constraint), and u = 1 is the flat Mesh. ``volume.py`` counts every byte, split by node.

Reference: Chen et al., "Mesh-Attention" (arXiv 2512.20968) for the tile; Fang & Zhao, "USP" (2024) for the
Ulysses x (sequence-parallel) composition.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.distributed.comm import Comm
from workbench.llm.mesh_attention.blockwise import check_qkv, default_scale
from workbench.llm.mesh_attention.layout import Ranges, member_ranges, resolve_seq_len
from workbench.llm.mesh_attention.mesh import mesh_backward, mesh_forward
from workbench.llm.mesh_attention.plan import (
    MeshPlan,
    check_schedule,
    check_ulysses_degree,
    choose_tile,
    default_ulysses_degree,
    make_mesh_plan,
    node_mesh_placement,
    resolve_order,
)
from workbench.llm.mesh_attention.usp import ulysses_backward, ulysses_forward


def node_mesh_forward(
    comm: Comm,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    ranges: Sequence[Ranges],
    plan: MeshPlan,
    *,
    degree: int,
    scale: float,
    causal: bool,
    seq_len: int,
    sched: tuple[str, float] = ("current", 1.0),
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """Forward pass: Mesh across the Ulysses groups. Returns out [B, H, L, D] and the head-sharded state.
    ``sched``: (schedule, comm_blocks) of the Mesh tile schedule (``plan.greedy_schedule``)."""

    def mesh(across, q_h, k_h, v_h, merged):
        return mesh_forward(
            across, q_h, k_h, v_h, merged, plan, scale=scale, causal=causal, seq_len=seq_len,
            schedule=sched[0], comm_blocks=sched[1],
        )  # fmt: skip

    return ulysses_forward(comm, q, k, v, ranges, degree, mesh)


def node_mesh_backward(
    comm: Comm,
    dout: torch.Tensor,
    state: Sequence[torch.Tensor],
    ranges: Sequence[Ranges],
    plan: MeshPlan,
    *,
    degree: int,
    scale: float,
    causal: bool,
    seq_len: int,
    sched: tuple[str, float] = ("current", 1.0),
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Backward pass: dout [B, H, L, D] -> dq, dk, dv [B, H, L, D]."""

    def mesh(across, dout_h, q_h, k_h, v_h, out_h, lse_h, merged):
        return mesh_backward(
            across, dout_h, q_h, k_h, v_h, out_h, lse_h, merged, plan, scale=scale, causal=causal, seq_len=seq_len,
            schedule=sched[0], comm_blocks=sched[1],
        )  # fmt: skip

    return ulysses_backward(comm, dout, state, ranges, degree, mesh)


class _NodeMeshFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, comm, ranges, plan, degree, scale, causal, seq_len, sched):  # type: ignore[override]
        out, state = node_mesh_forward(
            comm, q, k, v, ranges, plan, degree=degree, scale=scale, causal=causal, seq_len=seq_len, sched=sched
        )
        ctx.save_for_backward(*state)
        ctx.args = (comm, ranges, plan, degree, scale, causal, seq_len, sched)
        return out

    @staticmethod
    def backward(ctx, dout):  # type: ignore[override]
        comm, ranges, plan, degree, scale, causal, seq_len, sched = ctx.args
        dq, dk, dv = node_mesh_backward(
            comm,
            dout.contiguous(),
            ctx.saved_tensors,
            ranges,
            plan,
            degree=degree,
            scale=scale,
            causal=causal,
            seq_len=seq_len,
            sched=sched,
        )
        return dq, dk, dv, None, None, None, None, None, None, None, None


def node_mesh_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    comm: Comm,
    *,
    causal: bool = False,
    ulysses_degree: int | None = None,
    tile: tuple[int, int] | None = None,
    gpus_per_node: int | None = None,
    seq_len: int | None = None,
    order: str | None = None,
    scale: float | None = None,
    schedule: str = "current",
    comm_blocks: float = 1.0,
) -> torch.Tensor:
    """Node-level Mesh (Ulysses degree u inside nodes x Mesh over the P/u groups); differentiable.

    Parameters:
        q, k, v: this rank's chunk [B, H, L, D] (``shard_sequence(order=...)``), float32/float64.
        comm: all P ranks (collective: the first call creates the Ulysses process groups).
        ulysses_degree: u, dividing P and H; None takes ``plan.default_ulysses_degree(P, H, gpus_per_node)``
            (the node size when it divides H).
        tile: Mesh (a, b) over the groups, a*b = P/u; None takes ``plan.choose_tile``.
        gpus_per_node: node size (default u; places the Mesh tiles topology-aware when the node holds several
            groups). causal, seq_len, order, scale: as ``ring_attention``.
        schedule, comm_blocks: the Mesh tile schedule across groups, as ``mesh.mesh_attention``
            ("greedy-backlog": INFERENCE about the paper's greedy rule).

    Returns:
        out [B, H, L, D].

    Raises:
        ValueError: u not dividing P or H, a bad tile, bad shapes.

    Communication per rank (fwd+bwd): 8(u-1)/u N inside the group plus (a-1)(5N+3M) + 6(b-1)N across groups
    (N = B*H*L*D, M = B*H*L); ``volume.predict_bytes_per_rank("node_mesh", ...)``.

    Example (inside ``run_workers`` on 8 processes as 2 nodes of 4): ``node_mesh_attention(q, k, v, comm,
    gpus_per_node=4)`` runs Ulysses over each node's 4 ranks and a 1 x 2 Mesh across the 2 nodes.
    """
    check_qkv(q, k, v, same_length=True)
    sched = check_schedule(schedule, comm_blocks)
    heads = q.shape[1]
    if ulysses_degree is None:
        ulysses_degree = default_ulysses_degree(comm.size, heads, gpus_per_node)
    degree = check_ulysses_degree(ulysses_degree, gpus=comm.size, heads=heads)
    groups = comm.size // degree
    place = node_mesh_placement(degree, gpus_per_node)
    if tile is None:
        tile = choose_tile(groups, gpus_per_node=place, head_dim=q.shape[-1])
    plan = make_mesh_plan(groups, tile, place)
    order = resolve_order(order, causal)
    length = q.shape[2]
    seq_len = resolve_seq_len(seq_len, comm.size, length, order)
    ranges = member_ranges(comm.size, length, order)
    return _NodeMeshFn.apply(
        q.contiguous(),
        k.contiguous(),
        v.contiguous(),
        comm,
        ranges,
        plan,
        degree,
        default_scale(q.shape[-1], scale),
        causal,
        seq_len,
        sched,
    )
