"""The local protocol against the obvious replay (``reference.replay``) and against ``RandomSampler``, for many
N (primes among them), chunk sizes and K (1 and all chunks included); the Sampler/Dataset pair and the
IterableDataset through a real ``DataLoader`` on real files.

Invariants: the multiset of served ids equals the file set; every chunk is read once per epoch; at most K
chunks are held; no chunk is dropped with records unconsumed; K >= chunks gives exactly RandomSampler's order;
the same seed gives the same order and another seed another.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, WeightedRandomSampler

from workbench.llm.redox.dataset import RedoxStore, generate, pack_chunks
from workbench.llm.redox.redox import (
    RedoxDataset,
    RedoxIterableDataset,
    RedoxSampler,
    check_order,
    epoch_seed,
    plan_local,
    request_stream,
)
from workbench.llm.redox.reference import full_shuffle, replay
from workbench.llm.redox.sizes import record_sizes

CASES = [  # (records, mean record bytes, chunk bytes, K)
    (1, 100, 100, 1),
    (2, 100, 1000, 1),
    (97, 1000, 4096, 1),
    (97, 1000, 4096, 3),
    (101, 700, 3000, 7),
    (257, 1000, 9000, 2),
    (1009, 500, 4000, 1),
    (1009, 500, 4000, 16),
    (1009, 500, 4000, 10_000),  # K = every chunk: a full shuffle
    (613, 300, 2400, 5),
]


def chunks_for(n: int, mean: int, chunk: int, seed: int = 0) -> np.ndarray:
    return pack_chunks(record_sizes(n, mean, "imagenet", seed=seed), max(chunk, 8 * mean))


@pytest.mark.parametrize(("n", "mean", "chunk", "k"), CASES)
@pytest.mark.parametrize("seed", [0, 3])
def test_plan_serves_every_record_once_and_reads_every_chunk_once(n, mean, chunk, k, seed) -> None:
    chunk_of = chunks_for(n, mean, chunk, seed)
    requests = request_stream(n, seed, 0)
    plan = plan_local(requests, chunk_of, k, seed)
    assert sorted(plan.order.tolist()) == list(range(n))
    ref = replay(plan.order, chunk_of, k)
    assert set(ref.served.values()) == {1} and len(ref.served) == n
    assert set(ref.chunk_reads.values()) == {1} and len(ref.chunk_reads) == int(chunk_of.max()) + 1
    assert ref.evicted_unconsumed == 0
    assert ref.peak_resident <= k and plan.max_resident <= k
    assert sorted(plan.load_order.tolist()) == list(range(int(chunk_of.max()) + 1))


@pytest.mark.parametrize(("n", "mean", "chunk"), [(1009, 500, 4000), (97, 1000, 4096), (1, 100, 100)])
def test_every_chunk_resident_degrades_to_random_sampler(n, mean, chunk) -> None:
    chunk_of = chunks_for(n, mean, chunk)
    plan = plan_local(request_stream(n, 7, 2), chunk_of, int(chunk_of.max()) + 1, 1)
    assert plan.order.tolist() == full_shuffle(n, epoch_seed(7, 2))
    assert not plan.redirected.any()


def test_k1_serves_chunk_by_chunk_and_redirects() -> None:
    chunk_of = chunks_for(1009, 500, 4000)
    plan = plan_local(request_stream(1009, 0, 0), chunk_of, 1, 0)
    runs = np.flatnonzero(np.diff(chunk_of[plan.order]) != 0)
    assert len(runs) == int(chunk_of.max())  # each chunk's records contiguous in the served order
    assert plan.redirected.mean() > 0.5


def test_determinism_from_seed() -> None:
    chunk_of = chunks_for(613, 300, 2400)
    a = plan_local(request_stream(613, 5, 0), chunk_of, 4, 11).order
    b = plan_local(request_stream(613, 5, 0), chunk_of, 4, 11).order
    c = plan_local(request_stream(613, 6, 0), chunk_of, 4, 11).order
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_resident_is_refused_naming_it(k) -> None:
    with pytest.raises(ValueError, match=r"resident=.* is out of range: valid range is >= 1"):
        plan_local(np.arange(3), np.zeros(3, dtype=np.int64), k, 0)


def test_unsupported_orders_are_refused_with_the_reason() -> None:
    for order in ("curriculum", "weighted"):
        with pytest.raises(ValueError, match=rf"order='{order}' is not supported: .*curriculum, weighted"):
            check_order(order)
    weighted = WeightedRandomSampler([1.0, 2.0, 3.0], 3)
    with pytest.raises(ValueError, match=r"sampler=WeightedRandomSampler is not supported"):
        check_order("random", weighted)
    with pytest.raises(ValueError, match=r"sampler=SequentialSampler is not supported"):
        check_order("random", SequentialSampler(range(3)))
    with pytest.raises(ValueError, match=r"sampler=RandomSampler is not supported"):
        check_order("random", RandomSampler(range(3), replacement=True))
    check_order("random", RandomSampler(range(3)))


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> RedoxStore:
    root = tmp_path_factory.mktemp("redox")
    generate(root, records=211, record_bytes=2048, chunk_bytes=16 * 1024, seed=4)
    return RedoxStore(root)


@pytest.mark.parametrize("k", [1, 3, 1000])
def test_sampler_and_dataset_through_a_dataloader(store, k) -> None:
    sampler = RedoxSampler(store, resident=k, seed=2)
    ds = RedoxDataset(store, sampler)
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        ids = torch.cat([b[0] for b in DataLoader(ds, sampler=sampler, batch_size=16)]).tolist()
        assert sorted(ids) == list(range(store.n))
        assert ids == sampler.plan(epoch).order.tolist()
        assert sorted(ds.chunk_reads) == list(range(store.n_chunks)) and set(ds.chunk_reads.values()) == {1}
        assert ds._server.prefetcher.peak <= k
    ds.close()


def test_iterable_dataset_in_process(store) -> None:
    ds = RedoxIterableDataset(store, resident=4, seed=1)
    ids = torch.cat([b[0] for b in DataLoader(ds, batch_size=8)]).tolist()
    assert Counter(ids) == Counter(range(store.n))
    assert ids == torch.cat([b[0] for b in DataLoader(ds, batch_size=8)]).tolist()  # deterministic


def test_iterable_dataset_refuses_fewer_chunks_than_workers(store) -> None:
    ds = RedoxIterableDataset(store, resident=1)
    with pytest.raises(ValueError, match=r"resident=1 is out of range for DataLoader num_workers=2"):
        ds.worker_plan(0, 2)


@pytest.mark.parametrize("counts", [[10], [5, 5], [1, 17], [0, 9, 4], [13, 2, 2, 30], [7, 0, 0, 0]])
@pytest.mark.parametrize("batch", [1, 3, 8])
def test_distributed_schedule_balances_without_double_serving(counts, batch) -> None:
    from workbench.llm.redox.distributed import schedule

    steps = schedule(counts, batch)
    world = len(counts)
    taken = [0] * world
    for s in steps:
        got = [s.own[r] + sum(s.give[d][r] for d in range(world)) for r in range(world)]
        assert max(got) - min(got) <= 1 and sum(got) <= world * batch
        for d in range(world):
            assert s.give[d][d] == 0
            taken[d] += s.own[d] + sum(s.give[d])
    assert taken == counts  # every rank's stream is used up exactly: nothing twice, nothing left


def test_chunkmate_spread_separates_chunk_by_chunk_from_a_full_shuffle() -> None:
    from workbench.llm.redox.randomness import chunkmate_spread

    chunk_of = chunks_for(1009, 500, 4000)
    one = plan_local(request_stream(1009, 0, 0), chunk_of, 1, 0).order
    every = plan_local(request_stream(1009, 0, 0), chunk_of, 10_000, 0).order
    assert chunkmate_spread(one, chunk_of) < 0.01  # each chunk served in one stretch
    assert abs(chunkmate_spread(every, chunk_of) - 12**-0.5) < 0.03  # uniform positions: std 1/sqrt(12)
    assert chunkmate_spread(np.arange(1009), chunk_of) < 0.01


def test_random_settings_keep_every_invariant() -> None:
    """40 seeded random (N, record size, chunk size, K, seed) settings against the replay."""
    rng = np.random.default_rng(2024)
    for _ in range(40):
        n = int(rng.integers(1, 600))
        mean = int(rng.integers(40, 2000))
        chunk = int(rng.integers(8 * mean, 40 * mean))
        chunk_of = pack_chunks(record_sizes(n, mean, str(rng.choice(["imagenet", "uniform", "fixed"]))), chunk)
        k = int(rng.integers(1, int(chunk_of.max()) + 3))
        seed = int(rng.integers(1000))
        plan = plan_local(request_stream(n, seed, 1), chunk_of, k, seed)
        ref = replay(plan.order, chunk_of, k)
        assert sorted(plan.order.tolist()) == list(range(n))
        assert set(ref.chunk_reads.values()) == {1} and ref.evicted_unconsumed == 0 and ref.peak_resident <= k
