"""TopGen's generator (arXiv 2210.08190v1, Sec. 3, as the abstract states it; details are our choices,
marked): topology-compatible sub-circuits scored by expressibility and entangling capability, tiled over a
device region, stitched across fragments on coupling edges only, and grown block by block.

- :func:`candidate_templates`: for a fragment (k qubits, its coupling edges), ``count`` random templates:
  a rotation set (``ry | rx | ry rz | rx rz | u3``), an entangler (``cx | cz | crx``) on every fragment edge in
  a random order and direction, one or two such layers (our grammar; the paper's is not public).
- :func:`score_template`: ``-KL + w_ent * MW - w_cx * cx_count`` on the fragment alone (Sim et al.'s
  descriptors, :mod:`.expressibility`); the best template per fragment shape is kept.
- :func:`generate`: the region's tiling (:mod:`.topology`), the best template placed on each fragment, then a
  stitching layer: one ``cx`` per coupling edge between fragments (never anything else), repeated ``blocks``
  times with fresh parameters.
- :func:`growth_block`: the block appended during training: ``ry, rz`` on every qubit and ``rzz`` on every
  region coupling edge, all identity at angle 0; new angles start at ``N(0, init_scale^2)`` (near identity).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.quantum.common.variational.gate_ansatz import Gate, GateAnsatz, GateBuilder
from workbench.quantum.topgen.expressibility import describe
from workbench.quantum.topgen.topology import Tiling, tile

__all__ = [
    "ROTATIONS",
    "ENTANGLERS",
    "Template",
    "ScoredTemplate",
    "candidate_templates",
    "template_ansatz",
    "score_template",
    "best_template",
    "generate",
    "growth_block",
    "Generated",
]

ROTATIONS = (("ry",), ("rx",), ("ry", "rz"), ("rx", "rz"), ("u3",))
ENTANGLERS = ("cx", "cz", "crx")


@dataclass(frozen=True)
class Template:
    """A sub-circuit on ``k`` local qubits: ``layers`` x (``rotation`` on every qubit, ``entangler`` on the
    directed ``edges`` in order), then a final rotation layer when ``final_rotation``."""

    k: int
    rotation: tuple[str, ...]
    entangler: str
    edges: tuple[tuple[int, int], ...]
    layers: int
    final_rotation: bool = False

    def label(self) -> str:
        ent = f" {self.entangler}[{' '.join(f'{a}{b}' for a, b in self.edges)}]" if self.edges else ""
        return f"{self.layers}x({'+'.join(self.rotation)}{ent})" + (" +rot" if self.final_rotation else "")


@dataclass(frozen=True)
class ScoredTemplate:
    """A template with its descriptors on its fragment: KL (nats), MW, native CNOTs and the score."""

    template: Template
    expressibility_kl: float
    meyer_wallach: float
    cx_count: int
    score: float


def _local_edges(fragment: Sequence[int], edges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    pos = {v: i for i, v in enumerate(fragment)}
    return tuple((pos[a], pos[b]) for a, b in edges)


def candidate_templates(
    k: int, edges: Sequence[tuple[int, int]], count: int, rng: np.random.Generator
) -> list[Template]:
    """``count`` distinct random templates for a fragment of ``k`` qubits with local ``edges`` (or all of
    them when fewer exist); a one-qubit fragment gets the five rotation sets."""
    edges = tuple(edges)
    if not edges:
        return [Template(k, r, "cx", (), 1) for r in ROTATIONS]
    out: dict[Template, None] = {}
    space = (
        len(ROTATIONS) * len(ENTANGLERS) * 2 * 2 * (2 ** len(edges)) * max(1, len(list(itertools.permutations(edges))))
    )
    tries = 0
    while len(out) < min(count, space) and tries < 50 * count:
        tries += 1
        order = [edges[i] for i in rng.permutation(len(edges))]
        directed = tuple((b, a) if rng.integers(2) else (a, b) for a, b in order)
        t = Template(
            k,
            ROTATIONS[int(rng.integers(len(ROTATIONS)))],
            ENTANGLERS[int(rng.integers(len(ENTANGLERS)))],
            directed,
            int(rng.integers(1, 3)),
            bool(rng.integers(2)),
        )
        out.setdefault(t, None)
    return list(out)


def _place(template: Template, qubits: Sequence[int], b: GateBuilder) -> None:
    """Append ``template`` on logical ``qubits`` (local index i -> qubits[i]) to builder ``b``."""

    def rotations() -> None:
        for q in qubits:
            for r in template.rotation:
                b.add(r, q)

    for _ in range(template.layers):
        rotations()
        for x, y in template.edges:
            b.add(template.entangler, qubits[x], qubits[y])
    if template.final_rotation:
        rotations()


def template_ansatz(template: Template) -> GateAnsatz:
    """The template alone on its ``k`` qubits (what it is scored as)."""
    b = GateBuilder()
    _place(template, range(template.k), b)
    return GateAnsatz(template.k, tuple(b.gates), b.count, (b.count,), template.label())


def score_template(
    template: Template, *, pairs: int, bins: int, seed: int, w_ent: float, w_cx: float
) -> ScoredTemplate:
    """Descriptors of ``template`` on its own qubits and ``score = -KL + w_ent * MW - w_cx * cx``."""
    a = template_ansatz(template)
    d = describe(a.circuit(), pairs=pairs, bins=bins, seed=seed)
    cx = a.cx_count()
    return ScoredTemplate(
        template, d.expressibility_kl, d.meyer_wallach, cx, -d.expressibility_kl + w_ent * d.meyer_wallach - w_cx * cx
    )


def best_template(
    k: int,
    edges: Sequence[tuple[int, int]],
    *,
    candidates: int,
    pairs: int,
    bins: int,
    seed: int,
    w_ent: float,
    w_cx: float,
) -> tuple[ScoredTemplate, list[ScoredTemplate]]:
    """The highest-scoring of ``candidates`` templates for the shape ``(k, edges)`` and all scored ones."""
    rng = np.random.default_rng(seed)
    scored = [
        score_template(t, pairs=pairs, bins=bins, seed=seed, w_ent=w_ent, w_cx=w_cx)
        for t in candidate_templates(k, edges, candidates, rng)
    ]
    best = max(scored, key=lambda s: (s.score, -s.cx_count))
    return best, scored


@dataclass(frozen=True)
class Generated:
    """The generated ansatz (logical qubit i is device qubit ``tiling.region[i]``), its tiling, the chosen
    template per fragment and every scored candidate (for plots)."""

    ansatz: GateAnsatz
    tiling: Tiling
    chosen: tuple[ScoredTemplate, ...]
    scored: tuple[tuple[ScoredTemplate, ...], ...]


def generate(
    edges: Sequence[tuple[int, int]],
    region: Sequence[int],
    *,
    fragment_size: int,
    blocks: int = 1,
    candidates: int = 12,
    pairs: int = 1000,
    bins: int = 75,
    seed: int = 0,
    w_ent: float = 0.5,
    w_cx: float = 0.02,
    scorer: Callable[[int, tuple[tuple[int, int], ...]], tuple[ScoredTemplate, list[ScoredTemplate]]] | None = None,
) -> Generated:
    """TopGen's initial ansatz on device ``region`` (a connected qubit set; ``edges`` its undirected coupling
    edges): tile, pick each fragment's best template (one search per fragment shape), place, stitch with ``cx``
    on the stitch edges; ``blocks`` repetitions. Two-qubit gates act only on coupling edges (test: transpiling
    with ``initial_layout=region`` adds no SWAP). ``scorer(k, local_edges)`` replaces :func:`best_template`
    with these settings (e.g. a memoised one)."""
    if blocks < 1:
        raise ValueError(f"blocks={blocks} is out of range: valid range is >= 1")
    tiling = tile(edges, region, fragment_size)
    pos = {v: i for i, v in enumerate(tiling.region)}
    by_shape: dict[tuple, tuple[ScoredTemplate, list[ScoredTemplate]]] = {}
    chosen, scored = [], []
    for frag, inner in zip(tiling.fragments, tiling.inner):
        shape = (len(frag), _local_edges(frag, inner))
        if shape not in by_shape:
            if scorer is not None:
                by_shape[shape] = scorer(*shape)
            else:
                by_shape[shape] = best_template(
                    shape[0], shape[1], candidates=candidates, pairs=pairs, bins=bins, seed=seed, w_ent=w_ent, w_cx=w_cx
                )
        chosen.append(by_shape[shape][0])
        scored.append(tuple(by_shape[shape][1]))
    n = len(tiling.region)
    ansatz = GateAnsatz(n, (), 0, (), "topgen")
    for _ in range(blocks):
        b = GateBuilder()
        for frag, best in zip(tiling.fragments, chosen):
            _place(best.template, [pos[v] for v in frag], b)
        for a, c in tiling.stitches:
            b.add("cx", pos[a], pos[c])
        ansatz = ansatz.then(b.gates, b.count)
    return Generated(ansatz, tiling, tuple(chosen), tuple(scored))


def growth_block(tiling: Tiling) -> tuple[list[Gate], int]:
    """The block appended while training: ``ry, rz`` on every qubit, ``rzz`` on every region coupling edge
    (fragment edges and stitches): identity when all its angles are 0. Returns (gates, parameter count)."""
    pos = {v: i for i, v in enumerate(tiling.region)}
    b = GateBuilder()
    for q in range(len(tiling.region)):
        b.add("ry", q)
        b.add("rz", q)
    for a, c in sorted(set(itertools.chain(*tiling.inner, tiling.stitches))):
        b.add("rzz", pos[a], pos[c])
    return b.gates, b.count
