"""MODEL (not a measurement): carry costs measured in a real Kudu run to paper-scale graphs and clusters.

The paper runs graphs of more than 10^11 edges on commodity clusters; here we run graphs of 10^2-10^5 edges on
P <= 16 processes of one machine. This module extrapolates per-edge costs measured in a real run
(:class:`Measured`, from a :class:`~.count.KuduResult`) to a graph of ``edges`` undirected edges **with the
same degree distribution shape** (every count below scales linearly with the edges; a heavier-tailed graph
costs more per edge) on ``machines`` CPU nodes described by a :class:`~workbench.cluster.ClusterSpec` (the one
hardware description of the workbench: a node's ``cpu_cores``, its network bandwidth
``node_network_bytes_per_second`` (one NIC per node: ``gpus_per_node=1``), ``inter_node_latency_us`` and
``host_memory_gb``). Per strategy:

- compute: measured compute seconds per edge x edges / (machines x cores) (perfect balance and scaling);
- remote list uses: measured per edge, times the remote fraction ``(M-1)/M`` over the measured ``(P-1)/P``;
  within-chunk deduplication keeps the measured fraction (same chunk size); the cache hit rate shrinks with
  the fraction of the remote graph the same cache can hold (LRU on near-uniform accesses);
- bytes: fetched lists x measured bytes per list (list length follows the degree shape); rounds per machine
  grow with its share of the edges (BFS: a fixed number of levels);
- time: ``hybrid``/``naive`` overlap communication with computation (their lookahead):
  ``max(compute, bytes / bandwidth + rounds x 2 latency)``; ``dfs``/``bfs`` wait for every fetch: the sum;
- memory per machine: the partition (4 bytes per adjacency entry, 8 per row offset and 8 per owned vertex
  id; nothing per remote vertex) + the cache + live embeddings (bounded by the chunk size for hybrid, dfs and naive;
  a whole level for BFS, which grows with the machine's share of the graph);
- ``replicated``: the replicated-graph design (distributed GraphPi / Fractal): no communication, but every
  machine holds the whole graph; priced with the cheapest measured compute per edge.

The compute cost per edge is *our* engine's (Python driving numba kernels), which includes a fixed cost per
chunk: small chunks (and DFS, one embedding per chunk) look more expensive per edge than a C++ engine's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from workbench.cluster import ClusterSpec

__all__ = [
    "Measured",
    "Projection",
    "project",
    "replicated",
    "project_all",
    "cluster_summary",
    "MODEL_LABEL",
]

MODEL_LABEL = "MODEL: measured per-edge costs extrapolated to a paper-scale graph and cluster (not a measurement)"
ID_BYTES = 4


def _check_machines(machines: int) -> int:
    if isinstance(machines, bool) or not isinstance(machines, int) or machines < 2:
        raise ValueError(f"machines={machines!r} is out of range: the model needs at least 2 machines")
    return machines


def cluster_summary(cluster: ClusterSpec, machines: int) -> dict[str, Any]:
    """The modelled cluster as the JSON's ``model.cluster`` block: machines, cores per machine, network GB/s
    per machine, one-way latency (us), memory per machine (GB)."""
    return {
        "machines": machines,
        "cores": cluster.cpu_cores,
        "bandwidth_gbps": cluster.inter_node_bw_gbps * cluster.gpus_per_node,
        "latency_us": cluster.inter_node_latency_us,
        "memory_gb": cluster.host_memory_gb,
    }


@dataclass(frozen=True)
class Measured:
    """What one real run measured (totals over its P ranks) and on which graph."""

    strategy: str
    workers: int
    chunk_size: int
    vertices: int
    edges: int
    compute_seconds_total: float
    remote_uses: int
    lookups: int
    cache_hits: int
    lists_fetched: int
    bytes: int
    rounds: int
    peak_set_bytes: int
    cache_bytes: int

    @classmethod
    def of(cls, result: Any, *, vertices: int, edges: int) -> Measured:
        """From a :class:`~.count.KuduResult` of a graph with ``vertices`` and ``edges``."""
        t = result.totals
        o = result.options
        return cls(
            o.strategy,
            len(result.ranks),
            o.chunk_size,
            vertices,
            edges,
            t["compute_seconds_total"],
            t["remote_uses"],
            t["cache_lookups"],
            t["cache_hits"],
            t["lists_fetched"],
            t["bytes"],
            t["rounds"],
            t["peak_set_bytes"],
            o.cache,
        )

    def per_edge(self) -> dict[str, float]:
        """The measured costs per undirected edge of the measured graph."""
        m = max(self.edges, 1)
        return {
            "compute_ns_per_edge": self.compute_seconds_total / m * 1e9,
            "remote_uses_per_edge": self.remote_uses / m,
            "lists_fetched_per_edge": self.lists_fetched / m,
            "bytes_per_edge": self.bytes / m,
        }


@dataclass(frozen=True)
class Projection:
    """Modelled run of one strategy (per machine unless named otherwise; seconds, bytes)."""

    strategy: str
    edges: float
    machines: int
    compute_seconds: float
    bandwidth_seconds: float
    latency_seconds: float
    seconds: float
    bytes_per_machine: float
    rounds_per_machine: float
    lists_per_machine: float
    hit_rate: float
    partition_bytes: float
    cache_bytes: float
    embedding_bytes: float
    memory_bytes: float
    fits: bool
    label: str = MODEL_LABEL

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def project(measured: Measured, edges: float, cluster: ClusterSpec, machines: int) -> Projection:
    """Model ``measured``'s strategy on a graph of ``edges`` undirected edges (same degree shape) and
    ``machines`` nodes of ``cluster``.

    Raises:
        ValueError: the run had one rank (no remote fetches to calibrate from), ``edges`` <= 0 or
            ``machines`` < 2.
    """
    _check_machines(machines)
    if measured.workers < 2:
        raise ValueError(
            f"workers={measured.workers}: the model needs a real run with at least 2 processes "
            "(a single process fetches nothing, so there is no communication cost to carry)"
        )
    if edges <= 0:
        raise ValueError(f"edges={edges} must be > 0")
    M, P = machines, measured.workers
    scale = edges / max(measured.edges, 1)
    vertices = measured.vertices * scale
    compute = measured.compute_seconds_total * scale / (M * cluster.cpu_cores)
    remote = ((M - 1) / M) / ((P - 1) / P)
    uses = measured.remote_uses * scale * remote
    dedup = measured.lookups / measured.remote_uses if measured.remote_uses else 0.0
    hit = measured.cache_hits / measured.lookups if measured.lookups else 0.0
    remote_bytes_measured = 8.0 * measured.edges * (P - 1) / P
    remote_bytes_model = 8.0 * edges * (M - 1) / M
    hit *= min(1.0, remote_bytes_measured / remote_bytes_model)  # the same cache holds less of a bigger graph
    lists = uses * dedup * (1.0 - hit)
    bytes_per_list = measured.bytes / measured.lists_fetched if measured.lists_fetched else 0.0
    total_bytes = lists * bytes_per_list
    per_machine_bytes = total_bytes / M
    if measured.strategy == "bfs":
        rounds = float(measured.rounds)
    else:
        rounds = measured.rounds * scale * P / M
    bandwidth = per_machine_bytes / cluster.node_network_bytes_per_second
    latency = rounds * 2 * cluster.inter_node_latency_us * 1e-6
    if measured.strategy in ("hybrid", "naive"):
        seconds = max(compute, bandwidth + latency)
    else:
        seconds = compute + bandwidth + latency
    partition = (8.0 * edges + 16.0 * vertices) / M
    embedding = float(measured.peak_set_bytes) * (scale * P / M if measured.strategy == "bfs" else 1.0)
    memory = partition + measured.cache_bytes + embedding
    return Projection(
        measured.strategy,
        edges,
        M,
        compute,
        bandwidth,
        latency,
        seconds,
        per_machine_bytes,
        rounds,
        lists / M,
        hit,
        partition,
        float(measured.cache_bytes),
        embedding,
        memory,
        memory <= cluster.host_memory_gb * 1e9,
    )


def replicated(measured: Measured, edges: float, cluster: ClusterSpec, machines: int) -> Projection:
    """The replicated-graph design on ``machines`` nodes: same compute, no fetches, the whole graph on every
    machine."""
    _check_machines(machines)
    scale = edges / max(measured.edges, 1)
    compute = measured.compute_seconds_total * scale / (machines * cluster.cpu_cores)
    memory = 8.0 * edges + 8.0 * measured.vertices * scale  # CSR of the whole graph
    return Projection(
        "replicated",
        edges,
        machines,
        compute,
        0.0,
        0.0,
        compute,
        0.0,
        0.0,
        0.0,
        0.0,
        memory,
        0.0,
        0.0,
        memory,
        memory <= cluster.host_memory_gb * 1e9,
    )


def project_all(measured: list[Measured], edges: float, cluster: ClusterSpec, machines: int) -> list[Projection]:
    """:func:`project` for each measured strategy, then the replicated design, priced with the cheapest
    measured compute per edge (the same enumeration without any fetching)."""
    out = [project(m, edges, cluster, machines) for m in measured]
    if measured:
        cheapest = min(measured, key=lambda m: m.compute_seconds_total / max(m.edges, 1))
        out.append(replicated(cheapest, edges, cluster, machines))
    return out
