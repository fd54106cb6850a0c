"""Parameters of SRT (``workbench run srt ...``): the policy and task, the GRPO run, the rollout sampler, the draft
budget and the tree cache. Defaults follow the authors' SRTSuffixConfig where one exists (draft budget 24 tokens,
spec factor 1.0, min token probability 0.1, max tree depth 24) and the paper's rollout temperature 1.0."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

MODES = ("check", "model")
SCORINGS = ("authors", "paper")

__all__ = ["MODES", "SCORINGS", "SrtConfig", "SrtViewConfig"]


@dataclass(frozen=True, kw_only=True)
class SrtConfig(Config):
    """One SRT run: ``check`` trains a small policy with GRPO, replays and re-runs its rollouts with SRT and the
    baselines (lossless checks, acceptance, forwards, wall clock); ``model`` carries it to the paper's setting."""

    mode: str = param("check", choices=MODES, help="check: real runs on this CPU; model: paper-scale MODEL only")
    # ---- task and policy
    prompts: int = param(8, lo=1, hi=512, unit="prompts", help="prompts in the training set (one epoch)")
    batch_prompts: int = param(4, lo=1, hi=512, unit="prompts", label="prompts per step", help="prompts per GRPO step")
    group: int = param(4, lo=1, hi=64, unit="responses", label="group size G", help="responses per prompt (GRPO group)")
    steps: int = param(8, lo=1, hi=1000, unit="steps", label="GRPO steps", help="GRPO training steps")
    layers: int = param(2, lo=1, hi=12, unit="layers", help="policy transformer blocks")
    hidden: int = param(64, lo=8, hi=1024, label="hidden size", help="policy width (multiple of heads)")
    heads: int = param(4, lo=1, hi=16, help="policy attention heads")
    sft_steps: int = param(80, lo=0, hi=10_000, unit="steps", label="SFT steps", help="teacher-forced warm-up steps")
    lr: float = param(1e-3, lo=1e-7, hi=1.0, label="learning rate", help="GRPO Adam learning rate")
    dtype: str = param("float64", choices=("float32", "float64"), help="policy precision (float64: exact checks)")
    # ---- sampler
    temperature: float = param(1.0, lo=0.0, hi=10.0, help="rollout temperature (0 = greedy; the paper: 1.0)")
    top_p: float = param(1.0, lo=0.001, hi=1.0, label="top-p", help="nucleus mass kept")
    top_k: int = param(0, lo=0, hi=1000, label="top-k", help="most likely tokens kept (0 = all)")
    # ---- draft budget and cache
    draft_budget: int = param(
        24, lo=1, hi=256, unit="tokens", label="draft budget", help="max draft tokens per forward"
    )
    spec_factor: float = param(
        1.0, lo=0.05, hi=64.0, unit="x", label="spec factor", help="draft <= factor x match length"
    )
    min_prob: float = param(
        0.1, lo=0.0, hi=1.0, label="min token prob", help="stop drafting below this path probability"
    )
    max_depth: int = param(24, lo=1, hi=256, unit="tokens", label="tree depth", help="suffix tree depth / match window")
    history: int = param(4, lo=0, hi=1000, unit="epochs", label="history depth", help="past epochs of rollouts kept")
    max_sequences: int = param(256, lo=1, hi=1_000_000, label="max sequences", help="bound per prompt tree (FIFO)")
    tree_width: int = param(2, lo=1, hi=16, label="tree width", help="children per node of the srt-tree draft")
    scoring: str = param(
        "authors",
        choices=SCORINGS,
        help="child score: authors = count / parent's count (their code); paper = / siblings",
    )
    runahead: int = param(
        0, lo=0, hi=64, unit="responses", label="run-ahead", help="cache-only responses per upcoming prompt"
    )
    online: bool = param(True, label="online updates", help="insert running rollouts' tokens as they are produced")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of weights, prompts and sampling")

    def check_combination(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"heads={self.heads} must divide hidden={self.hidden}: valid heads are its divisors")
        if self.batch_prompts > self.prompts:
            raise ValueError(
                f"batch_prompts={self.batch_prompts} is out of range: valid range is 1..prompts={self.prompts}"
            )


@dataclass(frozen=True, kw_only=True)
class SrtViewConfig(Config):
    """What the panel moves (the issue's four controls); the rest is the runner's defaults, made small."""

    history: int = param(4, lo=0, hi=8, unit="epochs", label="history depth", help="past epochs of rollouts kept")
    group: int = param(4, choices=(1, 2, 4, 8), label="group size G", help="responses per prompt")
    temperature: float = param(1.0, lo=0.0, hi=2.0, label="temperature", help="rollout temperature (0 = greedy)")
    draft_budget: int = param(16, lo=1, hi=48, unit="tokens", label="draft budget", help="max draft tokens per forward")
    # the run behind the view (fixed in the panel, set by a notebook: SrtPanel(sft_steps=20, ...))
    prompts: int = param(4, lo=1, hi=64, unit="prompts", help="prompts in the training set")
    batch_prompts: int = param(2, lo=1, hi=64, unit="prompts", help="prompts per GRPO step")
    steps: int = param(6, lo=1, hi=100, unit="steps", help="GRPO steps")
    sft_steps: int = param(80, lo=0, hi=10_000, unit="steps", help="policy warm-up steps")
    layers: int = param(2, lo=1, hi=12, help="policy blocks")
    hidden: int = param(64, lo=8, hi=1024, help="policy width")

    def check_combination(self) -> None:
        if self.batch_prompts > self.prompts:
            raise ValueError(
                f"batch_prompts={self.batch_prompts} is out of range: valid range is 1..prompts={self.prompts}"
            )
