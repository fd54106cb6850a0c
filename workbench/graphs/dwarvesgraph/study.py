"""DwarvesGraph's study layer: what the panel draws and the notebook shows, computed here (no plotting).

- The panel's view (:func:`dwarves_view`): the chosen plan and every candidate plan by the cost model, the
  predicted time of both engines over a synthetic size sweep, the vertex-induced transform; memoised per
  (graph, data directory, pattern), so moving a control re-plans without running a kernel.
- Measurements behind the *Run* button (:func:`measure_view`), the notebook's figures and the benchmark:
  plan-by-plan cost-model checks (:func:`plan_study`), decomposition vs enumeration as graphs grow
  (:func:`scaling_study`), motif counts (:func:`motif_study`), networkx as the outside reference.

Caches live here only (graphs, miners, statistics, plan analyses), keyed by the graph spec and the resolved
data directory; :func:`clear_caches` empties them. ``widgets.graphs.dwarvesgraph`` draws what these return.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.data.registry import data_dir as resolve_data_dir
from workbench.graphs.cliques import count_cliques
from workbench.graphs.cost_model import GraphStats, plan_cost, predict_seconds, sample_seconds
from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig
from workbench.graphs.graph import Graph
from workbench.graphs.induced import supergraphs
from workbench.graphs.kernels import compile_plan, run_kernel
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner, PlanChoice
from workbench.graphs.patterns import Pattern, motifs, parse_pattern

__all__ = [
    "plan_study",
    "scaling_study",
    "engine_pair",
    "networkx_triangles",
    "motif_study",
    "SYNTHETIC_FAMILIES",
    "SIZES",
    "synthetic_spec",
    "synthetic_family",
    "DwarvesView",
    "dwarves_view",
    "Measurements",
    "measure_view",
    "resolve_graph",
    "motif_list",
    "circle_layout",
    "decomposition_roles",
    "view_graph",
    "clear_caches",
    "predict_seconds",
]

#: synthetic graph families of the size sweep (R-MAT edge factor 8; Erdos-Renyi mean degree 8; square grid)
SYNTHETIC_FAMILIES = ("synthetic: R-MAT", "synthetic: Erdos-Renyi", "synthetic: grid")
#: log2(vertices) of the synthetic graphs of the sweep
SIZES = tuple(range(8, 15))


def synthetic_spec(family: str, log2n: int) -> str:
    """Spec of the synthetic graph with about 2^log2n vertices (R-MAT edge factor 8; ER mean degree 8).

    >>> synthetic_spec("synthetic: R-MAT", 11), synthetic_spec("synthetic: grid", 8)
    ('rmat-11-8', 'grid-16-16')
    """
    n = 1 << log2n
    if family.endswith("R-MAT"):
        return f"rmat-{log2n}-8"
    if family.endswith("Erdos-Renyi"):
        return f"er-{n}-{8.0 / (n - 1):.3g}"
    side = int(round(math.sqrt(n)))
    return f"grid-{side}-{max(n // side, 1)}"


def synthetic_family(spec: str) -> str:
    """The synthetic family whose size sweep stands for graph ``spec`` (R-MAT for datasets and files)."""
    if spec.startswith("er-"):
        return "synthetic: Erdos-Renyi"
    if spec.startswith("grid-"):
        return "synthetic: grid"
    return "synthetic: R-MAT"


# ---------------------------------------------------------------------------------------------- caches
def _data_key(data_dir: str) -> str:
    """The data directory a graph spec is read from, resolved (``""``: $WORKBENCH_DATA or the project's data/)."""
    return str(resolve_data_dir(data_dir or None))


@functools.lru_cache(maxsize=16)
def _graph(spec: str, data_key: str) -> Graph:
    return load_graph(spec, data_dir=data_key).by_degree()


@functools.lru_cache(maxsize=16)
def _miner(spec: str, data_key: str) -> Miner:
    return Miner(_graph(spec, data_key), ordered=True)


@functools.lru_cache(maxsize=64)
def _stats(spec: str, data_key: str) -> GraphStats:
    return GraphStats.of(_graph(spec, data_key))


@functools.lru_cache(maxsize=256)
def _analysis(spec: str, data_key: str, pattern_text: str) -> tuple[list[PlanChoice], list]:
    miner = _miner(spec, data_key)
    pattern = parse_pattern(pattern_text)
    cands = miner.candidates(pattern)
    tree = miner.needed_plans([pattern]) if pattern.k > 2 else []
    return cands, tree


def clear_caches() -> None:
    """Forget every memoised graph, miner, statistics and plan analysis (e.g. after the data changed)."""
    for cached in (_graph, _miner, _stats, _analysis):
        cached.cache_clear()


def view_graph(spec: str, data_dir: str = "") -> Graph:
    """The degree-ordered graph ``spec`` (memoised per spec and resolved data directory)."""
    return _graph(spec, _data_key(data_dir))


# ---------------------------------------------------------------------------------------------- the view
@dataclass(frozen=True)
class DwarvesView:
    """What one redraw shows (no kernel has run): the pattern, the plan candidates (cheapest first), the
    predicted seconds of both engines over the synthetic size sweep (``kind -> (vertices, seconds)``) and,
    vertex-induced, the linear transform ``V(p) = sum c_q E(q)``."""

    config: DwarvesGraphConfig
    pattern: Pattern
    candidates: list[PlanChoice]
    sweep: dict[str, tuple[list[int], list[float]]]
    transform: list[tuple[Pattern, int]] = field(default_factory=list)

    @property
    def chosen(self) -> PlanChoice | None:
        return self.candidates[0] if self.candidates else None

    def best(self, kind: str) -> PlanChoice | None:
        """The cheapest candidate of ``kind`` (``"enumerate"`` or ``"decompose"``)."""
        return next((c for c in self.candidates if c.kind == kind), None)


def dwarves_view(config: DwarvesGraphConfig) -> DwarvesView:
    """Plan ``config.pattern`` on ``config.graph`` and sweep the cost model over the synthetic family's sizes
    (memoised; no kernel runs). Raises ``ValueError``/``FileNotFoundError`` for a bad pattern or graph."""
    key = _data_key(config.data_dir)
    pattern = parse_pattern(config.pattern)
    cands, tree = _analysis(config.graph, key, config.pattern)
    best_enum = next((c for c in cands if c.kind == "enumerate"), None)
    best_dec = next((c for c in cands if c.kind == "decompose"), None)
    sweep: dict[str, tuple[list[int], list[float]]] = {}
    sizes = [1 << s for s in SIZES]
    family = synthetic_family(config.graph)
    stats = [_stats(synthetic_spec(family, s), key) for s in SIZES]
    if best_enum is not None:
        sweep["enumerate"] = (sizes, [predict_seconds(plan_cost(best_enum.kernel, st)) for st in stats])
    if best_dec is not None:
        kernels = [k for k in tree] or [best_dec.kernel]
        sweep["decompose"] = (sizes, [predict_seconds(sum(plan_cost(k, st) for k in kernels)) for st in stats])
    transform = supergraphs(pattern) if config.induced == "vertex" else []
    return DwarvesView(config, pattern, cands, sweep, transform)


@dataclass(frozen=True)
class Measurements:
    """What the panel's *Run* measured on one (graph, pattern, induced) setting.

    ``plans``: measured kernel seconds per candidate plan description; ``engines``: ``kind -> (vertices,
    seconds)`` of both engines (None when enumeration was skipped: the model predicts more than the limit);
    ``count``: the count both engines agree on; ``motifs``: ``[{"pattern", "count"}]`` (empty if
    ``config.motifs`` is 0) and their counting seconds."""

    key: tuple[str, str, str]
    graph: str
    plans: dict[str, float]
    engines: dict[str, tuple[int, float]] | None
    count: int | None
    enumerate_limit_s: float
    motifs: list[dict[str, Any]]
    motif_seconds: float

    @property
    def speedup(self) -> float | None:
        """Enumeration seconds over decomposition seconds (measured), or None when enumeration was skipped."""
        if not self.engines:
            return None
        return self.engines["enumerate"][1] / max(self.engines["decompose"][1], 1e-9)


def measure_view(
    config: DwarvesGraphConfig, *, enumerate_limit_s: float = 30.0, progress: Callable[[int], None] | None = None
) -> Measurements:
    """Count for real on ``config.graph``: time the 6 cheapest plans, count with both engines (unless the
    model predicts the best enumeration takes more than ``enumerate_limit_s``), count the
    ``config.motifs``-vertex motifs. ``progress(step)`` is called with 1, 2, 3 as the three parts finish."""
    view = dwarves_view(config)
    graph = view_graph(config.graph, config.data_dir)
    rows = plan_study(graph, view.pattern, top=6, sample=False) if view.pattern.k > 2 else []
    plans = {r["plan"]: r["measured_seconds"] for r in rows}
    if progress:
        progress(1)
    best_enum = view.best("enumerate")
    skip_enum = best_enum is not None and predict_seconds(best_enum.units) > enumerate_limit_s
    engines, count = None, None
    if not skip_enum:
        pair = engine_pair(graph, view.pattern, config.induced)
        engines = {k: (graph.n, v["seconds"]) for k, v in pair.items()}
        count = pair["decompose"]["count"]
    if progress:
        progress(2)
    counts: list[Any] = []
    motif_seconds = 0.0
    if config.motifs:
        counts, motif_seconds = motif_study(graph, config.motifs, config.induced)
    if progress:
        progress(3)
    return Measurements(
        (config.graph, config.pattern, config.induced),
        config.graph,
        plans,
        engines,
        count,
        enumerate_limit_s,
        counts,
        motif_seconds,
    )


def motif_study(
    graph: Graph, k: int, induced: str = "vertex", *, workers: int = 1
) -> tuple[list[dict[str, Any]], float]:
    """Count every connected ``k``-vertex pattern: ``([{"pattern", "count"}], counting seconds)``."""
    res = Miner(graph, workers=workers, ordered=True).motif_counts(k, induced)
    return [{"pattern": r.pattern.label, "count": r.count} for r in res], sum(r.seconds for r in res)


def resolve_graph(spec: str, data_dir: str = "", *, fallback: str = "rmat-12-8") -> tuple[Graph, str]:
    """Load ``spec`` (``data_dir`` if it exists, else the registry default); when a dataset is absent, the
    synthetic ``fallback`` instead, with a note saying so (for notebooks run without the shared data)."""
    where = data_dir if data_dir and Path(data_dir).is_dir() else ""
    try:
        return load_graph(spec, data_dir=where or None), ""
    except FileNotFoundError as exc:
        return load_graph(fallback), f"**{spec} is not available here ({exc}); using {fallback} instead.**"


def motif_list(k: int) -> tuple[Pattern, ...]:
    """The connected ``k``-vertex patterns (none for ``k = 0``)."""
    return motifs(k) if k else ()


def circle_layout(k: int) -> np.ndarray:
    """``(k, 2)`` positions of ``k`` pattern vertices on the unit circle, vertex 0 at the top, clockwise."""
    angles = np.pi / 2 - 2 * np.pi * np.arange(k) / max(k, 1)
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def decomposition_roles(choice: PlanChoice | None) -> dict[int, str]:
    """Role of each pattern vertex in ``choice``'s decomposition: ``"cut"``, or ``"c0"``, ``"c1"``... for the
    components (bridge first); empty for a plain enumeration."""
    if choice is None or choice.decomposition is None:
        return {}
    d = choice.decomposition
    roles = {v: "cut" for v in d.cut}
    comps = ([d.bridge] if d.bridge else []) + [order for order, _ in d.classes]
    for i, comp in enumerate(comps):
        roles.update({v: f"c{i}" for v in comp})
    return roles


def plan_study(
    graph: Graph, pattern: Pattern, *, top: int = 8, workers: int = 1, sample: bool = True
) -> list[dict[str, Any]]:
    """Run the ``top`` cheapest candidate plans for inj(pattern) (by the degree-statistics model), and the
    cheapest plain enumeration, and report, per plan, the model's prediction, the sampling estimate and
    the measured kernel seconds.

    Shrinkage patterns are not counted here: the rows compare the plans' own kernels. Returns one dict per
    plan: ``plan``, ``kind``, ``units``, ``predicted_seconds``, ``sampled_seconds``, ``measured_seconds``,
    ``compile_seconds``, ``chosen`` (the engine's pick; for an unlabelled clique that is the clique kernel,
    measured in its own row).
    """
    miner = Miner(graph, workers=workers)
    cands = miner.candidates(pattern)
    pick = miner.plan(pattern)
    picked = cands[:top]
    best_enum = next((c for c in cands if c.kind == "enumerate"), None)
    if best_enum is not None and best_enum not in picked:  # always show the best plain enumeration too
        picked.append(best_enum)
    rows = []
    for c in picked:
        kernel = compile_plan(c.kernel)
        sampled = sample_seconds(kernel, miner.graph, workers=workers) if sample else float("nan")
        start = time.perf_counter()
        run_kernel(kernel, miner.graph, workers=workers)
        rows.append(
            {
                "plan": c.describe(),
                "kind": c.kind,
                "units": c.units,
                "predicted_seconds": predict_seconds(c.units),
                "sampled_seconds": sampled,
                "measured_seconds": time.perf_counter() - start,
                "compile_seconds": kernel.compile_seconds,
                "chosen": pick.kind != "clique" and c.describe() == pick.describe(),
            }
        )
    if pick.kind == "clique":
        start = time.perf_counter()
        count_cliques(miner.graph, pattern.k, workers=workers, index=miner.clique_index)
        nan = float("nan")
        rows.append(
            {
                "plan": pick.describe(),
                "kind": "clique",
                "units": nan,
                "predicted_seconds": nan,
                "sampled_seconds": nan,
                "measured_seconds": time.perf_counter() - start,
                "compile_seconds": 0.0,
                "chosen": True,
            }
        )
    return rows


def engine_pair(graph: Graph, pattern: Pattern, induced: str = "edge", *, workers: int = 1) -> dict[str, Any]:
    """Count ``pattern`` with the decomposition engine and with plain enumeration, each in a fresh session
    (kernels compiled before timing; the shrinkage sub-counts of the decomposition are timed with it)."""
    out: dict[str, Any] = {}
    for engine in ("decompose", "enumerate"):
        warm = Miner(graph, workers=workers, ordered=False)
        warm.count(pattern, induced, engine)  # compile (or load) every kernel
        miner = Miner(warm.graph, workers=workers, ordered=True)
        miner.stats = warm.stats
        r = miner.count(pattern, induced, engine)
        out[engine] = {
            "count": r.count,
            "seconds": r.seconds + r.plan_seconds,
            "plan": r.plan,
            "compile_seconds": sum(s.compile_seconds for s in warm.steps),
        }
    if out["decompose"]["count"] != out["enumerate"]["count"]:
        raise RuntimeError(
            f"engines disagree on {pattern.label}: {out['decompose']['count']} vs {out['enumerate']['count']}"
        )
    return out


def scaling_study(
    pattern: Pattern, graphs: Sequence[Graph], *, induced: str = "edge", workers: int = 1
) -> list[dict[str, Any]]:
    """:func:`engine_pair` on each graph: rows with ``graph``, ``vertices``, ``edges``, ``count``,
    ``decompose_seconds``, ``enumerate_seconds`` and the plans."""
    rows = []
    for g in graphs:
        pair = engine_pair(g, pattern, induced, workers=workers)
        rows.append(
            {
                "graph": g.name,
                "vertices": g.n,
                "edges": g.m,
                "count": pair["decompose"]["count"],
                "decompose_seconds": pair["decompose"]["seconds"],
                "enumerate_seconds": pair["enumerate"]["seconds"],
                "decompose_plan": pair["decompose"]["plan"],
                "enumerate_plan": pair["enumerate"]["plan"],
            }
        )
    return rows


def networkx_triangles(graph: Graph) -> tuple[int, float]:
    """Triangles by ``networkx.triangles`` (the outside reference) and its seconds (graph conversion excluded)."""
    g = graph.to_networkx()
    import networkx as nx

    start = time.perf_counter()
    total = sum(nx.triangles(g).values()) // 3
    return total, time.perf_counter() - start
