"""Peak activation memory of one distributed-attention layer per rank, itemised (the cluster model's memory).

Each function returns ``(forward_terms, backward_terms)``: name -> elements the kernel holds at the worst
moment of that pass (the element size multiplies them later; :func:`peak_terms` picks the larger pass).
Notation: N = B*H*L*D elements of one chunk (Q, K, V, O, dO, dQ, ... of L tokens), M = B*H*L elements of
one LSE (or delta) row set. Model weights, other layers' saved activations and allocator slack are excluded.

The counts follow what the kernels in this package keep alive (``ring.py``, ``mesh.py``, ``usp.py``):

* Ring streams: beyond its local chunks it holds two KV buffers (the chunk in hand and the next one in
  flight), its output accumulator, and in backward the travelling dK/dV accumulators (own, incoming,
  outgoing).
* Mesh caches every remote chunk of its tile at once (a-1 Q chunks, b-1 KV chunks) plus one partial per
  tile row (and column, backward), so its memory grows with a + b and exceeds Ring's for tiles larger than
  2 x 2 (Mesh-Attention paper: "peak memory higher than Ring because several remote chunks are cached").
* StarTrail adds the team-gathered C-chunk copies and C-fold ring buffers (paper: ``(Y + 3C + 1)A`` against
  Ring's ``(Y + 4)A``, A one activation slice, Y layers).
* USP / Ulysses hold a head-sharded copy from the all-to-all, then Ring buffers over r = P/u ranks.
"""

from __future__ import annotations

Terms = dict[str, int]

__all__ = ["ring_family_memory", "usp_memory", "mesh_memory", "node_mesh_memory", "peak_terms"]


def ring_family_memory(n: int, m: int, c: int, r: int) -> tuple[Terms, Terms]:
    """Ring (team size c = 1, ring size r = P) and StarTrail (team size c, sub-rings of r = P/c^2)."""
    bufs = 2 if r > 1 else 0  # nothing travels on a ring of one
    fwd = {
        "local q, k, v": 3 * n,
        "team-gathered q, k, v": 3 * (c - 1) * n,
        "kv buffers (held + in flight)": bufs * 2 * c * n,
        "out + lse accumulators": c * (n + m),
        "block out + lse (temporary)": c * (n + m),
    }
    bwd = {
        "local q, k, v, out, dout": 5 * n,
        "lse, delta": 2 * m,
        "team-gathered q, dout, lse, delta, k, v": (c - 1) * (4 * n + 2 * m),
        "kv buffers (held + in flight)": bufs * 2 * c * n,
        "dk, dv accumulators (own + travelling in + out)": (3 if r > 1 else 1) * 2 * c * n,
        "dq accumulator": c * n,
        "block dq, dk, dv (temporary)": 3 * c * n,
    }
    return fwd, bwd


def usp_memory(n: int, m: int, r: int) -> tuple[Terms, Terms]:
    """USP with ring degree r (Ulysses alone: r = 1): head-sharded copies, then Ring's buffers over r ranks."""
    ring_f, ring_b = ring_family_memory(n, m, 1, r)
    fwd = {
        "local q, k, v": 3 * n,
        "all-to-all q, k, v (head-sharded)": 3 * n,
        **{k: v for k, v in ring_f.items() if k != "local q, k, v"},
        "all-to-all out buffer": n,
    }
    bwd = {
        "local q, k, v, out, dout": 5 * n,
        "head-sharded q, k, v, out, dout": 5 * n,
        **{k: v for k, v in ring_b.items() if k != "local q, k, v, out, dout"},
        "all-to-all dq, dk, dv buffer": 3 * n,
    }
    return fwd, bwd


def mesh_memory(n: int, m: int, a: int, b: int) -> tuple[Terms, Terms]:
    """Mesh with tile (a, b): every remote chunk of the tile cached at once, one partial per row / column."""
    fwd = {
        "local q, k, v": 3 * n,
        "cached remote q (a-1 chunks)": (a - 1) * n,
        "cached remote k, v (b-1 chunks)": 2 * (b - 1) * n,
        "partial out + lse (a rows)": a * (n + m),
        "block out + lse (temporary)": n + m,
    }
    bwd = {
        "local q, k, v, out, dout": 5 * n,
        "lse, delta": 2 * m,
        "cached remote q, dout, lse, delta (a-1 chunks)": (a - 1) * (2 * n + 2 * m),
        "cached remote k, v (b-1 chunks)": 2 * (b - 1) * n,
        "partial dq (a rows)": a * n,
        "partial dk, dv (b columns)": 2 * b * n,
        "block dq, dk, dv (temporary)": 3 * n,
    }
    return fwd, bwd


def node_mesh_memory(n: int, m: int, a: int, b: int) -> tuple[Terms, Terms]:
    """Node-level Mesh (tile (a, b) over the groups): head-sharded copies from the all-to-all, then Mesh's
    cache of remote super-chunks (each the size of one chunk)."""
    mesh_f, mesh_b = mesh_memory(n, m, a, b)
    fwd = {
        "local q, k, v": 3 * n,
        "all-to-all q, k, v (head-sharded)": 3 * n,
        **{k: v for k, v in mesh_f.items() if k != "local q, k, v"},
        "all-to-all out buffer": n,
    }
    bwd = {
        "local q, k, v, out, dout": 5 * n,
        "head-sharded q, k, v, out, dout": 5 * n,
        **{k: v for k, v in mesh_b.items() if k != "local q, k, v, out, dout"},
        "all-to-all dq, dk, dv buffer": 3 * n,
    }
    return fwd, bwd


def peak_terms(terms: tuple[Terms, Terms], dtype_bytes: int) -> Terms:
    """The terms of the larger pass, in bytes, zero terms dropped (forward wins a tie only if strictly larger)."""
    fwd, bwd = ({k: v * dtype_bytes for k, v in t.items() if v} for t in terms)
    return fwd if sum(fwd.values()) > sum(bwd.values()) else bwd
