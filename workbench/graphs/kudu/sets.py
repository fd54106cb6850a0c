"""Batched sorted-set operations over a chunk of extendable embeddings (numba, cached to disk).

A *set store* is a CSR pair ``(indptr int64 (r + 1,), vals int32)``: row ``i`` is a sorted, duplicate-free
vertex set. Embeddings of a chunk refer to rows of a store by index, so children that do not change a set
share their parent's row (vertical reuse) instead of copying it.

- :func:`row_op` applies one operation per embedding between a store row and a neighbour list
  (``OP_AND``: S ∩ N, ``OP_SUB``: S \\ N, ``OP_OR``: S ∪ N, ``OP_RSUB``: N \\ S; a missing row ``-1`` means
  "no set yet" and yields N itself for AND/OR/RSUB);
- :func:`filter_rows` turns each embedding's final set into its candidates: the symmetry-breaking bounds
  ``max(v_lower) < x < min(v_upper)`` and the removal of the embedding's own vertices;
- :func:`count_rows` does the same but only counts (the last pattern level is counted, never enumerated).

The two-set primitives are :mod:`workbench.graphs.setops` (merge or galloping intersection).
"""

from __future__ import annotations

import numba
import numpy as np

from workbench.graphs.setops import clip, difference, intersect

__all__ = ["OP_AND", "OP_SUB", "OP_OR", "OP_RSUB", "row_op", "filter_rows", "count_rows", "warm"]

OP_AND, OP_SUB, OP_OR, OP_RSUB = 0, 1, 2, 3
_BIG = np.int64(1) << 40


@numba.njit(cache=True, nogil=True)
def _union(a, b, out):
    """Write a ∪ b (both sorted, duplicate-free) into ``out``; return its length."""
    i = j = n = 0
    la, lb = a.shape[0], b.shape[0]
    while i < la and j < lb:
        x, y = a[i], b[j]
        if x < y:
            out[n] = x
            i += 1
        elif y < x:
            out[n] = y
            j += 1
        else:
            out[n] = x
            i += 1
            j += 1
        n += 1
    while i < la:
        out[n] = a[i]
        i += 1
        n += 1
    while j < lb:
        out[n] = b[j]
        j += 1
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def row_op(op, s_indptr, s_vals, rows, l_indptr, l_vals, lidx):
    """``out[i] = S[rows[i]] (op) L[lidx[i]]`` for every embedding i of a chunk.

    Args:
        op: OP_AND, OP_SUB, OP_OR or OP_RSUB (see module docstring).
        s_indptr, s_vals: the set store S; rows: int64 ``(c,)`` row of each embedding (-1: no set yet).
        l_indptr, l_vals: the chunk's neighbour lists L; lidx: int64 ``(c,)`` list of each embedding.

    Returns:
        ``(indptr int64 (c + 1,), vals int32)``: a new store with one row per embedding.
    """
    c = rows.shape[0]
    cap = 0
    for i in range(c):
        a = 0 if rows[i] < 0 else s_indptr[rows[i] + 1] - s_indptr[rows[i]]
        b = l_indptr[lidx[i] + 1] - l_indptr[lidx[i]]
        if rows[i] < 0:
            cap += b if op != OP_SUB else 0
        elif op == OP_AND:
            cap += min(a, b)
        elif op == OP_SUB:
            cap += a
        elif op == OP_OR:
            cap += a + b
        else:
            cap += b
    out = np.empty(cap, dtype=np.int32)
    indptr = np.zeros(c + 1, dtype=np.int64)
    pos = 0
    empty = np.zeros(0, dtype=np.int32)
    for i in range(c):
        lst = l_vals[l_indptr[lidx[i]] : l_indptr[lidx[i] + 1]]
        if rows[i] < 0:
            s = empty
        else:
            s = s_vals[s_indptr[rows[i]] : s_indptr[rows[i] + 1]]
        dst = out[pos:]
        if rows[i] < 0:
            if op == OP_SUB:
                n = 0
            else:
                n = lst.shape[0]
                dst[:n] = lst
        elif op == OP_AND:
            n = intersect(s, lst, dst)
        elif op == OP_SUB:
            n = difference(s, lst, dst)
        elif op == OP_OR:
            n = _union(s, lst, dst)
        else:
            n = difference(lst, s, dst)
        pos += n
        indptr[i + 1] = pos
    return indptr, out[:pos].copy()


@numba.njit(cache=True, nogil=True)
def _bounds(verts, i, lower, upper):
    lo = np.int64(-1)
    for j in lower:
        if verts[i, j] > lo:
            lo = np.int64(verts[i, j])
    hi = _BIG
    for j in upper:
        if verts[i, j] < hi:
            hi = np.int64(verts[i, j])
    return lo, hi


@numba.njit(cache=True, nogil=True)
def filter_rows(s_indptr, s_vals, rows, verts, lower, upper, distinct):
    """Candidates of each embedding: its set clipped to ``(max v_lower, min v_upper)`` minus ``v_distinct``.

    Args:
        s_indptr, s_vals, rows: each embedding's final set (store + row; rows >= 0).
        verts: int32 ``(c, d)`` bound vertices; lower, upper, distinct: int64 arrays of column indices.

    Returns:
        ``(indptr int64 (c + 1,), vals int32)``: candidates per embedding, sorted.
    """
    c = rows.shape[0]
    cap = 0
    for i in range(c):
        cap += s_indptr[rows[i] + 1] - s_indptr[rows[i]]
    out = np.empty(cap, dtype=np.int32)
    indptr = np.zeros(c + 1, dtype=np.int64)
    pos = 0
    for i in range(c):
        lo, hi = _bounds(verts, i, lower, upper)
        seg = clip(s_vals[s_indptr[rows[i]] : s_indptr[rows[i] + 1]], lo, hi)
        for x in seg:
            keep = True
            for j in distinct:
                if verts[i, j] == x:
                    keep = False
            if keep:
                out[pos] = x
                pos += 1
        indptr[i + 1] = pos
    return indptr, out[:pos].copy()


@numba.njit(cache=True, nogil=True)
def count_rows(s_indptr, s_vals, rows, verts, lower, upper, distinct):
    """Total number of candidates over the chunk (same rule as :func:`filter_rows`), without listing them."""
    total = np.int64(0)
    for i in range(rows.shape[0]):
        lo, hi = _bounds(verts, i, lower, upper)
        seg = clip(s_vals[s_indptr[rows[i]] : s_indptr[rows[i] + 1]], lo, hi)
        n = seg.shape[0]
        for j in distinct:
            x = verts[i, j]
            if lo < x < hi:
                k = np.searchsorted(seg, x)
                if k < seg.shape[0] and seg[k] == x:
                    n -= 1
        total += n
    return total


def warm() -> None:
    """Compile (or load from numba's disk cache) every kernel once, e.g. in the parent before forking."""
    ip = np.array([0, 2], dtype=np.int64)
    vals = np.array([1, 3], dtype=np.int32)
    rows = np.zeros(1, dtype=np.int64)
    verts = np.zeros((1, 1), dtype=np.int32)
    cols = np.zeros(1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    for op in (OP_AND, OP_SUB, OP_OR, OP_RSUB):
        row_op(op, ip, vals, rows, ip, vals, rows)
    filter_rows(ip, vals, rows, verts, cols, none, none)
    count_rows(ip, vals, rows, verts, cols, none, cols)
