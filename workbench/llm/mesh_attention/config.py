"""Parameters of the distributed-attention technique (Mesh-Attention vs Ring, Ulysses, USP, StarTrail).

Every parameter is declared once here; the cluster the model prices on is the shared
:class:`~workbench.cluster.ClusterSpec` (a config group: ``--cluster.inter-node-bw-gbps``), whose old flat
names (``inter_bw``, ``gpus_per_node``...) stay accepted through :attr:`MeshAttentionConfig.ALIASES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from workbench.cluster import ClusterSpec
from workbench.config import Config, group, param
from workbench.llm.mesh_attention.plan import SCHEDULES, divisors

#: real runs start one process per rank on this machine; beyond this the model carries the result
MAX_CHECK_GPUS = 16
#: caps the attention work of a real check (all four methods, fwd+bwd) to about half a minute on 2 cores:
#: the work grows like batch * seq^2 * heads * head_dim (measured: 3.4e10 took 169 s on 2 cores)
MAX_CHECK_WORK = 2**32

#: the element types, with their size in bytes (the one dtype table of the technique)
DTYPE_BYTES: Mapping[str, int] = {"float64": 8, "float32": 4, "bfloat16": 2}
#: the element types the real check runs in (bfloat16 only in the model)
CHECK_DTYPES: tuple[str, ...] = ("float32", "float64")


def tile_a_options(gpus: int) -> tuple[int, ...]:
    """The values ``tile_a`` may take with ``gpus``: 0 (automatic) or a divisor of ``gpus``."""
    return (0, *divisors(gpus))


@dataclass(frozen=True, kw_only=True)
class MeshAttentionConfig(Config):
    """Distributed attention: real check on ``gpus`` processes, or the cluster model up to 1024 GPUs."""

    #: the flat names these parameters had before the cluster became a group
    ALIASES: ClassVar[Mapping[str, str]] = {
        "gpus_per_node": "cluster.gpus_per_node",
        "intra_bw": "cluster.intra_node_bw_gbps",
        "inter_bw": "cluster.inter_node_bw_gbps",
        "intra_latency_us": "cluster.intra_node_latency_us",
        "inter_latency_us": "cluster.inter_node_latency_us",
        "gpu_tflops": "cluster.gpu_tflops",
        "gpu_memory_gb": "cluster.gpu_memory_gb",
    }

    mode: str = param(
        "check",
        choices=("check", "model"),
        label="mode",
        help="check: run all four methods for real and compare with SDPA; model: cluster model only",
    )
    gpus: int = param(4, lo=1, hi=1024, unit="GPUs", label="GPUs P", help="number of ranks P (check mode: at most 16)")
    seq: int = param(
        256,
        lo=1,
        hi=4_194_304,
        unit="tokens",
        label="sequence length S",
        help="sequence length S (any value; padded and masked)",
    )
    heads: int = param(8, lo=1, hi=256, label="heads H", help="attention heads H")
    head_dim: int = param(16, lo=1, hi=512, label="head dim D", help="head dimension D")
    batch: int = param(1, lo=1, hi=64, label="batch B", help="batch size B")
    causal: bool = param(False, label="causal mask", help="causal mask (zigzag chunk order for balance)")
    dtype: str = param(
        "float64", choices=tuple(DTYPE_BYTES), label="element type", help="element type (bfloat16 only in model mode)"
    )
    tile_a: int = param(
        0,
        lo=0,
        hi=1024,
        label="Mesh tile rows a (0 = auto)",
        help="Mesh tile rows a (a*b = P); 0 chooses automatically",
    )
    ulysses_degree: int = param(
        0,
        lo=0,
        hi=1024,
        label="USP Ulysses degree u (0 = auto)",
        help="USP Ulysses degree u (u*r = P); 0 chooses automatically",
    )
    schedule: str = param(
        "current",
        choices=SCHEDULES,
        label="Mesh tile schedule",
        help="Mesh and node-level Mesh: 'current' computes each block once its chunks are resident; "
        "'greedy-backlog' holds back ready own-row blocks to fill communication waits (our inference of the "
        "paper's greedy rule)",
    )
    cluster: ClusterSpec = group(ClusterSpec, help="the hardware the model prices on (check mode: node size only)")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="seed", help="seed of the random q, k, v (check mode)")
    timeout_s: float = param(
        300.0,
        lo=1.0,
        hi=86_400.0,
        unit="s",
        label="timeout",
        help="wall-clock limit of the real run (check mode); a stopped worker ends it here",
    )

    @property
    def dtype_bytes(self) -> int:
        """Bytes of one element of :attr:`dtype`."""
        return DTYPE_BYTES[self.dtype]

    @property
    def tile(self) -> tuple[int, int] | None:
        """The Mesh tile (a, b) asked for, or None (automatic)."""
        return (self.tile_a, self.gpus // self.tile_a) if self.tile_a else None

    def check_combination(self) -> None:
        if self.tile_a and self.gpus % self.tile_a:
            raise ValueError(
                f"tile_a={self.tile_a} does not divide gpus={self.gpus}: valid values are 0 (automatic) or a divisor of gpus"
            )
        if self.ulysses_degree and self.gpus % self.ulysses_degree:
            raise ValueError(
                f"ulysses_degree={self.ulysses_degree} does not divide gpus={self.gpus}: "
                "valid values are 0 (automatic) or a divisor of gpus"
            )
        if self.mode == "check":
            if self.gpus > MAX_CHECK_GPUS:
                raise ValueError(
                    f"gpus={self.gpus} is out of range for mode='check' (one real process per rank): valid range is "
                    f"1..{MAX_CHECK_GPUS}; use mode='model' for up to 1024"
                )
            if self.dtype not in CHECK_DTYPES:
                raise ValueError(
                    f"dtype={self.dtype!r} is only for mode='model': valid values in check mode are "
                    + ", ".join(repr(d) for d in CHECK_DTYPES)
                )
            work = self.batch * self.seq**2 * self.heads * self.head_dim
            if work > MAX_CHECK_WORK:
                raise ValueError(
                    f"batch*seq^2*heads*head_dim={work:_} is too large for mode='check': valid range is "
                    f"1..{MAX_CHECK_WORK:_} (e.g. seq <= {int((MAX_CHECK_WORK / (self.batch * self.heads * self.head_dim)) ** 0.5)} "
                    f"at these heads and head_dim); use mode='model' for paper-scale sizes"
                )
