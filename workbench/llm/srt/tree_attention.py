"""Tree attention for verifying a token-tree draft in one forward (the workbench's extension of SRT's chain).

The verification input is the pending token (the root, index 0) followed by the draft nodes (index ``j + 1`` for
draft node ``j``, whose parent index is ``parents[j]``, -1 = the root). Node ``i`` may attend to every cached
position and to its ancestors in the tree and itself, never to a sibling branch; its position id is the cached
length plus its depth, so two branches at the same depth share a position (what SpecInfer and Medusa do). For a
chain this is exactly the causal mask and consecutive positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["tree_mask", "tree_positions", "ancestors"]


def ancestors(parents: Sequence[int]) -> list[list[int]]:
    """For each input index (root 0, draft node j at j + 1): the input indices it may see, root first, itself last."""
    paths: list[list[int]] = [[0]]
    for j, p in enumerate(parents):
        if not -1 <= p < j:
            raise ValueError(f"parents[{j}]={p} is out of range: a parent must be -1 or an earlier node (< {j})")
        paths.append([*paths[p + 1], j + 1])
    return paths


def tree_mask(parents: Sequence[int], cached: int) -> torch.Tensor:
    """Boolean mask ``(n + 1, cached + n + 1)`` (True = may attend) for the root + ``n`` draft nodes."""
    paths = ancestors(parents)
    n = len(paths)
    mask = torch.zeros(n, cached + n, dtype=torch.bool)
    mask[:, :cached] = True
    for i, path in enumerate(paths):
        mask[i, [cached + a for a in path]] = True
    return mask


def tree_positions(parents: Sequence[int], cached: int) -> torch.Tensor:
    """Position ids ``(n + 1,)``: cached length + depth (root depth 0)."""
    return torch.tensor([cached + len(path) - 1 for path in ancestors(parents)], dtype=torch.long)
