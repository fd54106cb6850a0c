"""Sequence sharding for the distributed kernels: pad, split into per-rank chunks, and put back.

The layouts ("contiguous", "zigzag") and their padding are defined in ``plan.py``; this module applies them
to tensors. ``shard_sequence`` gives one rank its local chunk (zero-padded); ``unshard_sequence`` rebuilds the
whole sequence from all ranks' chunks and drops the padding.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.llm.mesh_attention.plan import local_length, padded_length, rank_ranges, resolve_order

Ranges = list[tuple[int, int]]


def shard_sequence(
    x: torch.Tensor, *, rank: int, world_size: int, order: str = "contiguous", dim: int = 2
) -> torch.Tensor:
    """This rank's chunk of ``x`` (whole sequence along ``dim``), zero-padded to the layout's length.

    Example: with S=10, P=2, zigzag, half-chunks have 3 tokens (padded length 12) and rank 0 holds
    positions 0..2 and 9..11 (10 and 11 are padding, zeros).
    """
    order = resolve_order(order, False)
    seq = x.shape[dim]
    pad = padded_length(seq, world_size, order) - seq
    if pad:
        shape = list(x.shape)
        shape[dim] = pad
        x = torch.cat([x, x.new_zeros(shape)], dim=dim)
    length = local_length(seq, world_size, order)
    parts = [x.narrow(dim, start, n) for start, n in rank_ranges(rank, world_size, length, order)]
    return torch.cat(parts, dim=dim).contiguous()


def unshard_sequence(
    parts: Sequence[torch.Tensor], *, seq_len: int, order: str = "contiguous", dim: int = 2
) -> torch.Tensor:
    """Inverse of ``shard_sequence``: ``parts[r]`` is rank r's chunk; returns the first ``seq_len`` positions."""
    order = resolve_order(order, False)
    world = len(parts)
    length = parts[0].shape[dim]
    pieces: list[tuple[int, torch.Tensor]] = []
    for rank, part in enumerate(parts):
        offset = 0
        for start, n in rank_ranges(rank, world, length, order):
            pieces.append((start, part.narrow(dim, offset, n)))
            offset += n
    pieces.sort(key=lambda item: item[0])
    return torch.cat([p for _, p in pieces], dim=dim).narrow(dim, 0, seq_len)


def member_ranges(world_size: int, local_len: int, order: str) -> list[Ranges]:
    """Global ranges of every member's chunk: ``[rank_ranges(m, ...) for m in range(world_size)]``."""
    return [rank_ranges(m, world_size, local_len, order) for m in range(world_size)]


def resolve_seq_len(seq_len: int | None, world_size: int, local_len: int, order: str) -> int:
    """Check ``seq_len`` against the local chunk length (padding included); None means no padding.

    Raises:
        ValueError: if ``seq_len`` would give a different local length, or zigzag gets an odd local length.
    """
    if order == "zigzag" and local_len % 2:
        raise ValueError(f"local sequence length {local_len} is odd: the zigzag layout needs two equal half-chunks")
    if seq_len is None:
        return world_size * local_len
    pieces = 2 * world_size if order == "zigzag" else world_size
    hi = local_len * world_size
    lo = max(1, hi - pieces + 1)  # padded_length(s) == hi for exactly these s
    bad_type = isinstance(seq_len, bool) or not isinstance(seq_len, int)
    if bad_type or local_length(seq_len, world_size, order) != local_len:
        raise ValueError(
            f"seq_len={seq_len!r} does not match local length {local_len} on {world_size} ranks with "
            f"order={order!r}: valid range is {lo}..{hi}"
        )
    return seq_len


def sort_rows(ranges: Ranges) -> tuple[torch.Tensor | None, Ranges]:
    """Row permutation that puts a tensor made of ``ranges`` in global order, and the coalesced ranges.

    Returns ``(perm, merged)``: ``x.index_select(-2, perm)`` is sorted by position and consists of the
    contiguous runs ``merged``; perm is None when the rows are already sorted. Used by Ulysses/USP, whose
    gathered sequence (zigzag halves of many ranks) is a few contiguous runs once sorted.
    """
    offsets, offset = [], 0
    for _, n in ranges:
        offsets.append(offset)
        offset += n
    order = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
    merged: Ranges = []
    for i in order:
        start, n = ranges[i]
        if merged and merged[-1][0] + merged[-1][1] == start:
            merged[-1] = (merged[-1][0], merged[-1][1] + n)
        else:
            merged.append((start, n))
    if order == list(range(len(ranges))):
        return None, merged
    perm = torch.cat([torch.arange(offsets[i], offsets[i] + ranges[i][1]) for i in order])
    return perm, merged


def inverse(perm: torch.Tensor) -> torch.Tensor:
    """Inverse of a permutation vector."""
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(perm.numel())
    return inv
