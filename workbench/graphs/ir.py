"""The loop-nest IR shared by the planners (:mod:`.enumerate`, :mod:`.decompose`), the code generator
(:mod:`.compiler`) and the cost model (:mod:`.cost_model`).

A :class:`Bind` binds one pattern vertex: its candidates are the intersection of its bound *parents'*
neighbour lists, minus the lists of its *anti* vertices (vertex-induced), within the bounds
``max(v_lower) < v < min(v_upper)`` (symmetry-breaking restrictions), different from the *distinct*
vertices, with a label (``label >= 0``: the data vertex's label must equal the pattern vertex's). A
:class:`KernelPlan` is an enumeration (``cut`` only, last bind counted) or a decomposition (cut loops,
optional bridge, then a product of :class:`Factor` counts); see :mod:`.compiler` for the semantics.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Bind", "Factor", "KernelPlan", "chain_of", "ready_vertex", "renamed", "describe_plan"]


@dataclass(frozen=True)
class Bind:
    """Bind pattern vertex ``vertex`` (see module docstring). Tuples hold pattern vertices bound earlier."""

    vertex: int
    parents: tuple[int, ...] = ()
    anti: tuple[int, ...] = ()
    lower: tuple[int, ...] = ()
    upper: tuple[int, ...] = ()
    distinct: tuple[int, ...] = ()
    label: int = -1
    table: bool = False


@dataclass(frozen=True)
class Factor:
    """Count of extensions of one component: loops over ``binds[:-1]``, the last bind counted; ``power``
    is how many isomorphic components share this count."""

    binds: tuple[Bind, ...]
    power: int = 1


@dataclass(frozen=True)
class KernelPlan:
    """One kernel: ``cut`` binds (root first); ``factors`` (empty: enumeration, last cut bind counted);
    ``bridge`` binds whose last one scatters the last cut vertex; ``bridge_power`` its multiplicity."""

    cut: tuple[Bind, ...]
    factors: tuple[Factor, ...] = ()
    bridge: tuple[Bind, ...] = ()
    bridge_power: int = 0
    hoist: bool = True
    emit: bool = False  # decomposition only: write (cut vertices, factor counts) per cut embedding, no product

    @property
    def is_enumeration(self) -> bool:
        return not self.factors and not self.bridge

    def all_binds(self) -> list[Bind]:
        return [*self.cut, *self.bridge, *(b for f in self.factors for b in f.binds)]


def chain_of(b: Bind, depth: dict[int, int]) -> tuple[tuple[str, int], ...]:
    """The candidate-set chain of ``b``: its outermost parent first, then the other ops by binding depth."""
    parents = sorted(b.parents, key=depth.__getitem__)
    ops = [("+", p) for p in parents[1:]] + [("-", a) for a in b.anti]
    ops.sort(key=lambda op: depth[op[1]])
    return (("+", parents[0]),) + tuple(ops)


def ready_vertex(chain: tuple, depth: dict[int, int]) -> int:
    """The vertex after whose binding every list in ``chain`` is known (the deepest one)."""
    return max((v for _, v in chain), key=depth.__getitem__)


def renamed(plan: KernelPlan) -> KernelPlan:
    """``plan`` with pattern vertices renamed 0, 1, ... in binding order, so that plans of the same shape
    (from different patterns, or different labels) generate the same source and share one kernel."""
    names: dict[int, int] = {}
    for b in plan.all_binds():
        names.setdefault(b.vertex, len(names))

    def ren(b: Bind) -> Bind:
        t = lambda xs: tuple(names[x] for x in xs)  # noqa: E731
        return Bind(names[b.vertex], t(b.parents), t(b.anti), t(b.lower), t(b.upper), t(b.distinct), b.label, b.table)

    return KernelPlan(
        cut=tuple(map(ren, plan.cut)),
        factors=tuple(Factor(tuple(map(ren, f.binds)), f.power) for f in plan.factors),
        bridge=tuple(map(ren, plan.bridge)),
        bridge_power=plan.bridge_power,
        hoist=plan.hoist,
        emit=plan.emit,
    )


def describe_plan(plan: KernelPlan) -> str:
    """A one-line human description, e.g. ``cut [0, 1] | comp [2, 3] x1, [4] x1``."""

    def names(binds: Iterable[Bind]) -> str:
        return "[" + ", ".join(str(b.vertex) for b in binds) + "]"

    if plan.is_enumeration:
        return "enumerate " + names(plan.cut)
    parts = [f"cut {names(plan.cut + plan.bridge[-1:])}"]
    if plan.bridge:
        parts.append(f"bridge {names(plan.bridge[:-1])}^{plan.bridge_power}")
    parts += [f"{names(f.binds)}^{f.power}" for f in plan.factors]
    return " | ".join(parts)
