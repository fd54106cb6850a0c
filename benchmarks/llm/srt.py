"""SRT vs plain decoding: rollout tokens/s of the same requests on the same policy with a KV cache, one process.

The peer is plain decoding (one forward per token, the same KV-cached engine); the baselines are the global suffix
tree (ArcticInference/vLLM ``suffix`` style) and prompt lookup (vLLM ``ngram``). The policy is the GRPO-trained
small GPT of ``workbench.llm.srt.study``; every drafter's cache first replays the training trajectory (untimed), then
the next step's rollouts are timed (``study.wallclock``). Engines alternate order round by round; each side's time
is the median over rounds and the ratio is the median of per-round ratios (plain / engine: > 1 = faster than plain).
All engines emit the same tokens (checked), so tokens/s compares like with like.
"""

from __future__ import annotations

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, median
from workbench.llm.srt import study
from workbench.llm.srt.config import SrtConfig

ENGINES = ("none", *study.BASELINES)


def run(*, quick: bool) -> Section:
    cfg = (SrtConfig(prompts=4, batch_prompts=2, group=2, steps=2, sft_steps=20, layers=1, hidden=32) if quick
           else SrtConfig(steps=8, group=8))  # fmt: skip
    rounds = 1 if quick else 5
    times: dict[str, list[float]] = {e: [] for e in ENGINES}
    tokens: dict[str, int] = {}
    same = True
    for r in range(rounds):
        order = ENGINES if r % 2 == 0 else ENGINES[::-1]
        runs = {e: study.wallclock(cfg, engines=(e,))[e] for e in order}
        for e in ENGINES:
            times[e].append(runs[e].seconds)
            tokens[e] = runs[e].stats.tokens
            same &= runs[e].responses == runs["none"].responses
    ratios = {e: median([p / t for p, t in zip(times["none"], times[e], strict=True)]) for e in ENGINES}
    apf = {e: study.replay(cfg, e).accepted_per_forward if e != "none" else 1.0 for e in ENGINES}
    rows = tuple(
        (
            e if e != "none" else "plain decoding",
            fmt_ms(median(times[e])),
            f"{tokens[e] / median(times[e]):.0f}",
            f"{apf[e]:.2f}",
            fmt_ratio(ratios[e]),
        )  # fmt: skip
        for e in ENGINES
    )
    table = Table(("engine", "rollout ms", "tokens/s", "tokens per forward (replay)", "speed-up vs plain"), rows,
                  caption=f"{cfg.batch_prompts} prompts x G={cfg.group}, policy {cfg.layers}x{cfg.hidden}, "
                          f"T={cfg.temperature}, budget {cfg.draft_budget}; {rounds} round(s); tokens identical: {same}")  # fmt: skip
    return Section(
        title="SRT: speculative rollouts vs plain decoding (CPU, KV cache)",
        intro=__doc__.split("\n\n")[0],
        tables=(table,),
        summary=(("SRT rollout speed-up vs plain", f"{ratios['srt']:.2f}x"),),
        data={
            "times": times,
            "ratios": ratios,
            "tokens_identical": same,
            "claims": {"srt.rollout_speedup": ratios["srt"]},
        },
    )
