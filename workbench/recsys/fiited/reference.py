"""Slow, obvious references for the VHPI table: a Python dict of per-key chunk lists, and a scalar probe.

:class:`DictTable` models what a VHPI table must behave like: ``key -> [chunk values or None] * nc`` plus a
count of live chunks; the property tests drive both with the same random operations and compare every
lookup. :func:`probe_lookup` walks one key's linear-probe sequence with plain Python integers.
"""

from __future__ import annotations

import numpy as np

from workbench.recsys.fiited.vhpi import EMPTY, VHPITable, hash_keys

__all__ = ["DictTable", "probe_lookup"]


class DictTable:
    """``key -> list of nc entries`` (a float32 array of ``chunk`` values, or None when pruned)."""

    def __init__(self, n_chunks: int, chunk: int) -> None:
        self.n_chunks, self.chunk = n_chunks, chunk
        self.data: dict[int, list[np.ndarray | None]] = {}

    def insert(self, key: int) -> None:
        self.data.setdefault(int(key), [None] * self.n_chunks)

    def alloc(self, key: int, j: int, value: np.ndarray) -> None:
        self.data[int(key)][j] = np.asarray(value, dtype=np.float32).copy()

    def free(self, key: int, j: int) -> None:
        self.data[int(key)][j] = None

    def delete(self, key: int) -> bool:
        return self.data.pop(int(key), None) is not None

    def vector(self, key: int) -> np.ndarray:
        parts = self.data[int(key)]
        return np.concatenate([np.zeros(self.chunk, np.float32) if p is None else p for p in parts])

    @property
    def live(self) -> int:
        return sum(p is not None for parts in self.data.values() for p in parts)


def probe_lookup(table: VHPITable, key: int) -> int:
    """The slot of ``key`` by walking the probe sequence one slot at a time (-1 when absent)."""
    s = table.slots
    pos = int(hash_keys(np.array([key], dtype=np.int64))[0] % np.uint64(s))
    for _ in range(s):
        here = int(table.keys[pos])
        if here == key:
            return pos
        if here == EMPTY:
            return -1
        pos = (pos + 1) % s
    return -1
