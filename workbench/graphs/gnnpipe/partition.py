"""Cutting the graph: METIS (pymetis) or random parts, the permutation that makes parts contiguous row ranges,
chunk orders per epoch, and the halo (the remote vertices a part reads) that graph parallelism exchanges.

A part of a graph-parallel run and a chunk of a GNNPipe run are both made here; after :func:`contiguous`
renumbering, part ``p`` is rows ``bounds[p]:bounds[p+1]``. One part is the identity (no renumbering), so K = 1
and P = 1 runs see the graph exactly as full-graph training does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["assign", "contiguous", "Cut", "make_cut", "epoch_order", "halo_sets", "halo_pairs", "stale_edge_share"]


def assign(indptr: np.ndarray, indices: np.ndarray, parts: int, method: str, seed: int) -> np.ndarray:
    """Part id (0..parts-1) of every vertex: METIS k-way (pymetis, seeded) or a seeded random balanced split.

    Raises ValueError when ``parts`` exceeds the vertex count or the method is unknown.
    """
    n = len(indptr) - 1
    if not 1 <= parts <= n:
        raise ValueError(f"parts={parts} is out of range: valid range is 1..{n} (the graph's vertices)")
    if parts == 1:
        return np.zeros(n, dtype=np.int64)
    if method == "random":
        rng = np.random.default_rng(seed)
        return rng.permutation(np.arange(n) % parts).astype(np.int64)
    if method != "metis":
        raise ValueError(f"partition={method!r} is not allowed: valid values are 'metis', 'random'")
    import pymetis

    opts = pymetis.Options(seed=seed)
    _, membership = pymetis.part_graph(
        parts, xadj=indptr.astype(np.int64), adjncy=indices.astype(np.int64), options=opts
    )
    out = np.asarray(membership, dtype=np.int64)
    empty = sorted(set(range(parts)) - set(out.tolist()))
    if empty:  # METIS may leave a part empty on tiny graphs: give each such part one vertex of the largest
        for p in empty:
            big = np.bincount(out, minlength=parts).argmax()
            out[np.flatnonzero(out == big)[0]] = p
    return out


def contiguous(part_of: np.ndarray, parts: int) -> tuple[np.ndarray, list[int]]:
    """``(order, bounds)``: vertices sorted by part (stable: ids ascending within a part) and part boundaries."""
    order = np.argsort(part_of, kind="stable").astype(np.int64)
    counts = np.bincount(part_of, minlength=parts)
    return order, [0, *np.cumsum(counts).tolist()]


@dataclass(frozen=True)
class Cut:
    """A graph cut into ``parts`` contiguous row ranges: ``order`` (new row i = old vertex order[i]), ``bounds``."""

    parts: int
    method: str
    order: np.ndarray
    bounds: tuple[int, ...]

    def sizes(self) -> list[int]:
        return [self.bounds[i + 1] - self.bounds[i] for i in range(self.parts)]


def make_cut(indptr: np.ndarray, indices: np.ndarray, parts: int, method: str, seed: int) -> Cut:
    """:func:`assign` then :func:`contiguous`; one part keeps the identity order."""
    n = len(indptr) - 1
    part_of = assign(indptr, indices, parts, method, seed)
    if parts == 1:
        return Cut(1, method, np.arange(n, dtype=np.int64), (0, n))
    order, bounds = contiguous(part_of, parts)
    return Cut(parts, method, order, tuple(bounds))


def epoch_order(chunks: int, order: str, seed: int, epoch: int) -> list[int]:
    """The chunk sequence of ``epoch``: fixed ``0..K-1``, shuffled (seeded by seed and epoch), or alternate
    (reversed on odd epochs). Every stage computes the same sequence."""
    if order == "fixed":
        return list(range(chunks))
    if order == "alternate":
        return list(range(chunks))[:: -1 if epoch % 2 else 1]
    if order == "shuffled":
        gen = torch.Generator().manual_seed(seed * 7_919 + epoch)
        return torch.randperm(chunks, generator=gen).tolist()
    raise ValueError(f"chunk_order={order!r} is not allowed: valid values are 'fixed', 'shuffled', 'alternate'")


def halo_sets(indptr: np.ndarray, indices: np.ndarray, bounds: tuple[int, ...] | list[int]) -> list[list[np.ndarray]]:
    """``halo[r][q]``: sorted rows owned by part q that part r's rows have as neighbours (q != r; empty for q == r).

    ``indptr``/``indices``: the graph (no self-loops) in the contiguous numbering of ``bounds``.
    """
    parts = len(bounds) - 1
    owner_of = np.repeat(np.arange(parts), np.diff(np.asarray(bounds)))
    out = []
    for r in range(parts):
        cols = indices[indptr[bounds[r]] : indptr[bounds[r + 1]]].astype(np.int64)
        remote = np.unique(cols[owner_of[cols] != r])
        owners = owner_of[remote]
        out.append([remote[owners == q] if q != r else np.zeros(0, dtype=np.int64) for q in range(parts)])
    return out


def halo_pairs(indptr: np.ndarray, indices: np.ndarray, bounds: tuple[int, ...] | list[int]) -> int:
    """Total halo size: the number of (vertex, reading part) pairs with the part not owning the vertex."""
    return int(sum(len(h) for row in halo_sets(indptr, indices, bounds) for h in row))


def stale_edge_share(
    indptr: np.ndarray, indices: np.ndarray, bounds: tuple[int, ...] | list[int], sequence: list[int]
) -> float:
    """Share of directed edges (u -> v, v aggregating u) whose source chunk comes *after* v's chunk in
    ``sequence``: the edges GNNPipe reads from historical embeddings in that epoch."""
    parts = len(bounds) - 1
    pos = np.empty(parts, dtype=np.int64)
    pos[np.asarray(sequence)] = np.arange(parts)
    owner_of = np.repeat(np.arange(parts), np.diff(np.asarray(bounds)))
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if len(rows) == 0:
        return 0.0
    return float(np.mean(pos[owner_of[indices]] > pos[owner_of[rows]]))
