"""SRT vs plain decoding: rollout wall clock of the same requests on the same policy with a KV cache, one process.

Batched (the claim's figure): SRT with batched verification (every active rollout's draft verified in one forward
of the GPT, padded per-sequence tree masks, finished rollouts leave the batch) against batched plain decoding (one
forward per round for every active rollout, finished rows dropped: the paper's vLLM baseline), at 16, 64 and 256
rollouts (prompts x G=8) of the SFT policy; the drafter's per-prompt trees hold the previous epoch's responses to
the same prompts and are updated online. The two sides alternate order repeat by repeat (A, B, B, A, ...); the
ratio is the median of per-repeat ratios (plain / SRT: > 1 = SRT faster). Both emit the same tokens (checked).

Batch 1 (shown for reference, weaker baseline): every engine verifies one sequence per forward and is compared
with batch-1 plain decoding; batched plain decoding is several times faster than that peer, so these ratios are
not the claim.
"""

from __future__ import annotations

import dataclasses

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, median
from workbench.llm.srt import comparison, experiment
from workbench.llm.srt.config import SrtConfig

ENGINES = ("none", *experiment.BASELINES)


def batched(*, quick: bool) -> Section:
    """SRT-batched vs plain-batched at 16, 64 and 256 rollouts (quick: 16 on a tiny policy, one repeat)."""
    cfg = SrtConfig(sft_steps=20, layers=1, hidden=32) if quick else SrtConfig()
    sizes, repeats = ((16,), 1) if quick else ((16, 64, 256), 5)
    points = comparison.batched_comparison(cfg, sizes, repeats=repeats)
    rows = []
    for n, p in points.items():
        rows.append((
            str(n), fmt_ms(median(p.plain_s)), fmt_ms(median(p.srt_s)), fmt_ms(median(p.draft_s)),
            f"{p.tokens / p.plain_forwards:.1f}", f"{p.tokens_per_forward:.1f}", f"{p.tokens_per_step:.2f}",
            f"{p.tokens / p.steps_paper:.2f}", f"{1 - p.real / p.fed:.0%}", fmt_ratio(p.speedup),
            fmt_ratio(p.speedup_verify_only), str(p.identical),
        ))  # fmt: skip
    table = Table(
        ("rollouts", "plain-batched ms", "SRT-batched ms", "of it drafting ms", "tokens / forward plain",
         "tokens / forward SRT", "tokens / step (authors' scoring)", "tokens / step (paper's scoring)",
         "padding share", "speed-up", "speed-up without drafting", "tokens identical"),
        tuple(rows),
        caption=f"policy {cfg.layers}x{cfg.hidden} ({cfg.dtype}), T={cfg.temperature}, draft budget {cfg.draft_budget}, "
        f"G=8, history 1 epoch + online; {repeats} interleaved repeat(s), medians",
    )  # fmt: skip
    ratios = {n: p.speedup for n, p in points.items()}
    claims = {f"srt.batched_speedup_{n}": r for n, r in ratios.items()}
    return Section(
        title="SRT: batched speculative verification vs batched plain decoding (CPU, KV cache)",
        intro=__doc__.split("\n\n")[1],
        tables=(table,),
        notes=(
            "A forward over one token per row is cheap to launch but a verification forward feeds 1 + k tokens per "
            "row: on this CPU a forward's cost grows with the tokens it processes, so fewer forwards pay only while "
            "the batch is small; on a GPU decoding is memory-bound and a forward's cost barely grows (the MODEL).",
            "tokens / step: tokens a rollout emits per verification step (1 + accepted draft tokens); the paper's "
            "scoring (child count / siblings' sum) is replayed on the same rollouts (same tokens, other drafts).",
        ),
        summary=tuple((f"SRT-batched vs plain-batched, {n} rollouts", f"{r:.2f}x") for n, r in ratios.items()),
        data={
            "points": {n: dataclasses.asdict(p) for n, p in points.items()},
            "ratios": ratios,
            "claims": claims,
        },
    )


def batch_one(*, quick: bool) -> Section:
    """Every engine at batch 1 (one sequence per forward) vs batch-1 plain decoding."""
    cfg = (SrtConfig(prompts=4, batch_prompts=2, group=2, steps=2, sft_steps=20, layers=1, hidden=32) if quick
           else SrtConfig(steps=8, group=8))  # fmt: skip
    rounds = 1 if quick else 3
    times: dict[str, list[float]] = {e: [] for e in ENGINES}
    tokens: dict[str, int] = {}
    same = True
    for r in range(rounds):
        order = ENGINES if r % 2 == 0 else ENGINES[::-1]
        runs = {e: experiment.wallclock(cfg, engines=(e,))[e] for e in order}
        for e in ENGINES:
            times[e].append(runs[e].seconds)
            tokens[e] = runs[e].stats.tokens
            same &= runs[e].responses == runs["none"].responses
    ratios = {e: median([p / t for p, t in zip(times["none"], times[e], strict=True)]) for e in ENGINES}
    apf = {e: experiment.replay(cfg, e).accepted_per_forward if e != "none" else 1.0 for e in ENGINES}
    rows = tuple(
        (
            e if e != "none" else "plain decoding (batch 1)",
            fmt_ms(median(times[e])),
            f"{tokens[e] / median(times[e]):.0f}",
            f"{apf[e]:.2f}",
            fmt_ratio(ratios[e]),
        )  # fmt: skip
        for e in ENGINES
    )
    table = Table(("engine", "rollout ms", "tokens/s", "tokens per step (replay)", "speed-up vs batch-1 plain"), rows,
                  caption=f"{cfg.batch_prompts} prompts x G={cfg.group}, policy {cfg.layers}x{cfg.hidden}, "
                          f"T={cfg.temperature}, budget {cfg.draft_budget}; {rounds} round(s); tokens identical: {same}")  # fmt: skip
    return Section(
        title="SRT at batch 1 vs batch-1 plain decoding (weaker baseline, for reference)",
        intro=__doc__.split("\n\n")[2],
        tables=(table,),
        summary=(("SRT batch-1 vs batch-1 plain (weaker baseline)", f"{ratios['srt']:.2f}x"),),
        data={"times": times, "ratios": ratios, "tokens_identical": same},
    )


def run(*, quick: bool) -> list[Section]:
    return [batched(quick=quick), batch_one(quick=quick)]
