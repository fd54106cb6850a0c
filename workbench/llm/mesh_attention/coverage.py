"""Coverage: does a method compute every (Q_i, KV_j) block exactly once (and, causal, only the needed ones)?

Two views of the same question, both per head (head-sharded methods compute a block for heads/u heads):

* **planned** (:func:`planned_blocks`): the blocks each rank computes, enumerated from the method's own plan,
  the objects its kernel or model runs: Ring's step rule (``plan.ring_source``), Ulysses' and USP's groups
  (``usp.usp_comms``'s partition), Mesh's tiles and greedy schedule (``plan.make_mesh_plan``,
  ``plan.greedy_schedule``), the node-level Mesh (both), StarTrail's layout (``startrail.startrail_blocks``,
  modelled only).
* **executed** (:func:`executed_blocks`): the (query ranges, key ranges) of every ``blockwise.attend_ranges``
  call a real run made, mapped back to chunks; a chunk pair counts when at least one of its entries is
  unmasked and not padding, i.e. when the blockwise kernel really computes something for it.

:func:`needed_blocks` is what attention needs: (i, j) such that some query of chunk i may attend to some key
of chunk j (causal: key position <= query position; padding excluded). A method covers when
``planned[h, i, j] == 1`` wherever needed (the kernel skips a scheduled block that the mask hides completely)
and ``executed[h] == needed`` exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from workbench.llm.mesh_attention.plan import (
    choose_tile,
    default_ulysses_degree,
    greedy_schedule,
    local_length,
    make_mesh_plan,
    node_mesh_placement,
    padded_length,
    rank_ranges,
    resolve_order,
    ring_source,
)

__all__ = ["COVERAGE_METHODS", "planned_blocks", "needed_blocks", "executed_blocks", "coverage_errors"]

COVERAGE_METHODS: tuple[str, ...] = ("ring", "ulysses", "usp", "mesh", "node_mesh", "startrail")


def _mesh_rank_blocks(
    gpus: int, tile: tuple[int, int], place: int | None, rotate: bool, sched: tuple = ("current", 1.0, False)
) -> list[list[tuple[int, int]]]:
    """Per Mesh member, the (row member, column member) blocks its greedy schedule computes.
    ``sched``: (schedule, comm_blocks, backward) of ``plan.greedy_schedule``."""
    plan = make_mesh_plan(gpus, tile, place)
    schedule, comm_blocks, backward = sched
    out = []
    for me in range(gpus):
        rows, cols = plan.row_group(me), plan.col_group(me)
        steps = greedy_schedule(
            plan.a, plan.b, row=rows.index(me), col=cols.index(me), rotate=rotate, backward=backward,
            schedule=schedule, comm_blocks=comm_blocks,
        )  # fmt: skip
        out.append([(rows[s.row], cols[s.col]) for s in steps if s.op == "compute"])
    return out


def planned_blocks(
    method: str,
    gpus: int,
    *,
    heads: int,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    team_size: int | None = None,
    gpus_per_node: int | None = None,
    rotate: bool = True,
    schedule: str = "current",
    comm_blocks: float = 1.0,
    backward: bool = False,
) -> np.ndarray:
    """``count[h, i, j]``: how many ranks compute block (Q_i, KV_j) for head h according to the method's plan.

    Parameters: as the kernels (``tile`` is the flat Mesh's a*b = P, or the node-level Mesh's a*b = P/u;
    ``team_size`` is StarTrail's C, default the largest valid). ``schedule``, ``comm_blocks``, ``backward``:
    which Mesh tile schedule to enumerate (``plan.greedy_schedule``; flat and node-level Mesh only).
    Returns an int64 array [heads, P, P].
    Raises ValueError for an unknown method.
    """
    count = np.zeros((heads, gpus, gpus), dtype=np.int64)
    if method == "ring":
        for r in range(gpus):
            for step in range(gpus):
                count[:, r, ring_source(r, step, gpus)] += 1
    elif method in ("ulysses", "usp", "node_mesh"):
        u = gpus if method == "ulysses" else (ulysses_degree or default_ulysses_degree(gpus, heads, gpus_per_node))
        groups, per = gpus // u, heads // u
        if method == "node_mesh":
            place = node_mesh_placement(u, gpus_per_node)
            pair = tuple(tile) if tile is not None else choose_tile(groups, gpus_per_node=place)
            group_blocks = _mesh_rank_blocks(groups, pair, place, rotate, (schedule, comm_blocks, backward))
        else:  # a ring over the groups (Ulysses: one group)
            group_blocks = [[(g, ring_source(g, s, groups)) for s in range(groups)] for g in range(groups)]
        for rank in range(gpus):
            g, x = divmod(rank, u)  # Ulysses group and member; member x holds heads x*H/u .. (x+1)*H/u - 1
            for gi, gj in group_blocks[g]:
                count[x * per : (x + 1) * per, gi * u : (gi + 1) * u, gj * u : (gj + 1) * u] += 1
    elif method == "mesh":
        pair = tuple(tile) if tile is not None else choose_tile(gpus, gpus_per_node=gpus_per_node)
        for blocks in _mesh_rank_blocks(gpus, pair, gpus_per_node, rotate, (schedule, comm_blocks, backward)):
            for i, j in blocks:
                count[:, i, j] += 1
    elif method == "startrail":
        from workbench.llm.mesh_attention.startrail import startrail_blocks, startrail_team_sizes

        c = team_size or startrail_team_sizes(gpus, gpus_per_node or gpus)[-1]
        for blocks in startrail_blocks(gpus, c):
            for i, j in blocks:
                count[:, i, j] += 1
    else:
        raise ValueError(f"method={method!r} is unknown: valid values are {COVERAGE_METHODS}")
    return count


def _units(gpus: int, seq: int, order: str) -> tuple[np.ndarray, int]:
    """Owner chunk of each layout unit (a half-chunk under zigzag, a chunk otherwise) and the unit length."""
    length = local_length(seq, gpus, order)
    unit = length // 2 if order == "zigzag" else length
    owner = np.empty(padded_length(seq, gpus, order) // unit, dtype=np.int64)
    for r in range(gpus):
        for start, n in rank_ranges(r, gpus, length, order):
            owner[start // unit : (start + n) // unit] = r
    return owner, unit


def _runs(q_lo: int, q_hi: int, k_lo: int, k_hi: int, seq: int, causal: bool) -> bool:
    """True if some query in [q_lo, q_hi) and key in [k_lo, k_hi), both < seq, interact (causal: key <= query)."""
    q_hi, k_hi = min(q_hi, seq), min(k_hi, seq)
    if q_lo >= q_hi or k_lo >= k_hi:
        return False
    return not causal or k_lo <= q_hi - 1


def needed_blocks(gpus: int, seq: int, *, causal: bool, order: str | None = None) -> np.ndarray:
    """``needed[i, j]``: some query of chunk i attends to some key of chunk j (bool [P, P])."""
    order = resolve_order(order, causal)
    owner, unit = _units(gpus, seq, order)
    need = np.zeros((gpus, gpus), dtype=bool)
    for tq, i in enumerate(owner):
        for tk, j in enumerate(owner):
            if _runs(tq * unit, (tq + 1) * unit, tk * unit, (tk + 1) * unit, seq, causal):
                need[i, j] = True
    return need


def executed_blocks(
    calls: Iterable[tuple[Sequence[tuple[int, int]], Sequence[tuple[int, int]], Sequence[int]]],
    gpus: int,
    seq: int,
    *,
    heads: int,
    causal: bool,
    order: str | None = None,
) -> np.ndarray:
    """``count[h, i, j]`` from recorded ``attend_ranges`` calls ``(q_ranges, k_ranges, head indices)``: a call
    counts once for chunk pair (i, j) if any of its (query unit, key unit) pairs of those chunks runs."""
    order = resolve_order(order, causal)
    owner, unit = _units(gpus, seq, order)
    count = np.zeros((heads, gpus, gpus), dtype=np.int64)

    def split(ranges: Sequence[tuple[int, int]]) -> list[int]:
        return [t for start, n in ranges for t in range(start // unit, (start + n) // unit)]

    for q_ranges, k_ranges, head_idx in calls:
        hit = np.zeros((gpus, gpus), dtype=bool)
        for tq in split(q_ranges):
            for tk in split(k_ranges):
                if _runs(tq * unit, (tq + 1) * unit, tk * unit, (tk + 1) * unit, seq, causal):
                    hit[owner[tq], owner[tk]] = True
        count[np.asarray(head_idx)] += hit
    return count


def coverage_errors(count: np.ndarray, needed: np.ndarray, *, planned: bool) -> list[str]:
    """Blocks computed other than exactly once where needed (and, executed, any not needed), as messages."""
    errors = []
    heads = count.shape[0]
    for h, i, j in zip(*np.nonzero((count != 1) & needed[None])):
        errors.append(f"head {h}: block (Q_{i}, KV_{j}) computed {count[h, i, j]} times")
    if not planned:
        for h, i, j in zip(*np.nonzero((count > 0) & ~needed[None])):
            errors.append(f"head {h}: block (Q_{i}, KV_{j}) is not needed but computed {count[h, i, j]} times")
    return errors[: 10 * max(heads, 1)]
