"""MODEL: SRT's rollout speed-up at the paper's setting (Qwen2.5-1.5B on 8 Hopper GPUs, PPO/GRPO/DAPO/ReTool).

speed-up = generation time without / with speculation, where generation time = sum over decode iterations of
the per-forward cost, so it factors as (target forwards without / with) x (mean cost of a plain forward / of a
verification forward). Per GPU (vLLM with tensor parallel 1, as the authors' scripts set; 8 data-parallel
replicas), each iteration costs

    t = overhead + max( (weights + KV cache read) / (HBM bandwidth x efficiency),
                        (2 x params x tokens + attention FLOPs) / (peak x MFU) )

with tokens = active sequences x (1 + draft length): a verification forward reads the weights once for all
draft tokens (why it is nearly free at small batch) but pays FLOPs for every drafted token (why long drafts
cost at large batch, DAPO's 16 x 128 responses). Each sequence emits E = (1 - a^(k+1)) / (1 - a) tokens per
forward for draft length k and per-token acceptance a (i.i.d. acceptance, the standard speculative-decoding
expectation, Leviathan et al. 2023 eq. 1). Response lengths are sampled from a long-tailed (log-normal, capped)
distribution; the batch shrinks as responses finish, so the long tail runs at small batch where speculation pays.

Sourced: the model shape (Qwen2.5-1.5B config: 28 layers, hidden 1536, 12 query / 2 KV heads of 128, 1.54 B
parameters), the workloads (paper v1 App. A Table 2: batch, responses per prompt, max in/out lengths, 8 GPUs),
Table 1's times (each workload's response-length median is calibrated on its baseline time:
:func:`calibrate_lengths`), the H800's 989 TFLOP/s dense bf16 and 3.35 TB/s HBM3 (the ``"h800-sxm-nvlink-ib"`` preset of
:data:`workbench.cluster.PRESETS`: ``peak_tflops`` and ``hbm_bw_gbps``). Assumed (labelled, :class:`Efficiency`): MFU 0.5, bandwidth efficiency 0.8, the length distribution (median
= max_out / 4, sigma 0.9), prompt = max_in / 2, the per-iteration overhead (calibrated once so the GRPO baseline
takes Table 1's 31.8 s), and every acceptance (unknown at paper scale: either measured on our CPU task, or
calibrated on ONE column and then used to predict the other three). Tool calls of ReTool are not modelled
(one long response).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.optimize

from workbench.cluster import PRESETS, ClusterSpec

__all__ = [
    "Shape",
    "Efficiency",
    "Workload",
    "Drafting",
    "QWEN25_1_5B",
    "H800",
    "EFFICIENCY",
    "WORKLOADS",
    "TABLE1_GEN_S",
    "generation",
    "speedup",
    "tokens_per_forward",
    "calibrate_overhead",
    "calibrate_acceptance",
    "calibrate_lengths",
    "calibrated_workloads",
]

LABEL = "MODEL"


@dataclass(frozen=True)
class Shape:
    params: float
    layers: int
    q_heads: int
    kv_heads: int
    head_dim: int
    bytes_per_value: int = 2  # bf16

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_per_value

    @property
    def attention_flops_per_token_per_context(self) -> int:
        return 4 * self.layers * self.q_heads * self.head_dim  # q.k and p.v, 2 FLOPs per multiply-add


#: Qwen2.5-1.5B (its Hugging Face config.json: 28 layers, 12 heads, 2 KV heads, hidden 1536; 1.54 B parameters)
QWEN25_1_5B = Shape(params=1.54e9, layers=28, q_heads=12, kv_heads=2, head_dim=128)


#: the rollout GPU (its peak dense bf16 FLOP/s and HBM bandwidth): an H800 SXM
H800: ClusterSpec = PRESETS["h800-sxm-nvlink-ib"]


@dataclass(frozen=True)
class Efficiency:
    """What the rollout engine achieves on one GPU (model assumptions, not hardware): its share of the peak FLOP/s
    and of the HBM bandwidth, and its per-iteration overhead."""

    mfu: float = 0.5  # assumed
    bw_eff: float = 0.8  # assumed
    overhead_ms: float = 5.0  # scheduler/sampling/launch per iteration; calibrated by calibrate_overhead


EFFICIENCY = Efficiency()


@dataclass(frozen=True)
class Workload:
    """One RL workload: ``prompts`` x ``n`` responses per step on ``gpus`` GPUs, prompts <= ``max_in`` and
    responses <= ``max_out`` tokens; response lengths are log-normal with median ``median_frac x max_out`` (an
    assumption: :func:`calibrate_lengths` sets it from a published baseline time)."""

    name: str
    prompts: int
    n: int
    max_in: int
    max_out: int
    gpus: int = 8
    median_frac: float = 0.25

    @property
    def seqs_per_gpu(self) -> int:
        return math.ceil(self.prompts * self.n / self.gpus)


#: paper v1 App. A Table 2 (batch size, responses per prompt, max prompt / response lengths); 8 GPUs
WORKLOADS = {
    "ppo": Workload("ppo", 512, 1, 512, 4096),
    "grpo": Workload("grpo", 128, 5, 512, 4096),
    "dapo": Workload("dapo", 128, 16, 2048, 8192),
    "retool": Workload("retool", 512, 1, 2048, 16384),
}

#: paper v1 Table 1, generation seconds per step (no run-ahead)
TABLE1_GEN_S = {
    "baseline": {"ppo": 31.5, "grpo": 31.8, "dapo": 44.1, "retool": 49.0},
    "ngram": {"ppo": 31.4, "grpo": 31.1, "dapo": 46.0, "retool": 45.0},
    "suffix": {"ppo": 18.4, "grpo": 19.7, "dapo": 62.5, "retool": 38.8},
    "srt": {"ppo": 15.2, "grpo": 15.4, "dapo": 31.5, "retool": 28.7},
}


@dataclass(frozen=True)
class Drafting:
    """Draft length k per forward and per-token acceptance a (k = 0: plain decoding)."""

    k: int = 0
    acceptance: float = 0.0


def tokens_per_forward(d: Drafting) -> float:
    """E = 1 + a + a^2 + ... + a^k: tokens a sequence emits per verification forward."""
    a = min(max(d.acceptance, 0.0), 1.0)
    return float(d.k + 1) if a >= 1.0 else (1 - a ** (d.k + 1)) / (1 - a)


def _lengths(w: Workload, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.lognormal(mean=math.log(w.max_out * w.median_frac), sigma=0.9, size=w.seqs_per_gpu)
    return np.clip(np.round(raw), 16, w.max_out)


def generation(w: Workload, d: Drafting, *, shape: Shape = QWEN25_1_5B, eff: Efficiency = EFFICIENCY,
               cluster: ClusterSpec = H800, seed: int = 0) -> dict[str, float]:  # fmt: skip
    """MODEL generation time of one rollout step on one GPU of ``cluster`` (its ``peak_tflops`` and
    ``hbm_bw_gbps`` at ``eff``'s shares): seconds, iterations, mean cost per iteration."""
    lengths = _lengths(w, seed)  # (n,) response tokens
    e = tokens_per_forward(d)
    iters = np.ceil(lengths / e).astype(int)  # forwards each sequence needs
    prompt = w.max_in / 2
    n_iter = int(iters.max())
    j = np.arange(n_iter)[:, None]  # (iterations, 1)
    active = iters[None, :] > j  # (iterations, seqs)
    done = np.minimum(lengths[None, :], j * e)  # tokens emitted before iteration j
    context = np.where(active, prompt + done, 0.0).sum(1)  # summed context length of the active sequences
    n_active = active.sum(1)
    k_eff = np.minimum(d.k, np.maximum(lengths[None, :] - done - 1, 0))  # drafts stop at the response's end
    tokens = np.where(active, 1 + k_eff, 0).sum(1)
    bytes_ = shape.params * shape.bytes_per_value + context * shape.kv_bytes_per_token
    flops = 2 * shape.params * tokens + shape.attention_flops_per_token_per_context * context * (
        tokens / np.maximum(n_active, 1)
    )
    t = eff.overhead_ms * 1e-3 + np.maximum(
        bytes_ / (cluster.hbm_bw_gbps * 1e9 * eff.bw_eff), flops / (cluster.peak_tflops * 1e12 * eff.mfu)
    )
    return {"seconds": float(t.sum()), "iterations": n_iter, "forwards": float(iters.sum()),
            "cost_per_iteration_s": float(t.mean()), "tokens_per_forward": e}  # fmt: skip


def speedup(w: Workload, d: Drafting, **kw) -> dict[str, float]:
    """Generation speed-up over plain decoding, and its two factors (iterations ratio x per-iteration cost ratio)."""
    base = generation(w, Drafting(), **kw)
    spec = generation(w, d, **kw)
    return {
        "speedup": base["seconds"] / spec["seconds"],
        "iterations_ratio": base["iterations"] / spec["iterations"],
        "cost_ratio": base["cost_per_iteration_s"] / spec["cost_per_iteration_s"],
        "baseline_s": base["seconds"],
        "spec_s": spec["seconds"],
    }


def calibrate_overhead(target_s: float = TABLE1_GEN_S["baseline"]["grpo"], w: Workload = WORKLOADS["grpo"],
                       eff: Efficiency = EFFICIENCY, cluster: ClusterSpec = H800) -> Efficiency:  # fmt: skip
    """The per-iteration overhead that makes plain decoding of ``w`` take ``target_s`` (Table 1's GRPO baseline)."""
    f = lambda ms: generation(w, Drafting(), eff=replace(eff, overhead_ms=ms), cluster=cluster)["seconds"] - target_s  # noqa: E731
    if f(0.0) > 0:
        return replace(eff, overhead_ms=0.0)
    return replace(eff, overhead_ms=float(scipy.optimize.brentq(f, 0.0, 100.0, xtol=1e-6)))


def calibrate_acceptance(target_speedup: float, w: Workload, k: int, eff: Efficiency,
                         cluster: ClusterSpec = H800) -> float | None:  # fmt: skip
    """The per-token acceptance a for which the model gives ``target_speedup`` with draft length k (None if none)."""
    f = lambda a: speedup(w, Drafting(k, a), eff=eff, cluster=cluster)["speedup"] - target_speedup  # noqa: E731
    lo, hi = f(0.0), f(0.999)
    if lo > 0 or hi < 0:
        return None
    return float(scipy.optimize.brentq(f, 0.0, 0.999, xtol=1e-6))


def calibrate_lengths(w: Workload, target_s: float, eff: Efficiency, cluster: ClusterSpec = H800) -> Workload:
    """``w`` with the response-length median (``median_frac``, in 0.005 .. 0.5 of ``max_out``) for which plain
    decoding takes ``target_s`` (a Table 1 baseline); ValueError naming the workload when no median in range does."""

    def f(frac: float) -> float:
        return generation(replace(w, median_frac=frac), Drafting(), eff=eff, cluster=cluster)["seconds"] - target_s

    lo, hi = 0.005, 0.5
    if f(lo) > 0 or f(hi) < 0:
        raise ValueError(f"workload={w.name}: no response-length median in {lo}..{hi} x max_out gives {target_s} s")
    return replace(w, median_frac=float(scipy.optimize.brentq(f, lo, hi, xtol=1e-6)))


def calibrated_workloads(eff: Efficiency, cluster: ClusterSpec = H800) -> dict[str, Workload]:
    """Every workload of :data:`WORKLOADS` with its length median calibrated on Table 1's baseline time (GRPO keeps
    max_out / 4: its baseline calibrates the per-iteration overhead)."""
    return {
        name: w if name == "grpo" else calibrate_lengths(w, TABLE1_GEN_S["baseline"][name], eff, cluster)
        for name, w in WORKLOADS.items()
    }
