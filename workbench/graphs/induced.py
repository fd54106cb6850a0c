"""Vertex-induced counts from edge-induced ones: the linear transform over supergraphs.

Every copy of p as a (not necessarily induced) subgraph lies on a k-vertex set S, and G[S] is some
connected k-vertex graph q containing p as a spanning subgraph. Hence

    E(p) = sum_q s(p, q) * V(q),    s(p, q) = number of edge subsets of q that form a copy of p,

where E counts edge-induced and V vertex-induced copies. The matrix S = [s(p, q)] over the connected
k-vertex patterns is unitriangular (q has at least as many edges as p; s(p, p) = 1), so

    V(p) = sum_q (S^-1)[p, q] * E(q),

an exact integer inversion. ``s(p, q)`` is the number of bijections V(p) -> V(q) that map edges to edges,
divided by |Aut(p)|.

Example (k = 3): E(wedge) = V(wedge) + 3 V(triangle), so V(wedge) = E(wedge) - 3 E(triangle).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from workbench.graphs.patterns import Pattern, motifs

__all__ = ["containment_matrix", "inverse_containment", "vertex_from_edge", "supergraphs"]


@functools.cache
def containment_matrix(k: int) -> tuple[tuple[int, ...], ...]:
    """S[i][j] = s(motifs(k)[i], motifs(k)[j]): copies of pattern i spanning pattern j."""
    pats = motifs(k)
    perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64).reshape(-1, k)
    out = []
    for p in pats:
        row = []
        e = np.array(p.edges, dtype=np.int64).reshape(-1, 2)
        for q in pats:
            if q.m < p.m:
                row.append(0)
                continue
            a = np.zeros((k, k), dtype=bool)
            for x, y in q.edges:
                a[x, y] = a[y, x] = True
            hits = a[perms[:, e[:, 0]], perms[:, e[:, 1]]].all(axis=1).sum() if len(e) else len(perms)
            row.append(int(hits) // p.n_automorphisms)
        out.append(tuple(row))
    return tuple(out)


@functools.cache
def inverse_containment(k: int) -> tuple[tuple[int, ...], ...]:
    """The exact integer inverse of :func:`containment_matrix` (back substitution; S is unitriangular
    once patterns are ordered by edge count, as :func:`motifs` orders them)."""
    s = containment_matrix(k)
    n = len(s)
    inv = [[0] * n for _ in range(n)]
    for i in reversed(range(n)):
        inv[i][i] = 1
        for j in range(i + 1, n):
            # (S X)[i][j] = 0 for j > i: X[i][j] = -sum_{l > i} S[i][l] X[l][j]
            inv[i][j] = -sum(s[i][l] * inv[l][j] for l in range(i + 1, j + 1))
    return tuple(tuple(r) for r in inv)


def supergraphs(pattern: Pattern) -> list[tuple[Pattern, int]]:
    """The (pattern q, coefficient) pairs with V(p) = sum coefficient * E(q) (non-zero coefficients only)."""
    if pattern.labels is not None:
        raise ValueError("the induced transform is for unlabelled patterns; count labelled ones by enumeration")
    pats = motifs(pattern.k)
    index = {q.canonical: i for i, q in enumerate(pats)}
    i = index[pattern.canonical]
    inv = inverse_containment(pattern.k)
    return [(pats[j], inv[i][j]) for j in range(len(pats)) if inv[i][j]]


def vertex_from_edge(pattern: Pattern, edge_counts: dict[tuple, int]) -> int:
    """V(pattern) from edge-induced counts ``{canonical form: E(q)}`` of its supergraphs."""
    return sum(c * edge_counts[q.canonical] for q, c in supergraphs(pattern))
