"""Shared cases of the Kudu tests: small seeded graphs and cached launches (one fork per graph and P).

Each launch runs many counts on one set of P processes (:func:`workbench.graphs.kudu.count.count_jobs`),
because forking and the gloo rendezvous cost more than counting on these graphs.
"""

from __future__ import annotations

import functools

from workbench.graphs.enumerate import count, make_schedule
from workbench.graphs.generators import erdos_renyi, rmat
from workbench.graphs.graph import Graph
from workbench.graphs.kudu.count import KuduResult, count_jobs
from workbench.graphs.kudu.engine import EngineOptions
from workbench.graphs.patterns import Pattern, motifs, named_patterns

#: every named pattern with at most 5 vertices (edge, wedge, ..., house, 5-clique)
NAMED_UP_TO_5 = tuple(name for name, p in named_patterns().items() if p.k <= 5)
#: a few connected motifs without a name: 5-vertex ones, and two 6-vertex ones
EXTRA_MOTIFS = tuple(p for p in motifs(5) if not p.name)[::3] + tuple(motifs(6)[i] for i in (7, 60))


def graph_named(name: str) -> Graph:
    """Seeded test graphs (relabelled by degree, as the engines expect); ``karate`` needs the shared data."""
    if name == "karate":
        from workbench.graphs.loaders import load_graph

        return load_graph("karate").by_degree()
    if name == "er-26-0.2":
        return erdos_renyi(26, 0.2, seed=11).by_degree()
    if name == "rmat-6-3":
        return rmat(6, 3, seed=5).by_degree()
    raise ValueError(name)


def pattern_of(label: str) -> Pattern:
    named = named_patterns()
    if label in named:
        return named[label]
    return next(p for p in EXTRA_MOTIFS if p.edge_string() == label)


@functools.cache
def reference(graph_name: str, label: str, induced: str) -> int:
    """The single-process engine's count (workbench.graphs.enumerate.count): the reference."""
    return count(graph_named(graph_name), pattern_of(label), induced).count


@functools.cache
def launch(
    graph_name: str,
    workers: int,
    labels: tuple[str, ...],
    strategies: tuple[str, ...],
    chunk_size: int,
    partition: str = "hash",
    cache_bytes: int = 1 << 16,
) -> dict[tuple[str, str, str], KuduResult]:
    """(pattern label, induced, strategy) -> result, for every combination, on one launch of P processes."""
    g = graph_named(graph_name)
    keys, jobs = [], []
    for label in labels:
        for induced in ("edge", "vertex"):
            schedule = make_schedule(pattern_of(label), induced, graph=g)
            for strategy in strategies:
                keys.append((label, induced, strategy))
                jobs.append(
                    (schedule, EngineOptions(strategy=strategy, chunk_size=chunk_size, cache_bytes=cache_bytes))
                )
    return dict(zip(keys, count_jobs(g, jobs, workers=workers, partition=partition, timeout_s=300)))
