"""Measurements behind the notebook's figures and the benchmark: plan-by-plan cost-model checks,
decomposition vs enumeration as graphs grow, and networkx as the outside reference.

Every function returns plain dicts/lists of numbers (no plotting here); ``widgets.graphs.dwarvesgraph``
draws them.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from workbench.graphs.cost_model import predict_seconds, sample_seconds
from workbench.graphs.graph import Graph
from workbench.graphs.cliques import count_cliques
from workbench.graphs.kernels import compile_plan, run_kernel
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import Pattern

__all__ = ["plan_study", "scaling_study", "engine_pair", "networkx_triangles"]


def plan_study(graph: Graph, pattern: Pattern, *, top: int = 8, workers: int = 1, sample: bool = True
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
        rows.append({"plan": c.describe(), "kind": c.kind, "units": c.units,
                     "predicted_seconds": predict_seconds(c.units), "sampled_seconds": sampled,
                     "measured_seconds": time.perf_counter() - start, "compile_seconds": kernel.compile_seconds,
                     "chosen": pick.kind != "clique" and c.describe() == pick.describe()})
    if pick.kind == "clique":
        start = time.perf_counter()
        count_cliques(miner.graph, pattern.k, workers=workers, index=miner.clique_index)
        nan = float("nan")
        rows.append({"plan": pick.describe(), "kind": "clique", "units": nan, "predicted_seconds": nan,
                     "sampled_seconds": nan, "measured_seconds": time.perf_counter() - start,
                     "compile_seconds": 0.0, "chosen": True})
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
        out[engine] = {"count": r.count, "seconds": r.seconds + r.plan_seconds, "plan": r.plan,
                       "compile_seconds": sum(s.compile_seconds for s in warm.steps)}
    if out["decompose"]["count"] != out["enumerate"]["count"]:
        raise RuntimeError(f"engines disagree on {pattern.label}: {out['decompose']['count']} vs "
                           f"{out['enumerate']['count']}")
    return out


def scaling_study(pattern: Pattern, graphs: Sequence[Graph], *, induced: str = "edge", workers: int = 1
                  ) -> list[dict[str, Any]]:
    """:func:`engine_pair` on each graph: rows with ``graph``, ``vertices``, ``edges``, ``count``,
    ``decompose_seconds``, ``enumerate_seconds`` and the plans."""
    rows = []
    for g in graphs:
        pair = engine_pair(g, pattern, induced, workers=workers)
        rows.append({"graph": g.name, "vertices": g.n, "edges": g.m, "count": pair["decompose"]["count"],
                     "decompose_seconds": pair["decompose"]["seconds"],
                     "enumerate_seconds": pair["enumerate"]["seconds"],
                     "decompose_plan": pair["decompose"]["plan"], "enumerate_plan": pair["enumerate"]["plan"]})
    return rows


def networkx_triangles(graph: Graph) -> tuple[int, float]:
    """Triangles by ``networkx.triangles`` (the outside reference) and its seconds (graph conversion excluded)."""
    g = graph.to_networkx()
    import networkx as nx

    start = time.perf_counter()
    total = sum(nx.triangles(g).values()) // 3
    return total, time.perf_counter() - start
