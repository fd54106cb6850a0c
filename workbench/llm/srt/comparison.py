"""SRT-batched vs plain-batched rollouts side by side in one process, and SRT's per-prompt trees vs one global suffix
tree: the orchestration the benchmark, the claims and the notebook call (on :mod:`experiment`'s policy, drafters
and replays).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from workbench.llm.srt.batched import BatchedVerifier
from workbench.llm.srt.config import SrtConfig
from workbench.llm.srt.decode import ReplayVerifier, Request, rollout, sample_batch, uniforms_for
from workbench.llm.srt.drafters import Drafter
from workbench.llm.srt.experiment import MAX_NEW, drafter_of, policy, replay, sampling_of
from workbench.llm.srt.task import make_prompts
from workbench.threads import one_thread

__all__ = ["BatchedPoint", "batched_point", "batched_comparison", "prompt_vs_global"]


@dataclass(frozen=True)
class BatchedPoint:
    """SRT-batched vs plain-batched rollouts of one batch (``rollouts`` sequences), timed in one process.

    Seconds per repeat (interleaved A, B, A, B, ...): ``plain_s`` (:func:`~workbench.llm.srt.decode.sample_batch`,
    finished rows leave the batch) and ``srt_s`` (:class:`~workbench.llm.srt.batched.BatchedVerifier`, drafting
    included; ``draft_s`` of it drafting in our Python suffix tree). ``plain_forwards`` / ``srt_forwards``: batched
    forwards (prefill excluded); ``steps``: verification steps of the sequences (one per sequence per forward);
    ``fed`` / ``real``: inputs the SRT forwards processed, padding included / excluded; ``steps_paper``: the steps
    with the paper's scoring instead (replayed: same tokens); ``identical``: SRT's tokens == plain's."""

    rollouts: int
    plain_s: tuple[float, ...]
    srt_s: tuple[float, ...]
    draft_s: tuple[float, ...]
    tokens: int
    plain_forwards: int
    srt_forwards: int
    steps: int
    steps_paper: int
    fed: int
    real: int
    identical: bool

    @property
    def speedup(self) -> float:
        """Median over repeats of plain-batched seconds / SRT-batched seconds (> 1: SRT faster)."""
        return float(np.median([p / s for p, s in zip(self.plain_s, self.srt_s, strict=True)]))

    @property
    def speedup_verify_only(self) -> float:
        """The same with SRT's drafting time taken out (what a drafter costing nothing would give)."""
        return float(np.median([p / (s - d) for p, s, d in zip(self.plain_s, self.srt_s, self.draft_s, strict=True)]))

    @property
    def tokens_per_forward(self) -> float:
        """Tokens the whole batch emits per SRT-batched forward (plain-batched: ``tokens / plain_forwards``)."""
        return self.tokens / max(1, self.srt_forwards)

    @property
    def tokens_per_step(self) -> float:
        """Tokens a sequence emits per verification step (1 + accepted draft tokens), the authors' scoring."""
        return self.tokens / max(1, self.steps)


def _batch_requests(cfg: SrtConfig, prompts: int, group: int, step: int) -> list[Request]:
    tasks = make_prompts(prompts, cfg.seed + 1)
    return [Request(seq=(step, p, g, 0), key=p, prompt=tasks[p].prompt,
                    uniforms=uniforms_for(cfg.seed, step, p, g, 0, n=MAX_NEW))
            for p in range(prompts) for g in range(group)]  # fmt: skip


def _seededdrafter_of(cfg: SrtConfig, history: list[Request], responses: list[list[int]], name: str = "srt") -> Drafter:
    """A drafter whose cache holds the previous epoch's responses to the same prompts (history depth 1)."""
    d = drafter_of(cfg, name)
    for r, resp in zip(history, responses, strict=True):
        d.start(r.seq, r.key, r.prompt, step=0)
        d.observe(r.seq, resp)
        d.finish(r.seq)
    d.begin_step(1)
    return d


def batched_point(cfg: SrtConfig, rollouts: int, *, group: int = 8, repeats: int = 3) -> BatchedPoint:
    """SRT-batched vs plain-batched rollouts of ``rollouts // group`` prompts x ``group`` on the SFT policy of
    ``cfg`` at its temperature. The drafter's cache first holds the previous epoch's responses (the same prompts,
    other uniforms; untimed); online updates as SRT's. Each repeat times plain then SRT, or SRT then plain
    (alternating), on one thread."""
    if rollouts % group:
        raise ValueError(f"rollouts={rollouts} is out of range: valid are multiples of group={group}")
    model, sampling = policy(cfg), sampling_of(cfg)
    prev, cur = (_batch_requests(cfg, rollouts // group, group, step) for step in (0, 1))
    prompts = torch.tensor([r.prompt for r in cur])
    uniforms = torch.stack([r.uniforms for r in cur])  # type: ignore[misc]  # every request has its uniforms
    plain_s, srt_s, draft_s = [], [], []
    with one_thread():
        history, _ = sample_batch(model, torch.tensor([r.prompt for r in prev]),
                                  torch.stack([r.uniforms for r in prev]), sampling)  # type: ignore[misc]  # fmt: skip
        for rep in range(repeats):
            for side in ("plain", "srt") if rep % 2 == 0 else ("srt", "plain"):
                d = _seededdrafter_of(cfg, prev, history) if side == "srt" else None
                t0 = time.perf_counter()
                if d is None:
                    plain, _ = sample_batch(model, prompts, uniforms, sampling)
                    plain_s.append(time.perf_counter() - t0)
                else:
                    v = BatchedVerifier(model, sampling)
                    states, stats = rollout(cur, d, v, step=1)
                    srt_s.append(time.perf_counter() - t0)
                    draft_s.append(stats.draft_s)
    responses = [st.response for st in states]
    paper_cfg = dataclasses.replace(cfg, scoring="paper" if cfg.scoring == "authors" else "authors")
    known = [dataclasses.replace(r, known=resp) for r, resp in zip(cur, responses, strict=True)]
    _, other = rollout(known, _seededdrafter_of(paper_cfg, prev, history), ReplayVerifier(sampling), step=1)
    return BatchedPoint(
        rollouts=rollouts, plain_s=tuple(plain_s), srt_s=tuple(srt_s), draft_s=tuple(draft_s), tokens=stats.tokens,
        plain_forwards=max(len(r) for r in plain), srt_forwards=v.forwards, steps=stats.forwards,
        steps_paper=other.forwards, fed=v.fed, real=v.real, identical=responses == plain,
    )  # fmt: skip


def batched_comparison(cfg: SrtConfig, sizes: tuple[int, ...] = (16, 64, 256), *, group: int = 8,
                       repeats: int = 3) -> dict[int, BatchedPoint]:  # fmt: skip
    """:func:`batched_point` at each batch size (rollouts), in one process."""
    return {n: batched_point(cfg, n, group=group, repeats=repeats) for n in sizes}


def prompt_vs_global(cfg: SrtConfig, *, history: int | None = None) -> dict[str, float]:
    """Tokens per verification step of SRT's per-prompt trees and of one global suffix tree over the same replayed
    GRPO rollouts of ``cfg`` (its group size G responses per prompt share structure), and their ratio."""
    h = cfg.history if history is None else history
    srt = replay(cfg, "srt", history=h).accepted_per_forward
    glob = replay(cfg, "global-suffix", history=h).accepted_per_forward
    return {"srt": srt, "global-suffix": glob, "ratio": srt / glob}
