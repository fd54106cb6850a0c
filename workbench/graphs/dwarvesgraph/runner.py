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
from typing import Any

from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig
from workbench.graphs.engines import get_engine, register_engine
from workbench.graphs.graph import Graph
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import Pattern, motifs, parse_pattern
from workbench.registry import Technique

__all__ = ["run", "format_table", "TECHNIQUE", "count_pattern"]

def _miner_engine(graph: Graph, pattern: Pattern, config: DwarvesGraphConfig) -> dict[str, Any]:
    miner = Miner(graph, workers=config.workers, cost_model=config.cost_model)
    r = miner.count(pattern, config.induced, config.engine)
    return {"count": r.count, "plan": r.plan, "seconds": r.seconds, "compile_seconds": r.compile_seconds,
            "plan_seconds": r.plan_seconds, "predicted_seconds": r.predicted_seconds,
            "steps": [{"pattern": s.pattern, "plan": s.plan, "inj": s.inj, "seconds": s.seconds,
                       "predicted_seconds": s.predicted_seconds if s.predicted_seconds == s.predicted_seconds else None,
                       "compile_seconds": s.compile_seconds}
                      for s in r.steps]}


register_engine("decompose", _miner_engine)
register_engine("enumerate", _miner_engine)


def _graph_info(graph: Graph) -> dict[str, Any]:
    r = graph.report
    return {"name": graph.name, "vertices": graph.n, "edges": graph.m, "max_degree": graph.max_degree,
            "dropped_self_loops": r.self_loops, "dropped_duplicate_edges": r.duplicates}


def count_pattern(graph: Graph, pattern: Pattern, config: DwarvesGraphConfig) -> dict[str, Any]:
    """Count ``pattern`` in ``graph`` with ``config.engine``: the engine's dict (count, plan, seconds, ...)."""
    return get_engine(config.engine)(graph, pattern, config)


def run(config: DwarvesGraphConfig) -> dict[str, Any]:
    """The JSON object ``workbench run pattern-count`` prints (schema in the issue; extra fields documented
    in the README): one pattern, or ``counts`` of every connected ``motifs``-vertex pattern."""
    start = time.perf_counter()
    graph = load_graph(config.graph, data_dir=config.data_dir or None)
    load_seconds = time.perf_counter() - start
    head = {"technique": "pattern-count", "graph": config.graph, "induced": config.induced, "engine": config.engine,
            "workers": config.workers, "graph_info": _graph_info(graph), "load_seconds": load_seconds}
    if not config.motifs:
        pattern = parse_pattern(config.pattern)
        out = count_pattern(graph, pattern, config)
        return {**head, "pattern": config.pattern, "pattern_edges": pattern.edge_string(), **out}
    if config.engine not in ("decompose", "enumerate"):  # other engines: one call per pattern
        t0 = time.perf_counter()
        outs = [(p, count_pattern(graph, p, config)) for p in motifs(config.motifs)]
        counts = [{"pattern": p.label, "edges": p.edge_string(), "count": o["count"], "plan": o.get("plan", "")}
                  for p, o in outs]
        return {**head, "motifs": config.motifs, "counts": counts, "count": sum(c["count"] for c in counts),
                "plan": f"{config.engine} per pattern", "seconds": time.perf_counter() - t0,
                "compile_seconds": 0.0, "plan_seconds": 0.0}
    miner = Miner(graph, workers=config.workers, cost_model=config.cost_model)
    t0 = time.perf_counter()
    results = miner.motif_counts(config.motifs, config.induced, config.engine)
    wall = time.perf_counter() - t0
    compile_s = sum(r.compile_seconds for r in results) + miner.precompile_seconds
    counts = [{"pattern": r.pattern.label, "edges": r.pattern.edge_string(), "count": r.count, "plan": r.plan}
              for r in results]
    return {**head, "motifs": config.motifs, "counts": counts, "count": sum(c["count"] for c in counts),
            "plan": f"{len(miner.steps)} kernels", "seconds": max(wall - compile_s - miner.plan_seconds, 0.0),
            "compile_seconds": compile_s, "plan_seconds": miner.plan_seconds,
            "kernel_seconds": sum(s.seconds for s in miner.steps)}


def format_table(result: dict[str, Any]) -> str:
    """Text table: the count and plan, or one row per motif."""
    g = result["graph_info"]
    lines = [f"pattern-count  graph={result['graph']} ({g['vertices']} vertices, {g['edges']} edges; dropped "
             f"{g['dropped_self_loops']} self-loops, {g['dropped_duplicate_edges']} duplicates)  "
             f"induced={result['induced']}  engine={result['engine']}  workers={result['workers']}"]
    if "counts" in result:
        lines.append(f"{'pattern':<36}{'count':>18}  plan")
        for c in result["counts"]:
            lines.append(f"{c['pattern']:<36}{c['count']:>18,}  {c['plan'][:90]}")
    else:
        lines.append(f"{result['pattern']} ({result['pattern_edges']}): {result['count']:,}")
        lines.append(f"plan: {result['plan']}")
    lines.append(f"seconds: {result['seconds']:.4f} (apart: compile {result.get('compile_seconds', 0.0):.2f} s, "
                 f"plan search {result.get('plan_seconds', 0.0):.2f} s)")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="dwarvesgraph",
    summary="count a pattern or all k-motifs: DwarvesGraph decomposition compiler, plain enumeration, Kudu",
    config=DwarvesGraphConfig,
    run=run,
    format_table=format_table,
    panel="widgets.graphs.dwarvesgraph:DwarvesGraphPanel",
    notebook="notebooks/graphs/dwarvesgraph.ipynb",
)
