"""Pattern decomposition (ESCAPE, Pinar-Seshadhri-Vishal WWW'17; DwarvesGraph/DecoMine, arXiv 2008.09682).

Counts are of injective homomorphisms ``inj(p)`` (maps V(p) -> V(G), injective, edges to edges); the
edge-induced count is ``inj(p) / |Aut(p)|``. Pick a **cutting set** C whose removal splits p into
components D_1..D_k. For an embedding phi_C of p[C], let ``n_i(phi_C)`` be the number of injective
extensions of phi_C to D_i. Then

    sum_{phi_C} prod_i n_i(phi_C) = sum_{pi} inj(p / pi)

where pi runs over the partitions of V(p) that keep cut vertices apart and merge at most one vertex of
each component per block (the tuples whose components collide are exactly the injective maps of the
**shrinkage pattern** p/pi). The identity partition gives inj(p), so

    inj(p) = sum_{phi_C} prod_i n_i(phi_C)  -  sum_{pi != id} inj(p / pi),

with the shrinkage counts computed recursively (they have fewer vertices). **Symmetry correction**: the
restrictions of automorphisms of p that map C onto itself form a group G_C on C; the product is invariant
under it, so the sum runs over one phi_C per orbit (Grochow-Kellis restrictions on the cut) times |G_C|.
Components isomorphic over C share one count (``Factor.power``).

A cut whose pattern p[C] is connected is enumerated by intersections; one whose last vertex ``c_m`` is
isolated in p[C] (two opposite vertices of a 4-cycle) is reached through a **bridge** component: its
loops scatter the extensions per ``c_m`` into a count array (the 2-hop walk of 4-cycle counting).

:func:`decompositions` lists every candidate (cut, cut order, bridge, component orders, count tables) as
a :class:`Decomposition` whose ``kernel`` the compiler turns into code; :mod:`.miner` picks among them
(and plain enumeration) with the cost model and does the recursion.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from workbench.graphs.compiler import Bind, Factor, KernelPlan
from workbench.graphs.patterns import Pattern

__all__ = [
    "Decomposition",
    "cutting_sets",
    "cut_symmetry",
    "shrinkages",
    "component_classes",
    "decompositions",
    "component_orders",
    "vertex_bind",
]


@dataclass(frozen=True)
class Decomposition:
    """One decomposition plan of ``pattern``.

    ``cut``: cut vertices in binding order (a bridged vertex last); ``bridge``: the bridge component's
    vertices in order (empty: p[C] connected); ``classes``: (component vertex order, multiplicity) of the
    other components; ``restrictions``: ``(a, b)`` = phi(a) > phi(b) on the cut; ``symmetry``: |G_C|;
    ``shrinkages``: (quotient pattern, multiplicity) to subtract; ``kernel``: the loop nest.
    """

    pattern: Pattern
    cut: tuple[int, ...]
    bridge: tuple[int, ...]
    classes: tuple[tuple[tuple[int, ...], int], ...]
    restrictions: tuple[tuple[int, int], ...]
    symmetry: int
    shrinkages: tuple[tuple[Pattern, int], ...]
    kernel: KernelPlan

    def describe(self) -> str:
        parts = [f"cut {{{', '.join(map(str, sorted(self.cut)))}}} order {list(self.cut)}"]
        if self.bridge:
            parts.append(f"bridge {list(self.bridge)}")
        parts += [f"comp {list(order)}" + (f"^{power}" if power > 1 else "") for order, power in self.classes]
        tables = sum(b.table for f in self.kernel.factors for b in f.binds)
        if tables:
            parts.append(f"{tables} count table(s)")
        if self.symmetry > 1:
            parts.append(f"x{self.symmetry} symmetry")
        if self.shrinkages:
            parts.append("minus " + " + ".join(f"{mult}*{q.label}" for q, mult in self.shrinkages))
        return "; ".join(parts)


@functools.lru_cache(maxsize=4096)
def cutting_sets(pattern: Pattern) -> tuple[tuple[int, ...], ...]:
    """Vertex sets C (sorted) with >= 2 components in p - C, and p[C] connected, or connected after
    dropping one vertex that is isolated in p[C] (reached through a bridge component)."""
    out = []
    for size in range(1, pattern.k - 1):
        for cut in itertools.combinations(range(pattern.k), size):
            rest = [v for v in range(pattern.k) if v not in cut]
            if len(pattern.components(rest)) < 2:
                continue
            comps = pattern.components(cut)
            if len(comps) == 1 or (len(comps) == 2 and min(len(c) for c in comps) == 1):
                out.append(cut)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def cut_symmetry(pattern: Pattern, cut: tuple[int, ...]) -> list[dict[int, int]]:
    """G_C: the distinct restrictions to C of automorphisms mapping C onto itself (as dicts)."""
    seen, out = set(), []
    cset = set(cut)
    for sigma in pattern.automorphisms:
        if {sigma[c] for c in cut} == cset:
            key = tuple(sigma[c] for c in cut)
            if key not in seen:
                seen.add(key)
                out.append({c: sigma[c] for c in cut})
    return out


def _restrictions(group: list[dict[int, int]], order: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    out = []
    for v in order:
        for w in sorted({g[v] for g in group} - {v}):
            out.append((v, w))
        group = [g for g in group if g[v] == v]
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def shrinkages(pattern: Pattern, cut: tuple[int, ...]) -> tuple[tuple[Pattern, int], ...]:
    """Non-identity partitions pi (cut vertices alone, at most one vertex per component in a block, equal
    labels), grouped by the canonical form of p/pi: ((canonical quotient, multiplicity), ...)."""
    comps = pattern.components([v for v in range(pattern.k) if v not in cut])
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    free = [v for c in comps for v in c]
    counts: dict[tuple, list] = {}

    def place(i: int, blocks: list[list[int]]) -> Iterator[list[list[int]]]:
        if i == len(free):
            yield blocks
            return
        v = free[i]
        for block in blocks:
            if all(comp_of[u] != comp_of[v] for u in block) and (
                pattern.labels is None or pattern.labels[block[0]] == pattern.labels[v]
            ):
                block.append(v)
                yield from place(i + 1, blocks)
                block.pop()
        blocks.append([v])
        yield from place(i + 1, blocks)
        blocks.pop()

    for blocks in place(0, []):
        if all(len(b) == 1 for b in blocks):
            continue
        q = pattern.quotient([[c] for c in cut] + [list(b) for b in blocks])
        entry = counts.setdefault(q.canonical, [q.canonical_pattern(), 0])
        entry[1] += 1
    return tuple((q, mult) for q, mult in sorted(counts.values(), key=lambda e: (e[0].k, e[0].m, e[0].canonical[1])))


def _same_over_cut(pattern: Pattern, cut: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether components ``a`` and ``b`` are isomorphic by a map fixing every cut vertex."""
    if len(a) != len(b):
        return False
    for image in itertools.permutations(b):
        f = dict(zip(a, image))
        f.update({c: c for c in cut})
        if pattern.labels and any(pattern.labels[u] != pattern.labels[f[u]] for u in a):
            continue
        edges = [(u, w) for u, w in pattern.edges if u in f and w in f and (u in a or w in a)]
        if len(edges) == sum(1 for u, w in pattern.edges if u in set(b) or w in set(b)) and all(
            pattern.has_edge(f[u], f[w]) for u, w in edges
        ):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def component_classes(pattern: Pattern, cut: tuple[int, ...]) -> list[list[tuple[int, ...]]]:
    """Components of p - C grouped into classes isomorphic over the cut (each class a list of components)."""
    classes: list[list[tuple[int, ...]]] = []
    for comp in pattern.components([v for v in range(pattern.k) if v not in cut]):
        for cls in classes:
            if _same_over_cut(pattern, cut, cls[0], comp):
                cls.append(comp)
                break
        else:
            classes.append([comp])
    return classes


@functools.lru_cache(maxsize=16384)
def component_orders(pattern: Pattern, bound: tuple[int, ...], vertices: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Orders of ``vertices`` in which each vertex has a neighbour among ``bound`` or earlier ones, keeping
    only "most constrained first" ones (each next vertex has the most bound neighbours; ties all kept;
    with nothing bound, start from a vertex of highest degree)."""
    out: list[tuple[int, ...]] = []

    def grow(order: tuple[int, ...], seen: set[int]) -> None:
        if len(order) == len(vertices):
            out.append(order)
            return
        left = [v for v in vertices if v not in order]
        if seen:
            links = {v: sum(pattern.has_edge(v, u) for u in seen) for v in left}
        else:
            links = {v: pattern.degree(v) for v in left}
        best = max(links.values())
        if seen and best == 0:
            return
        for v in left:
            if links[v] == best:
                grow(order + (v,), seen | {v})

    grow((), set(bound))
    return out


def _parents(pattern: Pattern, cut: tuple[int, ...], order: tuple[int, ...]) -> int:
    """Number of bound neighbours of the last vertex of a component order."""
    bound = set(cut) | set(order[:-1])
    return sum(pattern.has_edge(order[-1], u) for u in bound)


def vertex_bind(pattern: Pattern, v: int, bound: list[int], restrictions=(), table: bool = False) -> Bind:
    """The :class:`Bind` of ``v`` given the already bound vertices ``bound`` (parents, symmetry bounds, distinct)."""
    parents = tuple(u for u in bound if pattern.has_edge(u, v))
    upper = tuple(a for a, b in restrictions if b == v and a in bound)
    lower = tuple(b for a, b in restrictions if a == v and b in bound)
    distinct = tuple(u for u in bound if u not in parents and u not in upper and u not in lower)
    label = pattern.labels[v] if pattern.labels else -1
    return Bind(v, parents, (), lower, upper, distinct, label, table)


def _factor(pattern: Pattern, cut: tuple[int, ...], order: tuple[int, ...], power: int, table: bool) -> Factor:
    binds, bound = [], list(cut)
    for i, v in enumerate(order):
        binds.append(vertex_bind(pattern, v, bound, table=table and i == len(order) - 1))
        bound.append(v)
    return Factor(tuple(binds), power)


def decompositions(
    pattern: Pattern, factor_cost: Callable[[KernelPlan], float] | None = None
) -> Iterator[Decomposition]:
    """Candidate decomposition plans of ``pattern`` (none for patterns without a usable cut, e.g. cliques).

    Every cut, cut order and bridge choice is listed. Without ``factor_cost`` every combination of
    component orders and count-table choices is listed too; with it, each component's order and table
    choice is the one of least ``factor_cost(kernel with only that component)`` (the components' costs
    add up, so choosing them one by one is exact for an additive model)."""
    for cut_set in cutting_sets(pattern):
        group = cut_symmetry(pattern, cut_set)
        shrink = shrinkages(pattern, cut_set)
        classes = component_classes(pattern, cut_set)
        connected = pattern.is_connected(cut_set)
        for cut in component_orders(pattern, (), cut_set) if connected else _bridge_orders(pattern, cut_set):
            restrictions = _restrictions(group, cut)
            prefix = cut if connected else cut[:-1]
            cut_binds = _prefix_binds(pattern, prefix, restrictions)
            for bridge_cls, bridge_order, bridge_binds in _bridges(pattern, cut, classes, connected, restrictions):
                base = KernelPlan(
                    cut=cut_binds,
                    bridge=bridge_binds,
                    bridge_power=len(classes[bridge_cls]) if bridge_cls is not None else 0,
                )
                others = sorted((cls for i, cls in enumerate(classes) if i != bridge_cls), key=lambda c: len(c[0]))
                for choice in itertools.product(*_factor_options(pattern, cut, others, base, factor_cost)):
                    factors = tuple(_factor(pattern, cut, order, power, table) for order, power, table in choice)
                    yield Decomposition(
                        pattern,
                        cut,
                        tuple(bridge_order),
                        tuple((order, power) for order, power, _ in choice),
                        restrictions,
                        len(group),
                        shrink,
                        dataclasses.replace(base, factors=factors),
                    )


def _prefix_binds(
    pattern: Pattern, prefix: tuple[int, ...], restrictions: tuple[tuple[int, int], ...]
) -> tuple[Bind, ...]:
    """Binds of the cut vertices bound by intersection (all of the cut, or all but a bridged last vertex)."""
    cut_binds: list[Bind] = []
    bound: list[int] = []
    for v in prefix:
        cut_binds.append(Bind(v) if not bound else vertex_bind(pattern, v, bound, restrictions))
        bound.append(v)
    return tuple(cut_binds)


_Bridge = tuple[int | None, tuple[int, ...], tuple[Bind, ...]]


def _bridges(
    pattern: Pattern,
    cut: tuple[int, ...],
    classes: list[list[tuple[int, ...]]],
    connected: bool,
    restrictions: tuple[tuple[int, int], ...],
) -> Iterator[_Bridge]:
    """Bridge choices of one cut order: (component class, its vertex order, binds ending with the bridged cut
    vertex). A connected p[C] has one choice, no bridge: (None, (), ())."""
    if connected:
        yield None, (), ()
        return
    prefix = cut[:-1]
    for bridge_cls in [i for i, cls in enumerate(classes) if any(pattern.has_edge(cut[-1], u) for u in cls[0])]:
        for bridge_order in component_orders(pattern, prefix, classes[bridge_cls][0]):
            if not bridge_order:
                continue
            bridge_binds = []
            b_bound = list(prefix)
            for v in bridge_order:
                bridge_binds.append(vertex_bind(pattern, v, b_bound))
                b_bound.append(v)
            bridge_binds.append(vertex_bind(pattern, cut[-1], b_bound, restrictions))
            yield bridge_cls, bridge_order, tuple(bridge_binds)


def _factor_options(
    pattern: Pattern,
    cut: tuple[int, ...],
    others: list[list[tuple[int, ...]]],
    base: KernelPlan,
    factor_cost: Callable[[KernelPlan], float] | None,
) -> list[list[tuple[tuple[int, ...], int, bool]]]:
    """Per other component class, the (vertex order, multiplicity, count table) choices: all of them, or with
    ``factor_cost`` the single one of least cost (a kernel ``base`` with only that component)."""
    options = [
        [
            (order, len(cls), table)
            for order in component_orders(pattern, cut, cls[0])
            for table in ((False, True) if _parents(pattern, cut, order) >= 2 else (False,))
        ]
        for cls in others
    ]
    if factor_cost is None:
        return options
    return [
        [min(opts, key=lambda o: factor_cost(dataclasses.replace(base, factors=(_factor(pattern, cut, *o),))))]
        for opts in options
    ]


def _bridge_orders(pattern: Pattern, cut_set: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Cut orders for a disconnected p[C]: a connected order of the big part, then the isolated vertex."""
    out = []
    for last in cut_set:
        prefix = tuple(v for v in cut_set if v != last)
        if prefix and pattern.is_connected(prefix) and not any(pattern.has_edge(last, u) for u in prefix):
            out += [order + (last,) for order in component_orders(pattern, (), prefix)]
    return out
