"""A real GRPO loop on the rewriting task, with rollouts from any engine, and the trajectory it leaves.

Each step takes the next ``batch_prompts`` prompts of a fixed set (so a prompt comes back once per epoch, as in
the paper's multi-epoch RL runs), samples ``group`` responses per prompt with the current policy, scores them
(:func:`task.reward`), normalises rewards within each group (GRPO: ``(r - mean) / (std + 1e-6)``) and takes one
Adam step on the token-mean policy-gradient loss ``-sum_i A_i sum_t log p(y_it) / tokens`` (one update per
batch, so the PPO ratio is 1 and clipping is inactive; no KL term, as DAPO).

Rollout engines: ``plain`` (per-sequence decoding with a KV cache, one forward per token), ``srt`` /
``srt-tree`` / ``global-suffix`` / ``prompt-lookup`` (speculative, :mod:`decode`: every active rollout's draft
verified in one batched forward, :class:`~workbench.llm.srt.batched.BatchedVerifier`), and ``batched`` (plain
batched decoding, the fast path studies use; its acceptance figures come from replaying the trajectory).
Every sequence owns its uniforms (seed, step, prompt, sample), so all engines draw the same responses.

Run-ahead (``runahead > 0``): after a step's rollouts, ``runahead`` extra responses are generated with the
current policy for each prompt of the NEXT step and inserted into the drafter's trees. They are returned in the
trajectory under ``runahead`` and never reach the loss (tested: the training batch is identical with it on or off).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from workbench.llm.gpt import GPT
from workbench.llm.srt.batched import BatchedVerifier
from workbench.llm.srt.decode import ModelVerifier, Request, RolloutStats, Sampling, rollout, sample_batch, uniforms_for
from workbench.llm.srt.drafters import Drafter, make_drafter
from workbench.llm.srt.task import Task, reward

__all__ = ["StepRecord", "Trajectory", "train"]

ENGINES = ("batched", "plain", "srt", "srt-tree", "global-suffix", "prompt-lookup")


@dataclass
class StepRecord:
    """One GRPO step: its requests with responses (training batch), run-ahead responses, rewards, loss, counts."""

    step: int
    epoch: int
    prompts: list[int]  # indices into the prompt set
    batch: list[tuple[tuple[int, int, int], list[int], list[int]]]  # ((step, prompt, sample), prompt, response)
    runahead: list[tuple[tuple, list[int], list[int]]]
    rewards: list[float]
    loss: float
    rollout_s: float
    stats: RolloutStats | None


@dataclass
class Trajectory:
    steps: list[StepRecord] = field(default_factory=list)

    @property
    def rewards(self) -> list[float]:
        return [float(np.mean(s.rewards)) for s in self.steps]

    @property
    def losses(self) -> list[float]:
        return [s.loss for s in self.steps]


def _requests(step: int, prompt_ids: list[int], tasks: list[Task], group: int, seed: int, n: int, kind: int):
    return [
        Request(
            seq=(step, p, g, kind), key=p, prompt=tasks[p].prompt, uniforms=uniforms_for(seed, step, p, g, kind, n=n)
        )
        for p in prompt_ids
        for g in range(group)
    ]


def train(
    policy: GPT,
    tasks: list[Task],
    *,
    steps: int,
    batch_prompts: int,
    group: int,
    sampling: Sampling,
    engine: str = "batched",
    drafter: Drafter | None = None,
    runahead: int = 0,
    lr: float = 1e-3,
    seed: int = 0,
    progress=None,
) -> Trajectory:
    """Run ``steps`` GRPO steps on ``policy`` (updated in place). ``drafter`` defaults to ``make_drafter(engine)``
    for a speculative engine; run-ahead responses go into it (or nowhere for ``batched``/``plain``)."""
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not allowed: valid values are {', '.join(ENGINES)}")
    if not 1 <= batch_prompts <= len(tasks):
        raise ValueError(f"batch_prompts={batch_prompts} is out of range: valid range is 1..{len(tasks)}")
    if drafter is None:
        drafter = make_drafter(engine if engine not in ("batched", "plain") else "none")
    torch.manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    traj = Trajectory()
    n_prompts = len(tasks)
    for step in range(steps):
        epoch = step * batch_prompts // n_prompts
        ids = [(step * batch_prompts + i) % n_prompts for i in range(batch_prompts)]
        drafter.begin_step(epoch)
        reqs = _requests(step, ids, tasks, group, seed, sampling.max_new, 0)
        policy.eval()
        t0 = time.perf_counter()
        if engine == "batched":
            prompts = torch.tensor([r.prompt for r in reqs])
            responses, _ = sample_batch(policy, prompts, torch.stack([r.uniforms for r in reqs]), sampling)
            stats = None
        else:
            verifier = ModelVerifier(policy, sampling) if engine == "plain" else BatchedVerifier(policy, sampling)
            states, stats = rollout(reqs, drafter, verifier, step=epoch)
            responses = [st.response for st in states]
        rollout_s = time.perf_counter() - t0
        ahead = []
        if runahead:
            nxt = [((step + 1) * batch_prompts + i) % n_prompts for i in range(batch_prompts)]
            ra = _requests(step, nxt, tasks, runahead, seed, sampling.max_new, 1)
            ra_resp, _ = sample_batch(policy, torch.tensor([r.prompt for r in ra]), torch.stack([r.uniforms for r in ra]),
                                      sampling)  # fmt: skip
            for r, resp in zip(ra, ra_resp, strict=True):  # feeds the cache only
                drafter.start(r.seq, r.key, r.prompt, step=epoch)
                drafter.observe(r.seq, resp)
                drafter.finish(r.seq)
                ahead.append((r.seq, r.prompt, resp))
        rewards = [reward(tasks[r.key], resp) for r, resp in zip(reqs, responses, strict=True)]
        loss = _update(policy, opt, reqs, responses, rewards, group, sampling.temperature)
        traj.steps.append(
            StepRecord(
                step,
                epoch,
                ids,
                [(r.seq, r.prompt, resp) for r, resp in zip(reqs, responses, strict=True)],
                ahead,
                rewards,
                loss,
                rollout_s,
                stats,
            )  # fmt: skip
        )
        if progress is not None:
            progress((step + 1) / steps)
    return traj


def _update(policy: GPT, opt, reqs, responses, rewards, group: int, temperature: float) -> float:
    """One GRPO update; returns the loss."""
    r = torch.tensor(rewards, dtype=torch.float64).reshape(-1, group)
    adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True, unbiased=False) + 1e-6)).reshape(-1)
    length = policy.shape.seq
    b = len(reqs)
    x = torch.zeros(b, length, dtype=torch.long)
    mask = torch.zeros(b, length, dtype=torch.float64)
    for i, (req, resp) in enumerate(zip(reqs, responses, strict=True)):
        seq = req.prompt + resp
        x[i, : len(seq)] = torch.tensor(seq)
        mask[i, len(req.prompt) - 1 : len(seq) - 1] = 1.0
    policy.train()
    logits = policy(x[:, :-1]).double() / (temperature or 1.0)  # (b, L-1, vocab)
    logp = torch.log_softmax(logits, -1).gather(2, x[:, 1:, None])[..., 0]  # (b, L-1)
    m = mask[:, :-1]
    loss = -((adv[:, None].to(logp.dtype) * logp * m).sum() / m.sum())
    opt.zero_grad()
    loss.backward()
    opt.step()
    policy.eval()
    return float(loss.detach())
