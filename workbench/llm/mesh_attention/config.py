"""Parameters of the distributed-attention technique (Mesh-Attention vs Ring, Ulysses, USP, StarTrail)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

#: real runs start one process per rank on this machine; beyond this the model carries the result
MAX_CHECK_GPUS = 16
#: caps the attention work of a real check (all four methods, fwd+bwd) to about half a minute on 2 cores:
#: the work grows like batch * seq^2 * heads * head_dim (measured: 3.4e10 took 169 s on 2 cores)
MAX_CHECK_WORK = 2**32

DTYPE_BYTES = {"float64": 8, "float32": 4, "bfloat16": 2}


@dataclass(frozen=True, kw_only=True)
class MeshAttentionConfig(Config):
    """Distributed attention: real check on ``gpus`` processes, or the cluster model up to 1024 GPUs."""

    mode: str = param("check", choices=("check", "model"),
                      help="check: run all four methods for real and compare with SDPA; model: cluster model only")
    gpus: int = param(4, lo=1, hi=1024, unit="GPUs", help="number of ranks P (check mode: at most 16)")
    seq: int = param(256, lo=1, hi=4_194_304, unit="tokens", help="sequence length S (any value; padded and masked)")
    heads: int = param(8, lo=1, hi=256, help="attention heads H")
    head_dim: int = param(16, lo=1, hi=512, help="head dimension D")
    batch: int = param(1, lo=1, hi=64, help="batch size B")
    causal: bool = param(False, help="causal mask (zigzag chunk order for balance)")
    dtype: str = param("float64", choices=("float64", "float32", "bfloat16"),
                       help="element type (bfloat16 only in model mode)")
    tile_a: int = param(0, lo=0, hi=1024, help="Mesh tile rows a (a*b = P); 0 chooses automatically")
    ulysses_degree: int = param(0, lo=0, hi=1024, help="USP Ulysses degree u (u*r = P); 0 chooses automatically")
    gpus_per_node: int = param(8, lo=1, hi=64, unit="GPUs", help="GPUs per node (topology-aware mapping)")
    intra_bw: float = param(200.0, lo=0.1, hi=5000.0, unit="GB/s", help="intra-node bandwidth per GPU (NVLink)")
    inter_bw: float = param(25.0, lo=0.01, hi=1000.0, unit="GB/s", help="inter-node bandwidth per GPU (IB)")
    intra_latency_us: float = param(5.0, lo=0.0, hi=1000.0, unit="us", help="start-up latency of a message inside a node")
    inter_latency_us: float = param(10.0, lo=0.0, hi=1000.0, unit="us", help="start-up latency of a message between nodes")
    gpu_tflops: float = param(400.0, lo=0.1, hi=10000.0, unit="TFLOP/s", help="sustained attention FLOP/s per GPU")
    gpu_memory_gb: float = param(80.0, lo=0.1, hi=10000.0, unit="GB", help="memory per GPU (for the memory plot)")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the random q, k, v (check mode)")

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
            if self.dtype == "bfloat16":
                raise ValueError("dtype='bfloat16' is only for mode='model': valid values in check mode are 'float32', 'float64'")
            work = self.batch * self.seq**2 * self.heads * self.head_dim
            if work > MAX_CHECK_WORK:
                raise ValueError(
                    f"batch*seq^2*heads*head_dim={work:_} is too large for mode='check': valid range is "
                    f"1..{MAX_CHECK_WORK:_} (e.g. seq <= {int((MAX_CHECK_WORK / (self.batch * self.heads * self.head_dim)) ** 0.5)} "
                    f"at these heads and head_dim); use mode='model' for paper-scale sizes"
                )
