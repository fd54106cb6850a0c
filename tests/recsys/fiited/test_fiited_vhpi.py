"""The VHPI table against a Python dict (``reference.DictTable``) under seeded random sequences of insert,
allocate, free, delete, lookup, grow and compact: every lookup agrees, no chunk is owned twice, the free list is
conserved, the memory counter equals the pool's real occupancy. (hypothesis is not installed: seeded random
sequences instead.)"""

import numpy as np
import pytest
import torch

from workbench.recsys.fiited.reference import DictTable, probe_lookup
from workbench.recsys.fiited.vhpi import VHPITable


def _check(table: VHPITable, ref: DictTable, keys_seen: list[int]) -> None:
    table.check_invariants()
    assert table.live == ref.live == int((table.ptr >= 0).sum())
    assert table.capacity - table.n_free == table.live  # occupancy = pool minus free list
    mem = table.memory()
    assert mem.weight_bytes == table.live * table.chunk * 4
    assert mem.pointer_bytes == table.slots * table.n_chunks * 4
    for key in keys_seen:
        slot = int(table.lookup(np.array([key]))[0])
        assert slot == probe_lookup(table, key)
        if key in ref.data:
            assert slot >= 0
            np.testing.assert_array_equal(table.vectors(np.array([key]))[0].numpy(), ref.vector(key))
        else:
            assert slot == -1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_random_operations_agree_with_a_dict(seed):
    rng = np.random.default_rng(seed)
    nc, c = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    table = VHPITable(slots=int(rng.integers(13, 40)), dim=nc * c, chunk=c, pool=int(rng.integers(0, 9)))
    ref = DictTable(nc, c)
    universe = rng.choice(10**12, size=60, replace=False)
    seen: list[int] = []
    for _ in range(150):
        op = rng.choice(["insert", "alloc", "free", "delete", "compact", "grow"], p=[0.25, 0.3, 0.2, 0.1, 0.08, 0.07])
        if op == "insert" and table.size < table.slots:
            batch = rng.choice(universe, size=int(rng.integers(1, 4)))
            batch = batch[: table.slots - table.size]
            table.insert(batch)
            for k in batch:
                ref.insert(int(k))
            seen.extend(int(k) for k in batch)
        elif op == "alloc" and ref.data:
            key = int(rng.choice(list(ref.data)))
            free_j = [j for j, p in enumerate(ref.data[key]) if p is None]
            if free_j:
                j = int(rng.choice(free_j))
                value = rng.standard_normal(c).astype(np.float32)
                table.alloc(table.lookup(np.array([key])), np.array([j]), torch.from_numpy(value)[None])
                ref.alloc(key, j, value)
        elif op == "free" and ref.data:
            key = int(rng.choice(list(ref.data)))
            j = int(rng.integers(nc))
            table.free_chunks(table.lookup(np.array([key])), np.array([j]))
            ref.free(key, j)
        elif op == "delete" and seen:
            key = int(rng.choice(seen))
            assert table.delete(key) == ref.delete(key)
        elif op == "compact":
            table.compact(headroom=int(rng.integers(0, 3)))
            assert table.memory().pool_tensor_bytes == (table.live + table.n_free) * c * 4
        elif op == "grow":
            table.grow(int(rng.integers(1, 4)))
        _check(table, ref, seen)


def test_reuse_takes_freed_chunks_first_and_compact_makes_tensor_bytes_equal_the_counter():
    table = VHPITable(slots=10, dim=4, chunk=2, pool=6)
    s = table.insert(np.array([1, 2, 3]))
    table.alloc(np.repeat(s, 2), np.tile([0, 1], 3))
    assert table.n_free == 0
    freed = int(table.ptr[s[1], 1])
    table.free_chunks(s[1:2], np.array([1]))
    table.alloc(s[1:2], np.array([1]))
    assert int(table.ptr[s[1], 1]) == freed  # the freed chunk is reused, the pool did not grow
    table.free_chunks(s, np.array([1, 1, 1]))
    table.compact()
    mem = table.memory()
    assert mem.pool_tensor_bytes == mem.weight_bytes == 3 * 2 * 4
    table.check_invariants()


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="chunk=3 must divide dim=4"):
        VHPITable(slots=4, dim=4, chunk=3, pool=1)
    table = VHPITable(slots=2, dim=2, chunk=1, pool=1)
    with pytest.raises(ValueError, match="keys must be >= 0"):
        table.insert(np.array([-5]))
    s = table.insert(np.array([7, 8]))
    with pytest.raises(ValueError, match="table full"):
        table.insert(np.array([9]))
    table.alloc(s[:1], np.array([0]))
    with pytest.raises(ValueError, match="already owns"):
        table.alloc(s[:1], np.array([0]))


@pytest.mark.parametrize("seed", range(3))
def test_served_copy_keeps_the_kept_vectors_and_costs_what_is_counted(seed):
    """Prune chunks (some keys entirely): the served copy holds only keys with a chunk, reads the same vectors,
    and its real arrays cost what ``served_memory`` counts (keys, pointers, weights; no free list)."""
    from workbench.recsys.fiited.vhpi import KEY_BYTES, served_memory

    rng = np.random.default_rng(seed)
    n, nc, c = 40, 4, 3
    keys = rng.choice(10**12, size=n, replace=False).astype(np.int64)
    table = VHPITable(slots=50, dim=nc * c, chunk=c, pool=n * nc)
    slots = table.insert(keys)
    table.alloc(np.repeat(slots, nc), np.tile(np.arange(nc), n), torch.randn(n * nc, c))
    drop = rng.random((table.slots, nc)) < 0.5
    drop[slots[:7]] = True  # 7 keys lose every chunk
    s, j = np.nonzero(drop & (table.ptr >= 0))
    table.free_chunks(s, j)
    table.compact()
    served = table.served_copy(0.8)
    served.check_invariants()
    kept = keys[table.chunk_counts()[slots] > 0]
    assert served.size == kept.size and np.all(served.lookup(keys[:7]) == -1)
    assert torch.equal(served.vectors(kept), table.vectors(kept))
    counted = served_memory(live_chunks=table.live, ids=kept.size, n_chunks=nc, chunk=c, load_factor=0.8)
    assert counted.slots == served.slots and counted.key_bytes == served.keys.nbytes == served.slots * KEY_BYTES
    assert counted.pointer_bytes == served.ptr.nbytes
    assert counted.weight_bytes == served.weight[:-1].numel() * 4 and served.free.nbytes == 0
