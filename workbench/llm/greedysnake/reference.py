"""The slow, obvious reference: plain in-memory training with gradient accumulation and ``torch.optim.Adam``.

The whole GPT (:func:`workbench.llm.gpt.build_gpt`) lives in memory; each iteration runs the ``M`` micro-batches
through the whole model in order ``0..M-1``, ``(loss_m / M).backward()`` accumulating into ``.grad``, then one
``torch.optim.Adam`` step (single-tensor implementation, ``foreach=False``). This is the semantics every
offloaded schedule must reproduce.

``accumulation="snake"`` keeps the per-micro-batch gradients apart and sums those of unit ``u`` in the vertical
schedule's micro-batch order for that unit (``0..M-1`` for even ``u``, reversed for odd ``u``): the same
arithmetic as the vertical engine, so fp64 results are bit-identical to it when the sums have three or more
terms (with two terms the order does not matter: addition commutes).
"""

from __future__ import annotations

from typing import Literal, cast

import torch

from workbench.llm.gpt import GPT, GPTConfig, build_gpt, lm_loss
from workbench.llm.greedysnake.schedule import micro_batch_tokens

__all__ = ["unit_parameters", "train_in_memory"]


def unit_parameters(model: GPT) -> list[list[torch.nn.Parameter]]:
    """Parameters grouped by unit: [embedding], [block 0], ..., [block L-1], [head] (``named_parameters`` order)."""
    return (
        [list(model.embed.parameters())]
        + [list(b.parameters()) for b in model.blocks]
        + [list(model.head.parameters())]
    )


def train_in_memory(
    gpt_config: GPTConfig,
    *,
    micro_batches: int,
    micro_batch_size: int,
    steps: int,
    lr: float,
    data_seed: int,
    accumulation: Literal["sequential", "snake"] = "sequential",
) -> list[torch.Tensor]:
    """Train in memory; returns each unit's parameters flattened (``named_parameters`` order), detached.

    Raises ValueError for ``accumulation`` other than sequential or snake.
    """
    if accumulation not in ("sequential", "snake"):
        raise ValueError(f"accumulation={accumulation!r} is not supported: valid values are sequential, snake")
    model = build_gpt(gpt_config)
    units = unit_parameters(model)
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=False)
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        per_mb: list[list[torch.Tensor]] = []
        for m in range(micro_batches):
            tokens, targets = micro_batch_tokens(gpt_config, micro_batch_size, seed=data_seed, step=step, mb=m)
            (lm_loss(model(tokens), targets) / micro_batches).backward()
            if accumulation == "snake":
                per_mb.append([cast(torch.Tensor, p.grad) for p in model.parameters()])  # set by backward()
                opt.zero_grad(set_to_none=True)
        if accumulation == "snake":
            index = {id(p): i for i, p in enumerate(model.parameters())}
            for u, params in enumerate(units):
                order = range(micro_batches) if u % 2 == 0 else range(micro_batches - 1, -1, -1)
                for p in params:
                    acc = None
                    for m in order:
                        g = per_mb[m][index[id(p)]]
                        acc = g.clone() if acc is None else acc.add_(g)
                    p.grad = acc
        opt.step()
    return [torch.cat([p.detach().reshape(-1) for p in params]) for params in units]
