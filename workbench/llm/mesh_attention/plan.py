"""Plans for distributed attention: sequence layout, assignment matrices, Mesh tiles, greedy schedule.

Pure functions (numpy, no ``torch.distributed``), shared by the real kernels (``ring.py``, ``mesh.py``, ...),
the byte formulas (``volume.py``) and the cluster model, so that what is modelled is what runs.

Vocabulary (Mesh-Attention, arXiv 2512.20968): the sequence is split into P chunks, one per rank; ``Q_i`` is
the query chunk of rank i and ``KV_j`` the key/value chunk of rank j. The assignment matrix ``AM[i, j]`` names
who computes the block ``attn(Q_i, KV_j)``. Ring gives rank i the row i; Mesh gives each rank an a x b tile.

Sequence layout ("order"):

* ``"contiguous"``: the padded sequence is cut into P equal chunks; rank i holds chunk i.
* ``"zigzag"`` (default when causal): the padded sequence is cut into 2P half-chunks; rank i holds half-chunks
  i and 2P-1-i (ring-flash-attention's zigzag). Under a causal mask every (Q_i, KV_j) block then has exactly
  half of its entries unmasked, so any row (Ring) or tile (Mesh) carries the same work.

A sequence length that the layout does not divide is padded at the end; padded keys are masked and padded
query rows produce zero output and zero gradient.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

Method = Literal["ring", "ulysses", "usp", "mesh", "node_mesh"]
Order = Literal["contiguous", "zigzag"]
METHODS: tuple[str, ...] = ("ring", "ulysses", "usp", "mesh", "node_mesh")
ORDERS: tuple[str, ...] = ("contiguous", "zigzag")

#: entry of an assignment matrix for a block that the causal mask hides completely (never computed)
MASKED = -1

#: per-rank message sizes of one Mesh tile, in units of a Q chunk (B*H*L*D elements): the Q side moves
#: q (fwd), out (fwd), q + dout (bwd), dq (bwd) = 5 units per peer, the KV side k+v (fwd), k+v (bwd),
#: dk+dv (bwd) = 6 units per peer (``volume.py`` has the exact counts, LSE and delta rows included)
MESH_Q_UNITS = 5
MESH_KV_UNITS = 6


# ----------------------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------------------
def check_positive_int(name: str, value: object, *, hi: int | None = None) -> int:
    """Return ``value`` if it is an int >= 1 (and <= hi), else raise ValueError/TypeError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}={value!r} must be an int")
    if value < 1 or (hi is not None and value > hi):
        rng = f"1..{hi}" if hi is not None else ">= 1"
        raise ValueError(f"{name}={value} is out of range: valid range is {rng}")
    return int(value)


def resolve_order(order: str | None, causal: bool) -> str:
    """The sequence layout: ``order`` if given, else ``"zigzag"`` when causal and ``"contiguous"`` otherwise."""
    if order is None:
        return "zigzag" if causal else "contiguous"
    if order not in ORDERS:
        raise ValueError(f"order={order!r} is not a known sequence layout: valid values are {ORDERS}")
    return order


def check_ulysses_degree(degree: int, *, gpus: int, heads: int) -> int:
    """Check that the Ulysses degree divides ``gpus`` and ``heads``; return it.

    Raises:
        ValueError: naming ``heads`` (or ``ulysses_degree``), its value, the degree and the rule.
    """
    degree = check_positive_int("ulysses_degree", degree)
    if gpus % degree:
        raise ValueError(
            f"ulysses_degree={degree} does not divide gpus={gpus}: the Ulysses degree u must divide the number "
            f"of ranks (u * ring_degree = gpus); valid values are {divisors(gpus)}"
        )
    if heads % degree:
        raise ValueError(
            f"heads={heads} is not divisible by the Ulysses degree {degree}: the all-to-all over heads needs "
            f"heads % degree == 0; degrees that work with heads={heads} and gpus={gpus} are "
            f"{[d for d in divisors(gpus) if heads % d == 0]}"
        )
    return degree


def divisors(n: int) -> list[int]:
    """All divisors of ``n`` in increasing order."""
    return [d for d in range(1, n + 1) if n % d == 0]


def factor_pairs(gpus: int) -> list[tuple[int, int]]:
    """All tiles (a, b) with a * b = gpus, ordered by a. ``factor_pairs(6) == [(1,6),(2,3),(3,2),(6,1)]``."""
    gpus = check_positive_int("gpus", gpus)
    return [(a, gpus // a) for a in divisors(gpus)]


def check_tile(tile: Sequence[int], gpus: int) -> tuple[int, int]:
    """Validate a Mesh tile (a, b): two positive ints with a * b == gpus."""
    if len(tile) != 2:
        raise ValueError(f"tile={tuple(tile)!r} must be a pair (a, b) with a * b = gpus={gpus}")
    a, b = (check_positive_int("tile[0] (a)", tile[0]), check_positive_int("tile[1] (b)", tile[1]))
    if a * b != gpus:
        raise ValueError(
            f"tile=({a}, {b}) has a*b={a * b} but gpus={gpus}: the tile must satisfy a*b == gpus; "
            f"valid tiles are {factor_pairs(gpus)}"
        )
    return a, b


# ----------------------------------------------------------------------------------------------------------
# sequence layout
# ----------------------------------------------------------------------------------------------------------
def padded_length(seq: int, gpus: int, order: str) -> int:
    """Length after padding so that ``order`` splits it evenly (a multiple of P, or of 2P for zigzag)."""
    pieces = 2 * gpus if order == "zigzag" else gpus
    return -(-seq // pieces) * pieces


def local_length(seq: int, gpus: int, order: str) -> int:
    """Tokens per rank (padding included): ``padded_length(seq, gpus, order) // gpus``."""
    return padded_length(seq, gpus, order) // gpus


def rank_ranges(rank: int, gpus: int, local_len: int, order: str) -> list[tuple[int, int]]:
    """Global (start, length) ranges of the tokens of ``rank``, in the order they sit in its local tensor.

    Example: ``rank_ranges(1, 4, 4, "zigzag") == [(2, 2), (12, 2)]`` (half-chunks 1 and 6 of 8).
    """
    if order == "zigzag":
        half = local_len // 2
        return [(rank * half, half), ((2 * gpus - 1 - rank) * half, half)]
    return [(rank * local_len, local_len)]


# ----------------------------------------------------------------------------------------------------------
# Mesh tiles and topology
# ----------------------------------------------------------------------------------------------------------
def map_tiles_to_nodes(gpus: int, tile: Sequence[int], gpus_per_node: int | None = None) -> np.ndarray:
    """Topology-aware placement of ranks on the b x a grid of Mesh tiles.

    Tiles form a grid of b tile-rows by a tile-columns (P cells, one per rank); cell ``p = I*a + J``. Ranks in
    the same tile-row I share Q chunks (the *row group*, a ranks); ranks in the same tile-column J share KV
    chunks (the *column group*, b ranks). Nodes hold consecutive ranks. We give each node a g_I x g_J block of
    the grid (g_I * g_J = gpus_per_node, g_I | b, g_J | a) chosen to minimise the per-rank bytes that cross
    nodes, ``MESH_Q_UNITS*(a - g_J) + MESH_KV_UNITS*(b - g_I)``; ties prefer more KV peers inside the node.
    When no such block exists (or one node holds everything) the plain row-first layout is used.

    Returns:
        ``rank_at[p]``: the rank placed at grid cell p (a permutation of 0..P-1).
    """
    gpus = check_positive_int("gpus", gpus)
    a, b = check_tile(tile, gpus)
    identity = np.arange(gpus, dtype=np.int64)
    if gpus_per_node is None:
        return identity
    g = check_positive_int("gpus_per_node", gpus_per_node)
    if g >= gpus or gpus % g:
        return identity
    best: tuple[int, int, int, int] | None = None  # (cost, -g_I, g_I, g_J)
    for g_i in divisors(b):
        if g % g_i or a % (g // g_i):
            continue
        g_j = g // g_i
        cost = MESH_Q_UNITS * (a - g_j) + MESH_KV_UNITS * (b - g_i)
        key = (cost, -g_i, g_i, g_j)
        if best is None or key < best:
            best = key
    if best is None:
        return identity
    _, _, g_i, g_j = best
    rank_at = np.empty(gpus, dtype=np.int64)
    nodes_per_grid_row = a // g_j
    for rank in range(gpus):
        node, slot = divmod(rank, g)
        node_i, node_j = divmod(node, nodes_per_grid_row)
        slot_i, slot_j = divmod(slot, g_j)
        cell = (node_i * g_i + slot_i) * a + node_j * g_j + slot_j
        rank_at[cell] = rank
    return rank_at


@dataclass(frozen=True)
class MeshPlan:
    """Who computes what in Mesh-Attention with tile (a, b).

    Attributes:
        gpus: P = a * b.
        a: Q chunks per tile (rows); b: KV chunks per tile (columns).
        rank_at: rank placed at each cell of the b x a tile grid (``map_tiles_to_nodes``).
        pos_of: inverse permutation, the grid cell of each rank.

    Rank r at cell (I, J) computes the blocks (Q_i, KV_j) for i in ``row_group(r)`` and j in ``col_group(r)``;
    since r is in both groups its tile holds its own diagonal block (the local Q-KV property). Groups are
    ordered by grid position, which fixes the KV Partition Rotation order (``fetch_order``).
    """

    gpus: int
    a: int
    b: int
    rank_at: np.ndarray
    pos_of: np.ndarray

    def cell(self, rank: int) -> tuple[int, int]:
        """Grid cell (I, J) of ``rank``: I in 0..b-1 (tile-row), J in 0..a-1 (tile-column)."""
        return divmod(int(self.pos_of[rank]), self.a)

    def row_group(self, rank: int) -> list[int]:
        """The a ranks whose Q chunks form the rows of ``rank``'s tile (ordered by tile-column J)."""
        i, _ = self.cell(rank)
        return [int(self.rank_at[i * self.a + j]) for j in range(self.a)]

    def col_group(self, rank: int) -> list[int]:
        """The b ranks whose KV chunks form the columns of ``rank``'s tile (ordered by tile-row I)."""
        _, j = self.cell(rank)
        return [int(self.rank_at[i * self.a + j]) for i in range(self.b)]


def make_mesh_plan(gpus: int, tile: Sequence[int], gpus_per_node: int | None = None) -> MeshPlan:
    """Build the :class:`MeshPlan` for ``tile`` with topology-aware placement (see ``map_tiles_to_nodes``)."""
    rank_at = map_tiles_to_nodes(gpus, tile, gpus_per_node)
    pos_of = np.empty_like(rank_at)
    pos_of[rank_at] = np.arange(gpus, dtype=np.int64)
    a, b = check_tile(tile, gpus)
    return MeshPlan(gpus=gpus, a=a, b=b, rank_at=rank_at, pos_of=pos_of)


def mesh_units(a: int, b: int, head_dim: int | None = None) -> float:
    """Per-rank fwd+bwd bytes of tile (a, b) in units of one Q chunk (exact when head_dim is given)."""
    if head_dim is None:
        return MESH_Q_UNITS * (a - 1) + MESH_KV_UNITS * (b - 1)
    d = head_dim
    return ((a - 1) * (5 * d + 3) + (b - 1) * 6 * d) / d


def choose_tile(
    gpus: int, *, heads: int | None = None, gpus_per_node: int | None = None, head_dim: int | None = None
) -> tuple[int, int]:
    """Pick the Mesh tile (a, b), a * b = gpus, that moves the fewest bytes per rank.

    Volume per rank (fwd+bwd, in Q-chunk units) is ``5(a-1) + 6(b-1)`` (plus LSE rows, exact when
    ``head_dim`` is given; see ``volume.py``); KV is twice Q, so the optimum leans to a slightly above sqrt(P).
    Ties are broken by the bytes that cross nodes under ``gpus_per_node`` (topology-aware mapping), then by
    the squarer tile. ``heads`` does not constrain Mesh (it is accepted for a uniform signature and checked).

    Example: ``choose_tile(16) == (4, 4)``; ``choose_tile(6) == (3, 2)``.
    """
    gpus = check_positive_int("gpus", gpus)
    if heads is not None:
        check_positive_int("heads", heads)

    def key(pair: tuple[int, int]) -> tuple[float, float, int]:
        a, b = pair
        inter = 0.0
        if gpus_per_node is not None:
            inter = float(inter_node_units(gpus, pair, gpus_per_node))
        return (mesh_units(a, b, head_dim), inter, abs(a - b))

    return min(factor_pairs(gpus), key=key)


def off_node_peers(gpus: int, tile: Sequence[int], gpus_per_node: int) -> tuple[np.ndarray, np.ndarray]:
    """Per rank: how many of its Mesh row peers and column peers sit on another node (vectorised, O(P(a+b)))."""
    plan = make_mesh_plan(gpus, tile, gpus_per_node)
    node_grid = (plan.rank_at // gpus_per_node).reshape(plan.b, plan.a)  # [b, a]: node of each grid cell
    q_same = (node_grid[:, :, None] == node_grid[:, None, :]).sum(-1)  # [b, a]: row peers on my node (+me)
    kv_same = (node_grid[:, None, :] == node_grid[None, :, :]).sum(1)  # [b, a]: column peers on my node (+me)
    q_off = np.empty(gpus, dtype=np.int64)
    kv_off = np.empty(gpus, dtype=np.int64)
    q_off[plan.rank_at] = (plan.a - q_same).reshape(-1)
    kv_off[plan.rank_at] = (plan.b - kv_same).reshape(-1)
    return q_off, kv_off


def inter_node_units(gpus: int, tile: Sequence[int], gpus_per_node: int) -> float:
    """Largest per-rank fwd+bwd volume (Q-chunk units) that crosses nodes with the topology-aware placement."""
    q_off, kv_off = off_node_peers(gpus, tile, gpus_per_node)
    return float((MESH_Q_UNITS * q_off + MESH_KV_UNITS * kv_off).max())


def node_mesh_placement(degree: int, gpus_per_node: int | None) -> int | None:
    """Groups per node for the node-level Mesh's tile placement: ``gpus_per_node // degree`` when the node
    holds several whole Ulysses groups, else None (every group on its own node(s): row-first placement)."""
    if gpus_per_node is None or gpus_per_node % degree or gpus_per_node // degree < 2:
        return None
    return gpus_per_node // degree


def default_ulysses_degree(gpus: int, heads: int, gpus_per_node: int | None = None) -> int:
    """USP default: the largest u that divides gpus and heads, kept inside one node when gpus_per_node is given."""
    cap = gpus if gpus_per_node is None else min(gpus, gpus_per_node)
    return max(d for d in divisors(gpus) if heads % d == 0 and d <= cap)


# ----------------------------------------------------------------------------------------------------------
# assignment matrix
# ----------------------------------------------------------------------------------------------------------
def assignment_matrix(
    method: str,
    gpus: int,
    *,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    causal: bool = False,
    order: str | None = None,
    gpus_per_node: int | None = None,
) -> np.ndarray:
    """``AM[i, j]``: who computes the block attn(Q_i, KV_j), as a [P, P] int64 array.

    * ``ring``: rank i computes row i.
    * ``mesh``: the rank whose tile holds (i, j) (tile from ``tile`` or ``choose_tile``).
    * ``node_mesh``: the Ulysses group id (as usp) of the group whose Mesh tile (over the P/u groups) holds
      the block of their super-chunks; its u members compute it, each for heads/u heads.
    * ``usp`` and ``ulysses``: the entry is the *Ulysses group* id g (ranks g*u .. g*u+u-1), whose u members
      all compute that block, each for heads/u heads. Ulysses is u = P (one group, all zeros); Ring is u = 1
      (group = rank), so the three conventions agree.
    * ``MASKED`` (-1) marks blocks that the causal mask hides completely under the layout ``order``: with the
      contiguous order that is j > i; with zigzag no block is fully masked. Blocks hidden only because the
      sequence is so short that a chunk is all padding are not marked (the plan does not know ``seq``).
    """
    gpus = check_positive_int("gpus", gpus)
    if method not in METHODS:
        raise ValueError(f"method={method!r} is unknown: valid values are {METHODS}")
    order = resolve_order(order, causal)
    rows = np.arange(gpus)[:, None]
    cols = np.arange(gpus)[None, :]
    if method == "ring":
        am = np.broadcast_to(rows, (gpus, gpus)).astype(np.int64)
    elif method == "node_mesh":
        u = ulysses_degree or gpus
        if gpus % u:
            raise ValueError(f"ulysses_degree={u} does not divide gpus={gpus}: valid values are {divisors(gpus)}")
        groups, place = gpus // u, node_mesh_placement(u, gpus_per_node)
        pair = choose_tile(groups, gpus_per_node=place) if tile is None else check_tile(tile, groups)
        group_am = assignment_matrix("mesh", groups, tile=pair, gpus_per_node=place)
        am = group_am[rows // u, cols // u].astype(np.int64)
    elif method == "mesh":
        pair = choose_tile(gpus, gpus_per_node=gpus_per_node) if tile is None else check_tile(tile, gpus)
        plan = make_mesh_plan(gpus, pair, gpus_per_node)
        cell_i = plan.pos_of // plan.a  # tile-row of each Q owner
        cell_j = plan.pos_of % plan.a  # tile-column of each KV owner
        am = plan.rank_at[cell_i[:, None] * plan.a + cell_j[None, :]].astype(np.int64)
    else:
        u = gpus if method == "ulysses" else (ulysses_degree or gpus)
        if gpus % u:
            raise ValueError(f"ulysses_degree={u} does not divide gpus={gpus}: valid values are {divisors(gpus)}")
        am = np.broadcast_to(rows // u, (gpus, gpus)).astype(np.int64)
    if causal and order == "contiguous":
        am = np.where(cols > rows, MASKED, am)
    return np.ascontiguousarray(am)


def ring_source(rank: int, step: int, size: int) -> int:
    """Owner of the KV chunk a ring member holds at ``step`` (KV travels m -> m+1): ``(rank - step) % size``."""
    return (rank - step) % size


# ----------------------------------------------------------------------------------------------------------
# greedy Mesh schedule
# ----------------------------------------------------------------------------------------------------------
class Step(NamedTuple):
    """One step of a tile schedule.

    ``op``: ``"fetch"`` (post the receive of a remote chunk; all fetches of a pass are posted together, in
    this order, as one batch), ``"wait"`` (block until that chunk has arrived), ``"compute"`` (the block
    (row, col)), ``"send"`` (return a partial to its owner as soon as its row / column is complete; paired
    with the matching receive, see ``mesh.py`` for the ordering argument under NCCL).
    ``kind``: ``"q"`` / ``"kv"`` for fetch and wait (in the backward pass ``"q"`` means q, dout, lse, delta),
    ``"out"`` (partial O and LSE), ``"dq"``, ``"dkv"`` for send; None for compute.
    ``row``/``col``: positions inside the tile (0..a-1 in the row group, 0..b-1 in the column group).
    """

    op: str
    kind: str | None
    row: int | None
    col: int | None


def fetch_order(size: int, own: int, *, rotate: bool = True) -> list[int]:
    """Order in which the member at position ``own`` of a group of ``size`` fetches the others' chunks.

    KV Partition Rotation (our reading of the paper's KVR): member m fetches from m-1, m-2, ... (cyclic), so
    at every step each member serves exactly one peer and every link carries one chunk at a time (a
    rotation, like Ring's); with ``rotate=False`` everyone fetches in index order and the first owners become
    hot spots. With a = 1 the column order is exactly Ring's (KV from r-1, r-2, ...).
    """
    if rotate:
        return [(own - s) % size for s in range(1, size)]
    return [m for m in range(size) if m != own]


#: tile schedules: ``"current"`` computes every block as soon as its chunks are resident; ``"greedy-backlog"``
#: holds back ready blocks whose result stays on the rank and uses them to fill communication waits
SCHEDULES: tuple[str, ...] = ("current", "greedy-backlog")


def check_schedule(schedule: str, comm_blocks: float = 1.0) -> tuple[str, float]:
    """Validate a tile schedule name and its cost estimate; return them (``comm_blocks`` as a float)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule={schedule!r} is unknown: valid values are {SCHEDULES}")
    if isinstance(comm_blocks, bool) or not isinstance(comm_blocks, (int, float, np.integer, np.floating)):
        raise TypeError(f"comm_blocks={comm_blocks!r} must be a number (valid range 0..1e6)")
    if not 0.0 <= float(comm_blocks) <= 1e6:
        raise ValueError(f"comm_blocks={comm_blocks} is out of range: valid range is 0..1e6 (block times)")
    return schedule, float(comm_blocks)


#: fetched chunk sizes the greedy-backlog planner assumes, in Q-chunk units (LSE / delta rows neglected):
#: forward q 1, k+v 2; backward q+dout 2, k+v 2
_PLAN_UNITS = {False: {"q": 1.0, "kv": 2.0}, True: {"q": 2.0, "kv": 2.0}}


def greedy_schedule(
    a: int,
    b: int,
    *,
    row: int = 0,
    col: int = 0,
    backward: bool = False,
    rotate: bool = True,
    schedule: str = "current",
    comm_blocks: float = 1.0,
) -> list[Step]:
    """Greedy fetch/compute order for one rank's a x b tile (row, col: its own position in the tile).

    Rules (Mesh-Attention's greedy scheduling, as we read it):

    1. Fetch order: next fetch the chunk that completes the most pending blocks (a Q row completes one block
       per resident KV column, a KV column one per resident Q row); ties go to Q, the smaller chunk. Within a
       kind, chunks come in KVR rotation order (``fetch_order``).
    2. The resident block (row, col) is computed first, while every fetch is in flight.
    3. Then chunks are waited for in fetch order; after each arrival the blocks it makes computable are run,
       first those that finish a remote row (forward) or a row/column (backward) soonest, so partials can leave.
    4. Each partial goes back to its owner as soon as its last block is done (a ``send`` step right after that
       compute): (a-1) ``out`` sends forward; (a-1) ``dq`` and (b-1) ``dkv`` sends backward. With
       ``rotate=False`` they all go out after the last block instead (see ``mesh.py`` for why: the early sends
       rely on every tile position running the same program, shifted, which only the rotation order gives).

    ``schedule="greedy-backlog"`` (INFERENCE: our reading of the paper's "holds back ready computation to fill
    later communication waits", known only from third-party reviews, see
    ``/work/shared/papers/further/mesh-attention.md``; the paper's own algorithm and its "restrictions" are not
    known) replaces rules 2-3 by a compute backlog. The fetches (rule 1) and the sends (rule 4) are unchanged.

    * A ready block whose result stays on this rank goes to the *backlog* instead of being computed: in the
      forward pass the blocks of the own row (its O/LSE partial is never sent); in the backward pass only the
      diagonal block (row, col), since every other block feeds a dQ or dK/dV partial that must leave. All other
      ready blocks are *urgent* and computed at once, in rule 3's order.
    * The backlog is spent only to fill a communication wait: before waiting for the next chunk, the planner
      computes backlog blocks (oldest first) while its estimated clock is earlier than that chunk's estimated
      arrival. Whatever is left runs after the last urgent block, while the partials are in flight.
    * The estimate (INFERENCE: a planning assumption, not from the paper): one block costs 1 time unit, a
      fetch ``comm_blocks`` x its size in Q chunks (forward q 1, kv 2; backward q+dout 2, kv 2), every fetch
      on one FIFO link posted at t=0. ``comm_blocks`` is the same on every rank, so every tile position
      still runs the same program, shifted (the early sends in ``mesh.py`` rely on it).

    Example: ``greedy_schedule(1, 3)`` fetches KV columns 2 then 1 and computes (0,0), (0,2), (0,1).
    ``greedy_schedule(2, 3, schedule="greedy-backlog", comm_blocks=0.25)`` computes (0,0) while Q row 1
    travels, then (1,0), (1,2), (1,1), sends row 1's partial, then the held-back own-row blocks (0,2), (0,1)
    while it travels (``"current"`` computes (0,2) before (1,1), so the partial leaves one block later).
    Complexity O((a*b)^2) in Python, fine for tiles up to a few thousand blocks.
    """
    a = check_positive_int("a", a)
    b = check_positive_int("b", b)
    schedule, comm_blocks = check_schedule(schedule, comm_blocks)
    fetches = greedy_fetches(a, b, row=row, col=col, rotate=rotate)
    tile = _TilePlan(a, b, row, col, backward, rotate)
    tile.steps += [
        Step("fetch", kind, idx if kind == "q" else None, idx if kind == "kv" else None) for kind, idx in fetches
    ]
    tile.compute_after_fetches(fetches, backlog_mode=schedule == "greedy-backlog", comm_blocks=comm_blocks)
    if not rotate:
        tile.send_all_partials()
    return tile.steps


def greedy_fetches(a: int, b: int, *, row: int = 0, col: int = 0, rotate: bool = True) -> list[tuple[str, int]]:
    """Rule 1 of :func:`greedy_schedule`: the fetch order, as ("q" | "kv", chunk index) pairs: next the chunk
    that completes the most pending blocks, ties to Q; within a kind the ``fetch_order`` rotation."""
    q_queue = fetch_order(a, row, rotate=rotate)
    kv_queue = fetch_order(b, col, rotate=rotate)
    have_q, have_kv = 1, 1  # resident chunks of each kind
    fetches: list[tuple[str, int]] = []
    while q_queue or kv_queue:
        gain_q = have_kv if q_queue else -1
        gain_kv = have_q if kv_queue else -1
        if gain_q >= gain_kv:
            fetches.append(("q", q_queue.pop(0)))
            have_q += 1
        else:
            fetches.append(("kv", kv_queue.pop(0)))
            have_kv += 1
    return fetches


@dataclass
class _TilePlan:
    """The state of one rank's schedule while :func:`greedy_schedule` builds it (rules 2-4 and the backlog)."""

    a: int
    b: int
    row: int
    col: int
    backward: bool
    rotate: bool

    def __post_init__(self) -> None:
        self.steps: list[Step] = []
        self.row_left = {r: self.b for r in range(self.a)}  # blocks still to compute per Q row
        self.col_left = {c: self.a for c in range(self.b)}  # ... per KV column

    def run(self, block: tuple[int, int]) -> None:
        """Compute one block; with ``rotate``, a remote row's (column's) partial leaves right after its last block
        (rule 4); without, sends go out as one batch after the last block (:meth:`send_all_partials`)."""
        r, c = block
        self.steps.append(Step("compute", None, r, c))
        self.row_left[r] -= 1
        self.col_left[c] -= 1
        if not self.rotate:
            return
        if self.row_left[r] == 0 and r != self.row:
            self.steps.append(Step("send", "dq" if self.backward else "out", r, None))
        if self.backward and self.col_left[c] == 0 and c != self.col:
            self.steps.append(Step("send", "dkv", None, c))

    def held(self, blk: tuple[int, int]) -> bool:
        """Whether the block's result stays on this rank (a backlog block in ``greedy-backlog``)."""
        return blk[0] == self.row and (not self.backward or blk[1] == self.col)

    def relative(self, blk: tuple[int, int]) -> tuple[int, int]:
        """Position relative to the own block: ties broken by it make every tile position run the same program,
        shifted (the send order relies on it)."""
        return ((blk[0] - self.row) % self.a, (blk[1] - self.col) % self.b)

    def urgency(self, blk: tuple[int, int]) -> tuple[int, int, int]:
        """Rule 3's order: blocks that finish a remote row (forward) or a row/column (backward) soonest first."""
        never = self.a + self.b + 1
        r_left = self.row_left[blk[0]] if blk[0] != self.row or self.backward else never
        c_left = self.col_left[blk[1]] if self.backward and blk[1] != self.col else never
        return (min(r_left, c_left), *self.relative(blk))

    def run_ready(self, ready: list[tuple[int, int]]) -> int:
        """Compute the ready blocks in rule 3's order; returns how many ran (block times)."""
        if not self.backward:
            # forward keys use row_left only: a Q arrival releases one row (running a block lowers every key of
            # the batch alike), a KV arrival one block per row (running one changes only its own key), so one
            # sort gives the same order as picking the minimum again after every block
            ready.sort(key=self.urgency)
        done = 0
        while ready:
            nxt = ready.pop(0) if not self.backward else min(ready, key=self.urgency)
            if self.backward:
                ready.remove(nxt)
            self.run(nxt)
            done += 1
        return done

    def compute_after_fetches(self, fetches: list[tuple[str, int]], *, backlog_mode: bool, comm_blocks: float) -> None:
        """Rules 2-3 (or the backlog variant): the own block, then per arriving chunk a wait and the blocks it
        makes computable; with ``backlog_mode``, held blocks fill the waits and the rest runs at the end."""
        units = _PLAN_UNITS[self.backward]
        arrival = list(itertools.accumulate(comm_blocks * units[kind] for kind, _ in fetches))
        own = (self.row, self.col)
        backlog: list[tuple[int, int]] = [own] if backlog_mode else []
        clock = 0.0  # the planner's estimate, in block times
        if not backlog_mode:
            self.run(own)
            clock = 1.0
        res_q, res_kv = {self.row}, {self.col}
        for f, (kind, idx) in enumerate(fetches):
            while backlog_mode and backlog and clock < arrival[f]:  # fill the wait for this chunk
                self.run(backlog.pop(0))
                clock += 1.0
            clock = max(clock, arrival[f])
            self.steps.append(Step("wait", kind, idx if kind == "q" else None, idx if kind == "kv" else None))
            if kind == "q":
                res_q.add(idx)
                ready = [(idx, c) for c in res_kv]
            else:
                res_kv.add(idx)
                ready = [(r, idx) for r in res_q]
            if backlog_mode:
                # held-back blocks join the backlog in a position-relative order (same program on every rank)
                backlog += sorted((blk for blk in ready if self.held(blk)), key=self.relative)
                ready = [blk for blk in ready if not self.held(blk)]
            clock += self.run_ready(ready)
        for blk in backlog:  # what no wait used: computed while the partials travel
            self.run(blk)

    def send_all_partials(self) -> None:
        """Without rotation: every partial goes back after the last block, in ``fetch_order``."""
        rows = fetch_order(self.a, self.row, rotate=self.rotate)
        if self.backward:
            self.steps += [Step("send", "dq", r, None) for r in rows]
            self.steps += [Step("send", "dkv", None, c) for c in fetch_order(self.b, self.col, rotate=self.rotate)]
        else:
            self.steps += [Step("send", "out", r, None) for r in rows]


def block_count(gpus: int, *, causal: bool, order: str | None = None) -> float:
    """Fraction of a full (Q_i, KV_j) block's score entries that are computed, averaged over blocks.

    Non-causal: 1. Causal with zigzag: exactly 1/2 for every block (balanced). Causal contiguous: diagonal
    blocks 1/2, blocks above the diagonal 0 (use ``assignment_matrix`` to see which).
    """
    order = resolve_order(order, causal)
    if not causal:
        return 1.0
    if order == "zigzag":
        return 0.5
    return (gpus * (gpus - 1) / 2 + gpus / 2) / (gpus * gpus)
