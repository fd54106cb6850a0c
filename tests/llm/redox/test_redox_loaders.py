"""Baselines and the measured epoch: orders against their definitions, bytes against the file sizes.

References: the index (file sizes, chunk sizes), ``/proc/self/io`` read_bytes (checked to move here; a
container that does not count block I/O makes the figures fall back to counted bytes, labelled), FFCV's
quasi-random rule, the block shuffle's plan invariants (brute force), RandomSampler.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.llm.redox.baselines import (
    block_shuffle_order,
    block_shuffle_plan,
    ffcv_quasi_random_order,
    orders,
    random_sampler_order,
)
from workbench.llm.redox.dataset import RedoxStore, generate
from workbench.llm.redox.io import BudgetCache, proc_read_bytes
from workbench.llm.redox.loaders import LOADERS, measure
from workbench.llm.redox.randomness import batch_label_kl, randomness


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> RedoxStore:
    root = tmp_path_factory.mktemp("redox-loaders")
    generate(root, records=307, record_bytes=6000, chunk_bytes=48 * 1024, seed=2)
    return RedoxStore(root)


def test_block_shuffle_with_one_resident_chunk_serves_chunk_by_chunk() -> None:
    chunk_of = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    order = block_shuffle_order(chunk_of, 1, 0)
    assert sorted(order.tolist()) == list(range(9))
    served = chunk_of[order]
    assert sum(a != b for a, b in zip(served, served[1:])) == 2  # K = 1: each chunk served in one stretch


@pytest.mark.parametrize("resident", [1, 2, 3, 7, 100])
def test_block_shuffle_plan_keeps_k_chunks_and_reads_each_once(resident: int) -> None:
    """Brute force over the plan: every record once, every chunk loaded once, each chunk's records served inside
    its residency window, and at no position more than K chunks resident."""
    sizes = np.random.default_rng(resident).integers(1, 9, size=23)
    chunk_of = np.repeat(np.arange(23), sizes)
    plan = block_shuffle_plan(chunk_of, resident, seed=5)
    n = len(chunk_of)
    assert sorted(plan.order.tolist()) == list(range(n))
    assert sorted(plan.load_order.tolist()) == list(range(23)) and plan.max_resident <= resident
    pos = np.empty(n, dtype=int)
    pos[plan.order] = np.arange(n)
    for j, c in enumerate(plan.load_order.tolist()):
        p = pos[chunk_of == c]
        assert plan.load_pos[j] <= p.min() and p.max() == plan.evict_pos[j]
    for t in range(n):
        held = sum(plan.load_pos[j] <= t <= plan.evict_pos[j] for j in range(23))
        assert held <= resident
    assert not np.array_equal(plan.order, block_shuffle_plan(chunk_of, resident, seed=6).order)


def test_ffcv_order_with_one_open_page_serves_page_by_page() -> None:
    chunks = [np.arange(0, 4), np.arange(4, 7), np.arange(7, 12)]
    order = ffcv_quasi_random_order(chunks, 1, 3)
    pages = [next(k for k, c in enumerate(chunks) if i in c) for i in order]
    assert sorted(order.tolist()) == list(range(12))
    assert sum(a != b for a, b in zip(pages, pages[1:])) == 2
    wide = ffcv_quasi_random_order(chunks, 99, 3)  # every page open: any interleaving
    assert sorted(wide.tolist()) == list(range(12))


def test_orders_are_permutations(store) -> None:
    for name in ("sequential", "block-shuffle", "ffcv-quasi-random"):
        order = orders(store, name, resident=2, batch=8, seed=1)
        assert sorted(order.tolist()) == list(range(store.n)), name
    assert sorted(random_sampler_order(store.n, 1).tolist()) == list(range(store.n))


def test_budget_cache_is_lru_by_bytes() -> None:
    cache = BudgetCache(10)
    cache.put("a", b"12345")
    cache.put("b", b"12345")
    cache.get("a")
    cache.put("c", b"12345")  # evicts b, the least recently used
    assert cache.get("b") is None and cache.get("a") == b"12345"
    with pytest.raises(ValueError, match="capacity_bytes=0 is out of range"):
        BudgetCache(0)


def test_randomness_figures() -> None:
    labels = np.repeat(np.arange(4), 25)
    seq = randomness(np.arange(100), labels, 4, 25)
    assert seq.disk_order_spearman == pytest.approx(1.0) and seq.label_kl == pytest.approx(np.log(4))
    assert batch_label_kl(np.arange(100), labels, 4, 10).shape == (10,)
    mixed = np.random.default_rng(0).permutation(100)
    balanced = np.stack([np.arange(k, 100, 25) for k in range(25)]).reshape(-1)  # one of each label per 4
    assert randomness(balanced, labels, 4, 4).label_kl == pytest.approx(0.0)
    assert -1 <= randomness(mixed, labels, 4, 10).disk_order_spearman <= 1


@pytest.mark.parametrize("name", LOADERS)
def test_every_loader_serves_each_record_once_and_counts_its_bytes(store, name) -> None:
    run, order = measure(store, name, resident=2, batch=16, seed=3)
    assert run.exactly_once and sorted(order.tolist()) == list(range(store.n))
    assert run.bytes_served == store.total_bytes
    assert run.counted_bytes >= store.total_bytes
    if name in ("redox", "block-shuffle", "sequential"):  # whole chunks, each read once
        assert run.counted_bytes == store.total_bytes and run.max_chunk_reads == 1  # each chunk read once
        assert run.reads == store.n_chunks
    if name.startswith("random-") and name != "random-packed":
        assert run.reads == store.n  # one read per record (the workers' counted by construction)
    if run.bytes_source == "/proc/self/io":  # the device's count: at least what was asked, in whole pages
        assert run.bytes_read >= 0.95 * run.counted_bytes
        assert run.bytes_read <= run.counted_bytes + run.reads * 2 * 4096 + (1 << 20)


def test_proc_self_io_moves_for_cold_reads(store) -> None:
    if proc_read_bytes() is None:
        pytest.skip("no /proc/self/io here: figures fall back to counted bytes (labelled 'counted')")
    run, _ = measure(store, "sequential", resident=1, batch=16)
    assert run.bytes_source == "/proc/self/io", "cold reads did not move /proc/self/io read_bytes here"
    warm, _ = measure(store, "sequential", resident=1, batch=16, cold=False)
    warm2, _ = measure(store, "sequential", resident=1, batch=16, cold=False)
    assert warm2.bytes_source == "/proc/self/io" or warm2.bytes_read == warm2.counted_bytes


def test_io_meter_falls_back_to_counted_bytes_when_proc_does_not_move(store, monkeypatch) -> None:
    from workbench.llm.redox import io as io_mod
    from workbench.llm.redox.io import ColdReader, IOMeter

    monkeypatch.setattr(io_mod, "proc_read_bytes", lambda: 1000)  # a container that never counts
    reader = ColdReader(cold=True)
    with reader, IOMeter(reader) as meter:
        reader.read(store.chunk_path(0))
    assert meter.figures.source == "counted" and meter.figures.device_bytes == store.chunk_size[0]
    warm = ColdReader(cold=False)
    with warm, IOMeter(warm) as meter:
        warm.read(store.chunk_path(0))
    assert meter.figures.source == "/proc/self/io" and meter.figures.device_bytes == 0  # a warm read: from cache


def test_a_silent_dataloader_worker_is_a_timeout_naming_the_flag() -> None:
    from workbench.distributed import WorkerTimeout
    from workbench.llm.redox.loaders import _batches

    class Stalled:
        num_workers = 2

        def __iter__(self):
            yield 1
            raise RuntimeError("DataLoader timed out after 3 seconds")

    got = []
    with pytest.raises(WorkerTimeout, match=r"timeout_s=3 s: a DataLoader worker sent no batch .*--timeout-s"):
        got.extend(_batches(Stalled(), 3.0))
    assert got == [1]
