"""Parameters of CFP (``workbench run cfp ...``): the graph, the mesh, the cluster, the memory limit."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.cluster import ClusterSpec
from workbench.config import Config, group, param
from workbench.llm.cfp.graph import PAPER_MODELS
from workbench.llm.cfp.sharding import Mesh, parse_mesh

MODELS = ("custom", *PAPER_MODELS)
MODES = ("search", "check")
DTYPES = ("auto", "bfloat16", "float32", "float64")
DTYPE_BYTES = {"bfloat16": 2, "float32": 4, "float64": 8}
#: the depth of model='custom' when layers=0
CUSTOM_LAYERS = 2
#: check mode starts one process per device
MAX_CHECK_GPUS = 8
#: check mode: batch * seq * hidden * layers above this would take minutes on a laptop's CPU
MAX_CHECK_WORK = 2_000_000


@dataclass(frozen=True, kw_only=True)
class CfpConfig(Config):
    """Search a parallel plan for a GPT-family graph on a device mesh (search), or run it for real (check)."""

    mode: str = param(
        "search",
        choices=MODES,
        help="search: CFP's DP beside brute force, the ILP and baselines (cost model); check: also run plans "
        "for real on gloo processes and compare with the unsharded model",
    )
    model: str = param(
        "custom",
        choices=MODELS,
        label="model",
        help="custom (layers/hidden/heads/seq below) or a paper-scale shape (GPT-3 1.3B/6.7B, LLaMA-7B, MoE)",
    )
    layers: int = param(
        0,
        lo=0,
        hi=256,
        unit="layers",
        label="layers",
        help=f"transformer layers (0: a paper model's own depth; {CUSTOM_LAYERS} for model='custom')",
    )
    hidden: int = param(16, lo=2, hi=65536, label="hidden d", help="hidden size (custom model)")
    heads: int = param(4, lo=1, hi=256, label="heads", help="attention heads (custom model; divides hidden)")
    seq: int = param(8, lo=1, hi=65536, unit="tokens", label="sequence", help="sequence length (custom model)")
    ffn_mult: int = param(4, lo=1, hi=16, unit="x", label="MLP width", help="MLP width / hidden (custom model)")
    batch: int = param(4, lo=1, hi=65536, unit="sequences", label="batch", help="global batch in sequences")
    gpus: int = param(
        0, lo=0, hi=1024, unit="GPUs", label="GPUs", help="devices (0: the mesh's; check mode: processes, <= 8)"
    )
    mesh: str = param("2x2", label="mesh", help="logical device mesh A or AxB; its product must equal gpus (if given)")
    memory_gb: float = param(
        0.0, lo=0.0, hi=100_000.0, unit="GB", label="memory limit", help="per-device limit; 0: the cluster's GPU memory"
    )
    dtype: str = param(
        "auto",
        choices=DTYPES,
        label="precision",
        help="element type priced and run; auto: bfloat16 in search mode, float64 in check mode (which runs "
        "float32 or float64)",
    )
    brute_force_limit: int = param(
        200_000, lo=0, hi=10_000_000, label="brute-force limit", help="run brute force when the space is at most this"
    )
    ilp: bool = param(True, label="ILP", help="solve the Alpa-style ILP over per-operator strategies too")
    ilp_layers: int = param(
        4, lo=0, hi=256, unit="layers", label="ILP layers", help="layers the ILP sees (0: all); its plan is tiled"
    )
    ilp_time_limit_s: float = param(60.0, lo=0.1, hi=86_400.0, unit="s", help="time limit of one ILP solve")
    cluster: ClusterSpec = group(ClusterSpec, help="the hardware the cost model prices on")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="seed", help="seed of weights and inputs (check mode)")
    timeout_s: float = param(
        120.0, lo=1.0, hi=86_400.0, unit="s", label="timeout", help="wall-clock limit of each real run (check mode)"
    )

    def check_combination(self) -> None:
        # the defaults resolve here (as the base class normalises every field): gpus=0 is the mesh's device
        # count, layers=0 a custom model's default depth (a paper model's own depth is read from its shape)
        if self.gpus == 0:
            object.__setattr__(self, "gpus", parse_mesh(self.mesh).size)
        parse_mesh(self.mesh, self.gpus)
        if self.model == "custom":
            if self.layers == 0:
                object.__setattr__(self, "layers", CUSTOM_LAYERS)
            if self.hidden % self.heads:
                raise ValueError(
                    f"heads={self.heads} must divide hidden={self.hidden}: valid heads are the divisors of {self.hidden}"
                )
        if self.mode == "check":
            if self.model != "custom":
                raise ValueError(f"model={self.model!r} is only for mode='search': check mode runs model='custom'")
            if self.gpus > MAX_CHECK_GPUS:
                raise ValueError(
                    f"gpus={self.gpus} is out of range for mode='check' (one process per device): valid range is "
                    f"1..{MAX_CHECK_GPUS}"
                )
            if self.dtype == "bfloat16":
                raise ValueError("dtype='bfloat16' is only for mode='search': check mode runs float32 or float64")
            work = self.batch * self.seq * self.hidden * self.layers * self.ffn_mult
            if work > MAX_CHECK_WORK:
                raise ValueError(
                    f"batch*seq*hidden*layers*ffn_mult={work:_} is too large for mode='check': valid range is "
                    f"1..{MAX_CHECK_WORK:_}"
                )

    @property
    def mesh_shape(self) -> Mesh:
        return parse_mesh(self.mesh, self.gpus)

    @property
    def resolved_dtype(self) -> str:
        """The element type ``auto`` stands for in this mode."""
        if self.dtype != "auto":
            return self.dtype
        return "float64" if self.mode == "check" else "bfloat16"

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.resolved_dtype]

    @property
    def memory_limit_bytes(self) -> float:
        return (self.memory_gb or self.cluster.gpu_memory_gb) * 1e9
