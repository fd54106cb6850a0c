"""The paper-scale model: exact at the measured scale, linear in the edges, and honest about memory.

Reference: the measured totals themselves (at the measured scale and M = P machines of one core the model
must give back what was measured) and closed-form arithmetic (8 bytes per edge for a replicated CSR).
"""

from __future__ import annotations

import functools

import pytest

from workbench.cluster import ClusterSpec
from workbench.graphs.enumerate import make_schedule
from workbench.graphs.generators import rmat
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.count import count_jobs
from workbench.graphs.kudu.engine import STRATEGIES, EngineOptions
from workbench.graphs.kudu.model import Measured, cluster_summary, project, project_all, replicated
from workbench.graphs.patterns import parse_pattern


def node(**changes) -> ClusterSpec:
    """Kudu's default CPU node (the config's cluster group) with ``changes``."""
    return KuduConfig().cluster.replace(**changes)


@functools.cache
def measured(workers: int = 2) -> dict[str, Measured]:
    g = rmat(6, 4, seed=4).by_degree()
    schedule = make_schedule(parse_pattern("4-clique"), "edge", graph=g)
    results = count_jobs(g, [(schedule, EngineOptions(strategy=s, chunk_size=16)) for s in STRATEGIES], workers=workers)
    return {s: Measured.of(r, vertices=g.n, edges=g.m) for s, r in zip(STRATEGIES, results)}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_model_gives_back_the_measurement_at_the_measured_scale(strategy: str) -> None:
    m = measured()[strategy]
    p = project(m, m.edges, node(cpu_cores=1), m.workers)
    assert p.compute_seconds == pytest.approx(m.compute_seconds_total / m.workers, rel=1e-12)
    assert p.bytes_per_machine == pytest.approx(m.bytes / m.workers, rel=1e-12)
    assert p.lists_per_machine == pytest.approx(m.lists_fetched / m.workers, rel=1e-12)
    assert p.rounds_per_machine == pytest.approx(m.rounds, rel=1e-12)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_compute_scales_linearly_and_traffic_at_least_linearly(strategy: str) -> None:
    m = measured()[strategy]
    cluster = node()
    a, b = project(m, 1e9, cluster, 64), project(m, 2e9, cluster, 64)
    assert b.compute_seconds == pytest.approx(2 * a.compute_seconds, rel=1e-12)
    assert b.bytes_per_machine >= 2 * a.bytes_per_machine * (1 - 1e-12)  # the cache covers less of the graph
    assert b.hit_rate <= a.hit_rate


def test_memory_of_partitioned_strategies_vs_replicated() -> None:
    ms = measured()
    cluster = node(host_memory_gb=256.0)
    out = {p.strategy: p for p in project_all(list(ms.values()), 1e11, cluster, 256)}
    rep = out["replicated"]
    assert rep.memory_bytes >= 8 * 1e11 and not rep.fits  # 800 GB of CSR per machine
    for strategy in ("hybrid", "dfs", "naive"):
        assert out[strategy].embedding_bytes == ms[strategy].peak_set_bytes  # bounded by the chunk size
        assert out[strategy].memory_bytes < rep.memory_bytes
    small = project(ms["bfs"], 1e9, cluster, 256)
    assert out["bfs"].embedding_bytes == pytest.approx(100 * small.embedding_bytes, rel=1e-12)  # grows with the graph


def test_overlap_rule() -> None:
    ms = measured()
    cluster = node(inter_node_latency_us=50.0)
    h, d = project(ms["hybrid"], 1e10, cluster, 32), project(ms["dfs"], 1e10, cluster, 32)
    assert h.seconds == pytest.approx(max(h.compute_seconds, h.bandwidth_seconds + h.latency_seconds))
    assert d.seconds == pytest.approx(d.compute_seconds + d.bandwidth_seconds + d.latency_seconds)
    assert replicated(ms["hybrid"], 1e10, cluster, 32).bytes_per_machine == 0.0
    assert h.latency_seconds == pytest.approx(h.rounds_per_machine * 2 * 50e-6, rel=1e-12)


def test_model_needs_two_processes() -> None:
    with pytest.raises(ValueError, match="workers=1: the model needs a real run with at least 2 processes"):
        project(measured(1)["hybrid"], 1e9, node(), 256)


def test_model_needs_two_machines() -> None:
    with pytest.raises(ValueError, match="machines=1 is out of range: the model needs at least 2 machines"):
        project(measured()["hybrid"], 1e9, node(), 1)
    with pytest.raises(ValueError, match="machines=1 is out of range"):
        replicated(measured()["hybrid"], 1e9, node(), 1)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(inter_node_bw_gbps=0.0), "inter_node_bw_gbps=0 is out of range"),
        (dict(cpu_cores=0), "cpu_cores=0 is out of range"),
    ],
)
def test_bad_cluster(changes, message) -> None:
    with pytest.raises(ValueError, match=message):
        node(**changes)


def test_bandwidth_is_the_node_network_and_the_summary_keeps_the_old_keys() -> None:
    m = measured()["hybrid"]
    one, two = project(m, 1e10, node(), 64), project(m, 1e10, node(gpus_per_node=2), 64)
    assert two.bandwidth_seconds == pytest.approx(one.bandwidth_seconds / 2, rel=1e-12)  # two NICs per node
    assert cluster_summary(node(), 256) == {
        "machines": 256,
        "cores": 32,
        "bandwidth_gbps": 12.5,
        "latency_us": 5.0,
        "memory_gb": 256.0,
    }
