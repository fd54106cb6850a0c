"""Cluster cost model of distributed attention: bytes, peak memory and step time up to 1024 GPUs and 4M tokens.

What is modelled (one attention layer, one forward + backward step, per rank; the reported figure is the
slowest rank):

* **Bytes** per rank come from ``volume.py`` (exact counts of what the kernels in this package send) for
  ring, ulysses, usp and mesh; StarTrail is modelled only (formulas in :func:`startrail_bytes_per_rank`).
* **Compute**: every method computes the same P^2 blocks (Q_i, KV_j); a block costs
  ``4*B*H*L*L*D`` FLOPs forward (QK^T and PV, 2 FLOPs per multiply-add), ``2.5x`` that backward
  (FlashAttention-2's count: five matmuls against two), halved under a causal mask (the zigzag layout
  makes every block exactly half unmasked, ``plan.block_count``). Seconds = FLOPs / ``cluster.gpu_tflops``.
* **Communication**: every message costs ``latency + bytes / bandwidth`` on the link it crosses
  (``ClusterSpec.message_seconds``): NVLink when both ranks share a node (``rank // gpus_per_node``),
  the network otherwise. NVLink and network transfers of one rank may run at the same time; two transfers
  on the same class of link are serialised.
* **Overlap** (what hides behind compute):

  - Ring: at each step the next KV chunk travels while the current block is computed (double buffering);
    backward also carries the dK/dV accumulator one hop per step, and its last hop is exposed. Ranks move
    in lock step, so a step lasts ``max(block, slowest hop)`` (``timeline.lockstep_ring``).
  - Ulysses: the all-to-alls before and after attention are on the critical path (nothing to overlap
    with); a rank's all-to-all sends one message per peer, NVLink peers and network peers in parallel.
  - USP (Ulysses degree u, ring degree r = P/u): Ulysses all-to-alls inside groups of u consecutive ranks,
    then a Ring pass over r ranks with u-times bigger blocks (u*L tokens, H/u heads), same message size.
  - Mesh: the greedy schedule of ``plan.greedy_schedule`` is simulated per rank (``timeline.tile_timeline``):
    all fetches posted at t=0 (NVLink and network FIFO queues), blocks computed in schedule order as
    chunks are waited for, partial results sent where the schedule sends them (each as soon as its row /
    column is done). ``schedule="greedy-backlog"`` times the backlog variant of the same schedule (own-row
    blocks held back to fill communication waits; an INFERENCE about the paper's greedy rule). The tile-to-node placement is ``plan.make_mesh_plan`` (topology-aware), or the plain row-first
    layout with ``topology_aware=False``. A pass ends on a rank when its sends are done and every partial
    it owns has arrived.
  - StarTrail (modelled only, ``startrail.py``): team all-gather and reduce-scatter on NVLink, exposed;
    sub-ring hops of C-chunk KV bundles overlapped like Ring's behind C^2 blocks.

  Forward and backward are each timed from a barrier; ``total = forward + backward``.
* **Peak memory** (``memory.py``): the activations the attention op holds at its worst moment (forward or
  backward) on one rank, itemised in ``memory_terms``: local chunks, fetched remote chunks held at once
  (Mesh caches a-1 Q chunks and b-1 KV chunks; Ring holds two KV buffers), partial outputs, gradients and
  accumulators. All tensors in the element type; model weights, other layers' activations and allocator
  slack are excluded.

Not modelled: the merge of partials (elementwise, O(L) per row), kernel-launch gaps, network congestion
beyond one rank's own links, and sender-side contention (the KV Partition Rotation order of
``plan.fetch_order`` makes every fetch round a permutation, so each rank serves one peer at a time).

Performance: closed forms over arrays of at most P x (a + b) entries, nothing of sequence size. Tile
choices and schedules are memoised (``plan.choose_tile`` and ``plan.greedy_schedule`` cost ~25 ms the first
time at P=1024), after which one call at P=1024, S=4M takes ~3 ms; a prime P near 1024 (1-D tile, ~2P
messages per rank) takes ~50-75 ms.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np

from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.config import DTYPE_BYTES, MeshAttentionConfig
from workbench.llm.mesh_attention.memory import (
    mesh_memory,
    node_mesh_memory,
    peak_terms,
    ring_family_memory,
    usp_memory,
)
from workbench.llm.mesh_attention.plan import (
    block_count,
    check_schedule,
    check_tile,
    greedy_schedule,
    local_length,
    make_mesh_plan,
    node_mesh_placement,
    resolve_order,
)
from workbench.llm.mesh_attention.startrail import (
    check_team_size,
    startrail_bytes_per_rank,
    startrail_pass_times,
    startrail_team_sizes,
)
from workbench.llm.mesh_attention.timeline import ring_backward_pass, ring_forward_pass, tile_timeline
from workbench.llm.mesh_attention.volume import mesh_off_node, predict_bytes_per_rank, resolve_method_params

__all__ = [
    "MODEL_METHODS",
    "AttentionModelResult",
    "AttentionSweep",
    "model_attention",
    "sweep_gpus",
    "startrail_bytes_per_rank",
    "startrail_team_sizes",
    "block_flops",
]

ModelMethod = Literal["ring", "ulysses", "usp", "mesh", "startrail", "node_mesh"]
MODEL_METHODS: tuple[str, ...] = ("ring", "ulysses", "usp", "mesh", "startrail", "node_mesh")

#: FLOPs per (query, key, head-dim) triple in the forward pass: QK^T and PV, 2 FLOPs per multiply-add each
FORWARD_FLOPS_PER_MAC = 4
#: backward / forward FLOPs (FlashAttention-2, Dao 2023: 5 matmuls backward against 2 forward)
BACKWARD_FLOP_FACTOR = 2.5

#: the model's inputs are the config's parameters: one range each (``MeshAttentionConfig``), checked the same way
_SPECS = {s.name: s for s in MeshAttentionConfig.specs()}
#: element sizes the model prices (the config's dtypes)
ELEMENT_BYTES: tuple[int, ...] = tuple(sorted(set(DTYPE_BYTES.values())))


# ----------------------------------------------------------------------------------------------------------
# result types
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionModelResult:
    """Modelled cost of one forward + backward step of one attention layer.

    Attributes:
        method: "ring", "ulysses", "usp", "mesh" or "startrail".
        gpus: P. tile: Mesh (a, b) (Ring reports (1, P)); None otherwise. ulysses_degree: u (ulysses: P;
            usp: u); None otherwise. team_size: StarTrail C; None otherwise.
        bytes_per_rank: int64 [P], bytes sent + received per rank, forward + backward (``volume.py``).
        bytes_sent_per_rank: int64 [P], of which sent.
        peak_memory_bytes: int64 [P], activations resident at the worst moment (see ``memory_terms``).
        memory_terms: the itemised peak of the worst rank, name -> bytes (sums to ``peak_memory_bytes.max()``).
        compute_seconds: block compute, forward + backward, slowest rank (equal for all methods).
        comm_seconds: the slowest rank's transfer time on its critical links (what comm would cost unhidden).
        exposed_comm_seconds: ``total_seconds - compute_seconds``: communication (and waiting) not hidden.
        total_seconds: forward + backward wall time, each pass its slowest rank.
        forward_seconds, backward_seconds: the two passes.
        seconds_per_rank: float64 [P], each rank's forward + backward finish time.
        bytes_sent_inter_node_per_rank: int64 [P], of the bytes sent, those to ranks on other nodes (the
            cluster's ``gpus_per_node``, consecutive ranks per node).
    """

    method: str
    gpus: int
    tile: tuple[int, int] | None
    ulysses_degree: int | None
    team_size: int | None
    bytes_per_rank: np.ndarray
    bytes_sent_per_rank: np.ndarray
    peak_memory_bytes: np.ndarray
    memory_terms: Mapping[str, int]
    compute_seconds: float
    comm_seconds: float
    exposed_comm_seconds: float
    total_seconds: float
    forward_seconds: float
    backward_seconds: float
    seconds_per_rank: np.ndarray = field(repr=False)
    bytes_sent_inter_node_per_rank: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class AttentionSweep:
    """:func:`sweep_gpus` output: one entry per P (arrays aligned with ``gpus``)."""

    method: str
    gpus: np.ndarray
    total_seconds: np.ndarray
    compute_seconds: np.ndarray
    exposed_comm_seconds: np.ndarray
    bytes_per_rank: np.ndarray  # max over ranks
    peak_memory_bytes: np.ndarray  # max over ranks
    results: tuple[AttentionModelResult, ...]


@dataclass(frozen=True)
class _Pass:
    """One pass (forward or backward): per-rank finish (s), compute (s), critical comm (s)."""

    finish: np.ndarray
    compute: float
    comm: float


@dataclass(frozen=True)
class _Shape:
    """Sizes in elements: N = one Q chunk (B*H*L*D), M = one LSE row set (B*H*L)."""

    n: int
    m: int
    e: int  # element bytes


# ----------------------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------------------
def _check_int(name: str, value: object) -> int:
    """``value`` as an int in the config's range of parameter ``name`` (TypeError if not an integer)."""
    spec = _SPECS[name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}={value!r} must be an int: valid range is {spec.describe_range()}")
    return spec.check(int(value))


def _check_inputs(method, gpus, seq, heads, head_dim, batch, causal, dtype_bytes, cluster, topology_aware):
    if method not in MODEL_METHODS:
        raise ValueError(f"method={method!r} is unknown: valid values are {', '.join(MODEL_METHODS)}")
    values = {
        name: _check_int(name, v)
        for name, v in (("gpus", gpus), ("seq", seq), ("heads", heads), ("head_dim", head_dim), ("batch", batch))
    }
    if isinstance(dtype_bytes, bool) or dtype_bytes not in ELEMENT_BYTES:
        raise ValueError(
            f"dtype_bytes={dtype_bytes!r} is not allowed: valid values are {ELEMENT_BYTES} "
            f"(bytes of {', '.join(DTYPE_BYTES)})"
        )
    for name, flag in (("causal", causal), ("topology_aware", topology_aware)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name}={flag!r} must be a bool")
    if not isinstance(cluster, ClusterSpec):
        raise TypeError(f"cluster={cluster!r} must be a workbench.cluster.ClusterSpec")
    return values


# ----------------------------------------------------------------------------------------------------------
# compute
# ----------------------------------------------------------------------------------------------------------
def block_flops(*, batch: int, heads: int, local_len: int, head_dim: int, causal: bool, gpus: int) -> float:
    """Forward FLOPs of one (Q_i, KV_j) block: ``4*B*H*L*L*D``, times the unmasked fraction (1/2 causal)."""
    return FORWARD_FLOPS_PER_MAC * batch * heads * local_len * local_len * head_dim * block_count(gpus, causal=causal)


# ----------------------------------------------------------------------------------------------------------
# ring family: Ring, the ring half of USP, StarTrail sub-rings
# ----------------------------------------------------------------------------------------------------------
def _ring_hop_inter(members: np.ndarray, cluster: ClusterSpec) -> bool:
    """True if any hop of the ring ``members[0] -> members[1] -> ... -> members[0]`` crosses nodes."""
    if len(members) < 2:
        return False
    node = members // cluster.gpus_per_node
    return bool(np.any(node != np.roll(node, -1)))


def _all_to_all_seconds(group_size: int, gpus: int, bytes_per_peer: int, cluster: ClusterSpec) -> float:
    """Slowest rank's all-to-all inside groups of ``group_size`` consecutive ranks: one message per peer,
    NVLink peers and network peers served in parallel, each class one message after another."""
    if group_size <= 1 or bytes_per_peer <= 0:
        return 0.0
    ranks = np.arange(gpus)
    node = ranks // cluster.gpus_per_node
    key = (ranks // group_size) * (node.max() + 1) + node
    same = np.bincount(key)[key] - 1  # peers in my group and my node
    other = group_size - 1 - same
    t_in = same * cluster.message_seconds(bytes_per_peer, False)
    t_out = other * cluster.message_seconds(bytes_per_peer, True)
    return float(np.maximum(t_in, t_out).max())


def _ring_time(gpus, shape, blk_f, blk_b, cluster) -> tuple[_Pass, _Pass]:
    inter = _ring_hop_inter(np.arange(gpus), cluster)
    kv = cluster.message_seconds(2 * shape.n * shape.e, inter)
    f = ring_forward_pass(gpus, blk_f, kv)
    b = ring_backward_pass(gpus, blk_b, kv, kv)  # dk+dv has the size of k+v
    return (_Pass(np.full(gpus, f.total), f.compute, f.comm), _Pass(np.full(gpus, b.total), b.compute, b.comm))


def _usp_time(gpus, u, shape, blk_f, blk_b, cluster) -> tuple[_Pass, _Pass]:
    """USP (Ulysses is u = P): all-to-all, ring over r = P/u ranks with u-fold blocks, all-to-all back."""
    r = gpus // u
    n, e = shape.n, shape.e
    per_peer = n // u  # elements of one tensor a rank sends to one group peer
    a2a = functools.partial(_all_to_all_seconds, u, gpus, cluster=cluster)
    members = np.arange(0, gpus, u)  # ring of group position 0: ranks 0, u, 2u, ... (others are shifts)
    inter = any(_ring_hop_inter(members + x, cluster) for x in range(u)) if r > 1 else False
    kv = cluster.message_seconds(2 * n * e, inter)  # u*L tokens x H/u heads x (k, v) = 2N elements
    ring_f = ring_forward_pass(r, u * blk_f, kv)
    ring_b = ring_backward_pass(r, u * blk_b, kv, kv)
    pre_f, post_f = a2a(bytes_per_peer=3 * per_peer * e), a2a(bytes_per_peer=per_peer * e)  # q,k,v in; out back
    pre_b, post_b = a2a(bytes_per_peer=per_peer * e), a2a(bytes_per_peer=3 * per_peer * e)  # dout in; dq,dk,dv
    fwd = _Pass(np.full(gpus, pre_f + ring_f.total + post_f), ring_f.compute, pre_f + ring_f.comm + post_f)
    bwd = _Pass(np.full(gpus, pre_b + ring_b.total + post_b), ring_b.compute, pre_b + ring_b.comm + post_b)
    return fwd, bwd


# ----------------------------------------------------------------------------------------------------------
# Mesh: the greedy tile schedule, per rank
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _TileProgram:
    """``plan.greedy_schedule`` of the rank at tile position (0, 0), cut into fetches, segments and sends."""

    fetch_kind: tuple[str, ...]
    fetch_idx: np.ndarray
    wait_order: np.ndarray
    segment_waits: np.ndarray
    segment_blocks: np.ndarray
    send_kind: tuple[str, ...]
    send_idx: np.ndarray
    send_after: np.ndarray


def _position(step) -> int:
    return step.row if step.kind in ("q", "out", "dq") else step.col


def _tile_program(a: int, b: int, backward: bool, schedule: str = "current", comm_blocks: float = 1.0) -> _TileProgram:
    """Structure of the greedy schedule. Every other tile position runs the same program with row indices
    shifted by its own row and column indices by its own column (``plan.fetch_order`` is a rotation), and
    blocks of equal cost make the order among blocks released by one wait irrelevant to the timeline."""
    if backward and comm_blocks > 0:
        # the backward backlog holds only the diagonal block, which fills the first wait (est. arrival > 0):
        # the program is the current one (tests/llm/mesh_attention/test_attention_backlog.py); share its memo
        schedule = "current"
    if schedule == "current":
        comm_blocks = 1.0  # unused by the current schedule: one memo entry
    return _tile_program_memo(a, b, backward, schedule, comm_blocks)


@functools.lru_cache(maxsize=256)
def _tile_program_memo(a: int, b: int, backward: bool, schedule: str, comm_blocks: float) -> _TileProgram:
    steps = greedy_schedule(a, b, row=0, col=0, backward=backward, schedule=schedule, comm_blocks=comm_blocks)
    fetches = [(s.kind, _position(s)) for s in steps if s.op == "fetch"]
    index = {f: i for i, f in enumerate(fetches)}
    wait_order: list[int] = []
    seg_waits: list[int] = []
    seg_blocks: list[int] = []
    send_kind: list[str] = []
    send_idx: list[int] = []
    send_after: list[int] = []
    open_segment = False
    for s in steps:
        if s.op == "fetch":
            continue
        if s.op == "compute":
            if not open_segment:
                seg_waits.append(len(wait_order))
                seg_blocks.append(0)
                open_segment = True
            seg_blocks[-1] += 1
            continue
        open_segment = False
        if s.op == "wait":
            wait_order.append(index[(s.kind, _position(s))])
        elif s.op == "send":
            send_kind.append(s.kind)
            send_idx.append(_position(s))
            send_after.append(len(seg_blocks) - 1)
        else:  # pragma: no cover - a new op in plan.py must be modelled here
            raise NotImplementedError(f"schedule op {s.op!r} is not modelled")
    arr = functools.partial(np.asarray, dtype=np.int64)
    return _TileProgram(
        fetch_kind=tuple(k for k, _ in fetches),  # type: ignore[misc]  # fetch steps always carry a kind
        fetch_idx=arr([i for _, i in fetches]),
        wait_order=arr(wait_order),
        segment_waits=arr(seg_waits),
        segment_blocks=arr(seg_blocks),
        send_kind=tuple(send_kind),
        send_idx=arr(send_idx),
        send_after=arr(send_after),
    )


def _mesh_message_elements(shape: _Shape, backward: bool) -> dict[str, int]:
    """Elements of one Mesh message per kind (``volume.py``'s counts): forward q, k+v, out+LSE; backward
    q+dout+LSE+delta, k+v, dq, dk+dv."""
    n, m = shape.n, shape.m
    if backward:
        return {"q": 2 * n + 2 * m, "kv": 2 * n, "dq": n, "dkv": 2 * n}
    return {"q": n, "kv": 2 * n, "out": n + m}


_ROW_KINDS = ("q", "out", "dq")  # program entries addressed by tile row (Q side); the rest by column (KV side)


def _mesh_gather(
    values_at_cell: np.ndarray, kinds: tuple[str, ...], idx: np.ndarray, mesh, I: np.ndarray, J: np.ndarray, sign: int
) -> np.ndarray:
    """``values_at_cell`` at the grid cell each program entry addresses, for every rank: [P, X] (rank-major).

    ``sign=+1``: the peer the rank at (I, J) fetches from / sends to (row entry x: cell (I, (J + x) mod a);
    column entry y: ((I + y) mod b, J)). ``sign=-1``: the peer whose entry addresses the rank at (I, J), i.e.
    who sends it that partial. The wrap-around is a lookup in the grid tiled twice (one add and one gather
    per element, no modulo)."""
    a, b = mesh.a, mesh.b
    grid = values_at_cell.reshape(b, a)
    row_tab = np.tile(grid, (1, 2)).ravel()  # row_tab[I*2a + k] = grid[I, k mod a], 0 <= k < 2a
    col_tab = np.tile(grid, (2, 1)).ravel()  # col_tab[k*a + J] = grid[k mod b, J], 0 <= k < 2b
    rows = np.array([k in _ROW_KINDS for k in kinds], dtype=bool)
    out = np.empty((len(I), len(kinds)), dtype=values_at_cell.dtype)
    if rows.any():
        shift = (sign * idx[rows] + (a if sign < 0 else 0)).astype(np.int32)
        out[:, rows] = row_tab[(I * np.int32(2 * a) + J)[:, None] + shift[None, :]]
    if (~rows).any():
        shift = ((sign * idx[~rows] + (b if sign < 0 else 0)) * a).astype(np.int32)
        out[:, ~rows] = col_tab[(I * np.int32(a) + J)[:, None] + shift[None, :]]
    return out


def _planner_comm_blocks(mesh, shape, block_s, cluster) -> float:
    """The greedy-backlog planner's one cost estimate (``plan.greedy_schedule``): seconds of one Q-chunk
    message / seconds of one block, on the network when the tile spans nodes, else on NVLink (INFERENCE: a
    planning assumption; one value for every rank so that all ranks run the same program, shifted).
    Rounded to 2 significant digits (memoised programs)."""
    inter = mesh.gpus > cluster.gpus_per_node
    ratio = float(cluster.message_seconds(shape.n * shape.e, inter)) / max(float(block_s), 1e-30)
    return float(f"{min(ratio, 1e6):.2g}")


def _mesh_pass(mesh, shape, block_s, cluster, backward: bool, schedule: str = "current") -> _Pass:
    """One Mesh pass on every rank: per-rank link classes, then one timeline per distinct class pattern."""
    comm_blocks = _planner_comm_blocks(mesh, shape, block_s, cluster) if schedule == "greedy-backlog" else 1.0
    prog = _tile_program(mesh.a, mesh.b, backward, schedule, comm_blocks)
    gpus, g, e = mesh.gpus, cluster.gpus_per_node, shape.e
    F, X = len(prog.fetch_kind), len(prog.send_kind)
    I, J = (v.astype(np.int32) for v in np.divmod(mesh.pos_of, mesh.a))  # [P] grid cell of every rank
    node = np.arange(gpus, dtype=np.int32) // g  # [P] node of every rank
    node_at = (mesh.rank_at // g).astype(np.int32)  # [P] node of the rank at every grid cell
    kinds = prog.fetch_kind + prog.send_kind
    idx = np.concatenate([prog.fetch_idx, prog.send_idx])
    if not kinds:  # P = 1: nothing to move
        busy = float(prog.segment_blocks.sum() * block_s)
        return _Pass(np.full(gpus, busy), busy, 0.0)
    inter = _mesh_gather(node_at, kinds, idx, mesh, I, J, +1) != node[:, None]  # [P, F+X]
    # ranks with the same link class for every fetch and send share one timeline: simulate each pattern once
    # (a handful under the topology-aware placement, at most P)
    packed = np.packbits(inter, axis=1)  # [P, bytes]
    _, first, pattern = np.unique(
        packed.view(np.dtype((np.void, packed.shape[1]))).ravel(), return_index=True, return_inverse=True
    )
    flags = inter[first].T  # [F+X, U]
    sizes = _mesh_message_elements(shape, backward)
    nbytes = np.array([sizes[k] * e for k in kinds], dtype=np.float64)[:, None]
    seconds = np.where(flags, cluster.message_seconds(nbytes, True), cluster.message_seconds(nbytes, False))
    tt = tile_timeline(
        fetch_seconds=seconds[:F],
        fetch_queue=flags[:F].astype(np.int64),
        wait_order=prog.wait_order,
        segment_waits=prog.segment_waits,
        segment_seconds=prog.segment_blocks * block_s,
        send_after_segment=prog.send_after,
        send_seconds=seconds[F:],
        send_queue=flags[F:].astype(np.int64),
    )
    finish = tt.compute_end[pattern]
    if X:
        finish = np.maximum(finish, tt.send_end.max(axis=0)[pattern])  # own sends delivered
        sender_pattern = _mesh_gather(pattern[mesh.rank_at], prog.send_kind, prog.send_idx, mesh, I, J, -1)  # [P, X]
        incoming = tt.send_end.T[sender_pattern, np.arange(X)[None, :]].max(axis=1)  # partials I own
        finish = np.maximum(finish, incoming)
    comm = float((tt.fetch_busy + tt.send_busy).max())
    return _Pass(finish, float(tt.compute_busy.max()), comm)


# ----------------------------------------------------------------------------------------------------------
# public entry points
# ----------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _resolve(method: str, gpus: int, heads: int, tile, u, gpus_per_node, head_dim: int):
    return resolve_method_params(
        method, gpus=gpus, heads=heads, tile=tile, ulysses_degree=u, gpus_per_node=gpus_per_node, head_dim=head_dim
    )


@functools.lru_cache(maxsize=128)
def _mesh_plan(gpus: int, tile: tuple[int, int], gpus_per_node: int | None):
    return make_mesh_plan(gpus, tile, gpus_per_node)


def model_attention(
    method: ModelMethod,
    *,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    causal: bool,
    dtype_bytes: int,
    cluster: ClusterSpec,
    batch: int = 1,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    team_size: int | None = None,
    topology_aware: bool = True,
    schedule: str = "current",
) -> AttentionModelResult:
    """Model one forward + backward step of distributed attention on ``cluster`` (see the module docstring).

    Parameters:
        method: "ring", "ulysses", "usp", "mesh" or "startrail" (modelled only).
        gpus, seq, heads, head_dim, batch: P, S (padded to the layout, as the kernels do), H, D, B, each in
            the range :class:`~workbench.llm.mesh_attention.config.MeshAttentionConfig` declares (e.g. gpus
            1..1024, seq 1..4_194_304, heads 1..256), refused in the same words as ``workbench run``.
        causal: causal mask (zigzag layout: every block half unmasked).
        dtype_bytes: element size of one of the config's dtypes: 2 (bfloat16), 4 (float32) or 8 (float64).
        cluster: the :class:`~workbench.cluster.ClusterSpec` (FLOP/s, links, node size).
        tile: Mesh (a, b) with a*b = P; None chooses ``plan.choose_tile``. Only for "mesh" (ValueError else).
        ulysses_degree: USP degree u (divides P and H); None: ``plan.default_ulysses_degree``. Used by "usp"
            only (other methods ignore it; Ulysses alone always uses u = P).
        team_size: StarTrail C (``startrail_team_sizes``); None picks the fastest valid C. Only "startrail".
        topology_aware: Mesh places tiles on nodes with ``plan.map_tiles_to_nodes`` (True) or row-first (False);
            the other methods' layouts are fixed (consecutive ranks per node).
        schedule: Mesh / node-level Mesh tile schedule, one of ``plan.SCHEDULES``: "current" (every block as
            soon as its chunks are resident) or "greedy-backlog" (ready blocks whose result stays local are
            held back to fill communication waits; INFERENCE from third-party reviews of the paper, see
            ``plan.greedy_schedule``). Ignored by the other methods.

    Returns:
        :class:`AttentionModelResult` (bytes and memory per rank, seconds of the slowest rank).

    Raises:
        ValueError: unknown method, a parameter outside its range (the message names it, its value and the
            range), a bad tile, a Ulysses degree that does not divide P or H, a bad team size.
        TypeError: non-integer sizes, non-bool flags, a cluster that is not a ClusterSpec.

    Example:
        >>> from workbench.cluster import ClusterSpec
        >>> r = model_attention("mesh", gpus=256, seq=1 << 20, heads=32, head_dim=128, causal=True,
        ...                     dtype_bytes=2, cluster=ClusterSpec())
        >>> r.tile, r.total_seconds < model_attention("ring", gpus=256, seq=1 << 20, heads=32, head_dim=128,
        ...     causal=True, dtype_bytes=2, cluster=ClusterSpec()).total_seconds
        ((16, 16), True)

    Complexity: O(P * (a + b)) numpy work for Mesh, O(P) otherwise; nothing of sequence size.
    """
    v = _check_inputs(method, gpus, seq, heads, head_dim, batch, causal, dtype_bytes, cluster, topology_aware)
    check_schedule(schedule)
    tile = _check_method_tile(method, tile, v["gpus"])
    shape, blk_f, blk_b = _step_shape(v, causal, dtype_bytes, cluster)
    if method == "startrail":
        return _best_startrail(v, causal, team_size, shape, blk_f, blk_b, cluster)
    layout = (tile, ulysses_degree, topology_aware, schedule)
    return _model_fixed_layout(method, v, causal, layout, shape, blk_f, blk_b, cluster)


def _step_shape(
    v: Mapping[str, int], causal: bool, dtype_bytes: int, cluster: ClusterSpec
) -> tuple[_Shape, float, float]:
    """Chunk sizes of one rank (local length L of the padded, zigzag-ordered sequence) and the seconds of one
    (Q_i, KV_j) block forward and backward."""
    gpus, batch, heads, head_dim = v["gpus"], v["batch"], v["heads"], v["head_dim"]
    length = local_length(v["seq"], gpus, resolve_order(None, causal))
    shape = _Shape(n=batch * heads * length * head_dim, m=batch * heads * length, e=dtype_bytes)
    blk_f = cluster.compute_seconds(
        block_flops(batch=batch, heads=heads, local_len=length, head_dim=head_dim, causal=causal, gpus=gpus)
    )
    return shape, blk_f, BACKWARD_FLOP_FACTOR * blk_f


def _best_startrail(v: Mapping[str, int], causal: bool, team_size, shape: _Shape, blk_f, blk_b, cluster):
    """StarTrail at the given team size C, or the fastest valid C when ``team_size`` is None."""
    gpus, g = v["gpus"], cluster.gpus_per_node
    sizes = startrail_team_sizes(gpus, g) if team_size is None else [check_team_size(team_size, gpus, g)]
    args = (v["seq"], v["heads"], v["head_dim"], v["batch"], causal)
    options = [_model_startrail(gpus, cc, shape, blk_f, blk_b, cluster, *args) for cc in sizes]
    return min(options, key=lambda res: res.total_seconds)  # ties: the smaller C (listed first)


def _model_fixed_layout(method, v: Mapping[str, int], causal: bool, layout, shape: _Shape, blk_f, blk_b, cluster):
    """Ring, Ulysses, USP, Mesh and node-level Mesh: resolve the tile / Ulysses degree, count the bytes, time
    both passes. ``layout`` = (tile, ulysses_degree, topology_aware, schedule) as given to model_attention."""
    tile, ulysses_degree, topology_aware, schedule = layout
    gpus, heads, head_dim = v["gpus"], v["heads"], v["head_dim"]
    g = cluster.gpus_per_node
    place_g = g if (method not in ("mesh", "node_mesh") or topology_aware) else None
    with_u = method in ("usp", "node_mesh")
    tile_ab, u = _resolve(method, gpus, heads, tile, ulysses_degree if with_u else None, g, head_dim)
    if method == "mesh" and not topology_aware and tile is None:
        tile_ab, _ = _resolve(method, gpus, heads, None, None, None, head_dim)
    vol = predict_bytes_per_rank(
        method,
        gpus=gpus,
        seq=v["seq"],
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype_bytes=shape.e,
        batch=v["batch"],
        tile=tile_ab if method in ("mesh", "node_mesh") else None,
        ulysses_degree=u if with_u else None,
        gpus_per_node=g,
    )
    if method == "mesh":
        fwd, bwd, memory, vol = _mesh_time(gpus, tile_ab, place_g, shape, blk_f, blk_b, cluster, schedule, vol)
    else:
        fwd, bwd, memory = _other_time(method, gpus, u, tile_ab, shape, blk_f, blk_b, cluster, topology_aware, schedule)
    return _result(method, gpus, tile_ab, u, None, vol, memory, shape.e, fwd, bwd)


def _check_method_tile(method: str, tile: Sequence[int] | None, gpus: int) -> tuple[int, ...] | None:
    """The tile argument of :func:`model_attention`: only Mesh methods take one (checked for "mesh")."""
    if tile is not None and method not in ("mesh", "node_mesh"):
        raise ValueError(f"tile={tuple(tile)!r} is only used by method='mesh': pass tile=None for {method!r}")
    if tile is not None and method == "mesh":
        return check_tile(tuple(tile), gpus)
    return None if tile is None else tuple(tile)


def _other_time(method, gpus, u, tile_ab, shape: _Shape, blk_f, blk_b, cluster, topology_aware, schedule):
    """(forward s, backward s, memory) of Ring, Ulysses/USP and node-level Mesh."""
    if method == "ring":
        fwd, bwd = _ring_time(gpus, shape, blk_f, blk_b, cluster)
        return fwd, bwd, ring_family_memory(shape.n, shape.m, 1, gpus)
    if method in ("ulysses", "usp"):
        fwd, bwd = _usp_time(gpus, u, shape, blk_f, blk_b, cluster)
        return fwd, bwd, usp_memory(shape.n, shape.m, gpus // u)
    fwd, bwd = _node_mesh_time(gpus, u, tile_ab, shape, blk_f, blk_b, cluster, topology_aware, schedule)
    return fwd, bwd, node_mesh_memory(shape.n, shape.m, *tile_ab)


def _mesh_time(gpus, tile_ab, place_g, shape: _Shape, blk_f, blk_b, cluster, schedule, vol):
    """(forward s, backward s, memory, bytes) of Mesh; row-first placement (``place_g`` None) on several nodes
    replaces the inter-node bytes by its own."""
    g = cluster.gpus_per_node
    mesh = _mesh_plan(gpus, tile_ab, place_g)
    fwd = _mesh_pass(mesh, shape, blk_f, cluster, backward=False, schedule=schedule)
    bwd = _mesh_pass(mesh, shape, blk_b, cluster, backward=True, schedule=schedule)
    memory = mesh_memory(shape.n, shape.m, *tile_ab)
    if place_g is None and g < gpus:  # row-first placement: its own inter-node bytes
        vol = dict(vol)
        vol["sent_inter_node"] = _mesh_inter_row_first(mesh, shape, g)
    return fwd, bwd, memory, vol


def _mesh_inter_row_first(mesh, shape: _Shape, g: int) -> np.ndarray:
    """Bytes each rank sends off-node under the plain row-first placement (``topology_aware=False``)."""
    q_off, kv_off = mesh_off_node(mesh, np.arange(mesh.gpus), np.arange(mesh.gpus) // g)
    n, m = shape.n, shape.m
    return ((q_off * (5 * n + 3 * m) + kv_off * 6 * n) * shape.e).astype(np.int64)


def _node_mesh_time(
    gpus, u, tile, shape, blk_f, blk_b, cluster, topology_aware, schedule="current"
) -> tuple[_Pass, _Pass]:
    """Node-level Mesh: all-to-all in the Ulysses group, a Mesh pass over the P/u groups with u-fold blocks
    (super-chunks of u*L tokens x H/u heads, chunk-sized messages), all-to-all back. The u parallel Meshes
    (member x of every group) are alike, so one is timed; a node holding several groups places tiles
    topology-aware (``plan.node_mesh_placement``) and the Mesh's links are priced on groups per node."""
    groups = gpus // u
    place = node_mesh_placement(u, cluster.gpus_per_node)
    mesh = _mesh_plan(groups, tile, place if topology_aware else None)
    group_cluster = cluster.replace(gpus_per_node=place or 1)  # groups per node (1: each group on its own)
    per_peer = shape.n // u
    e = shape.e
    a2a = functools.partial(_all_to_all_seconds, u, gpus, cluster=cluster)
    passes = []
    for blk, backward, pre, post in ((blk_f, False, 3, 1), (blk_b, True, 1, 3)):
        p = _mesh_pass(mesh, shape, u * blk, group_cluster, backward=backward, schedule=schedule)
        t_pre, t_post = a2a(bytes_per_peer=pre * per_peer * e), a2a(bytes_per_peer=post * per_peer * e)
        finish = np.repeat(p.finish, u) + t_pre + t_post  # rank g*u + x runs group g's timeline
        passes.append(_Pass(finish, p.compute, p.comm + t_pre + t_post))
    return passes[0], passes[1]


def _model_startrail(gpus, c, shape, blk_f, blk_b, cluster, seq, heads, head_dim, batch, causal):
    vol = startrail_bytes_per_rank(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype_bytes=shape.e,
        team_size=c,
        batch=batch,
        gpus_per_node=cluster.gpus_per_node,
    )
    f, b = startrail_pass_times(gpus, c, shape.n, shape.m, shape.e, blk_f, blk_b, cluster)
    fwd, bwd = (_Pass(np.full(gpus, t.total), t.compute, t.comm) for t in (f, b))
    memory = ring_family_memory(shape.n, shape.m, c, gpus // (c * c))
    return _result("startrail", gpus, None, None, c, vol, memory, shape.e, fwd, bwd)


def _result(method, gpus, tile, u, c, vol, memory, e, fwd: _Pass, bwd: _Pass) -> AttentionModelResult:
    terms = peak_terms(memory, e)
    f_total, b_total = float(fwd.finish.max()), float(bwd.finish.max())
    compute = fwd.compute + bwd.compute
    total = f_total + b_total
    return AttentionModelResult(
        method=method,
        gpus=gpus,
        tile=tuple(tile) if tile is not None else None,
        ulysses_degree=u,
        team_size=c,
        bytes_per_rank=np.asarray(vol["total"], dtype=np.int64),
        bytes_sent_per_rank=np.asarray(vol["sent"], dtype=np.int64),
        peak_memory_bytes=np.full(gpus, sum(terms.values()), dtype=np.int64),
        memory_terms=MappingProxyType(terms),
        compute_seconds=compute,
        comm_seconds=fwd.comm + bwd.comm,
        exposed_comm_seconds=total - compute,
        total_seconds=total,
        forward_seconds=f_total,
        backward_seconds=b_total,
        seconds_per_rank=fwd.finish + bwd.finish,
        bytes_sent_inter_node_per_rank=(
            np.asarray(vol["sent_inter_node"], dtype=np.int64) if "sent_inter_node" in vol else None
        ),
    )


def sweep_gpus(method: ModelMethod, gpus_list: Sequence[int], **kwargs) -> AttentionSweep:
    """:func:`model_attention` for each P in ``gpus_list`` (other keywords fixed), gathered for plotting.

    Example: ``sweep_gpus("ring", [16, 64, 256], seq=1 << 20, heads=32, head_dim=128, causal=True,
    dtype_bytes=2, cluster=ClusterSpec()).total_seconds`` is an array of three times.
    """
    if "gpus" in kwargs:
        raise ValueError("gpus is swept: pass the values as gpus_list, not as gpus=")
    results = tuple(model_attention(method, gpus=p, **kwargs) for p in gpus_list)
    col = lambda f: np.array([f(r) for r in results])  # noqa: E731
    return AttentionSweep(
        method=method,
        gpus=col(lambda r: r.gpus),
        total_seconds=col(lambda r: r.total_seconds),
        compute_seconds=col(lambda r: r.compute_seconds),
        exposed_comm_seconds=col(lambda r: r.exposed_comm_seconds),
        bytes_per_rank=col(lambda r: int(r.bytes_per_rank.max())),
        peak_memory_bytes=col(lambda r: int(r.peak_memory_bytes.max())),
        results=results,
    )
