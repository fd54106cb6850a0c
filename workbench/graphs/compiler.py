"""The loop-nest compiler: a plan (which vertex is bound when, from which neighbour lists) becomes Python
source for one numba kernel. Compiling and running it is :mod:`.kernels`.

IR (:mod:`.ir`). A :class:`Bind` binds one pattern vertex: its candidates are the intersection of its bound
*parents'* neighbour lists, minus the lists of its *anti* vertices (vertex-induced), within the bounds
``max(v_lower) < v < min(v_upper)`` (symmetry-breaking restrictions), different from the *distinct*
vertices, with a label. A :class:`KernelPlan` is either

- an **enumeration** (``cut`` only): loops over ``cut[:-1]``; the last bind is *counted* (the size of its
  candidate set, corrected for the distinct vertices that fall inside it), never looped; or
- a **decomposition**: loops over the cut vertices, then for each cut embedding the product of
  ``Factor`` counts (each a small enumeration nest over one component, last level counted) raised to
  their multiplicities. With a ``bridge``, the last cut vertex is not adjacent to the others: the bridge
  component's loops scatter its candidates into a count array (``acc[x]`` = extensions of the bridge
  component for cut vertex ``x``), then the touched ``x`` are visited once each.

Optimisations the generator applies (DwarvesGraph's "conventional" and "pattern-aware" rewrites):

- **loop-invariant hoisting / CSE of intersections**: a candidate set is an ordered chain of operations
  ``+N(p)`` / ``-N(a)``; each prefix of a chain is materialised once, right after its last vertex is bound
  (the outermost loop where it is invariant), and shared by every bind whose chain starts with it;
- **counted last level**: the innermost loop is replaced by a set size (``intersect_count``) plus O(#distinct)
  membership corrections;
- **hoisted neighbour-count tables** (``Bind.table``): when the counted set is ``T ∩ N(q)`` with ``T``
  invariant at an outer depth L and ``q`` bound deeper, one scatter over ``y in T, z in N(y)`` at depth L
  builds ``tab[z] = |N(z) ∩ T|`` and the innermost count becomes ``tab[v_q]`` (an ESCAPE-style rewrite);
- **marked partial sets**: when the counted set is ``P ∩ N(q)`` with ``P`` invariant over the enclosing
  loop, ``P`` is marked once in a flag array and each count scans ``N(q)`` against the marks (falling back
  to a merge when ``P`` is much smaller), the bitmap trick of GPU miners.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from workbench.graphs.ir import Bind, Factor, KernelPlan, describe_plan, renamed
from workbench.graphs.ir import chain_of as _chain
from workbench.graphs.ir import ready_vertex as _ready

__all__ = ["Bind", "Factor", "KernelPlan", "generate_source", "describe_plan", "renamed"]


@dataclass
class _Gen:
    plan: KernelPlan
    lines: list[str] = field(default_factory=list)
    depth: dict[int, int] = field(default_factory=dict)
    keys: dict[tuple, int] = field(default_factory=dict)  # chain (+ owner when not hoisting) -> buffer id
    at_vertex: dict[int, list[tuple]] = field(default_factory=dict)  # vertex -> keys materialised after it
    tables: dict[int, int] = field(default_factory=dict)  # counted bind vertex -> table id
    table_at: dict[int, list[tuple[int, Bind]]] = field(default_factory=dict)  # vertex -> tables built after it
    n_tables: int = 0
    acc: int = -1
    marks: dict[tuple, int] = field(default_factory=dict)  # partial-set key -> table id used as a mark array
    mark_at: dict[int, list[tuple]] = field(default_factory=dict)  # vertex -> (table, chain, owner, lower, upper)
    mark_of: dict[int, int] = field(default_factory=dict)  # counted bind vertex -> its mark table

    def w(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # ---- planning of materialisations -------------------------------------------------------------
    def key_of(self, chain: tuple, owner: int) -> tuple:
        return chain if self.plan.hoist else (chain, owner)

    def need(self, chain: tuple, owner: int, at: int | None = None) -> None:
        """Materialise ``chain`` (and its prefixes) after vertex ``at`` (default: its last vertex)."""
        if len(chain) < 2:
            return
        key = self.key_of(chain, owner)
        if key in self.keys:
            return
        self.need(chain[:-1], owner, at)
        self.keys[key] = len(self.keys)
        where = _ready(chain, self.depth) if at is None else at
        self.at_vertex.setdefault(where, []).append(key)

    def set_expr(self, chain: tuple, owner: int) -> str:
        if len(chain) == 1:
            return f"N{chain[0][1]}"
        return f"A{self.keys[self.key_of(chain, owner)]}"

    def plan_bind(self, b: Bind, counted: bool, enclosing: int | None) -> None:
        """Record the sets (and table) bind ``b`` needs; ``enclosing`` = vertex bound just before it."""
        chain = _chain(b, self.depth)
        at = None if self.plan.hoist else enclosing
        if not counted:
            self.need(chain, b.vertex, at)
            return
        if b.table and self._table_ok(b, chain):
            self.need(chain[:-1], b.vertex, at)
            t = self.n_tables
            self.n_tables += 1
            self.tables[b.vertex] = t
            where = _ready(chain[:-1], self.depth) if at is None else at
            self.table_at.setdefault(where, []).append((t, b))
            return
        if b.label >= 0 or len(chain) == 1 or (self.plan.hoist and _ready(chain, self.depth) != enclosing):
            self.need(chain, b.vertex, at)  # full set (hoisted out of the deeper loops, or to loop over labels)
        else:
            self.need(chain[:-1], b.vertex, at)
            ready = _ready(chain[:-1], self.depth)
            if self.plan.hoist and enclosing is not None and self.depth[ready] < self.depth[enclosing]:
                # invariant over the enclosing loop: mark it once (only the part inside the bounds known then)
                known = self.depth[ready]
                lower = tuple(u for u in b.lower if self.depth[u] <= known)
                upper = tuple(u for u in b.upper if self.depth[u] <= known)
                key = (self.key_of(chain[:-1], b.vertex), lower, upper)
                if key not in self.marks:
                    self.marks[key] = self.n_tables
                    self.n_tables += 1
                    self.mark_at.setdefault(ready, []).append((self.marks[key], chain[:-1], b.vertex, lower, upper))
                self.mark_of[b.vertex] = self.marks[key]

    def _table_ok(self, b: Bind, chain: tuple) -> bool:
        if len(chain) < 2 or chain[-1][0] != "+" or not self.plan.hoist:
            return False
        t_depth = self.depth[_ready(chain[:-1], self.depth)]
        return all(self.depth[u] <= t_depth for u in (*b.lower, *b.upper)) and t_depth < self.depth[chain[-1][1]]

    # ---- emission -----------------------------------------------------------------------------------
    def rng(self, src: str, lower: tuple[int, ...], upper: tuple[int, ...]) -> str:
        """``src`` restricted to the bounds (exclusive) of the given lower/upper vertices."""
        lo = f"v{lower[0]}" if len(lower) == 1 else f"max({', '.join(f'v{u}' for u in lower)})"
        hi = f"v{upper[0]}" if len(upper) == 1 else f"min({', '.join(f'v{u}' for u in upper)})"
        if lower and upper:
            return f"clip({src}, {lo}, {hi})"
        if upper:
            return f"below({src}, {hi})"
        return f"above({src}, {lo})" if lower else src

    def bounds(self, b: Bind) -> tuple[str, str]:
        lo = (
            "-1"
            if not b.lower
            else (f"v{b.lower[0]}" if len(b.lower) == 1 else f"max({', '.join(f'v{u}' for u in b.lower)})")
        )
        hi = (
            "BIG"
            if not b.upper
            else (f"v{b.upper[0]}" if len(b.upper) == 1 else f"min({', '.join(f'v{u}' for u in b.upper)})")
        )
        return lo, hi

    def after_bind(self, v: int, ind: int) -> None:
        """Row view, then every set and table that becomes invariant once ``v`` is bound."""
        self.w(ind, f"N{v} = indices[indptr[v{v}]:indptr[v{v} + 1]]")
        for key in self.at_vertex.get(v, []):
            chain, owner = (key, None) if self.plan.hoist else key
            i = self.keys[key]
            prev = self.set_expr(chain[:-1], owner)
            op = "intersect" if chain[-1][0] == "+" else "difference"
            self.w(ind, f"L{i} = {op}({prev}, N{chain[-1][1]}, S{i})")
            self.w(ind, f"A{i} = S{i}[:L{i}]")
        for t, chain, owner, lower, upper in self.mark_at.get(v, []):
            self.w(ind, f"for zi in range(nt{t}):")
            self.w(ind + 1, f"mk{t}[tch{t}[zi]] = 0")
            self.w(ind, f"nt{t} = 0")
            self.w(ind, f"for y in {self.rng(self.set_expr(chain, owner), lower, upper)}:")
            self.w(ind + 1, f"mk{t}[y] = 1")
            self.w(ind + 1, f"tch{t}[nt{t}] = y")
            self.w(ind + 1, f"nt{t} += 1")
        for t, b in self.table_at.get(v, []):
            chain = _chain(b, self.depth)
            src = self.set_expr(chain[:-1], b.vertex)
            lo, hi = self.bounds(b)
            self.w(ind, f"for zi in range(nt{t}):")
            self.w(ind + 1, f"tab{t}[tch{t}[zi]] = 0")
            self.w(ind, f"nt{t} = 0")
            self.w(ind, f"for y in {self.rng(src, b.lower, b.upper)}:")
            if b.label >= 0:
                self.w(ind + 1, f"if labels[y] != plab[{b.vertex}]:")
                self.w(ind + 2, "continue")
            self.w(ind + 1, "for z in indices[indptr[y]:indptr[y + 1]]:")
            self.w(ind + 2, f"if tab{t}[z] == 0:")
            self.w(ind + 3, f"tch{t}[nt{t}] = z")
            self.w(ind + 3, f"nt{t} += 1")
            self.w(ind + 2, f"tab{t}[z] += 1")

    def loop(self, b: Bind, ind: int) -> int:
        """Open the loop over ``b``'s candidates; return the indent of its body."""
        chain = _chain(b, self.depth)
        src = self.set_expr(chain, b.vertex)
        lo, hi = self.bounds(b)
        self.w(ind, f"for v{b.vertex} in {self.rng(src, b.lower, b.upper)}:")
        skip = [f"v{b.vertex} == v{u}" for u in b.distinct]
        if b.label >= 0:
            skip.append(f"labels[v{b.vertex}] != plab[{b.vertex}]")
        if skip:
            self.w(ind + 1, f"if {' or '.join(skip)}:")
            self.w(ind + 2, "continue")
        return ind + 1

    def count(self, b: Bind, target: str, ind: int, enclosing: int | None) -> None:
        """``target += |candidates of b|`` without looping over them (or with, for labels)."""
        chain = _chain(b, self.depth)
        lo, hi = self.bounds(b)
        inside = f"{lo} < v{{u}} < {hi} and " if (b.lower or b.upper) else ""
        if b.vertex in self.tables:
            t = self.tables[b.vertex]
            src, last = self.set_expr(chain[:-1], b.vertex), chain[-1][1]
            self.w(ind, f"c = tab{t}[v{last}]")
            for u in b.distinct:
                lab = f" and labels[v{u}] == plab[{b.vertex}]" if b.label >= 0 else ""
                self.w(ind, f"if {inside.format(u=u)}contains({src}, v{u}) and contains(N{last}, v{u}){lab}:")
                self.w(ind + 1, "c -= 1")
            self.w(ind, f"{target} += c")
            return
        key = self.key_of(chain, b.vertex)
        if len(chain) == 1 or key in self.keys:  # full set at hand
            src = self.set_expr(chain, b.vertex)
            if b.label >= 0:
                self.w(ind, f"for x in {self.rng(src, b.lower, b.upper)}:")
                skip = " and ".join([f"labels[x] == plab[{b.vertex}]"] + [f"x != v{u}" for u in b.distinct])
                self.w(ind + 1, f"if {skip}:")
                self.w(ind + 2, f"{target} += 1")
                return
            self.w(ind, f"c = {self.rng(src, b.lower, b.upper)}.shape[0]")
            for u in b.distinct:
                self.w(ind, f"if {inside.format(u=u)}contains({src}, v{u}):")
                self.w(ind + 1, "c -= 1")
            self.w(ind, f"{target} += c")
            return
        src, (sign, last) = self.set_expr(chain[:-1], b.vertex), chain[-1]
        part = self.rng(src, b.lower, b.upper)
        if b.vertex in self.mark_of:  # the partial set is marked: scan the new list, unless the partial is tiny
            t = self.mark_of[b.vertex]
            scan = self.rng(f"N{last}", b.lower, ())  # the upper bound ends the (sorted) scan instead
            stop = [f"if y >= {hi}:", "    break"] if b.upper else []
            if sign == "+" and not b.upper:  # no early stop: merge instead when the marked part is tiny
                self.w(ind, f"if {src}.shape[0] * 4 < N{last}.shape[0]:")
                self.w(ind + 1, f"c = intersect_count({part}, N{last})")
                self.w(ind, "else:")
                self.w(ind + 1, "c = 0")
                self.w(ind + 1, f"for y in {scan}:")
                for line in stop:
                    self.w(ind + 2, line)
                self.w(ind + 2, f"c += mk{t}[y]")
            elif sign == "+":
                self.w(ind, "c = 0")
                self.w(ind, f"for y in {scan}:")
                for line in stop:
                    self.w(ind + 1, line)
                self.w(ind + 1, f"c += mk{t}[y]")
            else:
                self.w(ind, "c = 0")
                self.w(ind, f"for y in {scan}:")
                for line in stop:
                    self.w(ind + 1, line)
                self.w(ind + 1, f"c += mk{t}[y]")
                self.w(ind, f"c = {part}.shape[0] - c")
            member = f"contains(N{last}, v{{u}})" if sign == "+" else f"not contains(N{last}, v{{u}})"
            for u in b.distinct:
                self.w(ind, f"if {inside.format(u=u)}mk{t}[v{u}] != 0 and {member.format(u=u)}:")
                self.w(ind + 1, "c -= 1")
            self.w(ind, f"{target} += c")
            return
        if sign == "+":
            self.w(ind, f"c = intersect_count({part}, N{last})")
        else:
            self.w(ind, f"c = difference_count({part}, N{last})")
        member = f"contains(N{last}, v{{u}})" if sign == "+" else f"not contains(N{last}, v{{u}})"
        for u in b.distinct:
            self.w(ind, f"if {inside.format(u=u)}contains({src}, v{u}) and {member.format(u=u)}:")
            self.w(ind + 1, "c -= 1")
        self.w(ind, f"{target} += c")

    def nest(self, binds: tuple[Bind, ...], target: str, ind: int, enclosing: int | None) -> None:
        """Loops over ``binds[:-1]``; ``target += `` the count of the last bind."""
        for b in binds[:-1]:
            ind = self.loop(b, ind)
            self.after_bind(b.vertex, ind)
            enclosing = b.vertex
        self.count(binds[-1], target, ind, enclosing)


@functools.lru_cache(maxsize=4096)
def generate_source(plan: KernelPlan) -> tuple[str, int]:
    """Python source of ``kernel(indptr, indices, labels, plab, roots, tabs, touched, bufsize, out_emb, out_ext)
    -> int64`` for ``plan``, and the number of count tables it needs (rows of ``tabs``/``touched``).

    ``labels`` are the data vertices' labels, ``plab[u]`` the label pattern vertex ``u`` needs (checked only
    for binds with ``label >= 0``; the values are not part of the source, so labelled patterns of one shape
    share a kernel). The kernel sums, over the root vertices in ``roots``, the plan's count (see module docstring). With
    ``plan.emit`` it instead writes each cut embedding's vertices to ``out_emb`` and its factor counts to
    ``out_ext`` (rows up to their capacity) and returns the number of rows.
    """
    if plan.emit and (plan.bridge or plan.is_enumeration):
        raise ValueError("emit mode needs a decomposition plan with a connected cut (no bridge)")
    plan = renamed(plan)
    g = _Gen(plan)
    order = list(plan.cut) + list(plan.bridge) + [b for f in plan.factors for b in f.binds]
    for d, b in enumerate(order):
        g.depth.setdefault(b.vertex, d)
    last_cut = _plan_tables(g, plan)
    _emit_prologue(g, plan)
    root = plan.cut[0]
    ind = 2
    if plan.is_enumeration and len(plan.cut) == 1:
        g.w(ind, "total += 1")
    elif plan.is_enumeration:
        g.after_bind(root.vertex, ind)
        g.nest(plan.cut[1:], "total", ind, root.vertex)
    else:
        _emit_decomposition(g, plan, last_cut)
    _emit_epilogue(g)
    header = [
        "import numba",
        "import numpy as np",
        "from workbench.graphs.setops import above, below, clip, contains, difference, difference_count, "
        "intersect, intersect_count",
        "",
        "",
    ]
    return "\n".join(header + g.lines) + "\n", g.n_tables


def _plan_tables(g: _Gen, plan: KernelPlan) -> int:
    """Plan every bind's materialisations and count tables (cut, bridge, factors; a bridge adds its scatter
    table); returns the last cut (or bridge) vertex, where the factors start."""
    prev = None
    for i, b in enumerate(plan.cut[1:], start=1):
        g.plan_bind(b, counted=plan.is_enumeration and i == len(plan.cut) - 1, enclosing=prev)
        prev = b.vertex
    for b in plan.bridge:
        g.plan_bind(b, counted=False, enclosing=prev)
        prev = b.vertex
    last_cut = plan.bridge[-1].vertex if plan.bridge else plan.cut[-1].vertex
    for f in plan.factors:
        enclosing = last_cut
        for i, b in enumerate(f.binds):
            g.plan_bind(b, counted=i == len(f.binds) - 1, enclosing=enclosing)
            enclosing = b.vertex
    if plan.bridge:
        g.acc = g.n_tables
        g.n_tables += 1
    return last_cut


def _emit_prologue(g: _Gen, plan: KernelPlan) -> None:
    """The kernel's signature, its buffers, flag arrays and tables, and the loop over root vertices."""
    g.w(0, "@numba.njit(cache=True, nogil=True)")
    g.w(0, "def kernel(indptr, indices, labels, plab, roots, tabs, touched, bufsize, out_emb, out_ext):")
    g.w(1, "BIG = indptr.shape[0] + 1")
    g.w(1, "total = 0")
    g.w(1, "ftotal = 0.0")
    for i in range(len(g.keys)):
        g.w(1, f"S{i} = np.empty(bufsize, np.int32)")
    for t in sorted(g.marks.values()):  # flag arrays (one byte per vertex: stays in cache)
        g.w(1, f"mk{t} = np.zeros(indptr.shape[0], np.uint8)")
    for t in range(g.n_tables):
        g.w(1, f"tab{t} = tabs[{t}]")
        g.w(1, f"tch{t} = touched[{t}]")
        g.w(1, f"nt{t} = 0")
    root = plan.cut[0]
    g.w(1, "for ri in range(roots.shape[0]):")
    g.w(2, f"v{root.vertex} = roots[ri]")
    if root.label >= 0:
        g.w(2, f"if labels[v{root.vertex}] != plab[{root.vertex}]:")
        g.w(3, "continue")


def _emit_decomposition(g: _Gen, plan: KernelPlan, last_cut: int) -> None:
    """A decomposition plan's body inside the root loop: the cut's loops, the bridge's scatter/gather (when
    any), then per cut embedding the factors' counts multiplied (or, with ``plan.emit``, written out)."""
    root = plan.cut[0]
    ind = 2
    g.after_bind(root.vertex, ind)
    for b in plan.cut[1:]:
        ind = g.loop(b, ind)
        g.after_bind(b.vertex, ind)
    if plan.bridge:
        ind = _emit_bridge(g, plan, ind)
    else:
        g.w(ind, "p = 1")
    for i, f in enumerate(plan.factors):
        g.w(ind, f"e{i} = 0")
        g.nest(f.binds, f"e{i}", ind, last_cut)
        if not plan.emit:
            g.w(ind, f"if e{i} == 0:")
            g.w(ind + 1, "continue")
            g.w(ind, f"p *= {' * '.join([f'e{i}'] * f.power)}")
    if plan.emit:  # one row per cut embedding; total counts rows (more than capacity: caller retries)
        g.w(ind, "if total < out_emb.shape[0]:")
        for j, b in enumerate(plan.cut):
            g.w(ind + 1, f"out_emb[total, {j}] = v{b.vertex}")
        for i in range(len(plan.factors)):
            g.w(ind + 1, f"out_ext[total, {i}] = e{i}")
        g.w(ind, "total += 1")
    else:
        g.w(ind, "total += p")
        g.w(ind, "ftotal += p")
    if plan.bridge:
        g.w(ind - 1, f"nt{g.acc} = 0")


def _emit_bridge(g: _Gen, plan: KernelPlan, ind: int) -> int:
    """The bridge's loops scatter counts into its table (keyed by the last bridge vertex); then a loop over the
    touched entries binds that vertex with ``p`` = its count (to ``plan.bridge_power``). Returns the indent of
    that loop's body."""
    a = g.acc
    inner = ind
    for b in plan.bridge[:-1]:
        inner = g.loop(b, inner)
        g.after_bind(b.vertex, inner)
    scatter = plan.bridge[-1]
    body = g.loop(scatter, inner)
    g.w(body, f"if tab{a}[v{scatter.vertex}] == 0:")
    g.w(body + 1, f"tch{a}[nt{a}] = v{scatter.vertex}")
    g.w(body + 1, f"nt{a} += 1")
    g.w(body, f"tab{a}[v{scatter.vertex}] += 1")
    g.w(ind, f"for ti in range(nt{a}):")
    ind += 1
    g.w(ind, f"v{scatter.vertex} = tch{a}[ti]")
    g.w(ind, f"p = tab{a}[v{scatter.vertex}]")
    g.w(ind, f"tab{a}[v{scatter.vertex}] = 0")
    if plan.bridge_power > 1:
        g.w(ind, "p = " + " * ".join(["p"] * plan.bridge_power))
    g.after_bind(scatter.vertex, ind)
    return ind


def _emit_epilogue(g: _Gen) -> None:
    """Reset the count tables after the root loop; the int64 overflow check and the return."""
    for t in range(g.n_tables):
        if t in g.marks.values():
            continue
        g.w(1, f"for zi in range(nt{t}):")
        g.w(2, f"tab{t}[tch{t}[zi]] = 0")
    g.w(1, "if ftotal > 9.0e18:")
    g.w(2, "return -1  # the int64 total overflowed")
    g.w(1, "return total")
