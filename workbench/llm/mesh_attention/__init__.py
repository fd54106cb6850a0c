"""Distributed attention: Ring, Ulysses, USP and Mesh-Attention kernels, their plans and byte formulas.

Public names are loaded on first use, so ``import workbench.llm.mesh_attention.plan`` (numpy only) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "blockwise_attention": "blockwise",
    "block_attn_forward": "blockwise",
    "block_attn_backward": "blockwise",
    "merge_partials": "blockwise",
    "ring_attention": "ring",
    "ulysses_attention": "ulysses",
    "usp_attention": "usp",
    "mesh_attention": "mesh",
    "shard_sequence": "layout",
    "unshard_sequence": "layout",
    "choose_tile": "plan",
    "factor_pairs": "plan",
    "assignment_matrix": "plan",
    "greedy_schedule": "plan",
    "map_tiles_to_nodes": "plan",
    "make_mesh_plan": "plan",
    "predict_bytes_per_rank": "volume",
    "run_check": "check",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
