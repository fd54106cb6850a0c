"""Trainability diagnostics of a parameterised circuit's loss.

- :func:`gradient_variance`: the barren-plateau diagnostic (McClean et al. 2018, arXiv 1803.11173): the variance
  of ``dL/dtheta_i`` over random parameter vectors drawn uniformly in ``[0, 2 pi)``, averaged over the
  parameters ``i``. Generic in the loss (any differentiable ``theta [P] -> []``); TopGen's QNN passes the
  cross-entropy of its logits on a few training images.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

__all__ = ["gradient_variance"]


def gradient_variance(
    loss_fn: Callable[[Tensor], Tensor], num_parameters: int, *, draws: int = 16, seed: int = 0
) -> float:
    """Mean over the parameters of the variance over ``draws`` random ``theta`` (float64, uniform in
    ``[0, 2 pi)``, drawn in sequence from ``torch.Generator().manual_seed(seed)``) of ``d loss_fn(theta) / d
    theta``. ``loss_fn`` maps ``theta [P]`` to a real scalar through autograd. NaN without parameters."""
    if draws < 2:
        raise ValueError(f"draws={draws} is out of range: valid range is >= 2 (a variance needs two draws)")
    if num_parameters < 0:
        raise ValueError(f"num_parameters={num_parameters} is out of range: valid range is >= 0")
    if num_parameters == 0:
        return math.nan
    g = torch.Generator().manual_seed(seed)
    grads = []
    for _ in range(draws):
        theta = (torch.rand(num_parameters, generator=g, dtype=torch.float64) * 2 * math.pi).requires_grad_(True)
        (grad,) = torch.autograd.grad(loss_fn(theta), theta)
        grads.append(grad)
    return float(torch.stack(grads).var(dim=0).mean())
