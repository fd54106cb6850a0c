"""1-D partitioning: every vertex owned once, each rank's rows equal the whole graph's rows.

Reference: the whole graph's CSR (``Graph.neighbors``) and plain counting with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.graphs.generators import erdos_renyi, grid, rmat
from workbench.graphs.kudu.partition import LocalGraph, Partition


@pytest.fixture(scope="module")
def graph():
    return rmat(8, 4, seed=3).by_degree()


@pytest.mark.parametrize("scheme", ["hash", "range"])
@pytest.mark.parametrize("parts", [1, 2, 3, 4, 7])
def test_every_vertex_has_exactly_one_owner(graph, scheme: str, parts: int) -> None:
    part = Partition.build(graph, parts, scheme)
    owned = [part.owned(r) for r in range(parts)]
    assert np.array_equal(np.sort(np.concatenate(owned)), np.arange(graph.n))
    for r, ids in enumerate(owned):
        assert (part.owner(ids) == r).all()


@pytest.mark.parametrize("scheme", ["hash", "range"])
@pytest.mark.parametrize("parts", [1, 3, 4])
def test_local_rows_equal_the_whole_graph(graph, scheme: str, parts: int) -> None:
    part = Partition.build(graph, parts, scheme)
    total = 0
    for r in range(parts):
        local = LocalGraph.extract(graph, part, r)
        total += local.indices.shape[0]
        for v in local.vertices[:: max(1, local.vertices.shape[0] // 20)]:
            start, end = local.rows(np.array([v]))
            assert np.array_equal(local.indices[start[0] : end[0]], graph.neighbors(int(v)))
        expect = np.concatenate([graph.neighbors(int(v)) for v in local.vertices] or [np.zeros(0, np.int32)])
        assert np.array_equal(local.gather(local.vertices), expect)
        assert local.is_local(local.vertices).all()
    assert total == 2 * graph.m


def test_range_partition_balances_adjacency_entries(graph) -> None:
    part = Partition.build(graph, 4, "range")
    entries = [int(graph.degrees[part.owned(r)].sum()) for r in range(4)]
    # each cut lands within one vertex of the ideal share, so a share is off by at most the max degree
    assert max(entries) - min(entries) <= 2 * graph.max_degree


def test_range_bounds_on_a_grid() -> None:
    assert Partition.build(grid(3, 3), 2, "range").owner(np.arange(9)).tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1]


def test_hash_spreads_vertices() -> None:
    g = erdos_renyi(400, 0.02, seed=1)
    sizes = [Partition.build(g, 4, "hash").owned(r).shape[0] for r in range(4)]
    assert min(sizes) >= 70  # 100 expected per rank; multiplicative hashing of consecutive ids is near-even


@pytest.mark.parametrize(
    "parts, scheme, message", [(0, "hash", "parts=0 is out of range"), (2, "metis", "scheme='metis' is unknown")]
)
def test_bad_partition_arguments(graph, parts, scheme, message) -> None:
    with pytest.raises(ValueError, match=message):
        Partition.build(graph, parts, scheme)
