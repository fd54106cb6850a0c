"""The slow, obvious reference: plain in-memory training with gradient accumulation and ``torch.optim.Adam``.

The whole GPT (:func:`workbench.llm.gpt.build_gpt`) lives in memory; each iteration runs the ``M`` micro-batches
through the whole model in order ``0..M-1``, ``(loss_m / M).backward()`` accumulating the gradients, then one
``torch.optim.Adam`` step (single-tensor implementation, ``foreach=False``). This is the semantics every
offloaded schedule must reproduce.

Mixed precision (``compute_dtype`` bf16 or fp16, the plain torch recipe with the engine's casts): the Adam master
weights stay in the model's dtype (fp32/fp64); each iteration computes with a copy cast to ``compute_dtype``
(``master.to(compute_dtype)``), the loss is multiplied by ``loss_scale`` after the ``1 / M``, each micro-batch's
gradient is cast to the master dtype and added to an accumulator, and the sum divided by ``loss_scale`` is
Adam's gradient.

``accumulation="snake"`` keeps the per-micro-batch gradients apart and sums those of each parameter in the
vertical schedule's micro-batch order for the schedule unit that holds it (``0..M-1`` for even units, reversed
for odd ones; the units of ``layout``, see :func:`~.schedule.unit_entries`): the same arithmetic as the vertical
engine, so fp64 results are bit-identical to it when the sums have three or more terms (with two terms the order
does not matter: addition commutes).
"""

from __future__ import annotations

from typing import Literal

import torch

from workbench.llm.gpt import GPT, GPTConfig, build_gpt, lm_loss
from workbench.llm.greedysnake.schedule import micro_batch_tokens, unit_entries

__all__ = ["unit_parameters", "train_in_memory"]


def unit_parameters(model: GPT) -> list[list[torch.nn.Parameter]]:
    """Parameters grouped by entry: [embedding], [block 0], ..., [block L-1], [head] (``named_parameters`` order)."""
    return (
        [list(model.embed.parameters())]
        + [list(b.parameters()) for b in model.blocks]
        + [list(model.head.parameters())]
    )


def _orders(gpt_config: GPTConfig, micro_batches: int, accumulation: str, layout: str) -> list[list[int]]:
    """Micro-batch summation order of each entry (embedding, blocks, head)."""
    forward = list(range(micro_batches))
    if accumulation == "sequential":
        return [forward] * (gpt_config.layers + 2)
    unit_of = {e: u for u, (entries, _) in enumerate(unit_entries(gpt_config.layers, layout)) for e in entries}
    return [forward if unit_of[e] % 2 == 0 else forward[::-1] for e in range(gpt_config.layers + 2)]


def train_in_memory(
    gpt_config: GPTConfig,
    *,
    micro_batches: int,
    micro_batch_size: int,
    steps: int,
    lr: float,
    data_seed: int,
    accumulation: Literal["sequential", "snake"] = "sequential",
    compute_dtype: torch.dtype | None = None,
    loss_scale: float = 1.0,
    layout: str = "flextrain",
) -> list[torch.Tensor]:
    """Train in memory; returns each entry's master parameters flattened (``named_parameters`` order), detached.

    ``compute_dtype`` None (or the model's dtype) trains in the model's dtype; ``layout`` only sets the snake
    order's units. Raises ValueError for ``accumulation`` other than sequential or snake.
    """
    if accumulation not in ("sequential", "snake"):
        raise ValueError(f"accumulation={accumulation!r} is not supported: valid values are sequential, snake")
    master = build_gpt(gpt_config)
    mixed = compute_dtype is not None and compute_dtype != gpt_config.torch_dtype
    work = GPT(gpt_config.shape, compute_dtype) if mixed else master
    units = unit_parameters(master)
    work_units = unit_parameters(work)
    orders = _orders(gpt_config, micro_batches, accumulation, layout)
    opt = torch.optim.Adam(master.parameters(), lr=lr, foreach=False)
    index = {id(p): i for i, p in enumerate(work.parameters())}
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        if mixed:
            for pw, pm in zip(work.parameters(), master.parameters(), strict=True):
                pw.data = pm.detach().to(compute_dtype)
        per_mb: list[list[torch.Tensor]] = []  # snake: every micro-batch's gradients; sequential: the running sum
        for m in range(micro_batches):
            tokens, targets = micro_batch_tokens(gpt_config, micro_batch_size, seed=data_seed, step=step, mb=m)
            loss = lm_loss(work(tokens), targets) / micro_batches
            if loss_scale != 1.0:
                loss = loss * loss_scale
            loss.backward()
            grads = [p.grad.to(gpt_config.torch_dtype) for p in work.parameters()]  # type: ignore[union-attr]
            for p in work.parameters():
                p.grad = None
            if accumulation == "snake" or not per_mb:
                per_mb.append(grads)
            else:
                for acc, g in zip(per_mb[0], grads, strict=True):
                    acc.add_(g)
        for e, (params, wparams) in enumerate(zip(units, work_units, strict=True)):
            for p, pw in zip(params, wparams, strict=True):
                acc = None
                for m in orders[e] if accumulation == "snake" else [0]:
                    g = per_mb[m][index[id(pw)]]
                    acc = g if acc is None else acc.add_(g)  # the first term is owned (cast or fresh .grad)
                p.grad = acc if loss_scale == 1.0 else acc / loss_scale
        del per_mb
        opt.step()
    return [torch.cat([p.detach().reshape(-1) for p in params]) for params in units]
