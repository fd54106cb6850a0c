"""MODEL (not measured): GNNPipe vs graph parallelism at the paper's graph sizes (ogbn-products, ogbn-papers100M).

Bytes per epoch come from the closed forms of :mod:`.volume` (which equal the counted bytes on every real run);
what the model adds is the halo H of a P-way partition of a graph we cannot load here, estimated from degree
statistics:

- random partition: vertex v is read by each of the other P-1 parts that holds one of its ``deg(v)`` neighbours,
  ``E[H] = sum_v (P - 1) (1 - (1 - 1/P)^deg(v))`` (tested against the measured random halos of Cora, CiteSeer
  and PubMed);
- METIS: the random estimate times a *locality factor*, the measured METIS / random halo ratio on the
  Planetoid graphs at the same P (an inferred assumption: the paper's graphs may partition better or worse);
- the degree sequence: a log-normal with the graph's mean degree (OGB's published |V| and |E|) and sigma
  ``DEGREE_SIGMA`` (an assumption; OGB's degree histograms are heavy-tailed).

Time per epoch: compute at an effective GPU rate (:class:`Kernels`, an assumption: sparse aggregation and dense
transforms, forward and backward: 3x the forward FLOPs), split over P; every transfer is priced on the network
link of the cluster (``inter_node_bw_gbps``, ``inter_node_latency_us`` of a :class:`~workbench.cluster.ClusterSpec`,
by default the ``"h800-sxm-nvlink-ib"`` preset: 25 GB/s, 10 us; the paper's testbed is not readable); graph parallelism adds its halo exchange per layer and the
all-reduce, GNNPipe adds its boundary transfers and the pipeline fill ``(K + P - 1) / K``. Nothing overlaps
(conservative for both). Communication overhead = the communication seconds. Every number is labelled MODEL.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from workbench.cluster import PRESETS, ClusterSpec
from workbench.graphs.gnnpipe.volume import gnnpipe_bytes, graph_parallel_bytes

__all__ = [
    "MODEL_LABEL",
    "PAPER_DEPTHS",
    "PaperGraph",
    "PAPER_GRAPHS",
    "DEGREE_SIGMA",
    "random_halo",
    "lognormal_degrees",
    "Kernels",
    "CLUSTER",
    "Projection",
    "project",
    "flops_per_epoch",
    "param_count",
]

MODEL_LABEL = "MODEL (not measured): closed-form bytes, halo estimated from degree statistics"
#: the depths the paper trains (deep GCN / GCNII, 16-64 layers; the abstracts give no single L): the model's range
PAPER_DEPTHS = (16, 32, 64)
#: sigma of the log-normal degree distribution assumed for the paper's graphs (inferred, not sourced)
DEGREE_SIGMA = 1.0


@dataclass(frozen=True)
class PaperGraph:
    """A graph of the paper's scale: name, vertices, undirected edges, feature width, classes (OGB's figures)."""

    name: str
    n: int
    edges: int
    features: int
    classes: int
    source: str

    @property
    def mean_degree(self) -> float:
        return 2 * self.edges / self.n


#: OGB node-property graphs (ogb.stanford.edu, "Node Property Prediction": |V|, |E|, features, classes)
PAPER_GRAPHS = {
    "ogbn-products": PaperGraph("ogbn-products", 2_449_029, 61_859_140, 100, 47, "OGB dataset page"),
    "ogbn-papers100m": PaperGraph("ogbn-papers100m", 111_059_956, 1_615_685_872, 128, 172, "OGB dataset page"),
}


def random_halo(degrees: np.ndarray, parts: int, scale: float = 1.0) -> float:
    """Expected halo of a uniform random ``parts``-way split: ``sum_v (P-1)(1-(1-1/P)^deg v)`` times ``scale``
    (the number of vertices each sampled degree stands for)."""
    if parts <= 1:
        return 0.0
    deg = np.asarray(degrees, dtype=np.float64)
    return float(scale * np.sum((parts - 1) * (1.0 - (1.0 - 1.0 / parts) ** deg)))


@functools.lru_cache(maxsize=32)
def lognormal_degrees(mean: float, sigma: float = DEGREE_SIGMA, samples: int = 200_000, seed: int = 0) -> np.ndarray:
    """A seeded sample of degrees >= 1 from a log-normal with the given mean (rounded to integers)."""
    mu = np.log(mean) - sigma**2 / 2
    deg = np.random.default_rng(seed).lognormal(mu, sigma, samples)
    out = np.maximum(1, np.rint(deg))
    out.setflags(write=False)  # shared by the cache
    return out


#: the cluster the paper-scale model prices on (its network link: 25 GB/s per GPU, 10 us per message)
CLUSTER: ClusterSpec = PRESETS["h800-sxm-nvlink-ib"]


@dataclass(frozen=True)
class Kernels:
    """What GNN kernels achieve on one GPU (a model assumption, not hardware): effective TFLOP/s of sparse
    aggregation and dense transforms together."""

    tflops: float = 20.0

    @property
    def flops_per_second(self) -> float:
        return self.tflops * 1e12


def param_count(kind: str, layers: int, hidden: int, features: int, classes: int) -> int:
    per_layer = hidden * hidden + (hidden if kind == "gcn" else 0)
    return features * hidden + hidden + layers * per_layer + hidden * classes + classes


def flops_per_epoch(n: int, nnz: int, features: int, classes: int, layers: int, hidden: int) -> float:
    """Forward FLOPs (sparse aggregation 2 nnz d, transform 2 n d^2 per layer, input and output layers) x 3."""
    forward = (
        layers * (2.0 * nnz * hidden + 2.0 * n * hidden * hidden)
        + 2.0 * n * features * hidden
        + 2.0 * n * hidden * classes
    )
    return 3.0 * forward


@dataclass(frozen=True)
class Projection:
    """One mode at paper scale: bytes per epoch (all GPUs), communication and total seconds, memory per GPU."""

    mode: str
    bytes_per_epoch: float
    comm_seconds: float
    compute_seconds: float
    seconds: float
    memory_bytes_per_gpu: float


def project(
    graph: PaperGraph,
    *,
    kind: str,
    layers: int,
    hidden: int,
    gpus: int,
    chunks: int,
    itemsize: int = 4,
    locality: float = 1.0,
    cluster: ClusterSpec = CLUSTER,
    kernels: Kernels = Kernels(),
    sigma: float = DEGREE_SIGMA,
) -> dict[str, Projection | float]:
    """MODEL: graph parallelism (halo = random estimate x ``locality``) and GNNPipe on ``gpus`` GPUs of ``cluster``
    (transfers on its network link) at the GNN kernels' effective rate ``kernels``.

    Returns ``{"graph-parallel": Projection, "gnnpipe": Projection, "halo": H, "volume_ratio", "overhead_ratio",
    "time_ratio"}`` (ratios graph-parallel / GNNPipe).
    """
    if gpus > layers:
        raise ValueError(f"gpus={gpus} is more than layers={layers}: a GNNPipe stage needs at least one layer")
    n, nnz = graph.n, 2 * graph.edges + graph.n
    deg = lognormal_degrees(graph.mean_degree, sigma)
    halo = random_halo(deg, gpus, scale=n / len(deg)) * locality
    width = hidden * (2 if kind == "gcnii" else 1)
    pbytes = param_count(kind, layers, hidden, graph.features, graph.classes) * itemsize
    compute = flops_per_epoch(n, nnz, graph.features, graph.classes, layers, hidden) / kernels.flops_per_second
    bw, lat = cluster.inter_node_bytes_per_second, cluster.inter_node_latency_us / 1e6
    gp_bytes = graph_parallel_bytes(int(halo), layers, hidden, itemsize, pbytes, gpus)
    # per GPU: its share of the halo each layer, both ways; one message per peer per layer and direction
    gp_comm = (gp_bytes / gpus) / bw + 2 * layers * (gpus - 1) * lat
    gp_mem = (n / gpus + halo / gpus) * hidden * itemsize * layers * 2
    gp = Projection("graph-parallel", gp_bytes, gp_comm, compute / gpus, compute / gpus + gp_comm, gp_mem)
    pp_bytes = gnnpipe_bytes(n, gpus, width, itemsize)
    # the busiest stage sends and receives n * width both ways; one message per chunk per boundary and direction
    pp_comm = 2 * n * width * itemsize / bw + 2 * chunks * lat
    fill = (chunks + gpus - 1) / chunks
    per_stage_layers = -(-layers // gpus)
    pp_mem = 2 * n * hidden * itemsize * per_stage_layers * 2  # activations + history of its layers
    pp = Projection("gnnpipe", pp_bytes, pp_comm, compute / gpus * fill, compute / gpus * fill + pp_comm, pp_mem)
    return {
        "graph-parallel": gp,
        "gnnpipe": pp,
        "halo": halo,
        "volume_ratio": gp_bytes / pp_bytes,
        "overhead_ratio": gp_comm / pp_comm,
        "time_ratio": gp.seconds / pp.seconds,
    }
