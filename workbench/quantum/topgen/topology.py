"""Device topology: the undirected coupling graph, a connected region of the device for a Q-qubit ansatz,
and its tiling into small connected fragments (TopGen's sub-topologies; arXiv 2210.08190v1, step 1-2).

Everything here is pure graph code over a calibration's ``coupling_map`` (directed pairs, both directions on
IBM devices). Fragments are vertex sets whose induced subgraph is connected; a fragment's *edges* are the
coupling edges inside it, and the *stitch* edges are the coupling edges between fragments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["undirected_edges", "is_connected", "connected_subsets", "choose_region", "Tiling", "tile"]

Edge = tuple[int, int]


def undirected_edges(coupling_map: Iterable[Sequence[int]]) -> tuple[Edge, ...]:
    """The coupling map's undirected edges ``(a, b)`` with ``a < b``, sorted."""
    return tuple(sorted({(min(a, b), max(a, b)) for a, b in coupling_map if a != b}))


def _adjacency(edges: Iterable[Edge]) -> dict[int, set[int]]:
    adj: dict[int, set[int]] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    return adj


def is_connected(nodes: Iterable[int], edges: Iterable[Edge]) -> bool:
    """True when the subgraph of ``edges`` induced by ``nodes`` is connected (one node: True)."""
    nodes = set(nodes)
    if not nodes:
        return False
    adj = _adjacency((a, b) for a, b in edges if a in nodes and b in nodes)
    start = next(iter(nodes))
    seen, stack = {start}, [start]
    while stack:
        for m in adj.get(stack.pop(), ()):
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return seen == nodes


def connected_subsets(edges: Sequence[Edge], size: int, nodes: Iterable[int] | None = None) -> list[tuple[int, ...]]:
    """Every connected vertex set of ``size`` vertices (sorted tuples, sorted), grown edge by edge from each
    vertex (the obvious enumeration; devices here have at most a few dozen qubits)."""
    adj = _adjacency(edges)
    universe = sorted(set(adj) if nodes is None else set(nodes))
    if size == 1:
        return [(v,) for v in universe]
    found: set[tuple[int, ...]] = set()
    frontier = {(v,) for v in universe}
    for _ in range(size - 1):
        grown = set()
        for s in frontier:
            for v in s:
                for m in adj.get(v, ()):
                    if m not in s and m in universe:
                        grown.add(tuple(sorted((*s, m))))
        frontier = grown
    found = frontier
    return sorted(found)


def choose_region(edges: Sequence[Edge], num_qubits: int, device_qubits: int, cost: dict[Edge, float] | None = None):
    """The connected set of ``num_qubits`` device qubits with the most internal edges (then the lowest summed
    edge ``cost``, then the smallest indices). Raises ValueError when ``num_qubits`` exceeds the device."""
    if not 1 <= num_qubits <= device_qubits:
        raise ValueError(
            f"qubits={num_qubits} is out of range for a device of {device_qubits} qubits: valid range is "
            f"1..{device_qubits}"
        )
    if num_qubits == device_qubits:
        return tuple(range(device_qubits))
    cost = cost or {}

    def key(s: tuple[int, ...]) -> tuple:
        inside = [e for e in edges if e[0] in s and e[1] in s]
        return (-len(inside), sum(cost.get(e, 0.0) for e in inside), s)

    subsets = connected_subsets(edges, num_qubits)
    if not subsets:
        raise ValueError(f"qubits={num_qubits}: the device has no connected set of {num_qubits} qubits")
    return min(subsets, key=key)


@dataclass(frozen=True)
class Tiling:
    """A region tiled into fragments: ``fragments`` (vertex tuples, covering every region qubit once),
    ``inner`` (each fragment's coupling edges) and ``stitches`` (coupling edges between fragments)."""

    region: tuple[int, ...]
    fragments: tuple[tuple[int, ...], ...]
    inner: tuple[tuple[Edge, ...], ...]
    stitches: tuple[Edge, ...]


def tile(edges: Sequence[Edge], region: Sequence[int], size: int) -> Tiling:
    """Cover ``region`` with connected fragments of at most ``size`` qubits: repeatedly take the uncovered
    qubit with the fewest uncovered neighbours (a leaf first, so heavy-hex arms are not cut off) and grow a
    fragment from it breadth-first among uncovered qubits. Every qubit lands in exactly one fragment (a
    lone qubit becomes a one-qubit fragment). Raises ValueError for ``size < 1``."""
    if size < 1:
        raise ValueError(f"fragment size={size} is out of range: valid range is >= 1")
    region = tuple(sorted(region))
    inside = [(a, b) for a, b in edges if a in region and b in region]
    adj = _adjacency(inside)
    left = set(region)
    fragments = []
    while left:
        start = min(left, key=lambda v: (len(adj.get(v, set()) & left), v))
        frag = [start]
        queue = [start]
        while queue and len(frag) < size:
            v = queue.pop(0)
            for m in sorted(adj.get(v, ())):
                if m in left and m not in frag and len(frag) < size:
                    frag.append(m)
                    queue.append(m)
        left -= set(frag)
        fragments.append(tuple(sorted(frag)))
    fragments.sort()
    where = {v: i for i, f in enumerate(fragments) for v in f}
    inner = tuple(tuple(e for e in inside if where[e[0]] == i and where[e[1]] == i) for i in range(len(fragments)))
    stitches = tuple(e for e in inside if where[e[0]] != where[e[1]])
    return Tiling(region, tuple(fragments), inner, stitches)
