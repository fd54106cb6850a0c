"""Parameters of ``workbench run kudu``: the real distributed count, and the paper-scale model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from workbench.cluster import ClusterSpec
from workbench.config import Config, group, param
from workbench.graphs.kudu.engine import STRATEGIES

#: real runs fork one process per rank on this machine
MAX_WORKERS = 16


@dataclass(frozen=True, kw_only=True)
class KuduConfig(Config):
    """Kudu: count a pattern on ``workers`` real processes with one exploration strategy, then project the
    measured per-edge costs to a paper-scale graph and cluster (model, labelled)."""

    graph: str = param(
        "karate",
        help="graph: a dataset name (karate, wiki-vote, planetoid-citeseer, ...), a "
        "synthetic spec (er-1000-0.01, rmat-12-8, grid-30-30) or a file",
    )
    pattern: str = param("triangle", help="pattern name (triangle, 4-clique, house, ...) or edge list '0-1,1-2,2-0'")
    induced: str = param(
        "edge", choices=("edge", "vertex"), label="induced by", help="edge- or vertex-induced counting"
    )
    workers: int = param(
        2,
        lo=1,
        hi=MAX_WORKERS,
        unit="processes",
        label="processes P",
        help="P: real processes (gloo), one partition each",
    )
    strategy: str = param(
        "hybrid",
        choices=STRATEGIES,
        help="hybrid: BFS-DFS chunks with reuse and overlap; dfs: one embedding at a time; "
        "bfs: a whole level at a time; naive: no reuse, every remote list fetched on every use",
    )
    chunk_size: int = param(
        256,
        lo=1,
        hi=1_000_000,
        unit="embeddings",
        label="chunk size C",
        help="embeddings per chunk (hybrid and naive; dfs uses 1, bfs a whole level)",
    )
    partition: str = param(
        "hash", choices=("hash", "range"), help="1-D partition: hashed vertex ids or degree-balanced ranges"
    )
    cache_kb: int = param(
        64,
        lo=0,
        hi=1_048_576,
        unit="KB",
        label="adjacency cache",
        help="LRU cache of remote lists per rank (0: none; naive never caches)",
    )
    max_embeddings: int = param(
        4_000_000,
        lo=1,
        hi=1_000_000_000,
        unit="embeddings",
        help="live embeddings per rank before a run is abandoned (BFS memory guard)",
    )
    timeout_s: float = param(600.0, lo=1.0, hi=86_400.0, unit="s", help="wall-clock limit of the real run")
    data_dir: str = param("", help="data directory for dataset names (default: $WORKBENCH_DATA or the project's data/)")
    # ---- paper-scale model (nothing runs at this scale)
    model_edges: float = param(
        1.0e11,
        lo=1.0e6,
        hi=1.0e13,
        unit="edges",
        label="model: graph edges",
        help="model: undirected edges of the paper-scale graph (same degree shape as --graph)",
    )
    model_machines: int = param(
        256, lo=2, hi=100_000, unit="machines", help="model: machines in the cluster", label="machines (model)"
    )
    # A commodity CPU node: one 100 Gb/s NIC stands for the node (gpus_per_node=1), 32 cores, 256 GB.
    cluster: ClusterSpec = group(
        ClusterSpec,
        gpus_per_node=1,
        inter_node_bw_gbps=12.5,
        inter_node_latency_us=5.0,
        cpu_cores=32,
        host_memory_gb=256.0,
        help="model: one machine of the cluster (cpu_cores, inter_node_bw_gbps per machine, "
        "inter_node_latency_us one-way, host_memory_gb)",
    )

    #: the flags of the model's own cluster before it became a ClusterSpec keep working
    ALIASES: ClassVar[Mapping[str, str]] = {
        "model_cores": "cluster.cpu_cores",
        "model_bandwidth_gbps": "cluster.inter_node_bw_gbps",
        "model_latency_us": "cluster.inter_node_latency_us",
        "model_memory_gb": "cluster.host_memory_gb",
    }

    def check_combination(self) -> None:
        if not self.graph.strip():
            raise ValueError("graph='' is empty: valid values are a dataset name, a synthetic spec or a file path")
        from workbench.graphs.patterns import parse_pattern

        parse_pattern(self.pattern)  # ValueError naming the pattern and the valid forms
