"""The virtually-hashed, physically-indexed (VHPI) embedding table: keys hash to virtual slots, each slot holds
one physical index per chunk of its vector into a shared chunk pool with a free list.

FIITED (arXiv 2401.04408; v1 and v2 abstracts) names "virtually-hashed physically-indexed hash tables" as the
storage that makes per-vector dimension pruning save memory during training; the layout below is ours (the
paper's text could not be read: ``papers/further/fiited.md`` section 0).

Layout (``S`` slots, ``nc = dim / chunk`` chunks per vector, pool of ``P`` chunks of ``chunk`` floats)::

    keys    int64 [S]          the key in each slot (EMPTY = -1); open addressing, linear probing
    ptr     int32 [S, nc]      physical chunk of (slot, j); NONE = -1: chunk j of that vector is pruned (reads 0)
    weight  float [P + 1, c]   the chunk pool; row P is a zero row that pruned chunks read (never written)
    state   float [P + 1, c]   the optimizer state (Adagrad's sum of squared gradients), row-aligned with weight
    free    int64 stack        the physical chunks nobody owns

Freeing a chunk pushes its row on the free list and zeroes its weight *and* its optimizer state, so pruned
memory is really reusable; :meth:`compact` moves the live chunks (weights and optimizer state together) to the
front of a pool of exactly the live size and shrinks it, so the tensor's bytes equal the counted bytes.
Deleting a key frees its chunks and closes the probe gap by backward shifting (no tombstones): other keys'
``ptr`` rows move between slots, their chunks never move ("physically indexed").

Memory counted (:meth:`memory`): live chunks x chunk x 4 B (weights), the same for the optimizer state, the
pointer array (S x nc x ``ptr_bytes``) and the keys (S x 8 B). The counters are kept incrementally;
:meth:`check_invariants` recomputes them from the arrays (the tests call it after every operation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["VHPITable", "TableMemory", "ServedMemory", "served_memory", "EMPTY", "NONE", "KEY_BYTES", "hash_keys"]

EMPTY = -1
NONE = -1
KEY_BYTES = 8  # one int64 key per slot
FREE_BYTES = 8  # one int64 row per free-list entry
_M1, _M2, _INC = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)


def hash_keys(keys: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser of int64 keys (uint64 arithmetic modulo 2^64)."""
    z = keys.astype(np.uint64) + _INC
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@dataclass(frozen=True)
class TableMemory:
    """Bytes of a VHPI table: live chunk weights, optimizer state of those chunks, the pointer array, the keys;
    ``pool_tensor_bytes`` is what the weight tensor really occupies now (capacity incl. free chunks)."""

    live_chunks: int
    weight_bytes: int
    optimizer_bytes: int
    pointer_bytes: int
    key_bytes: int
    pool_tensor_bytes: int
    free_list_bytes: int = 0

    @property
    def embedding_bytes(self) -> int:
        """Chunk weights + pointers + keys of this table as it stands (training-time slots included)."""
        return self.weight_bytes + self.pointer_bytes + self.key_bytes


@dataclass(frozen=True)
class ServedMemory:
    """Bytes of the table a trained model serves from (:func:`served_memory`): the live chunks, a VHPI index
    (keys and pointers) over the ``ids`` that keep at least one chunk, sized at the load factor, the shared
    default vectors that ids with no chunk read, and no free list (the pool is compacted)."""

    live_chunks: int
    ids: int
    slots: int
    weight_bytes: int
    pointer_bytes: int
    key_bytes: int
    default_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.pointer_bytes + self.key_bytes + self.default_bytes


def served_memory(
    *,
    live_chunks: int,
    ids: int,
    n_chunks: int,
    chunk: int,
    load_factor: float,
    ptr_bytes: int = 4,
    default_bytes: int = 0,
    item_bytes: int = 4,
) -> ServedMemory:
    """Served bytes: ``live_chunks x chunk x 4`` + ``S x (n_chunks x ptr_bytes + 8)`` with ``S = ceil(ids /
    load_factor)`` slots (none when no id keeps a chunk) + the default vectors."""
    slots = int(math.ceil(ids / load_factor)) if ids else 0
    return ServedMemory(
        live_chunks=int(live_chunks),
        ids=int(ids),
        slots=slots,
        weight_bytes=int(live_chunks) * chunk * item_bytes,
        pointer_bytes=slots * n_chunks * ptr_bytes,
        key_bytes=slots * KEY_BYTES,
        default_bytes=int(default_bytes),
    )


class VHPITable:
    """A VHPI table (module docstring). Keys are non-negative int64.

    Example:
        >>> t = VHPITable(slots=8, dim=4, chunk=2, pool=4)
        >>> s = t.insert(np.array([42]))
        >>> t.alloc(s, np.array([0]))
        >>> t.memory().live_chunks
        1
    """

    def __init__(
        self, *, slots: int, dim: int, chunk: int, pool: int, ptr_bytes: int = 4, dtype: torch.dtype = torch.float32
    ) -> None:
        if chunk < 1 or dim % chunk:
            raise ValueError(f"chunk={chunk} must divide dim={dim}: valid values are the divisors of dim")
        if slots < 1:
            raise ValueError(f"slots={slots} is out of range: valid range is >= 1")
        self.dim, self.chunk, self.n_chunks = dim, chunk, dim // chunk
        self.ptr_bytes = ptr_bytes
        self.keys = np.full(slots, EMPTY, dtype=np.int64)
        self.ptr = np.full((slots, self.n_chunks), NONE, dtype=np.int32)
        self.size = 0
        self.live = 0
        self.dtype = dtype
        self._new_pool(max(0, pool))

    # ---- the pool ---------------------------------------------------------------------------------------
    def _new_pool(self, capacity: int) -> None:
        self.capacity = capacity
        self.weight = torch.zeros(capacity + 1, self.chunk, dtype=self.dtype)  # row `capacity` reads as zero
        self.state = torch.zeros(capacity + 1, self.chunk, dtype=self.dtype)
        self.free = np.arange(capacity - 1, -1, -1, dtype=np.int64)  # a stack: pops 0, 1, 2, ... first
        self.n_free = capacity

    def grow(self, extra: int) -> None:
        """Add ``extra`` free chunks to the pool (weights and optimizer state copied; the zero row moves)."""
        if extra <= 0:
            return
        old, new = self.capacity, self.capacity + extra
        w = torch.zeros(new + 1, self.chunk, dtype=self.dtype)
        s = torch.zeros(new + 1, self.chunk, dtype=self.dtype)
        w[:old], s[:old] = self.weight.detach()[:old], self.state[:old]
        self.weight, self.state, self.capacity = w, s, new
        free = np.empty(new, dtype=np.int64)
        free[: self.n_free] = self.free[: self.n_free]
        free[self.n_free : self.n_free + extra] = np.arange(new - 1, old - 1, -1)
        self.free, self.n_free = free, self.n_free + extra

    def alloc(self, slots: np.ndarray, chunks: np.ndarray, init: torch.Tensor | None = None) -> None:
        """Give chunk ``chunks[i]`` of the vector in ``slots[i]`` a physical chunk from the free list (the
        pool grows when the list runs out); weights ``init[i]`` (default 0), optimizer state 0.
        ValueError when a (slot, chunk) already owns one, is repeated, or a slot is empty."""
        slots, chunks = np.asarray(slots, dtype=np.int64), np.asarray(chunks, dtype=np.int64)
        if slots.size == 0:
            return
        if np.any(self.keys[slots] == EMPTY):
            raise ValueError("alloc: a slot holds no key")
        if np.any(self.ptr[slots, chunks] != NONE):
            raise ValueError("alloc: a (slot, chunk) already owns a physical chunk")
        if np.unique(slots * self.n_chunks + chunks).size != slots.size:
            raise ValueError("alloc: a (slot, chunk) is repeated")
        k = slots.size
        if k > self.n_free:
            self.grow(max(k - self.n_free, self.capacity // 4, 1))
        rows = self.free[self.n_free - k : self.n_free][::-1].copy()
        self.n_free -= k
        self.ptr[slots, chunks] = rows
        idx = torch.from_numpy(rows)
        with torch.no_grad():
            self.weight[idx] = 0 if init is None else init.to(self.dtype)
        self.state[idx] = 0
        self.live += k

    def free_chunks(self, slots: np.ndarray, chunks: np.ndarray) -> None:
        """Return the physical chunks of (slot, chunk) pairs to the free list; their weights and optimizer state
        are zeroed. Pairs that own nothing are skipped."""
        slots, chunks = np.asarray(slots, dtype=np.int64), np.asarray(chunks, dtype=np.int64)
        rows = self.ptr[slots, chunks].astype(np.int64)
        owned = rows != NONE
        rows = rows[owned]
        if rows.size == 0:
            return
        self.ptr[slots[owned], chunks[owned]] = NONE
        idx = torch.from_numpy(rows)
        with torch.no_grad():
            self.weight[idx] = 0
        self.state[idx] = 0
        self.free[self.n_free : self.n_free + rows.size] = rows
        self.n_free += rows.size
        self.live -= rows.size

    def compact(self, headroom: int = 0) -> None:
        """Move every live chunk (weights and optimizer state) to rows 0..live-1 in slot order and shrink the
        pool to ``live + headroom`` chunks; pointers are rewritten, values unchanged."""
        owned = self.ptr != NONE
        old_rows = torch.from_numpy(self.ptr[owned].astype(np.int64))
        w = torch.zeros(self.live + headroom + 1, self.chunk, dtype=self.dtype)
        s = torch.zeros_like(w)
        w[: self.live] = self.weight.detach()[old_rows]
        s[: self.live] = self.state[old_rows]
        self.ptr[owned] = np.arange(self.live, dtype=np.int32)
        self.weight, self.state, self.capacity = w, s, self.live + headroom
        self.free = np.empty(self.capacity, dtype=np.int64)
        self.free[:headroom] = np.arange(self.capacity - 1, self.live - 1, -1)
        self.n_free = headroom

    # ---- the hash index ---------------------------------------------------------------------------------
    @property
    def slots(self) -> int:
        return int(self.keys.size)

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return (hash_keys(keys) % np.uint64(self.slots)).astype(np.int64)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Slot of each key (-1 when absent), any shape; vectorised linear probing."""
        keys = np.asarray(keys, dtype=np.int64)
        flat = keys.reshape(-1)
        out = np.full(flat.size, -1, dtype=np.int64)
        pos = self._home(flat)
        pending = np.arange(flat.size)
        for _ in range(self.slots):
            if pending.size == 0:
                break
            here = self.keys[pos[pending]]
            hit = here == flat[pending]
            out[pending[hit]] = pos[pending[hit]]
            pending = pending[~(hit | (here == EMPTY))]
            pos[pending] = (pos[pending] + 1) % self.slots
        return out.reshape(keys.shape)

    def insert(self, keys: np.ndarray) -> np.ndarray:
        """Insert keys not yet present (no chunks allocated); return every key's slot. ValueError for a
        negative key or when the table would be full."""
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        if keys.size and keys.min() < 0:
            raise ValueError(f"keys must be >= 0: got {int(keys.min())}")
        out = self.lookup(keys)
        new = np.unique(keys[out < 0])
        if self.size + new.size > self.slots:
            raise ValueError(f"VHPI table full: {self.size} + {new.size} keys > {self.slots} slots")
        placed = np.full(new.size, -1, dtype=np.int64)
        pos = self._home(new)
        pending = np.arange(new.size)
        while pending.size:
            p = pos[pending]
            empty = self.keys[p] == EMPTY
            cand, cpos = pending[empty], p[empty]
            _, first = np.unique(cpos, return_index=True)  # one claimant per empty slot wins this round
            winners = cand[first]
            self.keys[pos[winners]] = new[winners]
            placed[winners] = pos[winners]
            pending = pending[placed[pending] < 0]
            pos[pending] = (pos[pending] + 1) % self.slots
        self.size += new.size
        if new.size:
            out[out < 0] = placed[np.searchsorted(new, keys[out < 0])]
        return out

    def delete(self, key: int) -> bool:
        """Remove ``key`` and free its chunks; False when absent. Backward-shift deletion keeps probing valid."""
        i = int(self.lookup(np.array([key]))[0])
        if i < 0:
            return False
        self.free_chunks(np.full(self.n_chunks, i), np.arange(self.n_chunks))
        self.keys[i] = EMPTY
        self.size -= 1
        j = i
        while True:
            j = (j + 1) % self.slots
            if self.keys[j] == EMPTY:
                return True
            h = int(self._home(self.keys[j : j + 1])[0])
            # keep key j where it is if its home lies cyclically in (i, j]
            if (i < j and i < h <= j) or (i > j and (h > i or h <= j)):
                continue
            self.keys[i], self.ptr[i] = self.keys[j], self.ptr[j]
            self.keys[j], self.ptr[j] = EMPTY, NONE
            i = j

    # ---- reading ----------------------------------------------------------------------------------------
    def physical(self, slots: np.ndarray) -> torch.Tensor:
        """Physical rows ``[..., nc]`` (int64) of the vectors in ``slots``: a pruned chunk -> the zero row."""
        rows = self.ptr[np.asarray(slots)].astype(np.int64)
        rows[rows == NONE] = self.capacity
        return torch.from_numpy(rows)

    def chunk_counts(self) -> np.ndarray:
        """Live chunks per slot (0 for empty slots)."""
        return (self.ptr != NONE).sum(axis=1)

    def vectors(self, keys: np.ndarray) -> torch.Tensor:
        """The dense ``[n, dim]`` vectors of ``keys`` (pruned chunks as zeros); KeyError for an absent key."""
        slots = self.lookup(keys)
        if np.any(slots < 0):
            raise KeyError(f"key {int(np.asarray(keys).reshape(-1)[np.argmax(slots.reshape(-1) < 0)])} is absent")
        return self.weight.detach()[self.physical(slots)].reshape(*np.shape(keys), self.dim)

    # ---- accounting -------------------------------------------------------------------------------------
    def memory(self) -> TableMemory:
        item = torch.tensor([], dtype=self.dtype).element_size()
        chunk_bytes = self.live * self.chunk * item
        return TableMemory(
            live_chunks=self.live,
            weight_bytes=chunk_bytes,
            optimizer_bytes=chunk_bytes,
            pointer_bytes=self.slots * self.n_chunks * self.ptr_bytes,
            key_bytes=self.slots * KEY_BYTES,
            pool_tensor_bytes=self.capacity * self.chunk * item,
            free_list_bytes=int(self.free.size) * FREE_BYTES,
        )

    def served_copy(self, load_factor: float) -> VHPITable:
        """The table a trained model serves from: only the keys that own a chunk, in ``ceil(keys / load_factor)``
        slots, their chunks copied into a pool of exactly the live size (no free list, no optimizer state).
        Lookups of a kept key read the same vector; a dropped key is absent (its feature's default serves it)."""
        counts = self.chunk_counts()
        kept = np.flatnonzero((self.keys != EMPTY) & (counts > 0))
        out = VHPITable(
            slots=max(1, int(math.ceil(kept.size / load_factor))),
            dim=self.dim,
            chunk=self.chunk,
            pool=0,
            ptr_bytes=self.ptr_bytes,
            dtype=self.dtype,
        )
        slots = out.insert(self.keys[kept])
        owned = self.ptr[kept] != NONE  # [kept, nc]
        src = torch.from_numpy(self.ptr[kept][owned].astype(np.int64))
        which, chunk = np.nonzero(owned)
        out.alloc(slots[which], chunk, self.weight.detach()[src])
        out.state = torch.zeros(0, self.chunk, dtype=self.dtype)  # serving keeps no optimizer state
        out.free = np.empty(0, dtype=np.int64)
        return out

    def check_invariants(self) -> None:
        """AssertionError-free check (raises ValueError) that: no chunk is owned twice; owned + free = the pool;
        the live counter equals the owned chunks; empty slots own nothing; free rows are zero; the zero row is
        zero; the key count matches."""
        owned = self.ptr[self.ptr != NONE].astype(np.int64)
        free = self.free[: self.n_free]
        if np.unique(owned).size != owned.size:
            raise ValueError("a physical chunk is owned twice")
        if np.unique(free).size != free.size:
            raise ValueError("a chunk is on the free list twice")
        if np.intersect1d(owned, free).size:
            raise ValueError("a chunk is both owned and free")
        if owned.size + free.size != self.capacity or (owned.size and owned.max() >= self.capacity):
            raise ValueError(f"owned {owned.size} + free {free.size} != pool {self.capacity}")
        if owned.size != self.live:
            raise ValueError(f"live counter {self.live} != owned chunks {owned.size}")
        if np.any(self.ptr[self.keys == EMPTY] != NONE):
            raise ValueError("an empty slot owns chunks")
        if int((self.keys != EMPTY).sum()) != self.size:
            raise ValueError("key counter differs from the keys stored")
        if free.size and (
            self.weight.detach()[torch.from_numpy(free)].abs().sum() != 0
            or self.state[torch.from_numpy(free)].abs().sum() != 0
        ):
            raise ValueError("a free chunk holds nonzero weights or optimizer state")
        if self.weight.detach()[self.capacity].abs().sum() != 0:
            raise ValueError("the zero row is not zero")
