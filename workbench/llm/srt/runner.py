"""Headless runner of SRT: ``workbench run srt --mode check --json`` (real runs here) or ``--mode model``
(paper-scale MODEL beside Table 1).

check: trains the policy with GRPO (plain batched rollouts), trains it again with real SRT rollouts (identical
batches, rewards and losses), replays the trajectory through SRT and the baselines (accepted tokens per forward,
forwards saved, the history curve), times real rollouts of the next step per engine with a KV cache on this CPU
(token-identical to plain decoding, sampled and greedy) and runs the chi-square tests of the verification rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.llm.srt import experiment
from workbench.llm.srt.config import SrtConfig
from workbench.registry import Technique
from workbench.results import Result, fmt


@dataclass(frozen=True, kw_only=True)
class SrtResult(Result):
    """What ``workbench run srt --json`` prints. The issue's keys: greedy_identical, sampling_chi2_pvalue (SRT's
    chain; the tree draft's p in chi2_pvalues), accepted_per_forward, forwards_saved, speedup_wallclock, baselines
    (per drafter: accepted_per_forward, forwards_saved, speedup_wallclock, tokens_identical, seconds drafting and
    verifying). Extra: batched_identical (SRT and SRT-tree verified in one batched forward per round give plain
    decoding's tokens, sampled and greedy), sampling_identical (fixed uniforms: every engine's tokens equal plain decoding's, and the
    GRPO batches with SRT rollouts equal those with plain ones), logprob_max_abs_diff, replay_equals_real (replayed
    forward counts == the real SRT run's), forwards saved on the longest quarter of responses vs the rest,
    tokens/s, the history curve, reward and loss curves with and without SRT, and in model mode the MODEL rows."""

    technique: str = "srt"
    mode: str
    greedy_identical: bool | None = None
    batched_identical: bool | None = None
    sampling_identical: bool | None = None
    sampling_chi2_pvalue: float | None = None
    chi2_pvalues: dict[str, float] | None = None
    logprob_max_abs_diff: float | None = None
    accepted_per_forward: float | None = None
    forwards_saved: float | None = None
    forwards_saved_long_tail: float | None = None
    forwards_saved_short: float | None = None
    replay_equals_real: bool | None = None
    speedup_wallclock: float | None = None
    plain_tokens_per_s: float | None = None
    srt_tokens_per_s: float | None = None
    baselines: dict[str, dict[str, Any]] | None = None
    history_curve: dict[str, list[float]] | None = None
    rewards: dict[str, list[float]] | None = None
    losses: dict[str, list[float]] | None = None
    model: dict[str, Any] | None = None


def run(config: SrtConfig) -> SrtResult:
    """``check``: the real runs (seconds at the defaults); ``model``: the paper-scale MODEL only."""
    if config.mode == "model":
        return SrtResult(mode="model", model=experiment.paper_model())
    return SrtResult(mode="check", **experiment.check(config))


def format_table(result: dict[str, Any]) -> str:
    """A short text report."""
    if result["mode"] == "model":
        m = result["model"]
        lines = [f"srt MODEL (Qwen2.5-1.5B, 8 GPUs; acceptance calibrated on GRPO, k={m['k']}):",
                 f"  {'workload':8} {'paper SRT':>10} {'model SRT':>10} {'paper Suffix':>13} {'model Suffix':>13}"]  # fmt: skip
        for r in m["rows"]:
            lines.append(f"  {r['workload']:8} {fmt(r['paper_srt']):>10} {fmt(r['model_srt']):>10} "
                         f"{fmt(r['paper_suffix']):>13} {fmt(r['model_suffix']):>13}")  # fmt: skip
        return "\n".join(lines)
    lines = [
        f"srt check: greedy identical {result['greedy_identical']}, sampled identical {result['sampling_identical']}, "
        f"batched identical {result['batched_identical']}, "
        f"chi-square p {fmt(result['sampling_chi2_pvalue'])}, max |logprob diff| {fmt(result['logprob_max_abs_diff'])}",
        f"  accepted tokens / forward {fmt(result['accepted_per_forward'])}, forwards saved "
        f"{result['forwards_saved']:.1%} (long tail {result['forwards_saved_long_tail']:.1%}), wall-clock speed-up "
        f"{fmt(result['speedup_wallclock'])}x ({fmt(result['plain_tokens_per_s'])} -> {fmt(result['srt_tokens_per_s'])} tok/s)",
    ]
    for name, b in result["baselines"].items():
        lines.append(f"  {name:14} accepted/forward {fmt(b['accepted_per_forward']):>6}  saved {b['forwards_saved']:.1%}"
                     f"  speed-up {fmt(b['speedup_wallclock'])}x  identical {b['tokens_identical']}")  # fmt: skip
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="srt",
    config=SrtConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.srt:SrtPanel",
    notebook="notebooks/llm/srt.ipynb",
    smoke={"prompts": 4, "batch_prompts": 2, "group": 2, "steps": 2, "sft_steps": 20},
    processes=False,
)
