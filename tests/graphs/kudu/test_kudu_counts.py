"""Kudu's distributed counts equal the single-process engine's, for every pattern, strategy and P.

Reference: ``workbench.graphs.enumerate.count`` (compiled enumeration, itself tested against networkx VF2
and brute force in tests/graphs). Counts are integers: equality is exact. Every launch is P real forked
gloo processes; the restrictions must be applied identically on every rank or counts would double.
"""

from __future__ import annotations

import pytest
from kudu_cases import EXTRA_MOTIFS, NAMED_UP_TO_5, launch, reference

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow

ALL = ("hybrid", "dfs", "bfs", "naive")


def _check(results, graph: str, label: str, strategies) -> None:
    for induced in ("edge", "vertex"):
        expected = reference(graph, label, induced)
        for strategy in strategies:
            got = results[(label, induced, strategy)]
            assert got.completed
            assert got.count == expected, (graph, label, induced, strategy)
            assert sum(r.count for r in got.ranks) == got.count


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("label", NAMED_UP_TO_5)
def test_hybrid_on_karate_equals_single_process(shared_data, workers: int, label: str) -> None:
    _check(launch("karate", workers, NAMED_UP_TO_5, ("hybrid",), 16), "karate", label, ("hybrid",))


@pytest.mark.parametrize("label", NAMED_UP_TO_5)
def test_dfs_bfs_and_naive_on_karate(shared_data, label: str) -> None:
    strategies = ("dfs", "bfs", "naive")
    _check(launch("karate", 2, NAMED_UP_TO_5, strategies, 16), "karate", label, strategies)


@pytest.mark.parametrize(
    "graph, workers, partition, strategies",
    [
        ("er-26-0.2", 3, "range", ("hybrid", "naive")),
        ("er-26-0.2", 4, "hash", ("hybrid",)),
        ("rmat-6-3", 2, "hash", ("hybrid",)),
        ("rmat-6-3", 4, "range", ("hybrid",)),
    ],
)
@pytest.mark.parametrize("label", NAMED_UP_TO_5)
def test_random_graphs(graph: str, workers: int, partition: str, strategies, label: str) -> None:
    _check(launch(graph, workers, NAMED_UP_TO_5, strategies, 32, partition), graph, label, strategies)


@pytest.mark.parametrize("label", [p.edge_string() for p in EXTRA_MOTIFS])
def test_unnamed_motifs_with_every_strategy(label: str) -> None:
    labels = tuple(p.edge_string() for p in EXTRA_MOTIFS)
    _check(launch("er-26-0.2", 2, labels, ALL, 32), "er-26-0.2", label, ALL)


def test_published_karate_triangles(shared_data) -> None:
    assert launch("karate", 2, NAMED_UP_TO_5, ("hybrid",), 16)[("triangle", "edge", "hybrid")].count == 45
