"""Tests of ``workbench.llm.mesh_attention.plan`` and ``layout``: plan invariants checked by brute force.

References: brute-force enumeration of blocks, positions and schedules (each block computed exactly once;
every rank's tile is a x b and holds its diagonal block; a causal zigzag block is exactly half visible; a
schedule never computes before its operands arrived), and shard/unshard round trips.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.llm.mesh_attention.layout import resolve_seq_len, shard_sequence, unshard_sequence
from workbench.llm.mesh_attention.plan import (
    MASKED,
    assignment_matrix,
    choose_tile,
    factor_pairs,
    greedy_schedule,
    inter_node_units,
    local_length,
    make_mesh_plan,
    map_tiles_to_nodes,
    rank_ranges,
)


def test_factor_pairs_and_choose_tile() -> None:
    assert factor_pairs(6) == [(1, 6), (2, 3), (3, 2), (6, 1)]
    assert factor_pairs(1) == [(1, 1)]
    assert choose_tile(16) == (4, 4)
    assert choose_tile(6) == (3, 2)  # KV costs 6 units per peer, Q 5: a leans above sqrt(P)
    assert choose_tile(9) == (3, 3)
    assert choose_tile(7) == (7, 1)
    for p in (1, 2, 4, 12, 64, 256, 1024):
        a, b = choose_tile(p)
        assert a * b == p
        assert 5 * (a - 1) + 6 * (b - 1) == min(5 * (x - 1) + 6 * (y - 1) for x, y in factor_pairs(p))


@pytest.mark.parametrize(
    "gpus, tile, per_node",
    [
        (4, (2, 2), None),
        (6, (2, 3), None),
        (6, (3, 2), None),
        (12, (3, 4), None),
        (16, (4, 4), 4),
        (16, (2, 8), 8),
        (8, (2, 4), 4),
        (1, (1, 1), None),
        (5, (1, 5), None),
    ],
)
def test_mesh_tiles_cover_the_matrix(gpus: int, tile, per_node) -> None:
    am = assignment_matrix("mesh", gpus, tile=tile, gpus_per_node=per_node)
    a, b = tile
    assert am.shape == (gpus, gpus)
    assert np.array_equal(np.diag(am), np.arange(gpus))  # local Q-KV property
    for rank in range(gpus):
        rows, cols = np.nonzero(am == rank)
        assert len(rows) == gpus  # a*b blocks each
        assert len(set(rows)) == a and len(set(cols)) == b  # an a x b tile (rows x cols)
        assert set(rows) == set(make_mesh_plan(gpus, tile, per_node).row_group(rank))


def test_ring_usp_ulysses_matrices() -> None:
    assert np.array_equal(assignment_matrix("ring", 3), [[0, 0, 0], [1, 1, 1], [2, 2, 2]])
    assert np.array_equal(assignment_matrix("mesh", 4, tile=(1, 4)), assignment_matrix("ring", 4))
    assert np.array_equal(assignment_matrix("usp", 4, ulysses_degree=2), [[0] * 4, [0] * 4, [1] * 4, [1] * 4])
    assert np.array_equal(assignment_matrix("ulysses", 4), np.zeros((4, 4)))
    assert np.array_equal(assignment_matrix("usp", 4, ulysses_degree=1), assignment_matrix("ring", 4))
    causal = assignment_matrix("ring", 3, causal=True, order="contiguous")
    assert np.array_equal(causal, [[0, MASKED, MASKED], [1, 1, MASKED], [2, 2, 2]])
    assert (assignment_matrix("mesh", 4, causal=True) != MASKED).all()  # zigzag: nothing fully masked


def test_bad_plan_arguments() -> None:
    with pytest.raises(ValueError, match=r"tile=\(2, 3\) has a\*b=6 but gpus=4: the tile must satisfy a\*b == gpus"):
        assignment_matrix("mesh", 4, tile=(2, 3))
    with pytest.raises(ValueError, match=r"method='star' is unknown: valid values are"):
        assignment_matrix("star", 4)
    with pytest.raises(ValueError, match=r"gpus=0 is out of range: valid range is >= 1"):
        choose_tile(0)
    with pytest.raises(ValueError, match=r"order='stripe' is not a known sequence layout"):
        assignment_matrix("ring", 4, order="stripe")


@pytest.mark.parametrize("gpus", [1, 2, 3, 4, 7])
def test_zigzag_blocks_are_exactly_half_visible(gpus: int) -> None:
    """Brute force over positions: every causal (Q_i, KV_j) block has L*L/2 visible pairs (balanced tiles)."""
    length = 6
    pos = [
        np.concatenate([np.arange(s, s + n) for s, n in rank_ranges(r, gpus, length, "zigzag")]) for r in range(gpus)
    ]
    assert sorted(np.concatenate(pos).tolist()) == list(range(gpus * length))
    for i in range(gpus):
        for j in range(gpus):
            visible = (pos[i][:, None] >= pos[j][None, :]).sum()
            assert visible == length * length // 2 + (length // 2 if i == j else 0)


@pytest.mark.parametrize("a, b", [(1, 1), (1, 4), (4, 1), (2, 3), (3, 3), (4, 4)])
@pytest.mark.parametrize("backward", [False, True])
def test_greedy_schedule_invariants(a: int, b: int, backward: bool) -> None:
    for row in range(a):
        for col in range(b):
            steps = greedy_schedule(a, b, row=row, col=col, backward=backward)
            fetched = [(s.kind, s.row if s.kind == "q" else s.col) for s in steps if s.op == "fetch"]
            assert sorted(fetched) == sorted(
                [("q", r) for r in range(a) if r != row] + [("kv", c) for c in range(b) if c != col]
            )
            computes = [(s.row, s.col) for s in steps if s.op == "compute"]
            assert sorted(computes) == [(r, c) for r in range(a) for c in range(b)]
            assert computes[0] == (row, col)  # the resident block first
            have_q, have_kv = {row}, {col}
            for s in steps:
                if s.op == "wait":
                    (have_q if s.kind == "q" else have_kv).add(s.row if s.kind == "q" else s.col)
                if s.op == "compute":
                    assert s.row in have_q and s.col in have_kv
            sends = [s for s in steps if s.op == "send"]
            assert len(sends) == (a - 1) + (b - 1 if backward else 0)
            # each partial leaves right after the last block of its row (column), never before
            for i, s in enumerate(steps):
                if s.op != "send":
                    continue
                line = [
                    t
                    for t in steps[:i]
                    if t.op == "compute" and (t.row == s.row if s.kind != "dkv" else t.col == s.col)
                ]
                assert len(line) == (b if s.kind != "dkv" else a) and steps[i - 1].op in ("compute", "send")


@pytest.mark.parametrize("a, b", [(2, 3), (3, 3), (4, 4), (3, 5)])
@pytest.mark.parametrize("backward", [False, True])
def test_every_tile_position_sends_in_the_same_round_order(a: int, b: int, backward: bool) -> None:
    """mesh._Returns' no-deadlock argument under NCCL: every position issues its return batches in the same
    sequence of (kind, s), s = own position - target position (mod the group size)."""

    def rounds(row: int, col: int) -> list:
        steps = greedy_schedule(a, b, row=row, col=col, backward=backward)
        return [(s.kind, (row - s.row) % a if s.kind != "dkv" else (col - s.col) % b) for s in steps if s.op == "send"]

    first = rounds(0, 0)
    assert all(rounds(r, c) == first for r in range(a) for c in range(b))


def test_greedy_schedule_with_one_row_is_ring_order() -> None:
    steps = greedy_schedule(1, 5, col=2)
    assert [(s.row, s.col) for s in steps if s.op == "compute"] == [(0, 2), (0, 1), (0, 0), (0, 4), (0, 3)]
    # a square tile alternates Q and KV fetches (ties go to the smaller Q chunk)
    kinds = [s.kind for s in greedy_schedule(3, 3) if s.op == "fetch"]
    assert kinds == ["q", "kv", "q", "kv"]


@pytest.mark.parametrize("gpus, tile, per_node", [(16, (4, 4), 4), (16, (2, 8), 4), (32, (4, 8), 8), (8, (2, 4), 2)])
def test_topology_mapping_never_worse_than_row_first(gpus: int, tile, per_node: int) -> None:
    rank_at = map_tiles_to_nodes(gpus, tile, per_node)
    assert sorted(rank_at.tolist()) == list(range(gpus))
    mapped = inter_node_units(gpus, tile, per_node)
    # brute-force cost of the plain row-first layout, same units as inter_node_units
    identity = make_mesh_plan(gpus, tile, None)
    row_first = 0
    for rank in range(gpus):
        node = rank // per_node
        row_first = max(
            row_first,
            5 * sum(p // per_node != node for p in identity.row_group(rank))
            + 6 * sum(p // per_node != node for p in identity.col_group(rank)),
        )
    assert mapped <= row_first
    if tile == (4, 4) and per_node == 4:
        assert mapped < row_first  # a 2 x 2 block per node beats a whole tile-row per node


@pytest.mark.parametrize("order", ["contiguous", "zigzag"])
@pytest.mark.parametrize("seq, gpus", [(10, 1), (10, 3), (16, 4), (17, 4), (5, 6)])
def test_shard_unshard_round_trip(order: str, seq: int, gpus: int) -> None:
    x = torch.arange(2 * seq, dtype=torch.float64).reshape(1, 2, seq, 1)
    parts = [shard_sequence(x, rank=r, world_size=gpus, order=order) for r in range(gpus)]
    assert all(p.shape[2] == local_length(seq, gpus, order) for p in parts)
    assert torch.equal(unshard_sequence(parts, seq_len=seq, order=order), x)
    assert resolve_seq_len(seq, gpus, parts[0].shape[2], order) == seq


def test_seq_len_must_match_local_length() -> None:
    with pytest.raises(
        ValueError,
        match=r"seq_len=8 does not match local length 4 on 4 ranks with order='zigzag': valid range is 9..16",
    ):
        resolve_seq_len(8, 4, 4, "zigzag")
    assert resolve_seq_len(9, 4, 4, "zigzag") == 9
    with pytest.raises(ValueError, match="local sequence length 3 is odd"):
        resolve_seq_len(None, 2, 3, "zigzag")
