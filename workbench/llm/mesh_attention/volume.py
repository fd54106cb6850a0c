"""Closed-form bytes moved per rank by the distributed attention kernels (forward + backward).

Counts exactly what the kernels in this package send and receive (tests compare with the bytes that
``workbench.distributed.Comm`` counted in real runs, to the byte). Nothing here allocates anything of
sequence size: it is O(P) arithmetic, fine for P = 1024 and S = 4M.

Notation: P ranks, L = ``local_length(seq, P, order)`` tokens per rank (padding included), element size e,
N = batch*heads*L*head_dim (one Q chunk), M = batch*heads*L (one LSE row set). Every rank moves the same
amount (all four methods are symmetric), so sent == recv for each rank.

=========  ================================================  =====================================
method     forward (sent per rank, in elements)              backward
=========  ================================================  =====================================
ring       2(P-1)N            (k, v rotated P-1 times)       4(P-1)N   (k, v again + dk, dv ring)
ulysses    4(P-1)N/P          (q, k, v in; out back)         4(P-1)N/P (dout in; dq, dk, dv back)
usp        4(u-1)N/u + 2(r-1)N                               4(u-1)N/u + 4(r-1)N
mesh       (a-1)N + (a-1)(N+M) + 2(b-1)N                     (a-1)(2N+2M) + (a-1)N + 4(b-1)N
node_mesh  4(u-1)N/u + mesh's with a*b = P/u                 4(u-1)N/u + mesh's with a*b = P/u
=========  ================================================  =====================================

Mesh forward: q to the (a-1) row peers, partial out + LSE back to them, k + v to the (b-1) column peers.
Mesh backward re-fetches (never keeps) remote chunks: q, dout, LSE and delta = rowsum(dout*out) from the row
peers (delta replaces O: M instead of N elements), k + v from the column peers; then dq partials go back to
the (a-1) Q owners and dk + dv partials to the (b-1) KV owners. Ring is Mesh with a = 1, b = P.
Mesh volume ~ (5(a-1) + 6(b-1))N, minimal near a = b = sqrt(P): ~ 11(sqrt(P)-1)N against Ring's 6(P-1)N,
so Ring / Mesh ~ (6/11)(sqrt(P)+1), close to the paper's (sqrt(P)+1)/2 (whose count takes KV = 2Q for
both directions alike): Ring per rank is ~constant in P at fixed S, Mesh falls like 1/sqrt(P).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.llm.mesh_attention.plan import (
    METHODS,
    MeshPlan,
    check_positive_int,
    check_tile,
    check_ulysses_degree,
    choose_tile,
    default_ulysses_degree,
    local_length,
    make_mesh_plan,
    node_mesh_placement,
    off_node_peers,
    resolve_order,
)

KEYS = ("sent", "recv", "total", "forward_sent", "forward_recv", "backward_sent", "backward_recv")


def _pass_elements(
    method: str, gpus: int, n: int, m: int, *, heads: int, tile: tuple[int, int] | None, u: int | None
) -> tuple[int, int, int, int]:
    """(forward elements, backward elements, forward messages, backward messages) sent by one rank."""
    p = gpus
    if method == "ring":
        return 2 * (p - 1) * n, 4 * (p - 1) * n, p - 1, 2 * (p - 1)
    if method == "ulysses":
        a2a = (p - 1) * (n // p)
        return 4 * a2a, 4 * a2a, 2 * (p - 1), 2 * (p - 1)
    if method == "usp":
        assert u is not None
        r = p // u
        a2a = (u - 1) * (n // u)
        return (4 * a2a + 2 * (r - 1) * n, 4 * a2a + 4 * (r - 1) * n, 2 * (u - 1) + (r - 1), 2 * (u - 1) + 2 * (r - 1))
    assert tile is not None
    a, b = tile
    if method == "node_mesh":
        assert u is not None
        a2a = (u - 1) * (n // u)
        fwd, bwd, fwd_msgs, bwd_msgs = _pass_elements("mesh", p // u, n, m, heads=heads, tile=tile, u=None)
        return fwd + 4 * a2a, bwd + 4 * a2a, fwd_msgs + 2 * (u - 1), bwd_msgs + 2 * (u - 1)
    fwd = (a - 1) * n + (a - 1) * (n + m) + 2 * (b - 1) * n
    bwd = (a - 1) * (2 * n + 2 * m) + (a - 1) * n + 4 * (b - 1) * n
    return fwd, bwd, 2 * (a - 1) + (b - 1), 2 * (a - 1) + 2 * (b - 1)


def resolve_method_params(
    method: str,
    *,
    gpus: int,
    heads: int,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    gpus_per_node: int | None = None,
    head_dim: int | None = None,
) -> tuple[tuple[int, int] | None, int | None]:
    """Validate and complete (tile, ulysses_degree) for ``method`` the same way the kernels do.

    Returns ``(tile, u)``: tile (a, b) for ring ((1, P)), mesh and node_mesh (over the P/u groups), None
    otherwise; u for ulysses (P), usp and node_mesh (default: ``plan.default_ulysses_degree``, inside a node).

    Raises:
        ValueError: unknown method, bad tile (a*b != P), or a Ulysses degree that does not divide P or heads.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is unknown: valid values are {METHODS}")
    if method == "ring":
        return (1, gpus), None
    if method == "mesh":
        if tile is None:
            return choose_tile(gpus, heads=heads, gpus_per_node=gpus_per_node, head_dim=head_dim), None
        return check_tile(tile, gpus), None
    if method == "ulysses":
        return None, check_ulysses_degree(gpus, gpus=gpus, heads=heads)
    if method == "node_mesh":
        if ulysses_degree is None:
            ulysses_degree = default_ulysses_degree(gpus, heads, gpus_per_node)
        u = check_ulysses_degree(ulysses_degree, gpus=gpus, heads=heads)
        groups = gpus // u
        if tile is None:
            place = node_mesh_placement(u, gpus_per_node)
            return choose_tile(groups, heads=heads, gpus_per_node=place, head_dim=head_dim), u
        return check_tile(tile, groups), u
    if ulysses_degree is None:
        ulysses_degree = default_ulysses_degree(gpus, heads, gpus_per_node)
    return None, check_ulysses_degree(ulysses_degree, gpus=gpus, heads=heads)


def predict_bytes_per_rank(
    method: str,
    *,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    causal: bool,
    dtype_bytes: int,
    batch: int = 1,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    gpus_per_node: int | None = None,
    order: str | None = None,
) -> dict[str, np.ndarray]:
    """Bytes each rank sends and receives in one forward + backward pass of ``method``.

    Parameters:
        method: "ring", "ulysses", "usp" or "mesh".
        gpus: ranks P (1..any). seq: tokens S (any; padded to the layout). heads, head_dim, batch: H, D, B.
        causal: causal mask (selects the zigzag layout unless ``order`` is given; bytes do not depend on it
            beyond the padding, since the kernels never skip a transfer).
        dtype_bytes: element size in bytes (8 fp64, 4 fp32, 2 bf16); LSE and delta rows use it too.
        tile: Mesh (a, b) with a*b = P; None chooses ``choose_tile``. ulysses_degree: USP u (None: default).
        gpus_per_node: for the Mesh topology-aware placement, the default USP degree, and
            ``sent_inter_node`` (bytes a rank sends to other nodes; zeros when None).
        order: "contiguous" or "zigzag" layout (None: zigzag iff causal).

    Returns:
        dict of int64 arrays of length P: ``sent``, ``recv``, ``total`` (= sent + recv), ``forward_sent``,
        ``forward_recv``, ``backward_sent``, ``backward_recv``, ``messages_sent`` (point-to-point messages,
        an all-to-all counts one per peer), ``sent_inter_node``.

    Raises:
        ValueError: parameters out of range, bad tile, Ulysses degree not dividing P or heads.

    Example:
        >>> predict_bytes_per_rank("ring", gpus=4, seq=64, heads=2, head_dim=8, causal=False,
        ...                        dtype_bytes=8)["sent"].tolist()
        [36864, 36864, 36864, 36864]
    """
    gpus = check_positive_int("gpus", gpus)
    seq = check_positive_int("seq", seq)
    heads = check_positive_int("heads", heads)
    head_dim = check_positive_int("head_dim", head_dim)
    batch = check_positive_int("batch", batch)
    dtype_bytes = check_positive_int("dtype_bytes", dtype_bytes)
    order = resolve_order(order, causal)
    tile_ab, u = resolve_method_params(
        method,
        gpus=gpus,
        heads=heads,
        tile=tile,
        ulysses_degree=ulysses_degree,
        gpus_per_node=gpus_per_node,
        head_dim=head_dim,
    )
    length = local_length(seq, gpus, order)
    n = batch * heads * length * head_dim
    m = batch * heads * length
    fwd, bwd, fwd_msgs, bwd_msgs = _pass_elements(method, gpus, n, m, heads=heads, tile=tile_ab, u=u)

    def full(value: int) -> np.ndarray:
        return np.full(gpus, value, dtype=np.int64)

    out = {
        "forward_sent": full(fwd * dtype_bytes),
        "forward_recv": full(fwd * dtype_bytes),
        "backward_sent": full(bwd * dtype_bytes),
        "backward_recv": full(bwd * dtype_bytes),
        "messages_sent": full(fwd_msgs + bwd_msgs),
    }
    out["sent"] = out["forward_sent"] + out["backward_sent"]
    out["recv"] = out["forward_recv"] + out["backward_recv"]
    out["total"] = out["sent"] + out["recv"]
    out["sent_inter_node"] = (
        _inter_node_sent(method, gpus, n, m, tile=tile_ab, u=u, gpus_per_node=gpus_per_node) * dtype_bytes
    )
    out["sent_intra_node"] = out["sent"] - out["sent_inter_node"]
    return out


def mesh_off_node(plan: MeshPlan, global_rank: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per Mesh member: how many of its row peers and of its column peers sit on another node.

    ``global_rank[m]``: the global rank of member m; ``node[r]``: the node of global rank r. O(P(a+b)).
    """
    node_grid = node[global_rank[plan.rank_at]].reshape(plan.b, plan.a)  # [b, a]: node of each grid cell
    q_same = (node_grid[:, :, None] == node_grid[:, None, :]).sum(-1)  # [b, a]: row peers on my node (+me)
    kv_same = (node_grid[:, None, :] == node_grid[None, :, :]).sum(1)  # [b, a]: column peers on my node (+me)
    q_off = np.empty(plan.gpus, dtype=np.int64)
    kv_off = np.empty(plan.gpus, dtype=np.int64)
    q_off[plan.rank_at] = (plan.a - q_same).reshape(-1)
    kv_off[plan.rank_at] = (plan.b - kv_same).reshape(-1)
    return q_off, kv_off


def _inter_node_sent(
    method: str,
    gpus: int,
    n: int,
    m: int,
    *,
    tile: tuple[int, int] | None,
    u: int | None,
    gpus_per_node: int | None,
) -> np.ndarray:
    """Elements each rank sends to ranks on other nodes (consecutive ranks share a node)."""
    if gpus_per_node is None or gpus_per_node >= gpus:
        return np.zeros(gpus, dtype=np.int64)
    node = np.arange(gpus) // gpus_per_node
    if method in ("ring", "usp"):
        # a USP super-chunk (u chunks, heads/u heads) holds as many elements as one rank's chunk: n
        step = 1 if method == "ring" else u
        r = gpus if method == "ring" else gpus // u
        per_peer_ring = 6 * (r - 1) * n  # every ring message goes to rank + step (mod P)
        nxt = (np.arange(gpus) + step) % gpus
        ring_part = np.where(node[nxt] != node, per_peer_ring, 0)
        if method == "ring":
            return ring_part.astype(np.int64)
        group = np.arange(gpus) // u
        off_peers = np.array(
            [np.count_nonzero((group == group[x]) & (node != node[x])) for x in range(gpus)], dtype=np.int64
        )
        return (ring_part + off_peers * 8 * (n // u)).astype(np.int64)
    if method == "node_mesh":
        assert u is not None and tile is not None
        groups = gpus // u
        plan = make_mesh_plan(groups, tile, node_mesh_placement(u, gpus_per_node))
        ranks = np.arange(gpus)
        group_of = ranks // u
        same_group = (group_of[:, None] == group_of[None, :]) & (node[:, None] != node[None, :])
        a2a_off = same_group.sum(1)  # Ulysses peers on other nodes
        q_off = np.empty(gpus, dtype=np.int64)
        kv_off = np.empty(gpus, dtype=np.int64)
        for x in range(u):  # the Mesh of member-x ranks: member g is global rank g*u + x
            qo, ko = mesh_off_node(plan, np.arange(groups) * u + x, node)
            q_off[np.arange(groups) * u + x] = qo
            kv_off[np.arange(groups) * u + x] = ko
        mesh_part = q_off * (2 * n + m + 3 * n + 2 * m) + kv_off * 6 * n
        return (a2a_off * 8 * (n // u) + mesh_part).astype(np.int64)
    if method == "ulysses":
        off = gpus - np.bincount(node, minlength=node.max() + 1)[node]
        return (off * 8 * (n // gpus)).astype(np.int64)
    assert tile is not None
    q_off, kv_off = off_node_peers(gpus, tile, gpus_per_node)
    q_units = 2 * n + m + 3 * n + 2 * m  # q, out+lse (fwd); q, dout, lse, delta, dq (bwd), per row peer
    kv_units = 6 * n  # k+v (fwd), k+v (bwd), dk+dv (bwd), per column peer
    return (q_off * q_units + kv_off * kv_units).astype(np.int64)
