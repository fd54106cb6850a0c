"""The baselines, side by side with Redox on the same files, as ``torch.utils.data`` datasets.

- ``block-shuffle``: the strongest fair baseline (what a practitioner runs over packed shards: WebDataset's shard
  shuffle + shuffle buffer, Mosaic's block shuffle): chunks in a seeded random order, K of them resident, each
  record drawn uniformly from the unconsumed records of the resident chunks; a consumed chunk is evicted and the
  next one of the order loaded. The same memory as Redox (K chunks) and the same prefetch engine
  (:class:`~workbench.llm.redox.redox.EpochServer`): only the order differs;
- ``random-files``: the PyTorch ``DataLoader`` with ``RandomSampler`` over one file per record (one read per
  record, the usual ``ImageFolder`` pattern: the paper's baseline), in the main process and with worker
  processes (``random-files-workers``);
- ``random-packed``: ``RandomSampler`` over the packed chunk files, each record read at its offset through an
  *emulated* page cache (:class:`~workbench.llm.redox.io.BudgetCache`, the same memory budget as Redox's K
  chunks) in aligned blocks of ``block_bytes`` (a readahead window): what a random reader does when the dataset
  is much larger than memory (the MODEL's random reader);
- ``random-packed-os`` and ``random-packed-direct``: the same random reads for real: each record's byte range
  with one ``pread``, through the OS page cache and its readahead (dropped before the epoch; it may then hold the
  whole dataset: memory is not bounded) or with readahead off and each range dropped after it is read (every
  read reaches the device: a dataset much larger than memory);
- ``ffcv-quasi-random``: FFCV's ``QUASI_RANDOM`` order (pages = our chunks, records shuffled within a page,
  pages in random order, each record drawn from a random page among ``2 x batch`` open ones, as
  ``ffcv/traversal_order/quasi_random.py`` does), read through an LRU of K chunks (FFCV assumes its open pages
  fit; with a smaller budget a page is read again);
- ``sequential``: disk order, each chunk read whole once.
"""

from __future__ import annotations

import random
from collections import OrderedDict

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset

from workbench.llm.redox.io import BudgetCache, ColdReader
from workbench.llm.redox.redox import (
    EpochServer,
    Plan,
    check_resident,
    default_decode,
    epoch_seed,
    first_request_order,
)

#: readahead block of the random-packed reader (bytes): Linux's default readahead window is 128 KiB
BLOCK_BYTES = 128 * 1024


def block_shuffle_plan(chunk_of: np.ndarray, resident: int, seed: int) -> Plan:
    """One epoch of the block shuffle with K = ``resident`` chunks (module docstring), as a
    :class:`~workbench.llm.redox.redox.Plan` (nothing is redirected: no request stream).

    chunk_of: (N,) chunk of every record. Deterministic from ``seed``. Every record is served once and every
    chunk loaded once; at most K chunks are resident.
    """
    k = check_resident(resident)
    chunk_of = np.asarray(chunk_of, dtype=np.int64)
    n = len(chunk_of)
    members: dict[int, list[int]] = {int(c): [] for c in np.unique(chunk_of)}
    for i, c in enumerate(chunk_of.tolist()):
        members[c].append(i)
    rng = random.Random(seed)
    load_order = sorted(members)
    rng.shuffle(load_order)
    remaining = {c: len(v) for c, v in members.items()}
    slot = {c: j for j, c in enumerate(load_order)}
    load_pos = np.zeros(len(load_order), dtype=np.int64)
    evict_pos = np.zeros(len(load_order), dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    pool: list[int] = []
    nxt, held, peak = 0, 0, 0
    while nxt < min(k, len(load_order)):
        load_pos[nxt] = 0
        pool.extend(members[load_order[nxt]])
        nxt, held = nxt + 1, held + 1
    peak = held
    for t in range(n):
        j = rng.randrange(len(pool))
        g = pool[j]
        pool[j] = pool[-1]  # swap-remove the drawn record
        pool.pop()
        order[t] = g
        c = int(chunk_of[g])
        remaining[c] -= 1
        if remaining[c] == 0:
            evict_pos[slot[c]] = t
            held -= 1
            if nxt < len(load_order):
                load_pos[nxt] = t + 1
                pool.extend(members[load_order[nxt]])
                nxt, held = nxt + 1, held + 1
                peak = max(peak, held)
    return Plan(order, np.zeros(n, dtype=bool), np.asarray(load_order, dtype=np.int64), load_pos, evict_pos, peak)


def block_shuffle_order(chunk_of: np.ndarray, resident: int, seed: int) -> np.ndarray:
    """The records :func:`block_shuffle_plan` serves, in order."""
    return block_shuffle_plan(chunk_of, resident, seed).order


def ffcv_quasi_random_order(chunk_records: list[np.ndarray], buffer_pages: int, seed: int) -> np.ndarray:
    """FFCV's quasi-random traversal (see module docstring) with pages = chunks."""
    rng = np.random.default_rng(seed)
    pages = [rng.permutation(r) for r in chunk_records]
    page_order = rng.permutation(len(pages))
    consumed = [0] * len(pages)
    current: list[int] = []
    nxt = 0
    out = []
    total = sum(len(p) for p in pages)
    for _ in range(total):
        while nxt < len(pages) and len(current) < buffer_pages:
            if len(pages[page_order[nxt]]):
                current.append(int(page_order[nxt]))
            nxt += 1
        page = current[int(rng.integers(len(current)))]
        out.append(int(pages[page][consumed[page]]))
        consumed[page] += 1
        if consumed[page] >= len(pages[page]):
            current.remove(page)
    return np.asarray(out, dtype=np.int64)


class RecordFiles(Dataset):
    """One file per record, read whole (map-style; pair with ``RandomSampler``)."""

    def __init__(self, store, reader: ColdReader, decode=default_decode) -> None:
        self.store, self.reader, self.decode = store, reader, decode

    def __len__(self) -> int:
        return self.store.n

    def __getitem__(self, i: int):
        payload = self.store.read_record_file(int(i), self.reader)
        return self.decode(int(i), int(self.store.label[i]), payload)


class PackedRandom(Dataset):
    """Records read at their offsets in the chunk files through an emulated page cache of aligned blocks."""

    def __init__(
        self, store, reader: ColdReader, budget_bytes: int, block_bytes: int = BLOCK_BYTES, decode=default_decode
    ) -> None:
        self.store, self.reader, self.decode = store, reader, decode
        self.block = int(block_bytes)
        self.cache = BudgetCache(budget_bytes)

    def __len__(self) -> int:
        return self.store.n

    def __getitem__(self, i: int):
        i = int(i)
        c, o, n = int(self.store.chunk[i]), int(self.store.offset[i]), int(self.store.length[i])
        size = int(self.store.chunk_size[c])
        parts = []
        for b in range(o // self.block, (o + n - 1) // self.block + 1):
            data = self.cache.get((c, b))
            if data is None:
                start = b * self.block
                data = self.reader.read(self.store.chunk_path(c), start, min(self.block, size - start))
                self.cache.put((c, b), data)
            parts.append(data)
        first = (o // self.block) * self.block
        raw = b"".join(parts)[o - first : o - first + n]
        payload = self.store.check_record(raw, i, self.store.chunk_path(c))
        return self.decode(i, int(self.store.label[i]), payload)


class ChunkOrder(IterableDataset):
    """Serves a given order out of whole-chunk reads kept in an LRU of ``resident`` chunks (block shuffle,
    FFCV quasi-random, sequential: chunks whole, one read each, read again only if evicted before done)."""

    def __init__(self, store, reader: ColdReader, order: np.ndarray, resident: int, decode=default_decode) -> None:
        self.store, self.reader, self.order, self.decode = store, reader, order, decode
        self.resident = int(resident)
        self.chunk_reads: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self):
        held: OrderedDict[int, bytes] = OrderedDict()
        for i in self.order.tolist():
            c = int(self.store.chunk[i])
            data = held.get(c)
            if data is None:
                data = self.store.read_chunk(c, self.reader)
                self.chunk_reads[c] = self.chunk_reads.get(c, 0) + 1
                held[c] = data
                while len(held) > self.resident:
                    held.popitem(last=False)
            else:
                held.move_to_end(c)
            yield self.decode(i, int(self.store.label[i]), self.store.record_from_chunk(data, i))


class BlockShuffle(IterableDataset):
    """The block shuffle (:func:`block_shuffle_plan`) served out of K resident chunks by Redox's own prefetch
    engine (a background thread reading whole chunks in load order, one read each, checked)."""

    def __init__(self, store, reader: ColdReader, resident: int, seed: int, decode=default_decode) -> None:
        self.store, self.reader, self.decode = store, reader, decode
        self.resident, self.seed = check_resident(resident), int(seed)
        self.chunk_reads: dict[int, int] = {}

    def __len__(self) -> int:
        return self.store.n

    def __iter__(self):
        plan = block_shuffle_plan(self.store.chunk, self.resident, self.seed)
        server = EpochServer(self.store, self.reader, plan, self.resident, self.decode)
        self.chunk_reads = server.prefetcher.reads
        try:
            for i in plan.order.tolist():
                yield server.serve(i)
        finally:
            server.close()


class PackedRanges(Dataset):
    """Records read for real at their offsets in the chunk files, one ``pread`` each (map-style; pair with
    ``RandomSampler``); what the page cache does is the reader's (``ColdReader(cold=..., readahead=...)``)."""

    def __init__(self, store, reader: ColdReader, decode=default_decode) -> None:
        self.store, self.reader, self.decode = store, reader, decode

    def __len__(self) -> int:
        return self.store.n

    def __getitem__(self, i: int):
        payload = self.store.read_record_range(int(i), self.reader)
        return self.decode(int(i), int(self.store.label[i]), payload)


def orders(store, name: str, *, resident: int, batch: int, seed: int, epoch: int = 0) -> np.ndarray:
    """The order a chunk-streaming baseline serves this epoch (sequential, block-shuffle, ffcv-quasi-random)."""
    s = epoch_seed(seed, epoch)
    if name == "sequential":
        return np.arange(store.n, dtype=np.int64)
    if name == "block-shuffle":
        return block_shuffle_order(store.chunk, resident, s)
    if name == "ffcv-quasi-random":
        return ffcv_quasi_random_order(store.chunk_records, 2 * batch, s)
    raise ValueError(f"loader={name!r} has no precomputed order")


def random_sampler_order(n: int, seed: int, epoch: int = 0) -> np.ndarray:
    """RandomSampler's order for this epoch (the same request stream Redox starts from)."""
    g = torch.Generator().manual_seed(epoch_seed(seed, epoch))
    return torch.randperm(n, generator=g).numpy()


__all__ = [
    "BLOCK_BYTES",
    "BlockShuffle",
    "ChunkOrder",
    "PackedRandom",
    "PackedRanges",
    "RecordFiles",
    "block_shuffle_order",
    "block_shuffle_plan",
    "ffcv_quasi_random_order",
    "first_request_order",
    "orders",
    "random_sampler_order",
]
