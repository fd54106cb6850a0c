"""The Redox loader: a ``torch.utils.data`` Sampler + Dataset pair (and an IterableDataset) that serves
requests by redirection, reading whole chunks and serving every record of a resident chunk before evicting it.

The local protocol (the brief's reconstruction; the paper's text beyond its abstract is not readable). The
request stream is what ``RandomSampler`` would yield (``torch.randperm`` with a seeded generator). A buffer
holds at most K chunks. Chunks are loaded in the order their records are first requested (the virtual slot i
maps to the i-th chunk the sampler reaches: the virtual/physical mapping). For each request f:

1. f's chunk is resident and f is unconsumed: serve f;
2. otherwise serve a random unconsumed record of the resident chunks (a redirect; the request stays pending);
3. when a chunk is fully consumed it is evicted and the next chunk of the load order is loaded.

So every record is served exactly once per epoch and every chunk is read once per epoch, in one I/O. With
K >= the number of chunks nothing is ever redirected and the order *is* the RandomSampler's (a full shuffle).

Supported sampler orders: uniform random without replacement (``RandomSampler``, the default). Curriculum,
weighted and any other order the sampler controls are refused with a ValueError: redirection serves a
different record than the one requested, so an order that matters cannot be kept.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset, RandomSampler, Sampler, get_worker_info

from workbench.llm.redox.io import ColdReader

SUPPORTED_ORDERS = ("random",)
UNSUPPORTED_WHY = (
    "Redox serves a different, resident record in place of a requested one, so only a uniform random order "
    "without replacement (RandomSampler) is supported; curriculum, weighted and other sampler-controlled orders "
    "are not"
)


def epoch_seed(seed: int, epoch: int) -> int:
    return (int(seed) * 1_000_003 + int(epoch)) % (2**63 - 1)


def request_stream(n: int, seed: int, epoch: int) -> np.ndarray:
    """What ``RandomSampler(range(n), generator=torch.Generator().manual_seed(epoch_seed(seed, epoch)))`` yields."""
    g = torch.Generator().manual_seed(epoch_seed(seed, epoch))
    return torch.randperm(n, generator=g).numpy().astype(np.int64)


def first_request_order(requests: np.ndarray, chunk_of: np.ndarray) -> np.ndarray:
    """Chunks in the order the request stream first reaches them (the virtual -> physical chunk mapping)."""
    chunks, first = np.unique(chunk_of[requests], return_index=True)
    return chunks[np.argsort(first, kind="stable")]


def check_resident(resident: int) -> int:
    if isinstance(resident, bool) or int(resident) != resident or resident < 1:
        raise ValueError(f"resident={resident!r} is out of range: valid range is >= 1 (chunks held in memory, K)")
    return int(resident)


@dataclass(frozen=True)
class Plan:
    """One epoch of the local protocol over a request stream.

    order: served record ids; redirected: per position, whether the served record differs from the request
    then pending; load_order: chunks in load order; load_pos[j]: position in ``order`` before which chunk
    load_order[j] is loaded; evict_pos[j]: position after which it is evicted; max_resident: peak chunks held.
    """

    order: np.ndarray
    redirected: np.ndarray
    load_order: np.ndarray
    load_pos: np.ndarray
    evict_pos: np.ndarray
    max_resident: int


def plan_local(requests: np.ndarray, chunk_of: np.ndarray, resident: int, seed: int) -> Plan:
    """The local protocol (module docstring) over ``requests`` (distinct record ids) with K = ``resident``.

    Only the chunks of the requested records take part. Deterministic from ``seed`` (the redirect choices).
    """
    K = check_resident(resident)
    requests = np.asarray(requests, dtype=np.int64)
    m = len(requests)
    load_order = first_request_order(requests, chunk_of) if m else np.zeros(0, dtype=np.int64)
    by_chunk: dict[int, list[int]] = {int(c): [] for c in load_order}
    for f in np.sort(requests).tolist():
        by_chunk[int(chunk_of[f])].append(f)
    rng = random.Random(seed)
    chunk_list = chunk_of.tolist()
    req = requests.tolist()
    pool: list[int] = []
    where: dict[int, int] = {}
    remaining = {c: len(v) for c, v in by_chunk.items()}
    is_resident: set[int] = set()
    served: set[int] = set()
    order = np.empty(m, dtype=np.int64)
    redirected = np.zeros(m, dtype=bool)
    load_pos = np.zeros(len(load_order), dtype=np.int64)
    evict_pos = np.zeros(len(load_order), dtype=np.int64)
    slot = {int(c): j for j, c in enumerate(load_order)}
    nxt = 0
    peak = 0

    def load(t: int) -> None:
        nonlocal nxt, peak
        c = int(load_order[nxt])
        load_pos[nxt] = t
        nxt += 1
        is_resident.add(c)
        for f in by_chunk[c]:
            where[f] = len(pool)
            pool.append(f)
        peak = max(peak, len(is_resident))

    while nxt < min(K, len(load_order)):
        load(0)
    p = 0
    for t in range(m):
        while req[p] in served:
            p += 1
        f = req[p]
        if chunk_list[f] in is_resident:
            g = f
        else:
            g = pool[rng.randrange(len(pool))]
            redirected[t] = True
        last = pool.pop()  # swap-remove g from the pool
        if last != g:
            pool[where[g]] = last
            where[last] = where[g]
        del where[g]
        served.add(g)
        order[t] = g
        c = chunk_list[g]
        remaining[c] -= 1
        if remaining[c] == 0:
            is_resident.discard(c)
            evict_pos[slot[c]] = t
            if nxt < len(load_order):
                load(t + 1)
    return Plan(order, redirected, load_order, load_pos, evict_pos, peak)


def partition_chunks(load_order: np.ndarray, parts: int) -> list[np.ndarray]:
    """Whole chunks dealt round-robin over ``parts`` owners in load order (DataLoader workers, or ranks)."""
    return [np.asarray(load_order[w::parts], dtype=np.int64) for w in range(parts)]


def check_order(order: str = "random", sampler: Sampler | None = None) -> None:
    """Refuse sampler orders Redox cannot keep (see the module docstring), naming them."""
    if order not in SUPPORTED_ORDERS:
        raise ValueError(f"order={order!r} is not supported: {UNSUPPORTED_WHY}")
    if sampler is not None and not (isinstance(sampler, RandomSampler) and not sampler.replacement):
        raise ValueError(f"sampler={type(sampler).__name__} is not supported: {UNSUPPORTED_WHY}")


# ---- background prefetch ------------------------------------------------------------------------------------
class ChunkPrefetcher:
    """A thread that reads chunks (whole, one read each, checked) in load order, holding at most K at a time.

    ``get(c)`` waits for chunk c; ``release(c)`` evicts it and frees its slot. Chunk reads are counted in
    ``reads`` (chunk -> times read). An error in the thread (a truncated chunk) is raised by ``get``.
    """

    def __init__(self, store, reader: ColdReader, load_order: np.ndarray, resident: int) -> None:
        self.store, self.reader = store, reader
        self.load_order = [int(c) for c in load_order]
        self._slots = threading.Semaphore(check_resident(resident))
        self._ready: dict[int, bytes] = {}
        self._cond = threading.Condition()
        self._error: BaseException | None = None
        self._stop = False
        self.reads: dict[int, int] = {}
        self.peak = 0
        self._thread = threading.Thread(target=self._run, name="redox-prefetch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for c in self.load_order:
                self._slots.acquire()
                if self._stop:
                    return
                data = self.store.read_chunk(c, self.reader)
                with self._cond:
                    self._ready[c] = data
                    self.reads[c] = self.reads.get(c, 0) + 1
                    self.peak = max(self.peak, len(self._ready))
                    self._cond.notify_all()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    def get(self, c: int) -> bytes:
        with self._cond:
            while c not in self._ready:
                if self._error is not None:
                    raise self._error
                self._cond.wait(timeout=0.5)
            return self._ready[c]

    def release(self, c: int) -> None:
        with self._cond:
            self._ready.pop(c, None)
        self._slots.release()

    def close(self) -> None:
        self._stop = True
        self._slots.release()
        self._thread.join(timeout=5)


def default_decode(i: int, label: int, payload: memoryview) -> tuple[int, int, int]:
    """(record id, label, payload bytes): what a sample is when no decoder is given (collates to tensors)."""
    return i, label, len(payload)


Decode = Callable[[int, int, memoryview], object]


class EpochServer:
    """Serves one epoch's plan out of a prefetcher, evicting a chunk as its last record leaves."""

    def __init__(self, store, reader, plan: Plan, resident: int, decode: Decode) -> None:
        self.store, self.plan, self.decode = store, plan, decode
        self.left = {int(c): 0 for c in plan.load_order}
        for i in plan.order.tolist():
            self.left[int(store.chunk[i])] += 1
        self.prefetcher = ChunkPrefetcher(store, reader, plan.load_order, resident)

    def serve(self, i: int):
        c = int(self.store.chunk[i])
        if self.left.get(c, 0) <= 0:
            raise ValueError(f"record {i} was requested twice in one epoch (or is not in this epoch's plan)")
        payload = self.store.record_from_chunk(self.prefetcher.get(c), i)
        out = self.decode(i, int(self.store.label[i]), payload)
        self.left[c] -= 1
        if self.left[c] == 0:
            self.prefetcher.release(c)
        return out

    def close(self) -> None:
        self.prefetcher.close()


class RedoxSampler(Sampler[int]):
    """Yields the record ids Redox serves this epoch (call :meth:`set_epoch` between epochs, as with
    ``DistributedSampler``). Pair it with :class:`RedoxDataset` over the same store.

    Parameters: store (a :class:`~workbench.llm.redox.dataset.RedoxStore`), resident (K chunks held, >= 1),
    seed, order ("random" only) or sampler (a ``RandomSampler`` without replacement, whose generator's seed is
    then ignored in favour of ``seed``: the request stream must be reproducible per epoch).
    """

    def __init__(self, store, *, resident: int, seed: int = 0, order: str = "random", sampler=None) -> None:
        check_order(order, sampler)
        self.store = store
        self.resident = check_resident(resident)
        self.seed = int(seed)
        self.epoch = 0
        self._listeners: list = []
        self._plans: dict[int, Plan] = {}

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def attach(self, dataset) -> None:
        self._listeners.append(dataset)

    def plan(self, epoch: int | None = None) -> Plan:
        epoch = self.epoch if epoch is None else epoch
        if epoch not in self._plans:
            self._plans = {
                epoch: plan_local(
                    request_stream(self.store.n, self.seed, epoch),
                    self.store.chunk,
                    self.resident,
                    epoch_seed(self.seed, epoch) ^ 0x5EED,
                )
            }
        return self._plans[epoch]

    def __iter__(self):
        plan = self.plan()
        for dataset in self._listeners:
            dataset.begin_epoch(plan)
        yield from plan.order.tolist()

    def __len__(self) -> int:
        return self.store.n


class RedoxDataset(Dataset):
    """Map-style dataset serving the records its :class:`RedoxSampler` yields, out of K resident chunks filled
    by a background prefetch thread. Use with ``DataLoader(num_workers=0)``; with worker processes use
    :class:`RedoxIterableDataset` (each worker owns whole chunks, so no chunk is read twice)."""

    def __init__(
        self,
        store,
        sampler: RedoxSampler,
        *,
        cold: bool = True,
        decode: Decode = default_decode,
        reader: ColdReader | None = None,
    ) -> None:
        self.store, self.sampler, self.decode = store, sampler, decode
        self.reader = reader if reader is not None else ColdReader(cold=cold)
        self._server: EpochServer | None = None
        self.chunk_reads: dict[int, int] = {}
        sampler.attach(self)

    def begin_epoch(self, plan: Plan) -> None:
        self.close()
        self._server = EpochServer(self.store, self.reader, plan, self.sampler.resident, self.decode)
        self.chunk_reads = self._server.prefetcher.reads

    def __len__(self) -> int:
        return self.store.n

    def __getitem__(self, i: int):
        if get_worker_info() is not None:
            raise ValueError(
                "RedoxDataset with DataLoader num_workers > 0 is not supported (its chunk buffer lives in the main "
                "process): use RedoxIterableDataset, whose workers each own whole chunks"
            )
        if self._server is None:
            raise ValueError(
                "RedoxDataset serves what its RedoxSampler yields: iterate through a DataLoader with "
                "sampler=that RedoxSampler"
            )
        return self._server.serve(int(i))

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


class RedoxIterableDataset(IterableDataset):
    """Redox as an ``IterableDataset``: works with ``DataLoader`` worker processes. The epoch's chunks (in load
    order) are dealt round-robin to the workers; each runs the local protocol over its own chunks with K //
    workers resident chunks and its own prefetch thread, so every record is served once and every chunk read
    once across workers. ``set_epoch(e)`` before each epoch."""

    def __init__(
        self,
        store,
        *,
        resident: int,
        seed: int = 0,
        cold: bool = True,
        decode: Decode = default_decode,
        order: str = "random",
    ) -> None:
        check_order(order)
        self.store, self.decode, self.cold = store, decode, cold
        self.resident = check_resident(resident)
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def worker_plan(self, worker: int, workers: int) -> Plan:
        k = self.resident // workers
        if k < 1:
            raise ValueError(
                f"resident={self.resident} is out of range for DataLoader num_workers={workers}: valid range is "
                f">= {workers} (each worker holds at least one chunk)"
            )
        requests = request_stream(self.store.n, self.seed, self.epoch)
        mine = partition_chunks(first_request_order(requests, self.store.chunk), workers)[worker]
        own = np.zeros(self.store.n_chunks, dtype=bool)
        own[mine] = True
        return plan_local(
            requests[own[self.store.chunk[requests]]],
            self.store.chunk,
            k,
            epoch_seed(self.seed, self.epoch) ^ (0x5EED + 7919 * worker),
        )

    def __len__(self) -> int:
        return self.store.n

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        plan = self.worker_plan(worker, workers)
        server = EpochServer(
            self.store, ColdReader(cold=self.cold), plan, max(1, self.resident // workers), self.decode
        )
        try:
            for i in plan.order.tolist():
                yield server.serve(i)
        finally:
            server.close()
