"""1-D graph partitioning for Kudu: each vertex and its whole adjacency list live on exactly one rank.

Two schemes (Kudu partitions, it does not replicate; the scheme is the user's choice):

- ``range``: contiguous vertex-id ranges cut so that every rank stores about the same number of adjacency
  entries (``2m / P``). On a degree-ordered graph (:meth:`Graph.by_degree`, hubs first) rank 0 then holds
  few vertices of high degree.
- ``hash``: ``owner(v) = (v * 2654435761 mod 2^32) mod P`` (Knuth's multiplicative hash), which scatters
  hubs and leaves alike.

Only O(P) numbers describe the partition, so every rank can compute ``owner(v)`` for any vertex; nothing
per vertex is replicated (a fetched list's length travels with it, see :mod:`.fetch`).

Example::

    >>> from workbench.graphs.generators import grid
    >>> part = Partition.build(grid(3, 3), 2, "range")
    >>> part.owner(np.arange(9)).tolist()
    [0, 0, 0, 0, 0, 1, 1, 1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.graphs.graph import Graph

__all__ = ["Partition", "LocalGraph", "Scheme", "HASH_MULTIPLIER"]

Scheme = Literal["range", "hash"]
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative constant, floor(2^32 / golden ratio)


@dataclass(frozen=True)
class Partition:
    """Which rank owns each vertex: ``scheme``, ``parts`` (P), ``n`` and, for ``range``, the cut points
    ``bounds`` (int64 ``(P + 1,)``: rank r owns ``bounds[r] <= v < bounds[r + 1]``)."""

    scheme: Scheme
    parts: int
    n: int
    bounds: tuple[int, ...] = ()

    @classmethod
    def build(cls, graph: Graph, parts: int, scheme: Scheme = "hash") -> Partition:
        """Partition ``graph``'s vertices over ``parts`` ranks (see module docstring).

        Raises:
            ValueError: ``parts`` < 1 or an unknown scheme.
        """
        if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
            raise ValueError(f"parts={parts!r} is out of range: valid range is >= 1")
        if scheme not in ("range", "hash"):
            raise ValueError(f"partition scheme={scheme!r} is unknown: valid values are 'range', 'hash'")
        if scheme == "hash":
            return cls("hash", int(parts), graph.n)
        # cut the prefix sums of the degrees into equal shares of the 2m adjacency entries
        targets = np.arange(1, parts, dtype=np.float64) * (graph.indptr[-1] / parts)
        cuts = np.searchsorted(graph.indptr[1:], targets, side="left") + 1
        cuts = np.minimum(cuts, graph.n)
        bounds = (0, *(int(c) for c in np.maximum.accumulate(cuts)), graph.n)
        return cls("range", int(parts), graph.n, bounds)

    def owner(self, v: np.ndarray | int) -> np.ndarray:
        """Owning rank of each vertex id in ``v`` (int64 array of the same shape)."""
        v = np.asarray(v, dtype=np.int64)
        if self.scheme == "hash":
            return ((v * HASH_MULTIPLIER) & 0xFFFFFFFF) % self.parts
        return np.searchsorted(np.asarray(self.bounds[1:-1], dtype=np.int64), v, side="right").astype(np.int64)

    def owned(self, rank: int) -> np.ndarray:
        """Sorted int64 vertex ids owned by ``rank``."""
        if not 0 <= rank < self.parts:
            raise ValueError(f"rank={rank} is out of range: valid range is 0..{self.parts - 1}")
        if self.scheme == "range":
            return np.arange(self.bounds[rank], self.bounds[rank + 1], dtype=np.int64)
        ids = np.arange(self.n, dtype=np.int64)
        return ids[self.owner(ids) == rank]

    def describe(self) -> str:
        return f"{self.scheme} over {self.parts} ranks"


@dataclass(frozen=True, eq=False)
class LocalGraph:
    """What one rank holds: its partition's adjacency lists, nothing about other ranks' vertices.

    Attributes:
        rank: this rank; partition: the global :class:`Partition`.
        vertices: int64 ``(n_local,)`` sorted owned vertex ids.
        indptr: int64 ``(n_local + 1,)``; indices: int32 ``(entries,)`` global neighbour ids, rows sorted.
        n: vertices of the whole graph.
    """

    rank: int
    partition: Partition
    vertices: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    n: int

    @classmethod
    def extract(cls, graph: Graph, partition: Partition, rank: int) -> LocalGraph:
        """Copy ``rank``'s rows out of the whole ``graph`` (what a loader on that machine would keep)."""
        vertices = partition.owned(rank)
        deg = graph.degrees[vertices]
        indptr = np.zeros(vertices.shape[0] + 1, dtype=np.int64)
        np.cumsum(deg, out=indptr[1:])
        starts = graph.indptr[vertices]
        # gather every owned row: position j of row i is graph.indices[starts[i] + j]
        offsets = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1], deg)
        indices = graph.indices[np.repeat(starts, deg) + offsets].astype(np.int32, copy=True)
        return cls(rank, partition, vertices, indptr, indices, graph.n)

    def is_local(self, v: np.ndarray) -> np.ndarray:
        """Boolean mask: which of the vertex ids ``v`` this rank owns."""
        return self.partition.owner(v) == self.rank

    def local_index(self, v: np.ndarray) -> np.ndarray:
        """Row of each owned vertex id in ``v`` (ids must be owned)."""
        return np.searchsorted(self.vertices, np.asarray(v, dtype=np.int64))

    def rows(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) int64 offsets into ``indices`` of the lists of owned vertices ``v``."""
        i = self.local_index(v)
        return self.indptr[i], self.indptr[i + 1]

    def gather(self, v: np.ndarray) -> np.ndarray:
        """The concatenated adjacency lists of owned vertices ``v`` (int32), in the given order."""
        start, end = self.rows(v)
        lengths = end - start
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int32)
        offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self.indices[np.repeat(start, lengths) + offsets]

    @property
    def nbytes(self) -> int:
        """Bytes held: adjacency, row offsets and owned ids."""
        return int(self.indices.nbytes + self.indptr.nbytes + self.vertices.nbytes)
