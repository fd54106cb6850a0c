"""Parameters of GreedySnake (``workbench run greedysnake --mode check|model ...``).

``check``: the real offloaded training of a small GPT with every schedule, compared with plain in-memory
training, bytes counted against the closed-form model. ``model``: the discrete-event MODEL at paper scale
(GPT-65B / GPT-175B on A100 + NVMe), horizontal (ZeRO-Infinity) vs vertical vs vertical with the deferred
optimizer, with the LP configuration search.

The hardware defaults are an A100-80GB node with NVMe; the paper's exact testbed could not be read (only its
abstract was available: "A100"), so the bandwidths below are inferred typical values, labelled as such.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.cluster import ClusterSpec, preset
from workbench.config import Config, group, param
from workbench.llm.gpt import PAPER_SHAPES, GPTConfig

MODES = ("check", "model")
MODELS = tuple(sorted(PAPER_SHAPES))


@dataclass(frozen=True, kw_only=True)
class GreedySnakeConfig(Config):
    """One GreedySnake run: a real check (small GPT on this machine) or the paper-scale model."""

    mode: str = param("check", choices=MODES, help="check: real offloaded training; model: paper-scale MODEL")
    # ---- check mode: the small GPT and its offloaded training ------------------------------------------------
    layers: int = param(2, lo=1, hi=64, unit="layers", label="layers", help="transformer blocks (check mode)")
    hidden: int = param(32, lo=4, hi=2048, label="hidden size", help="model width (check mode)")
    heads: int = param(4, lo=1, hi=64, label="heads", help="attention heads, dividing hidden (check mode)")
    seq: int = param(16, lo=1, hi=2048, unit="tokens", label="sequence", help="tokens per sample (check mode)")
    vocab: int = param(64, lo=2, hi=65536, unit="tokens", label="vocabulary", help="vocabulary (check mode)")
    micro_batches: int = param(4, lo=1, hi=256, label="micro-batches M", help="micro-batches per iteration")
    micro_batch_size: int = param(
        2, lo=1, hi=256, unit="samples", label="micro-batch size", help="samples per micro-batch"
    )
    steps: int = param(2, lo=1, hi=1000, unit="iterations", label="steps", help="training iterations (check mode)")
    dtype: str = param("float64", choices=("float32", "float64"), label="precision", help="weights and Adam states")
    alpha: float = param(0.25, lo=0.0, hi=0.9, label="deferred fraction alpha",
                         help="fraction of every layer's optimizer step deferred into the next forward")  # fmt: skip
    layout: str = param("flextrain", choices=("flextrain", "offloaded"), label="layout",
                        help="flextrain: embedding and head resident on the device, last block fused with head and "
                        "loss (the authors' FlexTrain); offloaded: embedding and head loaded from disk as units")  # fmt: skip
    compute_dtype: str = param("same", choices=("same", "bfloat16", "float16"), label="compute precision",
                               help="compute copy: same as dtype (exact), or bf16/fp16 mixed precision with "
                               "dtype master weights (compared with a torch reference doing the same casts)")  # fmt: skip
    loss_scale: float = param(1024.0, lo=1.0, hi=2.0**24, label="loss scale",
                              help="static loss scale of float16 compute (ignored otherwise)")  # fmt: skip
    checkpoints: str = param("host", choices=("host", "ssd"), label="checkpoints on",
                             help="where activation checkpoints and activation gradients go")  # fmt: skip
    memory_budget_mb: float = param(64.0, lo=0.001, hi=1e7, unit="MB", label="device memory budget",
                                    help="device memory the scheduler may use (check mode)")  # fmt: skip
    lr: float = param(1e-3, lo=1e-8, hi=1.0, label="learning rate", help="Adam learning rate (check mode)")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="seed", help="seed of the weights and the tokens")
    sync: str = param("step", choices=("step", "write"), label="sync",
                      help="fdatasync after every write, or every written file once per step before the commit")  # fmt: skip
    workdir: str = param(
        "",
        help="folder of the offloaded state (empty: a fresh folder under the cache, removed after); a folder of an earlier run of the same configuration resumes from its commit record (its byte counts then cover only the resumed part)",
    )
    # ---- model mode: paper scale ----------------------------------------------------------------------------
    model: str = param("gpt-65b", choices=MODELS, label="model", help="paper-scale GPT (model mode)")
    gpus: int = param(1, lo=1, hi=8, unit="GPUs", label="GPUs", help="data-parallel GPUs of one node (model mode)")
    global_batch: int = param(64, lo=1, hi=65536, unit="samples", label="global batch",
                              help="samples per iteration over all GPUs (model mode)")  # fmt: skip
    model_micro_batch: int = param(4, lo=1, hi=256, unit="samples", label="paper micro-batch size",
                                   help="samples per micro-batch at paper scale (model mode)")  # fmt: skip
    adam_gelems: float = param(2.0, lo=0.001, hi=1000.0, unit="Gelem/s", label="CPU Adam rate",
                               help="CPU Adam updates per second of one node (inferred; DeepSpeed CPU-Adam class)")  # fmt: skip
    # the "a100-80gb-pcie4-nvme" preset (workbench.cluster.PRESETS, each value's source there): 150 TFLOP/s
    # effective (~48 % of the 312 peak), 80 GB, PCIe Gen4 ~25 GB/s, one Gen4 NVMe at ~6.5 / 3.5 GB/s read / write,
    # 512 GB host memory, 64 cores
    cluster: ClusterSpec = group(
        ClusterSpec,
        help="an A100-80GB node with NVMe (inferred values; the paper's testbed text was not readable)",
        **preset("a100-80gb-pcie4-nvme"),
    )

    def check_combination(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"heads={self.heads} must divide hidden={self.hidden}: valid heads are its divisors")
        if self.mode == "model" and self.global_batch % (self.gpus * self.model_micro_batch):
            raise ValueError(
                f"global_batch={self.global_batch} is not a multiple of gpus x model_micro_batch = "
                f"{self.gpus * self.model_micro_batch}: valid values are multiples of it"
            )

    def gpt(self) -> GPTConfig:
        """The small GPT of check mode."""
        return GPTConfig(layers=self.layers, hidden=self.hidden, heads=self.heads, seq=self.seq, vocab=self.vocab,
                         dtype=self.dtype, seed=self.seed)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class ViewConfig(Config):
    """The panel's controls (paper scale, MODEL): a view, not a run."""

    model: str = param("gpt-65b", choices=MODELS, label="model size", help="paper-scale GPT")
    gpus: int = param(1, lo=1, hi=8, unit="GPUs", label="GPUs", help="data-parallel GPUs of one node")
    micro_batches: int = param(16, lo=1, hi=256, label="micro-batches per GPU", help="micro-batches M per iteration")
    micro_batch: int = param(4, lo=1, hi=32, unit="samples", label="micro-batch size", help="samples per micro-batch")
    host_memory_gb: float = param(512.0, lo=64.0, hi=4096.0, unit="GB", label="host memory budget",
                                  help="DRAM for parameters, optimizer states and checkpoints")  # fmt: skip
    ssd_bw_gbps: float = param(6.5, lo=0.5, hi=64.0, unit="GB/s", label="SSD read bandwidth",
                               help="SSD read bandwidth (write = 54 % of it, as Gen4 NVMe)")  # fmt: skip
    gpu_memory_gb: float = param(80.0, lo=1.0, hi=192.0, unit="GB", label="device memory budget",
                                 help="GPU memory: must hold one layer (twice) and one micro-batch")  # fmt: skip
    pcie_bw_gbps: float = param(
        25.0, lo=4.0, hi=128.0, unit="GB/s", label="PCIe bandwidth", help="per GPU per direction"
    )
    alpha: float = param(0.25, lo=0.0, hi=0.9, label="deferred fraction alpha", help="deferred optimizer share")
