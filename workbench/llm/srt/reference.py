"""Slow, obvious versions SRT is tested against.

- :func:`plain_decode`: target-only decoding, one full ``GPT.forward`` over the whole context per token (no
  cache, no draft), drawing with the sequence's uniforms: what every speculative rollout must equal.
- :func:`sequence_probs`: the exact probability of every token sequence of a given length (brute force over a
  tiny vocabulary), for the chi-square tests.
- :func:`tree_attention_loop`: attention of each tree node computed one query at a time over the keys its
  ancestors' list names, the explicit loop that the boolean mask + ``scaled_dot_product_attention`` must equal.
- :func:`tree_logits_by_paths`: each draft node's logits from a plain forward over its own root path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch

from workbench.llm.gpt import GPT
from workbench.llm.srt.sampling import draw, processed_probs
from workbench.llm.srt.tree_attention import ancestors

__all__ = ["plain_decode", "sequence_probs", "tree_attention_loop", "tree_logits_by_paths"]


def plain_decode(
    model: GPT,
    prompt: Sequence[int],
    uniforms: torch.Tensor | None,
    *,
    temperature: float,
    top_p: float = 1.0,
    top_k: int = 0,
    max_new: int,
    eos: int,
) -> tuple[list[int], list[float]]:
    """Tokens and logprobs of a plain rollout (full recompute per token)."""
    tokens = list(prompt)
    out, lps = [], []
    with torch.no_grad():
        for i in range(max_new):
            logits = model(torch.tensor([tokens]))[0, -1]
            probs = processed_probs(logits, temperature, top_p, top_k)
            t = int(probs.argmax()) if temperature == 0 else draw(probs, float(uniforms[i]))
            lps.append(float(torch.log_softmax(logits.double() / (temperature or 1.0), -1)[t]))
            out.append(t)
            tokens.append(t)
            if t == eos:
                break
    return out, lps


def sequence_probs(
    model: GPT, prompt: Sequence[int], length: int, *, temperature: float, top_p: float = 1.0, top_k: int = 0
) -> dict[tuple[int, ...], float]:
    """P(sequence) for every sequence of ``length`` tokens (vocab ** length of them: keep both tiny)."""
    vocab = model.shape.vocab
    out = {}
    with torch.no_grad():
        for seq in itertools.product(range(vocab), repeat=length):
            logits = model(torch.tensor([[*prompt, *seq[:-1]]]))[0, len(prompt) - 1 :]
            probs = processed_probs(logits, temperature, top_p, top_k)
            out[seq] = math.prod(float(probs[i, t]) for i, t in enumerate(seq))
    return out


def tree_attention_loop(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, parents: Sequence[int], cached: int
) -> torch.Tensor:
    """q ``(b, h, n, dh)`` for the root + draft nodes; k, v ``(b, h, cached + n, dh)``. One query at a time:
    softmax over the cached keys and the node's own root path, times the values."""
    out = torch.empty_like(q)
    for i, path in enumerate(ancestors(parents)):
        cols = [*range(cached), *(cached + a for a in path)]
        kk, vv = k[:, :, cols], v[:, :, cols]  # (b, h, m, dh)
        scores = (q[:, :, i : i + 1] @ kk.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # (b, h, 1, m)
        out[:, :, i : i + 1] = torch.softmax(scores, dim=-1) @ vv
    return out


def tree_logits_by_paths(
    model: GPT, prefix: Sequence[int], tokens: Sequence[int], parents: Sequence[int]
) -> torch.Tensor:
    """Logits ``(n + 1, vocab)`` of the root (last prefix token) and each draft node, each from a plain forward over
    ``prefix`` + the node's root path."""
    rows = []
    with torch.no_grad():
        for path in ancestors(parents):
            seq = [*prefix, *(tokens[a - 1] for a in path[1:])]
            rows.append(model(torch.tensor([seq]))[0, -1])
    return torch.stack(rows)
