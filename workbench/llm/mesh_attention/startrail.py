"""StarTrail, modelled only: bytes and step time of concentric-ring sequence parallelism (no kernel here).

StarTrail (Liu, Wang, Cheng, Zhao, Wang, Zhao, Demmel, You, "StarTrail: Concentric Ring Sequence Parallelism
for Efficient Near-Infinite-Context Transformer Model Training", arXiv 2407.00611, NeurIPS 2025) adds a
second parallel dimension to Ring-Attention. The P ranks form teams of C (meant to sit inside one node):

1. a team all-gathers its members' Q, K and V (a collective on NVLink), so each rank holds C query chunks and
   C key/value chunks and (Q_team x KV_team) is C^2 blocks of work;
2. KV bundles of C chunks then circulate round *sub-rings* of P/C^2 ranks (in different teams), in
   P/C^2 - 1 point-to-point hops, each hop hidden behind C^2 blocks (a Ring with C-fold messages and C^2-fold
   blocks: C times the compute per byte);
3. a reduce-scatter inside the team merges the partial outputs with their log-sum-exp.

Paper's counts (from a third-party summary of the paper; the PDF itself was not available here):
collectives ``4(C-1)`` chunks per rank, P2P ``2(P - C^2)/C`` chunks (Ring: ``2(P-1)``), so P2P volume falls
by C and P2P rounds by C^2; peak memory ``(Y + 3C + 1)A`` against Ring's ``(Y + 4)A``; 1 <= C <= sqrt(P).

Our per-rank counts, in elements (N = B*H*L*D per chunk, M = B*H*L per LSE row set), built so that C = 1 is
exactly this package's Ring (``volume.py``); sent == recv on every rank:

- forward: all-gather q, k, v ``3(C-1)N``; sub-ring k+v ``2C(P/C^2 - 1)N``; reduce-scatter out + LSE
  ``(C-1)(N+M)``.
- backward (our derivation; the paper circulates queries and dQ instead, with similar volume): all-gather
  q, dout, LSE, delta, k, v ``(C-1)(4N+2M)``; sub-ring k+v plus the dK/dV accumulator ``4C(P/C^2 - 1)N``;
  reduce-scatter dq, dk, dv ``3(C-1)N``.

Time (our assumptions): team collectives run as (C-1)-step rings on NVLink and are exposed; sub-ring hops
cross nodes whenever P spans more than one node and overlap like Ring's (``timeline.ring_*_pass``).
"""

from __future__ import annotations

import functools

import numpy as np

from workbench.llm.mesh_attention.plan import check_positive_int, divisors, local_length, resolve_order
from workbench.llm.mesh_attention.timeline import RingTime, ring_backward_pass, ring_forward_pass
from workbench.cluster import ClusterSpec

__all__ = ["startrail_team_sizes", "check_team_size", "startrail_elements", "startrail_bytes_per_rank",
           "startrail_pass_times"]


def startrail_team_sizes(gpus: int, gpus_per_node: int) -> list[int]:
    """Valid team sizes C: C^2 divides P (sub-rings of P/C^2 ranks) and a team fits in one node (C divides
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


def startrail_elements(gpus: int, team_size: int, n: int, m: int) -> tuple[int, int]:
    """(forward, backward) elements one rank sends (= receives) with team size C (module docstring)."""
    c, r = team_size, gpus // (team_size * team_size)
    fwd = 3 * (c - 1) * n + 2 * c * (r - 1) * n + (c - 1) * (n + m)
    bwd = (c - 1) * (4 * n + 2 * m) + 4 * c * (r - 1) * n + 3 * (c - 1) * n
    return fwd, bwd


def startrail_bytes_per_rank(
    *, gpus: int, seq: int, heads: int, head_dim: int, causal: bool, dtype_bytes: int, team_size: int, batch: int = 1,
) -> dict[str, np.ndarray]:
    """Bytes each rank sends and receives in one StarTrail forward + backward pass (module docstring).

    Same keys as ``volume.predict_bytes_per_rank`` except the message and inter-node counts: ``sent``,
    ``recv``, ``total`` (= sent + recv), ``forward_sent``, ``forward_recv``, ``backward_sent``,
    ``backward_recv`` (int64 arrays of length P). The node size does not change the bytes, so only C^2 | P
    is checked here. Raises ValueError for bad sizes or team size.

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
    out = {"forward_sent": full(fwd * dtype_bytes), "forward_recv": full(fwd * dtype_bytes),
           "backward_sent": full(bwd * dtype_bytes), "backward_recv": full(bwd * dtype_bytes)}
    out["sent"] = out["forward_sent"] + out["backward_sent"]
    out["recv"] = out["forward_recv"] + out["backward_recv"]
    out["total"] = out["sent"] + out["recv"]
    return out


def startrail_pass_times(
    gpus: int, team_size: int, n: int, m: int, dtype_bytes: int, block_fwd_s: float, block_bwd_s: float,
    cluster: ClusterSpec,
) -> tuple[RingTime, RingTime]:
    """(forward, backward) times of the slowest rank; every rank is alike.

    ``block_*_s`` is one (Q_i, KV_j) block; a sub-ring step computes C^2 of them. Collectives: C-1 NVLink
    messages each for the all-gather and the reduce-scatter, exposed (counted in ``total`` and ``comm``).
    """
    c, e = team_size, dtype_bytes
    r = gpus // (c * c)
    intra = functools.partial(cluster.message_seconds, inter_node=False)
    kv = cluster.message_seconds(2 * c * n * e, gpus > cluster.gpus_per_node)
    ring_f = ring_forward_pass(r, c * c * block_fwd_s, kv)
    ring_b = ring_backward_pass(r, c * c * block_bwd_s, kv, kv)  # the dK/dV accumulator is k+v sized
    coll_f = (c - 1) * (intra(3 * n * e) + intra((n + m) * e))
    coll_b = (c - 1) * (intra((4 * n + 2 * m) * e) + intra(3 * n * e))
    return (RingTime(ring_f.total + coll_f, ring_f.compute, ring_f.comm + coll_f),
            RingTime(ring_b.total + coll_b, ring_b.compute, ring_b.comm + coll_b))
