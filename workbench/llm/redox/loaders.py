"""One measured epoch of each loader over the same files, cold: bytes read from the device, bytes served,
read amplification, throughput, time to first batch, the served order (for exactly-once and randomness).

Every loader runs through a real ``torch.utils.data.DataLoader`` with the same batch size and decoder:
``num_workers=0`` (``/proc/self/io`` of this process sees every read, the prefetch threads' included), and the
paper's baseline also with ``WORKERS`` worker processes (``random-files-workers``: their reads reach this
process's ``/proc/self/io`` when they are reaped at the end of the epoch). Before each loader the page cache of
every dataset file is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler

from workbench.distributed.errors import WorkerTimeout
from workbench.distributed.sockets import ensure_socket_dir
from workbench.llm.redox.baselines import (
    BlockShuffle,
    ChunkOrder,
    PackedRandom,
    PackedRanges,
    RecordFiles,
    orders,
)
from workbench.llm.redox.io import ColdReader, IOMeter, drop_cache
from workbench.llm.redox.randomness import randomness
from workbench.llm.redox.redox import RedoxDataset, RedoxSampler, epoch_seed

LOADERS = (
    "redox",
    "block-shuffle",
    "random-files",
    "random-files-workers",
    "random-packed",
    "random-packed-os",
    "random-packed-direct",
    "ffcv-quasi-random",
    "sequential",
)
#: DataLoader worker processes of ``random-files-workers`` (the PyTorch baseline as it is usually run)
WORKERS = 2
#: what each loader's memory is: the same K chunks, except the real random readers through the OS page cache
MEMORY = {
    "random-files": "none (one file per request)",
    "random-files-workers": "none (one file per request)",
    "random-packed": "K chunks (emulated LRU page cache, 128 KiB blocks)",
    "random-packed-os": "the OS page cache (unbounded: may hold the whole dataset)",
    "random-packed-direct": "none (readahead off, each range dropped after its read)",
}


@dataclass(frozen=True)
class LoaderRun:
    """One loader's measured epoch (JSON keys of the check's ``loaders`` entries first)."""

    name: str
    bytes_read: int
    bytes_served: int
    read_amplification: float
    items_per_s: float
    label_kl: float
    disk_order_spearman: float
    label_kl_tail: float
    disk_order_spearman_tail: float
    chunkmate_spread: float
    time_to_first_batch_s: float
    seconds: float
    reads: int
    bytes_source: str
    counted_bytes: int
    exactly_once: bool
    max_chunk_reads: int | None


def reader_for(name: str, cold: bool) -> ColdReader:
    """The reader of loader ``name``: ``cold`` drops each range after it is read, except for the real random
    reader through the OS page cache (``random-packed-os``: the cache kept); ``random-packed-direct`` turns the
    kernel's readahead off and drops every range (nothing cached)."""
    if name == "random-packed-os":
        return ColdReader(cold=False)
    if name == "random-packed-direct":
        return ColdReader(cold=True, readahead=False)
    return ColdReader(cold=cold)


def _random_access(
    store, name: str, reader: ColdReader, *, resident: int, batch: int, seed: int, epoch: int, timeout_s: float
):
    budget = resident * int(store.meta["chunk_bytes"])
    if name in ("random-files", "random-files-workers"):
        ds = RecordFiles(store, reader)
    elif name == "random-packed":
        ds = PackedRandom(store, reader, budget)
    else:
        ds = PackedRanges(store, reader)
    g = torch.Generator().manual_seed(epoch_seed(seed, epoch))
    if name != "random-files-workers":
        return DataLoader(ds, sampler=RandomSampler(ds, generator=g), batch_size=batch)
    ensure_socket_dir()
    return DataLoader(ds, sampler=RandomSampler(ds, generator=g), batch_size=batch, num_workers=WORKERS,
                      timeout=timeout_s)  # fmt: skip


def _loader(
    store, name: str, reader: ColdReader, *, resident: int, batch: int, seed: int, epoch: int, timeout_s: float
):
    """(DataLoader, object whose ``chunk_reads`` counts chunk reads, or None)."""
    if name == "redox":
        sampler = RedoxSampler(store, resident=resident, seed=seed)
        sampler.set_epoch(epoch)
        ds = RedoxDataset(store, sampler, reader=reader)
        return DataLoader(ds, sampler=sampler, batch_size=batch), ds
    if name.startswith("random-"):
        loader = _random_access(
            store, name, reader, resident=resident, batch=batch, seed=seed, epoch=epoch, timeout_s=timeout_s
        )
        return loader, None
    if name == "block-shuffle":
        ds = BlockShuffle(store, reader, resident, epoch_seed(seed, epoch))
        return DataLoader(ds, batch_size=batch), ds
    if name in ("ffcv-quasi-random", "sequential"):
        ds = ChunkOrder(
            store, reader, orders(store, name, resident=resident, batch=batch, seed=seed, epoch=epoch), resident
        )
        return DataLoader(ds, batch_size=batch), ds
    raise ValueError(f"loader={name!r} is not allowed: valid values are {', '.join(map(repr, LOADERS))}")


def _batches(loader: DataLoader, timeout_s: float):
    """``loader``'s batches; a worker that sends nothing for ``timeout_s`` seconds is a :class:`WorkerTimeout`."""
    try:
        yield from loader
    except RuntimeError as err:
        if "DataLoader timed out" not in str(err):
            raise
        raise WorkerTimeout(
            f"the loader did not finish within timeout_s={timeout_s:g} s: a DataLoader worker sent no batch for "
            f"{timeout_s:g} s (stopped or deadlocked); raise --timeout-s if the disk is that slow",
            world_size=loader.num_workers, seconds=timeout_s,
        ) from None  # fmt: skip


def measure(
    store,
    name: str,
    *,
    resident: int,
    batch: int,
    seed: int = 0,
    epoch: int = 0,
    cold: bool = True,
    on_batch: Callable[[int], None] | None = None,
    timeout_s: float = 300.0,
) -> tuple[LoaderRun, np.ndarray]:
    """One epoch of loader ``name`` (one of :data:`LOADERS`); returns its figures and the served order.

    ``timeout_s`` (s, > 0) bounds the wait for each batch from ``DataLoader`` worker processes (a stopped or
    deadlocked worker raises :class:`~workbench.distributed.WorkerTimeout` naming ``--timeout-s``).

    The page cache of every dataset file is dropped first (``cold``; always for the real random readers).
    """
    if name not in LOADERS:
        raise ValueError(f"loader={name!r} is not allowed: valid values are {', '.join(map(repr, LOADERS))}")
    if cold or name.startswith("random-packed-"):
        drop_cache(store.all_paths())
    reader = reader_for(name, cold)
    served: list[np.ndarray] = []
    first = None
    with reader, IOMeter(reader) as meter:
        start = time.perf_counter()
        loader, counted = _loader(
            store, name, reader, resident=resident, batch=batch, seed=seed, epoch=epoch, timeout_s=timeout_s
        )
        for k, (ids, _labels, _sizes) in enumerate(_batches(loader, timeout_s)):
            if first is None:
                first = time.perf_counter() - start
            served.append(ids.numpy())
            if on_batch is not None:
                on_batch(k)
        if isinstance(counted, RedoxDataset):
            counted.close()
        order = np.concatenate(served) if served else np.zeros(0, dtype=np.int64)
        if name == "random-files-workers":  # the workers' counters died with them: each file is read once, whole
            reader.bytes += int(store.length[order].sum())
            reader.ios += len(order)
    fig = meter.figures
    served_bytes = int(store.length[order].sum())
    r = randomness(order, store.label, int(store.meta["classes"]), batch, chunk_of=store.chunk)
    reads = getattr(counted, "chunk_reads", None)
    return LoaderRun(
        name=name,
        bytes_read=fig.device_bytes,
        bytes_served=served_bytes,
        read_amplification=fig.device_bytes / served_bytes if served_bytes else 0.0,
        items_per_s=len(order) / fig.seconds if fig.seconds > 0 else 0.0,
        label_kl=r.label_kl,
        disk_order_spearman=r.disk_order_spearman,
        label_kl_tail=r.label_kl_tail,
        disk_order_spearman_tail=r.disk_order_spearman_tail,
        chunkmate_spread=float(r.chunkmate_spread),
        time_to_first_batch_s=float(first or 0.0),
        seconds=fig.seconds,
        reads=fig.ios,
        bytes_source=fig.source,
        counted_bytes=fig.counted_bytes,
        exactly_once=bool(len(order) == store.n and np.array_equal(np.sort(order), np.arange(store.n))),
        max_chunk_reads=max(reads.values()) if reads else None,
    ), order


def calibration_reads(store, *, repeats: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Single cold ``pread`` calls, timed (files opened beforehand): ``repeats`` reads of each size from 4 KiB up to
    the largest chunk (powers of 4) at seeded random offsets of random chunk files, in a shuffled order. Returns
    (sizes in bytes, seconds): what :func:`workbench.llm.redox.model.calibrate` fits."""
    rng = np.random.default_rng(seed)
    biggest = int(store.chunk_size.max())
    levels = sorted({*(s for s in (4096 * 4**k for k in range(12)) if s < biggest), biggest})
    jobs = []
    for size in levels:
        fits = np.flatnonzero(store.chunk_size >= size)
        for _ in range(repeats):
            c = int(rng.choice(fits))
            top = (int(store.chunk_size[c]) - size) // 4096
            jobs.append((c, int(rng.integers(top + 1)) * 4096, size))
    order = rng.permutation(len(jobs))
    drop_cache(store.chunk_path(c) for c in {j[0] for j in jobs})
    sizes, seconds = [], []
    with ColdReader(cold=True) as reader:
        for c in {j[0] for j in jobs}:
            reader.read(store.chunk_path(c), 0, 0)  # open now: the timing is the read alone
        for k in order.tolist():
            c, offset, size = jobs[k]
            start = time.perf_counter()
            reader.read(store.chunk_path(c), offset, size)
            seconds.append(time.perf_counter() - start)
            sizes.append(size)
    return np.asarray(sizes, dtype=float), np.asarray(seconds)
