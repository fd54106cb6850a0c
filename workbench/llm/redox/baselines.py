"""The baselines, side by side with Redox on the same files, as ``torch.utils.data`` datasets.

- ``random-files``: the PyTorch ``DataLoader`` with ``RandomSampler`` over one file per record (one read per
  record, the usual ``ImageFolder`` pattern);
- ``random-packed``: ``RandomSampler`` over the packed chunk files, each record read at its offset through an
  emulated page cache (:class:`~workbench.llm.redox.io.BudgetCache`, the same memory budget as Redox's K
  chunks) in aligned blocks of ``block_bytes`` (a readahead window): the random reader that thrashes;
- ``block-shuffle``: WebDataset/Mosaic style: shards (our chunks) in a seeded random order, each read whole,
  records through a shuffle buffer holding as many records as K chunks do on average;
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
from workbench.llm.redox.redox import default_decode, epoch_seed, first_request_order

#: readahead block of the random-packed reader (bytes): Linux's default readahead window is 128 KiB
BLOCK_BYTES = 128 * 1024


def block_shuffle_events(chunk_records: list[np.ndarray], buffer: int, seed: int):
    """WebDataset/Mosaic block shuffle as events: ``("load", chunk)`` when a shard is read (whole, shards in a
    seeded random order) and ``("serve", record)`` when the shuffle buffer of ``buffer`` records gives one out
    (a full buffer swaps a random slot for each incoming record; the rest is shuffled at the end)."""
    rng = random.Random(seed)
    shards = list(range(len(chunk_records)))
    rng.shuffle(shards)
    buf: list[int] = []
    for c in shards:
        yield "load", c
        for i in chunk_records[c].tolist():
            if len(buf) < buffer:
                buf.append(i)
                continue
            k = rng.randrange(len(buf))
            yield "serve", buf[k]
            buf[k] = i
    rng.shuffle(buf)
    for i in buf:
        yield "serve", i


def block_shuffle_order(chunk_records: list[np.ndarray], buffer: int, seed: int) -> np.ndarray:
    """The records :func:`block_shuffle_events` serves, in order."""
    return np.asarray(
        [x for kind, x in block_shuffle_events(chunk_records, buffer, seed) if kind == "serve"], dtype=np.int64
    )


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
    """Shards read whole in a seeded random order; their records pass through a shuffle buffer of ``buffer``
    records (the memory budget); each shard is read exactly once."""

    def __init__(self, store, reader: ColdReader, buffer: int, seed: int, decode=default_decode) -> None:
        self.store, self.reader, self.decode = store, reader, decode
        self.buffer, self.seed = int(buffer), int(seed)
        self.chunk_reads: dict[int, int] = {}

    def __len__(self) -> int:
        return self.store.n

    def __iter__(self):
        pending: dict[int, memoryview] = {}
        for kind, x in block_shuffle_events(self.store.chunk_records, self.buffer, self.seed):
            if kind == "load":
                data = self.store.read_chunk(x, self.reader)
                self.chunk_reads[x] = self.chunk_reads.get(x, 0) + 1
                for i in self.store.chunk_records[x].tolist():
                    pending[i] = self.store.record_from_chunk(data, i)
            else:
                yield self.decode(x, int(self.store.label[x]), pending.pop(x))


def shuffle_buffer_records(store, resident: int) -> int:
    """The block shuffle's buffer: as many records as ``resident`` chunks hold on average (same memory)."""
    return max(1, int(round(resident * store.n / store.n_chunks)))


def orders(store, name: str, *, resident: int, batch: int, seed: int, epoch: int = 0) -> np.ndarray:
    """The order a chunk-streaming baseline serves this epoch (sequential, block-shuffle, ffcv-quasi-random)."""
    s = epoch_seed(seed, epoch)
    if name == "sequential":
        return np.arange(store.n, dtype=np.int64)
    if name == "block-shuffle":
        return block_shuffle_order(store.chunk_records, shuffle_buffer_records(store, resident), s)
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
    "shuffle_buffer_records",
    "PackedRandom",
    "RecordFiles",
    "block_shuffle_order",
    "ffcv_quasi_random_order",
    "first_request_order",
    "orders",
    "random_sampler_order",
]
