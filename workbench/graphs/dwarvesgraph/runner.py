"""Headless runner of graph pattern counting: ``workbench run pattern-count ...``.

``--engine decompose`` is DwarvesGraph (the cost model picks a decomposition or plain enumeration per
pattern, shrinkage patterns recurse, vertex-induced counts come from the linear transform);
``--engine enumerate`` is the plain enumeration baseline; other engines plug in through
:mod:`workbench.graphs.engines` (Kudu registers ``kudu``). ``--motifs K`` counts every connected K-vertex pattern.

Example::

    workbench run pattern-count --graph wiki-vote --pattern triangle --json
    {"technique": "pattern-count", "graph": "wiki-vote", "pattern": "triangle", "induced": "edge",
     "count": 608389, "plan": "...", "seconds": 0.02, ...}
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig
from workbench.graphs.engines import get_engine, register_engine
from workbench.graphs.graph import Graph
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import Pattern, motifs, parse_pattern
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["run", "format_table", "TECHNIQUE", "count_pattern", "PatternCountResult", "GraphInfo", "MotifCount"]


@dataclass(frozen=True, kw_only=True)
class GraphInfo(Result):
    """The counted graph and what loading it dropped."""

    name: str
    vertices: int
    edges: int
    max_degree: int
    dropped_self_loops: int
    dropped_duplicate_edges: int


@dataclass(frozen=True, kw_only=True)
class MotifCount(Result):
    """One connected pattern of a ``--motifs K`` run."""

    pattern: str
    edges: str
    count: int
    plan: str


@dataclass(frozen=True, kw_only=True)
class PatternCountResult(Result):
    """What ``workbench run dwarvesgraph`` (alias ``pattern-count``) prints.

    One pattern: ``pattern``, ``pattern_edges`` and the engine's fields (decompose/enumerate: ``compile_seconds``,
    ``plan_seconds``, ``predicted_seconds``, ``steps``; kudu: ``launch_seconds``, ``kudu``). Motifs: ``motifs``,
    ``counts`` and the totals (``kernel_seconds`` for the compiled engines). Fields a run does not produce are
    left out, so each shape keeps exactly its keys (in this order)."""

    OMIT_NONE: ClassVar[tuple[str, ...]] = (
        "pattern",
        "pattern_edges",
        "motifs",
        "counts",
        "compile_seconds",
        "plan_seconds",
        "predicted_seconds",
        "steps",
        "kernel_seconds",
        "launch_seconds",
        "kudu",
    )

    technique: str = "pattern-count"
    graph: str
    induced: str
    engine: str
    workers: int
    graph_info: GraphInfo
    load_seconds: float
    pattern: str | None = None
    pattern_edges: str | None = None
    motifs: int | None = None
    counts: tuple[MotifCount, ...] | None = None
    count: int
    plan: str
    seconds: float
    compile_seconds: float | None = None
    plan_seconds: float | None = None
    predicted_seconds: float | None = None
    steps: tuple[Mapping[str, Any], ...] | None = None
    kernel_seconds: float | None = None
    launch_seconds: float | None = None
    kudu: Mapping[str, Any] | None = None


def _miner_engine(graph: Graph, pattern: Pattern, config: DwarvesGraphConfig) -> dict[str, Any]:
    miner = Miner(graph, workers=config.workers, cost_model=config.cost_model)
    r = miner.count(pattern, config.induced, config.engine)
    return {
        "count": r.count,
        "plan": r.plan,
        "seconds": r.seconds,
        "compile_seconds": r.compile_seconds,
        "plan_seconds": r.plan_seconds,
        "predicted_seconds": r.predicted_seconds,
        "steps": [
            {
                "pattern": s.pattern,
                "plan": s.plan,
                "inj": s.inj,
                "seconds": s.seconds,
                "predicted_seconds": s.predicted_seconds if s.predicted_seconds == s.predicted_seconds else None,
                "compile_seconds": s.compile_seconds,
            }
            for s in r.steps
        ],
    }


register_engine("decompose", _miner_engine)
register_engine("enumerate", _miner_engine)


def _graph_info(graph: Graph) -> GraphInfo:
    r = graph.report
    return GraphInfo(
        name=graph.name,
        vertices=graph.n,
        edges=graph.m,
        max_degree=graph.max_degree,
        dropped_self_loops=r.self_loops,
        dropped_duplicate_edges=r.duplicates,
    )


def count_pattern(graph: Graph, pattern: Pattern, config: DwarvesGraphConfig) -> dict[str, Any]:
    """Count ``pattern`` in ``graph`` with ``config.engine``: the engine's dict (count, plan, seconds, ...)."""
    return get_engine(config.engine)(graph, pattern, config)


def run(config: DwarvesGraphConfig) -> PatternCountResult:
    """What ``workbench run dwarvesgraph`` prints (schema: :class:`PatternCountResult`; extra fields documented
    in the README): one pattern, or ``counts`` of every connected ``motifs``-vertex pattern."""
    start = time.perf_counter()
    graph = load_graph(config.graph, data_dir=config.data_dir or None)
    load_seconds = time.perf_counter() - start
    head = dict(
        graph=config.graph,
        induced=config.induced,
        engine=config.engine,
        workers=config.workers,
        graph_info=_graph_info(graph),
        load_seconds=load_seconds,
    )
    if not config.motifs:
        pattern = parse_pattern(config.pattern)
        out = count_pattern(graph, pattern, config)
        steps = out.pop("steps", None)
        return PatternCountResult(
            **head,
            pattern=config.pattern,
            pattern_edges=pattern.edge_string(),
            steps=tuple(steps) if steps is not None else None,
            **out,
        )
    if config.engine not in ("decompose", "enumerate"):  # other engines: one call per pattern
        t0 = time.perf_counter()
        outs = [(p, count_pattern(graph, p, config)) for p in motifs(config.motifs)]
        counts = tuple(
            MotifCount(pattern=p.label, edges=p.edge_string(), count=o["count"], plan=o.get("plan", ""))
            for p, o in outs
        )
        return PatternCountResult(
            **head,
            motifs=config.motifs,
            counts=counts,
            count=sum(c.count for c in counts),
            plan=f"{config.engine} per pattern",
            seconds=time.perf_counter() - t0,
            compile_seconds=0.0,
            plan_seconds=0.0,
        )
    miner = Miner(graph, workers=config.workers, cost_model=config.cost_model)
    t0 = time.perf_counter()
    results = miner.motif_counts(config.motifs, config.induced, config.engine)
    wall = time.perf_counter() - t0
    compile_s = sum(r.compile_seconds for r in results) + miner.precompile_seconds
    counts = tuple(
        MotifCount(pattern=r.pattern.label, edges=r.pattern.edge_string(), count=r.count, plan=r.plan) for r in results
    )
    return PatternCountResult(
        **head,
        motifs=config.motifs,
        counts=counts,
        count=sum(c.count for c in counts),
        plan=f"{len(miner.steps)} kernels",
        seconds=max(wall - compile_s - miner.plan_seconds, 0.0),
        compile_seconds=compile_s,
        plan_seconds=miner.plan_seconds,
        kernel_seconds=sum(s.seconds for s in miner.steps),
    )


def format_table(result: dict[str, Any]) -> str:
    """Text table: the count and plan, or one row per motif."""
    g = result["graph_info"]
    lines = [
        f"pattern-count  graph={result['graph']} ({g['vertices']} vertices, {g['edges']} edges; dropped "
        f"{g['dropped_self_loops']} self-loops, {g['dropped_duplicate_edges']} duplicates)  "
        f"induced={result['induced']}  engine={result['engine']}  workers={result['workers']}"
    ]
    if "counts" in result:
        lines.append(f"{'pattern':<36}{'count':>18}  plan")
        for c in result["counts"]:
            lines.append(f"{c['pattern']:<36}{c['count']:>18,}  {c['plan'][:90]}")
    else:
        lines.append(f"{result['pattern']} ({result['pattern_edges']}): {result['count']:,}")
        lines.append(f"plan: {result['plan']}")
    lines.append(
        f"seconds: {result['seconds']:.4f} (apart: compile {result.get('compile_seconds', 0.0):.2f} s, "
        f"plan search {result.get('plan_seconds', 0.0):.2f} s)"
    )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="dwarvesgraph",
    config=DwarvesGraphConfig,
    run=run,
    format_table=format_table,
    panel="widgets.graphs.dwarvesgraph:DwarvesGraphPanel",
    notebook="notebooks/graphs/dwarvesgraph.ipynb",
    smoke={"graph": "karate", "pattern": "triangle"},
)
