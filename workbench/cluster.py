"""One hardware model for the whole workbench: GPU FLOP/s and memory, two-level links, latency.

Every analytic model (distributed attention first, later techniques after it) prices work with the same
:class:`ClusterSpec`, so a figure that compares two techniques compares them on one machine.

The model
---------
- A cluster is a set of nodes of ``gpus_per_node`` GPUs. Rank ``r`` lives on node ``r // gpus_per_node``.
- A transfer of ``n`` bytes from rank ``src`` to rank ``dst`` costs ``latency + n / bandwidth`` seconds, with
  the NVLink pair (``intra_node_bw_gbps``, ``intra_node_latency_us``) when both ranks share a node and the
  network pair (``inter_node_bw_gbps``, ``inter_node_latency_us``) otherwise (alpha-beta / Hockney model).
- Bandwidths are *per GPU and per direction*: a GPU can send at that rate while it receives at that rate
  (links are full duplex). NVLink traffic and network traffic use separate hardware (NVSwitch vs the NIC
  behind PCIe), so a model may run one of each at the same time; two transfers on the same class of link
  share it (they are serialised).
- Compute costs ``flops / (gpu_tflops * 1e12)`` seconds: ``gpu_tflops`` is an *effective* rate (what a
  well-tuned attention kernel sustains), not the datasheet peak. ``peak_tflops`` (datasheet dense peak) and
  ``hbm_bw_gbps`` (device memory bandwidth) are there for roofline models, which apply their own utilisation
  (a technique's efficiencies and calibrations are its model's assumptions, kept in the technique, not here).

- The host side of a node (``cpu_cores``, ``host_memory_gb``, ``pcie_bw_gbps``, ``ssd_read_bw_gbps``,
  ``ssd_write_bw_gbps``) prices offloading, data loading and CPU-only clusters (graph mining: one
  "GPU" per node stands for the node's NIC).

Units: GB and GB/s are decimal (1e9 bytes), as on vendor datasheets; latencies are microseconds.

Defaults: an H800-class node (Hopper; 989 TFLOP/s dense bf16 peak, 80 GB HBM3; NVLink 400 GB/s
bidirectional = 200 GB/s per direction; one 200 Gb/s = 25 GB/s network link per GPU). This is the kind of
export-market Hopper cluster the Mesh-Attention and StarTrail authors' organisations run; the papers'
exact machines are not restated here, so treat the defaults as an assumption, not their testbed.

Presets
-------
:data:`PRESETS` names the testbeds the techniques run on (``"h800-sxm-nvlink-ib"``, ``"a100-40gb-sxm-nvlink"``,
``"a100-80gb-pcie4-nvme"``), each value with its datasheet in a comment; a technique takes its hardware by name
(``PRESETS["a100-40gb-sxm-nvlink"]``, or :func:`preset` for a config default) and varies it with
``dataclasses.replace``, never by building a hardware description of its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.config import Config, param

__all__ = [
    "ClusterSpec",
    "PRESETS",
    "preset",
    "node_of",
    "same_node",
    "link_bandwidth",
    "link_latency",
    "transfer_seconds",
]


@dataclass(frozen=True, kw_only=True)
class ClusterSpec(Config):
    """The hardware a model runs on (frozen, keyword-only, validated on construction).

    Every field has a unit and a range; a bad value raises ``ValueError`` naming the field, the value and the
    valid range, e.g. ``ClusterSpec(gpus_per_node=0)`` -> ``gpus_per_node=0 is out of range: valid range is
    1..1024 (GPUs)``. :meth:`ClusterSpec.from_dict` rejects unknown keys.

    Example::

        >>> spec = ClusterSpec(inter_node_bw_gbps=50.0)
        >>> spec.transfer_seconds(50e9, 0, 8)        # one network hop: 10 us + 1 s
        1.00001
        >>> spec.transfer_seconds(200e9, 0, 1)       # same node: 5 us + 1 s
        1.000005
    """

    # Effective attention throughput. 989 TFLOP/s is the H100/H800 SXM dense bf16 peak (NVIDIA H100 datasheet);
    # FlashAttention-2 sustains roughly 35-40 % of it on Hopper for head_dim 128 forward + backward
    # (FlashAttention-3 paper, arXiv 2407.08608, Fig. 5-6 baselines), hence ~400 TFLOP/s.
    gpu_tflops: float = param(
        400.0,
        lo=0.001,
        hi=100_000.0,
        unit="TFLOP/s",
        label="GPU compute",
        help="effective dense FLOP rate of one GPU on attention kernels",
    )
    # H100/H800 SXM dense bf16 peak without sparsity: 989 TFLOP/s (NVIDIA H100 Tensor Core GPU datasheet).
    peak_tflops: float = param(
        989.0,
        lo=0.001,
        hi=100_000.0,
        unit="TFLOP/s",
        label="GPU peak compute",
        help="datasheet dense bf16 peak of one GPU (roofline models apply their own utilisation)",
    )
    # H100/H800 SXM: 80 GB HBM3.
    gpu_memory_gb: float = param(80.0, lo=0.001, hi=100_000.0, unit="GB", label="GPU memory", help="memory of one GPU")
    # H100/H800 SXM: 3.35 TB/s HBM3 (NVIDIA H100 datasheet; the H800 has the same memory system).
    hbm_bw_gbps: float = param(
        3350.0,
        lo=0.001,
        hi=1_000_000.0,
        unit="GB/s",
        label="HBM bandwidth",
        help="device memory (HBM) bandwidth of one GPU",
    )
    gpus_per_node: int = param(
        8, lo=1, hi=1024, unit="GPUs", label="GPUs per node", help="GPUs sharing one NVLink domain"
    )
    # H800 NVLink: 400 GB/s bidirectional -> 200 GB/s per direction (H100: 450 per direction).
    intra_node_bw_gbps: float = param(
        200.0,
        lo=0.001,
        hi=100_000.0,
        unit="GB/s",
        label="NVLink bandwidth",
        help="NVLink bandwidth per GPU per direction",
    )
    # One 200 Gb/s HDR InfiniBand (or RoCE) NIC per GPU = 25 GB/s per direction.
    inter_node_bw_gbps: float = param(
        25.0,
        lo=0.001,
        hi=100_000.0,
        unit="GB/s",
        label="network bandwidth",
        help="network bandwidth per GPU per direction",
    )
    # Per-message start-up cost of a NCCL send/recv; a few microseconds on NVLink, ~10 us across IB.
    intra_node_latency_us: float = param(
        5.0,
        lo=0.0,
        hi=1_000_000.0,
        unit="us",
        label="NVLink latency",
        help="start-up latency of one message inside a node",
    )
    inter_node_latency_us: float = param(
        10.0,
        lo=0.0,
        hi=1_000_000.0,
        unit="us",
        label="network latency",
        help="start-up latency of one message between nodes",
    )
    # ---- the host side of a node (offloading, data loading, CPU-only clusters) ----------------------------
    # DGX H100: 2 x 56-core Xeon 8480C and 2 TB DDR5 per 8-GPU node.
    cpu_cores: int = param(112, lo=1, hi=100_000, unit="cores", label="CPU cores", help="CPU cores of one node")
    host_memory_gb: float = param(
        2000.0, lo=0.001, hi=1_000_000.0, unit="GB", label="host memory", help="host (CPU) memory of one node"
    )
    # PCIe Gen5 x16: 64 GB/s per direction theoretical, ~50 GB/s achieved by cudaMemcpy. (The range reaches down
    # to kB/s so that tests can force swaps on toy graphs.)
    pcie_bw_gbps: float = param(
        50.0,
        lo=1e-6,
        hi=100_000.0,
        unit="GB/s",
        label="PCIe bandwidth",
        help="host <-> GPU bandwidth per GPU per direction (PCIe)",
    )
    # A node's NVMe array: 8 x Gen4 NVMe at ~6.5 / 3.5 GB/s sequential read / write each (DGX-class storage).
    ssd_read_bw_gbps: float = param(
        50.0, lo=0.001, hi=100_000.0, unit="GB/s", label="SSD read", help="SSD read bandwidth of one node"
    )
    ssd_write_bw_gbps: float = param(
        25.0, lo=0.001, hi=100_000.0, unit="GB/s", label="SSD write", help="SSD write bandwidth of one node"
    )

    # ---- derived SI quantities -------------------------------------------------------------------------
    @property
    def flops_per_second(self) -> float:
        """Effective FLOP/s of one GPU."""
        return self.gpu_tflops * 1e12

    @property
    def peak_flops_per_second(self) -> float:
        """Datasheet peak FLOP/s of one GPU."""
        return self.peak_tflops * 1e12

    @property
    def memory_bytes(self) -> float:
        """Memory of one GPU in bytes."""
        return self.gpu_memory_gb * 1e9

    @property
    def hbm_bytes_per_second(self) -> float:
        """Device memory bandwidth of one GPU in bytes per second."""
        return self.hbm_bw_gbps * 1e9

    @property
    def host_memory_bytes(self) -> float:
        """Host memory of one node in bytes."""
        return self.host_memory_gb * 1e9

    @property
    def node_network_bytes_per_second(self) -> float:
        """Network bytes per second of a whole node (one NIC per GPU; a CPU-only node has gpus_per_node=1)."""
        return self.inter_node_bw_gbps * 1e9 * self.gpus_per_node

    @property
    def intra_node_bytes_per_second(self) -> float:
        return self.intra_node_bw_gbps * 1e9

    @property
    def inter_node_bytes_per_second(self) -> float:
        return self.inter_node_bw_gbps * 1e9

    @property
    def intra_node_latency_s(self) -> float:
        return self.intra_node_latency_us * 1e-6

    @property
    def inter_node_latency_s(self) -> float:
        return self.inter_node_latency_us * 1e-6

    # ---- pricing -----------------------------------------------------------------------------------------
    def num_nodes(self, gpus: int) -> int:
        """Nodes needed for ``gpus`` ranks (the last node may be partly used)."""
        gpus = _check_count("gpus", gpus)
        return -(-gpus // self.gpus_per_node)

    def compute_seconds(self, flops: Any) -> Any:
        """Seconds to execute ``flops`` (scalar or array) at the effective rate."""
        return (
            np.asarray(flops, dtype=np.float64) / self.flops_per_second
            if np.ndim(flops)
            else (float(flops) / self.flops_per_second)
        )

    def message_seconds(self, nbytes: Any, inter_node: Any) -> Any:
        """Seconds of one message of ``nbytes`` over NVLink (``inter_node`` False) or the network (True).

        Both arguments broadcast (numpy); use this when the node of each end is already known, e.g. from a
        tile-to-node mapping. Zero-byte messages cost nothing (no message is sent).
        """
        nbytes = np.asarray(nbytes, dtype=np.float64)
        inter = np.asarray(inter_node, dtype=bool)
        bw = np.where(inter, self.inter_node_bytes_per_second, self.intra_node_bytes_per_second)
        lat = np.where(inter, self.inter_node_latency_s, self.intra_node_latency_s)
        out = np.where(nbytes > 0, lat + nbytes / bw, 0.0)
        return float(out) if out.ndim == 0 else out

    def transfer_seconds(self, nbytes: Any, src: Any, dst: Any) -> Any:
        """Seconds to move ``nbytes`` from rank ``src`` to rank ``dst`` (numpy-broadcast); 0 when src == dst."""
        inter = np.logical_not(same_node(src, dst, self))
        t = self.message_seconds(nbytes, inter)
        local = np.asarray(src) == np.asarray(dst)
        out = np.where(local, 0.0, t)
        return float(out) if out.ndim == 0 else out


#: The published testbeds the techniques use, by name. Fields not listed take the ClusterSpec defaults.
PRESETS: dict[str, ClusterSpec] = {
    # The defaults: an H800 SXM node (Mesh-Attention, StarTrail, SRT's rollout GPU; GNNPipe's links, its testbed
    # not being readable). NVIDIA H100 Tensor Core GPU datasheet (SXM): 989 TFLOP/s dense bf16, 80 GB HBM3 at
    # 3.35 TB/s; the H800 keeps these and has NVLink at 400 GB/s bidirectional (200 per direction); one 200 Gb/s
    # InfiniBand NIC per GPU (25 GB/s); DGX H100 host side (2 x 56-core Xeon 8480C, 2 TB DDR5, PCIe Gen5).
    "h800-sxm-nvlink-ib": ClusterSpec(
        gpu_tflops=400.0,  # effective (FlashAttention-2 on Hopper, ~40 % of peak), see the field's comment
        peak_tflops=989.0,
        gpu_memory_gb=80.0,
        hbm_bw_gbps=3350.0,
        gpus_per_node=8,
        intra_node_bw_gbps=200.0,
        inter_node_bw_gbps=25.0,
        intra_node_latency_us=5.0,
        inter_node_latency_us=10.0,
        cpu_cores=112,
        host_memory_gb=2000.0,
        pcie_bw_gbps=50.0,
        ssd_read_bw_gbps=50.0,
        ssd_write_bw_gbps=25.0,
    ),
    # DawnPiper's A100 node. NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB): 312 TFLOP/s dense bf16, 40 GB HBM2
    # at 1,555 GB/s, NVLink 3 at 600 GB/s bidirectional (300 per direction), PCIe Gen4 x16 (32 GB/s per direction
    # theoretical, ~25 achieved by cudaMemcpy); DGX A100 (320 GB) datasheet: 8 GPUs, 1 TB system memory, one
    # 200 Gb/s HDR InfiniBand port per GPU (25 GB/s). Effective compute 150 TFLOP/s = 48 % of peak, a
    # Megatron-LM-like utilisation (an assumption).
    "a100-40gb-sxm-nvlink": ClusterSpec(
        gpu_tflops=150.0,
        peak_tflops=312.0,
        gpu_memory_gb=40.0,
        hbm_bw_gbps=1555.0,
        gpus_per_node=8,
        intra_node_bw_gbps=300.0,
        inter_node_bw_gbps=25.0,
        pcie_bw_gbps=25.0,
        host_memory_gb=1000.0,
    ),
    # GreedySnake's A100-80GB node with NVMe (the paper's testbed text was not readable: "A100" only). NVIDIA A100
    # datasheet (80 GB SXM): 312 TFLOP/s dense bf16, 80 GB HBM2e at 2,039 GB/s, NVLink 3 at 300 GB/s per
    # direction; PCIe Gen4 x16: 32 GB/s theoretical, ~25 achieved; one Gen4 NVMe (Samsung PM9A3 class): ~6.5 / 3.5
    # GB/s sequential read / write; host memory 512 GB and 64 cores inferred. Effective compute 150 TFLOP/s, ~48 %
    # of peak on large GEMMs (inferred).
    "a100-80gb-pcie4-nvme": ClusterSpec(
        gpu_tflops=150.0,
        peak_tflops=312.0,
        gpu_memory_gb=80.0,
        hbm_bw_gbps=2039.0,
        gpus_per_node=8,
        intra_node_bw_gbps=300.0,
        pcie_bw_gbps=25.0,
        ssd_read_bw_gbps=6.5,
        ssd_write_bw_gbps=3.5,
        host_memory_gb=512.0,
        cpu_cores=64,
    ),
}


def preset(name: str, **changes: Any) -> dict[str, Any]:
    """The fields of preset ``name`` (with ``changes``) as keyword arguments, for a config default:
    ``cluster: ClusterSpec = group(ClusterSpec, help=..., **preset("a100-40gb-sxm-nvlink"))``."""
    if name not in PRESETS:
        raise ValueError(f"preset={name!r} is unknown: valid presets are {tuple(PRESETS)}")
    fields = {f.name: getattr(PRESETS[name], f.name) for f in dataclasses.fields(ClusterSpec)}
    unknown = set(changes) - set(fields)
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not ClusterSpec fields: valid fields are {sorted(fields)}")
    return {**fields, **changes}


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r} is invalid: valid range is 1..inf (a positive integer)")
    return int(value)


def _ranks(name: str, ranks: Any) -> np.ndarray:
    arr = np.asarray(ranks)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name}={ranks!r} is invalid: ranks are non-negative integers")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name}={ranks!r} is invalid: ranks are non-negative integers (valid range 0..inf)")
    return arr


def node_of(rank: Any, cluster: ClusterSpec) -> Any:
    """Node index of ``rank`` (int or integer array): ``rank // cluster.gpus_per_node``."""
    out = _ranks("rank", rank) // cluster.gpus_per_node
    return int(out) if np.ndim(out) == 0 else out


def same_node(src: Any, dst: Any, cluster: ClusterSpec) -> Any:
    """True where ``src`` and ``dst`` share a node (numpy-broadcast)."""
    out = (_ranks("src", src) // cluster.gpus_per_node) == (_ranks("dst", dst) // cluster.gpus_per_node)
    return bool(out) if np.ndim(out) == 0 else out


def link_bandwidth(src: Any, dst: Any, cluster: ClusterSpec) -> Any:
    """Bytes per second of the link a ``src -> dst`` transfer crosses (NVLink inside a node, network across)."""
    out = np.where(
        same_node(src, dst, cluster), cluster.intra_node_bytes_per_second, cluster.inter_node_bytes_per_second
    )
    return float(out) if out.ndim == 0 else out


def link_latency(src: Any, dst: Any, cluster: ClusterSpec) -> Any:
    """Start-up seconds of one ``src -> dst`` message."""
    out = np.where(same_node(src, dst, cluster), cluster.intra_node_latency_s, cluster.inter_node_latency_s)
    return float(out) if out.ndim == 0 else out


def transfer_seconds(nbytes: Any, src: Any, dst: Any, cluster: ClusterSpec) -> Any:
    """Function form of :meth:`ClusterSpec.transfer_seconds`."""
    return cluster.transfer_seconds(nbytes, src, dst)
