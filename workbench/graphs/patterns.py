"""Patterns: small connected graphs to count, with names, parsing, automorphisms and canonical forms.

A :class:`Pattern` has ``k`` vertices ``0..k-1`` and undirected edges ``(a, b)``, ``a < b``; optionally a
label per vertex (labelled mining, :mod:`.partial`). Build one by name or from an edge-list string with
:func:`parse_pattern`::

    >>> parse_pattern("house").edges
    ((0, 1), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3))
    >>> parse_pattern("0-1,1-2,2-0") == parse_pattern("triangle").canonical_pattern()
    True

Counting conventions (used everywhere in the package):

- **edge-induced** (non-induced) count of p in G: the number of subgraphs of G (vertex set + edge subset)
  isomorphic to p, i.e. ``inj(p) / |Aut(p)|`` where ``inj`` counts injective maps V(p) -> V(G) that send
  edges to edges;
- **vertex-induced** count: the number of vertex subsets S of G with G[S] isomorphic to p.

:func:`motifs` lists every connected pattern on k vertices (k = 1..7), one per isomorphism class, in a
fixed order (by edge count, then canonical code).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Pattern", "parse_pattern", "named_patterns", "motifs", "NAMED", "MAX_VERTICES"]

MAX_VERTICES = 7  # canonical forms search permutations within degree classes; 7! = 5040 at worst

#: named patterns (edge lists on 0..k-1); "k-path" and "k-star" count vertices as GPM papers do for motifs:
#: 4-path has 4 vertices, 3-star has 3 leaves
NAMED: dict[str, str] = {
    "edge": "0-1",
    "wedge": "0-1,0-2",
    "triangle": "0-1,1-2,0-2",
    "4-path": "0-1,1-2,2-3",
    "3-star": "0-1,0-2,0-3",
    "tailed-triangle": "0-1,1-2,0-2,0-3",
    "4-cycle": "0-1,1-2,2-3,0-3",
    "diamond": "0-1,1-2,2-3,0-3,0-2",
    "4-clique": "0-1,0-2,0-3,1-2,1-3,2-3",
    "5-path": "0-1,1-2,2-3,3-4",
    "4-star": "0-1,0-2,0-3,0-4",
    "5-cycle": "0-1,1-2,2-3,3-4,0-4",
    "house": "0-1,1-2,2-3,0-3,0-4,1-4",
    "bull": "0-1,1-2,0-2,0-3,1-4",
    "tailed-4-cycle": "0-1,1-2,2-3,0-3,0-4",
    "gem": "0-1,1-2,2-3,0-4,1-4,2-4,3-4",
    "wheel-4": "0-1,1-2,2-3,0-3,0-4,1-4,2-4,3-4",
    "5-clique": ",".join(f"{a}-{b}" for a, b in itertools.combinations(range(5), 2)),
    "6-path": "0-1,1-2,2-3,3-4,4-5",
    "6-cycle": "0-1,1-2,2-3,3-4,4-5,0-5",
    "6-clique": ",".join(f"{a}-{b}" for a, b in itertools.combinations(range(6), 2)),
}
ALIASES = {
    "3-path": "wedge",
    "path-3": "wedge",
    "4-chain": "4-path",
    "5-chain": "5-path",
    "6-chain": "6-path",
    "square": "4-cycle",
    "k4": "4-clique",
    "k5": "5-clique",
    "chordal-4-cycle": "diamond",
    "paw": "tailed-triangle",
    "claw": "3-star",
}
_EDGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


@dataclass(frozen=True)
class Pattern:
    """A small undirected pattern: ``k`` vertices ``0..k-1``, sorted edges ``(a, b)`` with ``a < b``.

    ``labels`` (optional) gives each vertex a label that data vertices must match; ``name`` is display only
    (not part of equality).
    """

    k: int
    edges: tuple[tuple[int, int], ...]
    labels: tuple[int, ...] | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.k <= MAX_VERTICES:
            raise ValueError(f"pattern has {self.k} vertices: valid range is 1..{MAX_VERTICES}")
        clean = set()
        for a, b in self.edges:
            if a == b:
                raise ValueError(f"pattern edge {a}-{b} is a self-loop: patterns are simple graphs")
            if not (0 <= a < self.k and 0 <= b < self.k):
                raise ValueError(f"pattern edge {a}-{b} is out of range: vertices are 0..{self.k - 1}")
            clean.add((min(a, b), max(a, b)))
        object.__setattr__(self, "edges", tuple(sorted(clean)))
        if self.labels is not None:
            if len(self.labels) != self.k:
                raise ValueError(f"pattern labels {self.labels} must have one entry per vertex ({self.k})")
            object.__setattr__(self, "labels", tuple(int(x) for x in self.labels))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and (self.k, self.edges, self.labels) == (other.k, other.edges, other.labels)

    def __hash__(self) -> int:
        return hash((self.k, self.edges, self.labels))

    # ---- structure -------------------------------------------------------------------------------
    @functools.cached_property
    def adj(self) -> tuple[int, ...]:
        """Neighbour bitmask of each vertex."""
        adj = [0] * self.k
        for a, b in self.edges:
            adj[a] |= 1 << b
            adj[b] |= 1 << a
        return tuple(adj)

    def has_edge(self, a: int, b: int) -> bool:
        return bool(self.adj[a] >> b & 1)

    def neighbors(self, v: int) -> list[int]:
        return [u for u in range(self.k) if self.adj[v] >> u & 1]

    def degree(self, v: int) -> int:
        return bin(self.adj[v]).count("1")

    @property
    def m(self) -> int:
        return len(self.edges)

    def is_connected(self, vertices: Iterable[int] | None = None) -> bool:
        """Whether the subgraph induced on ``vertices`` (default all) is connected."""
        return len(self.components(vertices)) <= 1

    def components(self, vertices: Iterable[int] | None = None) -> list[tuple[int, ...]]:
        """Connected components of the subgraph induced on ``vertices`` (default all), each sorted."""
        left = set(range(self.k) if vertices is None else vertices)
        out = []
        while left:
            stack, comp = [min(left)], set()
            while stack:
                v = stack.pop()
                if v in comp:
                    continue
                comp.add(v)
                stack.extend(u for u in self.neighbors(v) if u in left and u not in comp)
            left -= comp
            out.append(tuple(sorted(comp)))
        return out

    def induced(self, vertices: Sequence[int]) -> Pattern:
        """The subpattern induced on ``vertices``, renumbered ``0..len-1`` in the given order."""
        pos = {v: i for i, v in enumerate(vertices)}
        edges = tuple((pos[a], pos[b]) for a, b in self.edges if a in pos and b in pos)
        labels = tuple(self.labels[v] for v in vertices) if self.labels else None
        return Pattern(len(vertices), edges, labels)

    def quotient(self, blocks: Sequence[Sequence[int]]) -> Pattern:
        """Merge each block of vertices into one vertex (blocks partition ``0..k-1``; merged vertices must
        be pairwise non-adjacent and, if labelled, equally labelled). Vertex ``i`` of the result is block ``i``."""
        where = {}
        for i, block in enumerate(blocks):
            for v in block:
                where[v] = i
        if sorted(where) != list(range(self.k)):
            raise ValueError(f"blocks {blocks} do not partition the pattern's vertices 0..{self.k - 1}")
        edges = set()
        for a, b in self.edges:
            if where[a] == where[b]:
                raise ValueError(f"cannot merge adjacent vertices {a} and {b}")
            edges.add((min(where[a], where[b]), max(where[a], where[b])))
        labels = None
        if self.labels:
            labels = tuple(self.labels[block[0]] for block in blocks)
        return Pattern(len(blocks), tuple(edges), labels)

    # ---- symmetry and canonical form --------------------------------------------------------------
    def _cells(self) -> list[list[int]]:
        """Vertices grouped by an isomorphism invariant (label, degree, sorted neighbour degrees), ordered."""
        deg = [self.degree(v) for v in range(self.k)]
        key = {
            v: ((self.labels[v] if self.labels else 0), deg[v], tuple(sorted(deg[u] for u in self.neighbors(v))))
            for v in range(self.k)
        }
        cells: dict[tuple, list[int]] = {}
        for v in sorted(range(self.k), key=lambda v: key[v]):
            cells.setdefault(key[v], []).append(v)
        return list(cells.values())

    def _orders(self) -> Iterable[tuple[int, ...]]:
        """Vertex orders consistent with the invariant cells (each yields a labelling candidate)."""
        for parts in itertools.product(*(itertools.permutations(c) for c in self._cells())):
            yield tuple(v for part in parts for v in part)

    def _code(self, order: Sequence[int]) -> int:
        pos = [0] * self.k
        for i, v in enumerate(order):
            pos[v] = i
        code = 0
        for a, b in self.edges:
            i, j = sorted((pos[a], pos[b]))
            code |= 1 << (j * (j - 1) // 2 + i)
        return code

    @functools.cached_property
    def canonical_order(self) -> tuple[int, ...]:
        """A vertex order whose relabelling gives the canonical pattern (smallest code within the cells)."""
        return min(self._orders(), key=self._code)

    @functools.cached_property
    def canonical(self) -> tuple:
        """Hashable canonical form: equal for isomorphic patterns (labels included), different otherwise."""
        order = self.canonical_order
        labels = tuple(self.labels[v] for v in order) if self.labels else None
        return (self.k, self._code(order), labels)

    def canonical_pattern(self) -> Pattern:
        """This pattern relabelled canonically (vertex ``i`` = ``canonical_order[i]``)."""
        p = self.induced(self.canonical_order)
        return Pattern(p.k, p.edges, p.labels, self.name)

    def is_isomorphic(self, other: Pattern) -> bool:
        return self.canonical == other.canonical

    @functools.cached_property
    def automorphisms(self) -> tuple[tuple[int, ...], ...]:
        """Every automorphism as a tuple ``sigma`` with ``sigma[v]`` the image of ``v`` (identity first)."""
        edges = set(self.edges)
        out = []
        cells = self._cells()
        flat = [v for c in cells for v in c]
        for parts in itertools.product(*(itertools.permutations(c) for c in cells)):
            image = [v for part in parts for v in part]
            sigma = [0] * self.k
            for v, w in zip(flat, image):
                sigma[v] = w
            if all((min(sigma[a], sigma[b]), max(sigma[a], sigma[b])) in edges for a, b in self.edges):
                out.append(tuple(sigma))
        out.sort(key=lambda s: s != tuple(range(self.k)))
        return tuple(out)

    @property
    def n_automorphisms(self) -> int:
        return len(self.automorphisms)

    # ---- text ---------------------------------------------------------------------------------------
    def edge_string(self) -> str:
        """``"0-1,1-2,0-2"``: the form :func:`parse_pattern` reads."""
        return ",".join(f"{a}-{b}" for a, b in self.edges) if self.edges else ""

    @property
    def label(self) -> str:
        """Name if known (any isomorphic named pattern), else the edge string."""
        base = self.name or _name_of(self.canonical) or self.edge_string() or f"{self.k}-vertex"
        if self.labels is not None:
            base = (self.name or self.edge_string() or "single vertex") + " labels " + ",".join(map(str, self.labels))
        return base

    def __repr__(self) -> str:
        return f"Pattern({self.label!r}, k={self.k}, edges={self.edge_string()!r})"


def _from_edge_string(text: str, name: str = "") -> Pattern:
    pairs = []
    for part in text.split(","):
        match = _EDGE.match(part)
        if match is None:
            raise ValueError(
                f"pattern={text!r} is not a known name or an edge list: bad edge {part.strip()!r}; "
                f"write edges as 'a-b' separated by commas, e.g. '0-1,1-2,2-0', or a name "
                f"({', '.join(NAMED)})"
            )
        pairs.append((int(match.group(1)), int(match.group(2))))
    ids = sorted({v for e in pairs for v in e})
    pos = {v: i for i, v in enumerate(ids)}
    if len(ids) > MAX_VERTICES:
        raise ValueError(f"pattern={text!r} has {len(ids)} vertices: valid range is 1..{MAX_VERTICES}")
    return Pattern(len(ids), tuple((pos[a], pos[b]) for a, b in pairs), name=name)


def parse_pattern(text: str) -> Pattern:
    """A pattern from a name (``house``, ``4-clique``, aliases like ``6-chain``) or an edge list ``"0-1,1-2"``.

    Vertex ids in an edge list may be any non-negative integers; they are renumbered in increasing order.

    Raises:
        ValueError: unknown name / malformed edge, self-loop, more than 7 vertices, or a disconnected pattern.
    """
    key = text.strip().lower()
    key = ALIASES.get(key, key)
    pattern = _from_edge_string(NAMED[key], key) if key in NAMED else _from_edge_string(text.strip())
    if not pattern.is_connected():
        raise ValueError(f"pattern={text!r} is not connected: patterns must be connected graphs")
    return pattern


@functools.lru_cache(maxsize=1)
def _names_by_canonical() -> dict[tuple, str]:
    out: dict[tuple, str] = {}
    for name, text in NAMED.items():
        out.setdefault(_from_edge_string(text).canonical, name)
    return out


def _name_of(canonical: tuple) -> str:
    return _names_by_canonical().get((canonical[0], canonical[1], None), "") if canonical[2] is None else ""


def named_patterns() -> dict[str, Pattern]:
    """Every named pattern, name -> :class:`Pattern`."""
    return {name: _from_edge_string(text, name) for name, text in NAMED.items()}


@functools.cache
def motifs(k: int) -> tuple[Pattern, ...]:
    """All connected patterns on ``k`` vertices up to isomorphism (1, 1, 2, 6, 21, 112, 853 for k = 1..7),
    canonically labelled, ordered by edge count then canonical code; named ones carry their name.

    Built by growth: every connected graph on k vertices is a connected graph on k-1 vertices plus a vertex
    joined to a non-empty subset of it (remove a non-cut vertex, e.g. a leaf of a spanning tree).
    """
    if not 1 <= k <= MAX_VERTICES:
        raise ValueError(f"k={k} is out of range: valid range is 1..{MAX_VERTICES}")
    if k == 1:
        return (Pattern(1, ()),)
    seen: dict[tuple, Pattern] = {}
    for base in motifs(k - 1):
        for subset in range(1, 1 << (k - 1)):
            extra = tuple((v, k - 1) for v in range(k - 1) if subset >> v & 1)
            p = Pattern(k, base.edges + extra)
            seen.setdefault(p.canonical, p)
    out = []
    for canon, p in seen.items():
        q = p.canonical_pattern()
        out.append(Pattern(q.k, q.edges, name=_name_of(canon)))
    out.sort(key=lambda p: (p.m, p.canonical[1]))
    return tuple(out)
