"""What Kudu measures is consistent: reuse lowers fetches, memory stays bounded, bytes add up.

References: the naive baseline (no reuse) for fetch counts; ``workbench.distributed.Comm``'s own byte
counter (independent of the engine's bookkeeping) for bytes; the hybrid's stated memory bound
``engine.embedding_bound`` (two chunks per level plus one in flight) for peak live embeddings.
"""

from __future__ import annotations

import functools

import pytest

from workbench.graphs.enumerate import count, make_schedule
from workbench.graphs.generators import rmat
from workbench.graphs.kudu.count import count_jobs
from workbench.graphs.kudu.engine import EngineOptions, embedding_bound
from workbench.graphs.patterns import parse_pattern

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow

PATTERNS = ("triangle", "4-clique", "house", "4-cycle")
VARIANTS = (
    ("naive", 32, 1 << 16),
    ("hybrid", 32, 1 << 16),
    ("hybrid", 32, 0),
    ("hybrid", 4, 1 << 16),
    ("dfs", 1, 1 << 16),
    ("bfs", 1, 1 << 16),
)


@functools.cache
def graph():
    return rmat(6, 4, seed=2).by_degree()


@functools.cache
def runs(workers: int):
    """(pattern, strategy, chunk, cache) -> KuduResult, on one launch."""
    g = graph()
    keys, jobs = [], []
    for name in PATTERNS:
        schedule = make_schedule(parse_pattern(name), "edge", graph=g)
        for strategy, chunk, cache in VARIANTS:
            keys.append((name, strategy, chunk, cache))
            jobs.append((schedule, EngineOptions(strategy=strategy, chunk_size=chunk, cache_bytes=cache)))
    return dict(zip(keys, count_jobs(g, jobs, workers=workers)))


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", PATTERNS)
def test_counts_agree_across_variants(workers: int, name: str) -> None:
    expected = count(graph(), parse_pattern(name), "edge").count
    for key, r in runs(workers).items():
        if key[0] == name:
            assert r.count == expected, key


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", PATTERNS)
def test_reuse_fetches_less_than_naive(workers: int, name: str) -> None:
    r = runs(workers)
    naive, hybrid = r[(name, "naive", 32, 1 << 16)].totals, r[(name, "hybrid", 32, 1 << 16)].totals
    assert naive["lists_fetched"] == naive["remote_uses"]  # naive fetches on every use
    assert naive["lists_fetched"] >= hybrid["lists_fetched"]
    assert naive["bytes"] >= hybrid["bytes"]
    no_cache = r[(name, "hybrid", 32, 0)].totals
    assert no_cache["cache_hits"] == 0 and no_cache["lists_fetched"] >= hybrid["lists_fetched"]


@pytest.mark.parametrize("workers", [2, 3])
def test_rates_and_list_bookkeeping(workers: int) -> None:
    for key, res in runs(workers).items():
        t = res.totals
        assert 0.0 <= t["cache_hit_rate"] <= 1.0 and 0.0 <= t["reuse_rate"] <= 1.0, key
        assert t["cache_lookups"] == t["cache_hits"] + t["lists_fetched"], key
        assert t["lists_fetched"] <= t["remote_uses"], key
        assert sum(x.fetch.lists_served for x in res.ranks) == t["lists_fetched"], key
        assert t["cache_peak_bytes"] <= res.options.cache, key


@pytest.mark.parametrize("workers", [2, 3])
def test_bytes_equal_the_comm_counter(workers: int) -> None:
    for key, res in runs(workers).items():
        t = res.totals
        sent = sum(x.comm_bytes_sent for x in res.ranks)
        recv = sum(x.comm_bytes_recv for x in res.ranks)
        assert sent == recv == t["bytes"] + t["header_bytes"], key


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", PATTERNS)
def test_memory_bounds_of_each_strategy(workers: int, name: str) -> None:
    r = runs(workers)
    k = parse_pattern(name).k
    for chunk in (4, 32):
        assert r[(name, "hybrid", chunk, 1 << 16)].totals["peak_embeddings"] <= embedding_bound(k, chunk)
    assert r[(name, "dfs", 1, 1 << 16)].totals["peak_embeddings"] <= k  # one embedding per level
    bfs = r[(name, "bfs", 1, 1 << 16)].totals
    assert bfs["peak_embeddings"] >= r[(name, "hybrid", 4, 1 << 16)].totals["peak_embeddings"]
    assert bfs["rounds"] <= k  # one fetch round per level, then the closing round


@pytest.mark.parametrize("name", PATTERNS)
def test_bigger_chunks_need_fewer_rounds_and_bfs_the_fewest(name: str) -> None:
    r = runs(2)
    rounds = [
        r[(name, *v)].totals["rounds"]
        for v in (("dfs", 1, 1 << 16), ("hybrid", 4, 1 << 16), ("hybrid", 32, 1 << 16), ("bfs", 1, 1 << 16))
    ]
    assert rounds == sorted(rounds, reverse=True)


def test_one_process_moves_nothing() -> None:
    g = graph()
    schedule = make_schedule(parse_pattern("house"), "vertex", graph=g)
    (res,) = count_jobs(g, [(schedule, EngineOptions())], workers=1)
    assert res.count == count(g, parse_pattern("house"), "vertex").count
    assert res.totals["messages"] == res.totals["bytes"] == res.totals["remote_uses"] == 0


@pytest.mark.parametrize("workers", [1, 3])
def test_bfs_beyond_max_embeddings_stops_every_rank(workers: int) -> None:
    g = graph()
    schedule = make_schedule(parse_pattern("4-cycle"), "edge", graph=g)
    small = EngineOptions(strategy="bfs", max_embeddings=50)
    ok = EngineOptions(strategy="hybrid", chunk_size=8)
    abandoned, after = count_jobs(g, [(schedule, small), (schedule, ok)], workers=workers, timeout_s=120)
    assert not abandoned.completed
    assert after.completed and after.count == count(g, parse_pattern("4-cycle"), "edge").count  # ranks still in step
