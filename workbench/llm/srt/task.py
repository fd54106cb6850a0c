"""The synthetic RL task: string rewriting with long, repetitive, verifiable answers, and a short SFT warm-up.

A prompt is four letters and a count r, then '=': ``c a d b 3 =``. The answer is r lines, the i-th the letters
rotated left i times, lines separated by '|', then eos: ``a d b c | d b c a | b c a d <eos>`` (5 r tokens). The
reward is verifiable: the share of the r lines that are right (extra lines count against it). Counts follow a
long tail (geometric), so a batch has a few long responses, as RL rollouts do (the paper's Fig. 1 motivation).

Vocabulary: 0 pad, 1 eos, 2 '|', 3 '=', 4..11 the letters a..h, 12..20 the counts 1..9 (21 tokens).
The policy is :mod:`workbench.llm.gpt`'s GPT, first trained by teacher forcing for a few hundred steps so that
sampling at temperature 1 is mostly but not always right (RL starts from an SFT model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from workbench.llm.gpt import GPT, GPTConfig, build_gpt

__all__ = ["VOCAB", "EOS", "Task", "make_prompts", "answer", "reward", "sft", "sft_policy", "policy_config"]

PAD, EOS, SEP, EQ = 0, 1, 2, 3
LETTERS = 8
VOCAB = 21
PROMPT_LEN = 6
MAX_COUNT = 9


@dataclass(frozen=True)
class Task:
    """A prompt: letters (4 ids in 4..11) and the count r (1..9)."""

    letters: tuple[int, ...]
    count: int

    @property
    def prompt(self) -> list[int]:
        return [*self.letters, 11 + self.count, EQ]


def answer(task: Task) -> list[int]:
    """The right response (ends with eos)."""
    out, s = [], list(task.letters)
    for i in range(task.count):
        s = s[1:] + s[:1]
        out.extend(s)
        out.append(SEP if i < task.count - 1 else EOS)
    return out


def reward(task: Task, response: list[int]) -> float:
    """Share of right lines: matches / max(r, lines produced); 0 for an empty response."""
    body = response[: response.index(EOS)] if EOS in response else response
    lines: list[list[int]] = []
    cur: list[int] = []
    for t in body:
        if t == SEP:
            lines.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        lines.append(cur)
    if not lines:
        return 0.0
    s, right = list(task.letters), 0
    for line in lines[: task.count]:
        s = s[1:] + s[:1]
        right += line == s
    return right / max(task.count, len(lines))


def make_prompts(n: int, seed: int, *, tail: float = 0.3) -> list[Task]:
    """``n`` prompts: distinct random letters, counts 1 + Geometric(tail) capped at 9 (long-tailed lengths)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        letters = tuple(int(x) for x in 4 + rng.permutation(LETTERS)[:4])
        out.append(Task(letters, int(min(MAX_COUNT, rng.geometric(tail)))))
    return out


def policy_config(*, layers: int, hidden: int, heads: int, seed: int, dtype: str) -> GPTConfig:
    return GPTConfig(layers=layers, hidden=hidden, heads=heads, seq=PROMPT_LEN + 5 * MAX_COUNT + 2, vocab=VOCAB,
                     dtype=dtype, seed=seed)  # fmt: skip


def sft(model: GPT, *, steps: int, seed: int, batch: int = 64, lr: float = 3e-3) -> list[float]:
    """Teacher-forced training on right answers of random prompts (loss on answer tokens only); returns losses."""
    rng = np.random.default_rng(seed + 7)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    length = model.shape.seq
    for _ in range(steps):
        tasks = make_prompts(batch, int(rng.integers(2**31)))
        x = torch.full((batch, length), PAD, dtype=torch.long)
        y = torch.full((batch, length), -100, dtype=torch.long)
        for i, t in enumerate(tasks):
            seq = t.prompt + answer(t)
            x[i, : len(seq) - 1] = torch.tensor(seq[:-1])
            y[i, PROMPT_LEN - 1 : len(seq) - 1] = torch.tensor(seq[PROMPT_LEN:])
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def sft_policy(*, layers: int, hidden: int, heads: int, seed: int, dtype: str, steps: int) -> GPT:
    """A freshly initialised policy after ``steps`` SFT steps (deterministic from ``seed``)."""
    torch.manual_seed(seed)
    model = build_gpt(policy_config(layers=layers, hidden=hidden, heads=heads, seed=seed, dtype=dtype))
    sft(model, steps=steps, seed=seed)
    return model
