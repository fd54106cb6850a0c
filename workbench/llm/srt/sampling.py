"""The rollout sampler: temperature, top-k and top-p applied to logits, then one inverse-CDF draw per token.

Every token a rollout emits -- in plain decoding or in SRT's verification walk -- is drawn by :func:`draw` from the
processed policy distribution with ONE uniform number. A sequence owns its uniforms (``uniforms[t]`` for its
``t``-th response token), so plain decoding and speculative decoding of the same sequence consume the same
random numbers in the same order: with the same policy distributions they emit the same tokens. That is the
"equal per-token logprobs under a fixed RNG" check; the chi-square tests use fresh uniforms.

temperature 0 is greedy (argmax, lowest token id on ties) and uses no uniform.
"""

from __future__ import annotations

import torch

__all__ = ["check_sampling", "processed_probs", "draw", "draw_many", "draw_rows"]


def check_sampling(temperature: float, top_p: float, top_k: int) -> None:
    """ValueError naming the parameter when a sampling setting is out of range."""
    if not temperature >= 0.0:
        raise ValueError(f"temperature={temperature} is out of range: valid range is >= 0 (0 = greedy)")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p={top_p} is out of range: valid range is (0, 1]")
    if top_k < 0:
        raise ValueError(f"top_k={top_k} is out of range: valid range is >= 0 (0 = all tokens)")


def processed_probs(logits: torch.Tensor, temperature: float, top_p: float = 1.0, top_k: int = 0) -> torch.Tensor:
    """The distribution a rollout samples from: ``(..., vocab)`` logits -> probabilities (float64).

    temperature 0: a one-hot on the argmax. Otherwise softmax(logits / T), then keep the ``top_k`` largest
    (0 = all), then the smallest set of the largest whose mass reaches ``top_p`` (the token that crosses it is
    kept, as in vLLM and HF), renormalised.
    """
    check_sampling(temperature, top_p, top_k)
    logits = logits.to(torch.float64)
    if temperature == 0.0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(torch.float64)
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k and top_k < probs.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
    if top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True, stable=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass strictly before each token in the sorted order
        keep_sorted = before < top_p * sorted_p.sum(-1, keepdim=True)
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        probs = torch.where(keep, probs, torch.zeros_like(probs))
    return probs / probs.sum(-1, keepdim=True)


def draw(probs: torch.Tensor, u: float) -> int:
    """One token from ``probs (vocab,)`` with the uniform ``u`` in [0, 1): the first index whose CDF exceeds u."""
    cdf = probs.cumsum(0)
    i = int(torch.searchsorted(cdf, torch.tensor([u * float(cdf[-1])], dtype=cdf.dtype), right=True)[0])
    i = min(i, probs.shape[0] - 1)
    while probs[i] == 0.0:  # u * total landed on a zero-width cell boundary at the end: step back to mass
        i -= 1
    return i


def draw_many(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Vectorised :func:`draw`: ``probs (vocab,)`` and uniforms ``(n,)`` -> tokens ``(n,)`` int64."""
    cdf = probs.cumsum(0)
    idx = torch.searchsorted(cdf, u.to(cdf.dtype) * cdf[-1], right=True).clamp(max=probs.shape[0] - 1)
    last = int(torch.nonzero(probs > 0)[-1])
    return idx.clamp(max=last)


def draw_rows(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """:func:`draw` for many distributions at once: ``probs (..., vocab)`` and one uniform per row ``u (...)`` ->
    tokens ``(...)`` int64 (each row's first index whose CDF exceeds ``u x total``, clamped to its last token with
    mass, exactly as :func:`draw`)."""
    cdf = probs.cumsum(-1)  # (..., vocab)
    x = (u.to(cdf.dtype) * cdf[..., -1]).unsqueeze(-1).contiguous()  # (..., 1)
    idx = torch.searchsorted(cdf.contiguous(), x, right=True)[..., 0]
    last = (probs > 0).long().cumsum(-1).argmax(-1)  # the first index reaching the final count: the last with mass
    return torch.minimum(idx, last)
