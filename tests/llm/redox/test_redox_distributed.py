"""DataLoader worker processes and the distributed protocol on P real gloo processes: every record served once across ranks, every chunk read
once, equal global batches, remote records checked against the index, bytes over gloo counted.

Reference: the file set (multiset of served ids), the chunk table, the pure :func:`schedule`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

from workbench.llm.redox.dataset import RedoxStore, generate
from workbench.llm.redox.distributed import owned_counts, run_distributed
from workbench.llm.redox.redox import RedoxDataset, RedoxIterableDataset, RedoxSampler

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("redox-dist")
    generate(root, records=389, record_bytes=3000, chunk_bytes=20 * 1024, seed=6)  # 389: prime
    return root


@pytest.mark.parametrize(
    ("processes", "resident", "batch"), [(1, 1, 7), (2, 1, 16), (3, 2, 5), (4, 3, 11), (3, 1000, 13)]
)
def test_every_record_once_across_processes(root, processes, resident, batch) -> None:
    run, per_rank = run_distributed(root, processes=processes, resident=resident, batch=batch, seed=processes)
    assert run.exactly_once and run.chunks_read_once and run.balanced
    assert run.peak_resident <= resident
    store = RedoxStore(root)
    counts = owned_counts(store, processes, processes, 0)
    assert run.served_per_rank != counts or run.remote_records == 0 or processes == 1
    assert sum(run.served_per_rank) == store.n
    received = sum(r["remote_in"] for r in per_rank)
    assert received == sum(r["remote_out"] for r in per_rank) == run.remote_records
    remote = [i for r in per_rank for step in r["served"] for i in step if int(store.chunk[i]) not in r["owned_chunks"]]
    assert len(remote) == run.remote_records  # a record served away from its owner came over gloo
    assert run.comm_bytes >= sum(int(store.length[i]) for i in remote)  # its bytes (+ headers, tallies) counted
    assert run.bytes_read >= store.total_bytes * (0.95 if run.bytes_source == "/proc/self/io" else 1)


def test_same_seed_same_batches(root) -> None:
    a = run_distributed(root, processes=2, resident=2, batch=9, seed=3)[1]
    b = run_distributed(root, processes=2, resident=2, batch=9, seed=3)[1]
    assert [r["served"] for r in a] == [r["served"] for r in b]


@pytest.fixture(scope="module")
def root_store(root) -> RedoxStore:
    return RedoxStore(root)


def test_map_style_dataset_refuses_worker_processes(root_store) -> None:
    sampler = RedoxSampler(root_store, resident=2)
    ds = RedoxDataset(root_store, sampler)
    batches = iter(DataLoader(ds, sampler=sampler, batch_size=8, num_workers=1))
    try:
        with pytest.raises(ValueError, match="use RedoxIterableDataset"):
            next(batches)
    finally:
        batches._shutdown_workers()  # now, not when garbage-collected during a later test
        ds.close()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_iterable_dataset_with_dataloader_workers(root_store, workers) -> None:
    ds = RedoxIterableDataset(root_store, resident=4, seed=1)
    ids = torch.cat([b[0] for b in DataLoader(ds, batch_size=8, num_workers=workers)]).tolist()
    assert Counter(ids) == Counter(range(root_store.n))
    again = torch.cat([b[0] for b in DataLoader(ds, batch_size=8, num_workers=workers)]).tolist()
    assert ids == again  # deterministic, workers included
