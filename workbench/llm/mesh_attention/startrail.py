"""StarTrail, modelled only: layout, blocks, bytes and step time of concentric-ring sequence parallelism.

StarTrail (Liu, Wang, Cheng, Zhao, Wang, Zhao, Demmel, You, "StarTrail: Concentric Ring Sequence Parallelism
for Efficient Near-Infinite-Context Transformer Model Training", arXiv 2407.00611 (earlier titles: WallFacer),
NeurIPS 2025) adds a second parallel dimension to Ring-Attention: teams of C ranks, each rank holding C query
chunks, with KV *bundles* of C chunks circulating round sub-rings of P/C^2 ranks (C^2-fold blocks per hop).

What the paper's counts fix (from a third-party summary; the PDF was not available here): collectives
``4(C-1)`` chunks per rank, P2P ``2(P - C^2)/C`` chunks (Ring: ``2(P-1)``), 1 <= C <= sqrt(P).

**Our reading of the layout (an inference, labelled):** the ranks form a C x C x r grid, r = P/C^2, rank
``p = z*C^2 + y*C + x`` (x: position in the Q-team, y: in the KV-group, z: on the sub-ring):

* **Q-team** (fixed y, z; the C consecutive ranks x = 0..C-1, inside one node when C divides the node): all-gathers
  its members' Q, so each member holds the team's C query chunks; reduce-scatters the outputs (with LSE).
* **KV-group** (fixed x, z; stride C): all-gathers K and V into a C-chunk bundle. This group is *not* the
  Q-team: if the team that gathers Q also gathered KV, every member would start with the same bundle and a
  team would see at most 1 + C(r-1) of the P/C bundles it needs (the bug this module had until issue 11);
  an initial shift would fix coverage but add 2C chunks of P2P per rank, against the paper's 2(P-C^2)/C.
  With C^2 > gpus_per_node this collective spans nodes (it must).
* **Sub-ring** (fixed x, y; stride C^2): the r bundles of KV-groups (x, ., z') for z' = 0..r-1 circulate in
  r-1 hops (the 2.5-D N-body pattern of Driscoll, Georganas, Koanantakool, Solomonik and Yelick, which
  WallFacer cites as its model).

Rank (x, y, z) thus computes the blocks Q_team(y, z) x KV of {(x, y', z') : all y', z'}: C * C r = P blocks,
and over a Q-team (x = 0..C-1) every KV chunk exactly once (``startrail_blocks``; tested by the coverage check).

Our per-rank counts, in elements (N = B*H*L*D per chunk, M = B*H*L per LSE row set), built so that C = 1 is
exactly this package's Ring (``volume.py``); sent == recv on every rank:

- forward: all-gather q (Q-team) ``(C-1)N`` and k, v (KV-group) ``2(C-1)N``; sub-ring k+v ``2C(r-1)N``;
  reduce-scatter out + LSE (Q-team) ``(C-1)(N+M)``.
- backward (our derivation; the paper circulates queries and dQ instead, with similar volume): all-gather
  q, dout, LSE, delta (Q-team) ``(C-1)(2N+2M)`` and k, v (KV-group) ``2(C-1)N``; sub-ring k+v plus the dK/dV
  accumulator ``4C(r-1)N``; reduce-scatter dq (Q-team) ``(C-1)N`` and dk, dv (KV-group) ``2(C-1)N``.

Per peer that is 5N+3M per Q-team peer and 6N per KV-group peer (the same as a Mesh row and column peer) and
6C(r-1)N to the next sub-ring member. Collective bytes are attributed to peers as ``Comm.all_gather`` counts
them (each member's piece to each other member).

Time (our assumptions): collectives run as (C-1)-step rings and are exposed; the Q-team's and the KV-group's
collectives run concurrently when they use different link classes (NVLink vs network) and one after the
other when they share one; sub-ring hops overlap like Ring's (``timeline.ring_*_pass``), on the network
whenever a hop crosses nodes.
"""

from __future__ import annotations

import functools

import numpy as np

from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.plan import check_positive_int, divisors, local_length, resolve_order
from workbench.llm.mesh_attention.timeline import RingTime, ring_backward_pass, ring_forward_pass

__all__ = [
    "startrail_team_sizes",
    "check_team_size",
    "startrail_elements",
    "startrail_bytes_per_rank",
    "startrail_pass_times",
    "startrail_groups",
    "startrail_blocks",
    "startrail_inter_node_elements",
]


def startrail_team_sizes(gpus: int, gpus_per_node: int) -> list[int]:
    """Valid team sizes C: C^2 divides P (sub-rings of P/C^2 ranks) and a Q-team fits in one node (C divides
    ``gpus_per_node``, or all P ranks share one node). Example: ``startrail_team_sizes(256, 8) == [1, 2, 4, 8]``."""
    return [c for c in divisors(gpus) if gpus % (c * c) == 0 and (gpus_per_node % c == 0 or gpus <= gpus_per_node)]


def check_team_size(team_size: object, gpus: int, gpus_per_node: int) -> int:
    """Return ``team_size`` if valid for (gpus, gpus_per_node); ValueError naming it and the valid values."""
    valid = startrail_team_sizes(gpus, gpus_per_node)
    if isinstance(team_size, bool) or not isinstance(team_size, (int, np.integer)) or team_size not in valid:
        raise ValueError(
            f"team_size={team_size!r} is not valid for gpus={gpus} with gpus_per_node={gpus_per_node}: a StarTrail "
            f"team size C needs C^2 | gpus and a team inside one node; valid values are {valid}"
        )
    return int(team_size)


def startrail_groups(gpus: int, team_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q_team, kv_group, sub_ring): int64 arrays [P, C], [P, C], [P, r] of the members of each rank's groups.

    Rank ``p = z*C^2 + y*C + x``; Q-team: vary x; KV-group: vary y; sub-ring: vary z (members in ring order).
    Example: ``startrail_groups(8, 2)[1][0].tolist() == [0, 2]``.
    """
    c = team_size
    if gpus % (c * c):
        raise ValueError(f"team_size={c} needs C^2 | gpus={gpus}")
    r = gpus // (c * c)
    ranks = np.arange(gpus)
    z, rest = np.divmod(ranks, c * c)
    y, x = np.divmod(rest, c)
    k = np.arange(c)
    q_team = (z * c * c + y * c)[:, None] + k[None, :]
    kv_group = (z * c * c + x)[:, None] + c * k[None, :]
    sub_ring = (y * c + x)[:, None] + c * c * np.arange(r)[None, :]
    return q_team, kv_group, sub_ring


def startrail_blocks(gpus: int, team_size: int) -> list[list[tuple[int, int]]]:
    """Per rank, the blocks (Q chunk i, KV chunk j) it computes (chunk i = rank i's chunk; module docstring)."""
    q_team, kv_group, sub_ring = startrail_groups(gpus, team_size)
    out = []
    for p in range(gpus):
        kv = [int(j) for member in sub_ring[p] for j in kv_group[member]]
        out.append([(int(i), j) for i in q_team[p] for j in kv])
    return out


def startrail_elements(gpus: int, team_size: int, n: int, m: int) -> tuple[int, int]:
    """(forward, backward) elements one rank sends (= receives) with team size C (module docstring)."""
    c, r = team_size, gpus // (team_size * team_size)
    fwd = 3 * (c - 1) * n + 2 * c * (r - 1) * n + (c - 1) * (n + m)
    bwd = (c - 1) * (4 * n + 2 * m) + 4 * c * (r - 1) * n + 3 * (c - 1) * n
    return fwd, bwd


def startrail_inter_node_elements(gpus: int, team_size: int, gpus_per_node: int, n: int, m: int) -> np.ndarray:
    """Elements each rank sends to other nodes, forward + backward (int64 [P]; consecutive ranks share a node)."""
    c, r = team_size, gpus // (team_size * team_size)
    q_team, kv_group, sub_ring = startrail_groups(gpus, c)
    node = np.arange(gpus) // gpus_per_node
    q_off = (node[q_team] != node[:, None]).sum(1)
    kv_off = (node[kv_group] != node[:, None]).sum(1)
    nxt = sub_ring[np.arange(gpus), (np.argmax(sub_ring == np.arange(gpus)[:, None], axis=1) + 1) % r]
    ring_off = (node[nxt] != node) & (r > 1)
    return (q_off * (5 * n + 3 * m) + kv_off * 6 * n + ring_off * 6 * c * (r - 1) * n).astype(np.int64)


def startrail_bytes_per_rank(
    *,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    causal: bool,
    dtype_bytes: int,
    team_size: int,
    batch: int = 1,
    gpus_per_node: int | None = None,
) -> dict[str, np.ndarray]:
    """Bytes each rank sends and receives in one StarTrail forward + backward pass (module docstring).

    Same keys as ``volume.predict_bytes_per_rank`` except the message count: ``sent``, ``recv``, ``total``
    (= sent + recv), ``forward_sent``, ``forward_recv``, ``backward_sent``, ``backward_recv``,
    ``sent_inter_node`` (zeros when ``gpus_per_node`` is None), ``sent_intra_node`` (int64 arrays of length P).
    The node size does not change the total, so only C^2 | P is checked here. Raises ValueError for bad
    sizes or team size.

    Example: with ``team_size=1`` the result equals ``predict_bytes_per_rank("ring", ...)``.
    """
    gpus = check_positive_int("gpus", gpus)
    check_team_size(team_size, gpus, gpus)
    dtype_bytes = check_positive_int("dtype_bytes", dtype_bytes)
    length = local_length(check_positive_int("seq", seq), gpus, resolve_order(None, causal))
    m = check_positive_int("batch", batch) * check_positive_int("heads", heads) * length
    n = m * check_positive_int("head_dim", head_dim)
    fwd, bwd = startrail_elements(gpus, team_size, n, m)
    full = functools.partial(np.full, gpus, dtype=np.int64)
    out = {
        "forward_sent": full(fwd * dtype_bytes),
        "forward_recv": full(fwd * dtype_bytes),
        "backward_sent": full(bwd * dtype_bytes),
        "backward_recv": full(bwd * dtype_bytes),
    }
    out["sent"] = out["forward_sent"] + out["backward_sent"]
    out["recv"] = out["forward_recv"] + out["backward_recv"]
    out["total"] = out["sent"] + out["recv"]
    if gpus_per_node is None:
        out["sent_inter_node"] = full(0)
    else:
        g = check_positive_int("gpus_per_node", gpus_per_node)
        out["sent_inter_node"] = startrail_inter_node_elements(gpus, team_size, g, n, m) * dtype_bytes
    out["sent_intra_node"] = out["sent"] - out["sent_inter_node"]
    return out


def _crosses(members: np.ndarray, gpus_per_node: int) -> bool:
    """True if any hop of the ring ``members[0] -> members[1] -> ... -> members[0]`` crosses nodes."""
    if members.shape[-1] < 2:
        return False
    node = members // gpus_per_node
    return bool(np.any(node != np.roll(node, -1, axis=-1)))


def startrail_pass_times(
    gpus: int,
    team_size: int,
    n: int,
    m: int,
    dtype_bytes: int,
    block_fwd_s: float,
    block_bwd_s: float,
    cluster: ClusterSpec,
) -> tuple[RingTime, RingTime]:
    """(forward, backward) times of the slowest rank (module docstring for the assumptions).

    ``block_*_s`` is one (Q_i, KV_j) block; a sub-ring step computes C^2 of them. Collectives: C-1 messages
    each on the link class of their group's ring (NVLink or network), exposed (counted in ``total`` and
    ``comm``); Q-team and KV-group collectives overlap only when they use different link classes.

    Example (P=64, C=8: one KV-group spans the 8 nodes, so the network prices it):
        >>> from workbench.cluster import ClusterSpec
        >>> f1, _ = startrail_pass_times(64, 8, 10**6, 10**4, 2, 1e-3, 2.5e-3, ClusterSpec())
        >>> f2, _ = startrail_pass_times(64, 8, 10**6, 10**4, 2, 1e-3, 2.5e-3, ClusterSpec(inter_node_bw_gbps=1.0))
        >>> f2.total > f1.total
        True
    """
    c, e, g = team_size, dtype_bytes, cluster.gpus_per_node
    r = gpus // (c * c)
    q_team, kv_group, sub_ring = startrail_groups(gpus, c)
    q_inter, kv_inter = _crosses(q_team, g), _crosses(kv_group, g)
    ring_inter = _crosses(sub_ring, g)

    def coll(q_elems: int, kv_elems: int) -> float:
        """(C-1) ring steps of a Q-team message and of a KV-group message, concurrent on different links."""
        tq = (c - 1) * cluster.message_seconds(q_elems * e, q_inter) if q_elems else 0.0
        tk = (c - 1) * cluster.message_seconds(kv_elems * e, kv_inter) if kv_elems else 0.0
        return max(tq, tk) if q_inter != kv_inter else tq + tk

    kv = cluster.message_seconds(2 * c * n * e, ring_inter)
    ring_f = ring_forward_pass(r, c * c * block_fwd_s, kv)
    ring_b = ring_backward_pass(r, c * c * block_bwd_s, kv, kv)  # the dK/dV accumulator is k+v sized
    coll_f = coll(n, 2 * n) + coll(n + m, 0) if c > 1 else 0.0
    coll_b = coll(2 * n + 2 * m, 2 * n) + coll(n, 2 * n) if c > 1 else 0.0
    return (
        RingTime(ring_f.total + coll_f, ring_f.compute, ring_f.comm + coll_f),
        RingTime(ring_b.total + coll_b, ring_b.compute, ring_b.comm + coll_b),
    )
