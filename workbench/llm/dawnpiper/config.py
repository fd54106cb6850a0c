"""Parameters of DawnPiper (``workbench run dawnpiper --mode partition|check|model ...``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from workbench.cluster import PRESETS, ClusterSpec, preset
from workbench.config import Config, group, param
from workbench.llm.gpt import PAPER_SHAPES, GPTConfig

__all__ = ["MODES", "MODELS", "A100", "A100_PRESET", "DawnpiperConfig", "DawnpiperViewConfig"]

MODES = ("partition", "check", "model")
MODELS = ("traced", *sorted(PAPER_SHAPES, key=lambda k: float(k.split("-")[1][:-1])))
SCHEDULES = ("1f1b", "gpipe")
DTYPES = ("float64", "float32")
#: the A100 node the model prices on (workbench.cluster.PRESETS, datasheets there): 150 TFLOP/s effective, 40 GB
#: HBM2 at 1,555 GB/s, NVLink 300 GB/s and PCIe ~25 GB/s per direction, DGX A100's 1 TB of host memory for 8 GPUs
#: (125 GB per GPU for swapped tensors)
A100_PRESET = "a100-40gb-sxm-nvlink"
A100: ClusterSpec = PRESETS[A100_PRESET]


@dataclass(frozen=True, kw_only=True)
class DawnpiperConfig(Config):
    """A pipeline partition of a GPT: searched (partition), run for real (check), or carried to paper scale."""

    mode: str = param(
        "partition",
        choices=MODES,
        help="partition: every partitioner on the node graph; check: the DawnPiper partition run as a real "
        "pipeline on `stages` processes against single-process training; model: max trainable batch and "
        "throughput per partitioner at paper scale (MODEL)",
    )
    model: str = param(
        "traced",
        choices=MODELS,
        help="traced: the small GPT below, traced with torch.fx and profiled here; gpt-*: a paper-scale node "
        "graph generated from the layer shapes (MODEL; check mode needs traced)",
    )
    layers: int = param(2, lo=1, hi=64, unit="layers", help="traced GPT: transformer blocks")
    hidden: int = param(16, lo=4, hi=1024, unit="", help="traced GPT: width d")
    heads: int = param(2, lo=1, hi=64, unit="", help="traced GPT: attention heads (must divide hidden)")
    seq: int = param(8, lo=1, hi=1024, unit="tokens", help="traced GPT: sequence length")
    vocab: int = param(32, lo=2, hi=65536, unit="tokens", help="traced GPT: vocabulary")
    dtype: str = param("float64", choices=DTYPES, help="traced GPT: precision (float64: the exactness check)")
    stages: int = param(3, lo=1, hi=64, unit="processes", help="pipeline stages S (one process or GPU each)")
    micro_batches: int = param(4, lo=1, hi=1024, unit="micro-batches", help="micro-batches M per iteration")
    micro_batch: int = param(2, lo=1, hi=4096, unit="samples", help="samples per micro-batch")
    memory_gb: float = param(
        40.0,
        lo=1e-7,
        hi=100_000.0,
        unit="GB",
        label="memory budget",
        help="device memory per stage (weights, gradients, optimizer state and activations); A100: 40",
    )
    schedule: str = param("1f1b", choices=SCHEDULES, help="pipeline schedule: 1F1B (PipeDream-flush) or GPipe")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the traced GPT's weights and the data")
    timeout_s: float = param(120.0, lo=1.0, hi=86_400.0, unit="s", help="wall-clock limit of the multi-process run")
    cluster: ClusterSpec = group(
        ClusterSpec,
        help="A100 node (MODEL); PCIe prices swaps, NVLink stage links, HBM the memory-bound ops",
        **preset(A100_PRESET),
    )

    #: the HBM bandwidth was a flag of its own before it joined the cluster
    ALIASES: ClassVar[Mapping[str, str]] = {"hbm_gbps": "cluster.hbm_bw_gbps"}

    def check_combination(self) -> None:
        if self.model == "traced" and self.hidden % self.heads:
            raise ValueError(
                f"heads={self.heads} must divide hidden={self.hidden}: valid heads are the divisors of {self.hidden}"
            )
        if self.mode == "check" and self.model != "traced":
            raise ValueError(
                f"model={self.model!r} cannot run in check mode: the real pipeline runs the traced GPT, so valid "
                "model is 'traced' (paper-scale models: --mode partition or model)"
            )
        if self.mode == "model" and self.model == "traced":
            raise ValueError(
                "model='traced' has no paper-scale model: valid models for mode 'model' are "
                + ", ".join(m for m in MODELS if m != "traced")
            )
        units = 10 * self.layers + 6 if self.model == "traced" else 10 * PAPER_SHAPES[self.model].layers + 6
        if self.stages > units:
            raise ValueError(
                f"stages={self.stages} is more than the {units} nodes of the graph: valid stages are 1..{units}"
            )

    def gpt(self) -> GPTConfig:
        """The traced GPT's config."""
        return GPTConfig(
            layers=self.layers, hidden=self.hidden, heads=self.heads, seq=self.seq, vocab=self.vocab,
            ffn_mult=4, dtype=self.dtype, seed=self.seed,
        )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class DawnpiperViewConfig(Config):
    """The panel's controls: a paper-scale GPT (MODEL), stages, memory budget, micro-batches and their size."""

    model: str = param("gpt-1.3b", choices=tuple(PAPER_SHAPES), help="paper-scale GPT (node graph from its shape)")
    stages: int = param(4, lo=2, hi=16, unit="stages", help="pipeline stages S")
    memory_gb: float = param(40.0, lo=8.0, hi=80.0, unit="GB", label="memory budget", help="memory per stage")
    micro_batches: int = param(8, lo=1, hi=64, unit="micro-batches", help="micro-batches M")
    micro_batch: int = param(16, lo=1, hi=256, unit="samples", help="samples per micro-batch")
    schedule: str = param("1f1b", choices=("1f1b", "gpipe"), help="pipeline schedule")
    pcie_gbps: float = param(
        25.0, lo=1.0, hi=64.0, unit="GB/s", label="PCIe bandwidth", help="host <-> GPU, prices swaps"
    )

    def full(self) -> DawnpiperConfig:
        """The partition-mode config this view shows (the A100 cluster with the chosen PCIe bandwidth)."""
        return DawnpiperConfig(
            mode="partition", model=self.model, stages=self.stages, memory_gb=self.memory_gb,
            micro_batches=self.micro_batches, micro_batch=self.micro_batch, schedule=self.schedule,
            cluster=dataclasses.replace(A100, pcie_bw_gbps=self.pcie_gbps),
        )  # fmt: skip
