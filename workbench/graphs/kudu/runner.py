"""Headless runner of Kudu: ``workbench run kudu --graph NAME --pattern NAME --workers P --strategy S ...``.

Counts the pattern on P real processes (gloo, forked; the graph 1-D partitioned, remote adjacency lists
fetched by messages), checks nothing itself (the tests compare with the single-process engine), and
reports what the run measured: messages, bytes, cache hit rate, peak live embeddings, time per phase and
per rank. A ``model`` block carries the measured per-edge costs to a paper-scale graph and cluster
(:mod:`.model`, labelled as a model; needs P >= 2).

Example::

    workbench run kudu --graph wiki-vote --pattern 4-clique --workers 4 --strategy hybrid --chunk-size 1024 --json
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.graphs.engines import register_engine
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.count import KuduResult, count_distributed
from workbench.graphs.kudu.model import MODEL_LABEL, Measured, Projection, cluster_summary, project, replicated
from workbench.registry import Technique
from workbench.results import Result, fmt_bytes

__all__ = [
    "run",
    "format_table",
    "TECHNIQUE",
    "result_fields",
    "model_block",
    "pattern_count_engine",
    "KuduRun",
    "ModelBlock",
    "RankRow",
    "GraphInfo",
]


@dataclass(frozen=True, kw_only=True)
class GraphInfo(Result):
    """Size of the counted graph."""

    vertices: int
    edges: int
    max_degree: int


@dataclass(frozen=True, kw_only=True)
class RankRow(Result):
    """What one rank measured (bytes: requests and answers it fetched; seconds: its mining time)."""

    rank: int
    count: int
    owned_vertices: int
    owned_entries: int
    lists_fetched: int
    lists_served: int
    bytes_fetched: int
    cache_hit_rate: float
    peak_embeddings: int
    compute_seconds: float
    sync_seconds: float
    wait_seconds: float
    idle_seconds: float
    seconds: float


@dataclass(frozen=True, kw_only=True)
class ModelBlock(Result):
    """The paper-scale projection (MODEL) of a run: its cluster, the measured per-edge costs, then either the
    projection and the replicated-graph design, or the reason there is none (``error``)."""

    OMIT_NONE: ClassVar[tuple[str, ...]] = ("error", "projection", "replicated")

    label: str
    edges: float
    cluster: Mapping[str, Any]
    per_edge: Mapping[str, float]
    error: str | None = None
    projection: Projection | None = None
    replicated: Projection | None = None


@dataclass(frozen=True, kw_only=True)
class KuduRun(Result):
    """What ``workbench run kudu`` prints (keys in this order)."""

    technique: str = "kudu"
    graph: str
    pattern: str
    pattern_edges: str
    induced: str
    workers: int
    strategy: str
    chunk_size: int
    cache_kb: int
    graph_info: GraphInfo
    label: str
    load_seconds: float
    count: int
    completed: bool
    plan: str
    partition: str
    seconds: float
    launch_seconds: float
    measured: Mapping[str, Any]
    per_rank: tuple[RankRow, ...]
    model: ModelBlock


def result_fields(result: KuduResult) -> dict[str, Any]:
    """The measured part of the JSON: count, plan, times, totals and a row per rank."""
    per_rank = tuple(
        RankRow(
            rank=r.rank,
            count=r.count,
            owned_vertices=r.owned_vertices,
            owned_entries=r.owned_entries,
            lists_fetched=r.fetch.lists_fetched,
            lists_served=r.fetch.lists_served,
            bytes_fetched=r.fetch.response_bytes + r.fetch.request_bytes,
            cache_hit_rate=r.fetch.cache_hit_rate,
            peak_embeddings=r.peak_embeddings,
            compute_seconds=r.compute_seconds,
            sync_seconds=r.fetch.sync_seconds,
            wait_seconds=r.fetch.wait_seconds,
            idle_seconds=r.fetch.idle_seconds,
            seconds=r.total_seconds,
        )
        for r in result.ranks
    )
    return {
        "count": result.count,
        "completed": result.completed,
        "plan": result.plan,
        "partition": result.partition,
        "seconds": result.seconds,
        "launch_seconds": result.launch_seconds,
        "measured": dict(result.totals),
        "per_rank": per_rank,
    }


def model_block(result: KuduResult, config: KuduConfig, *, vertices: int, edges: int) -> ModelBlock:
    """The paper-scale projection of this run (and of the replicated-graph design), or why there is none."""
    measured = Measured.of(result, vertices=vertices, edges=edges)
    cluster, machines = config.cluster, config.model_machines
    head = dict(
        label=MODEL_LABEL,
        edges=config.model_edges,
        cluster=cluster_summary(cluster, machines),
        per_edge=measured.per_edge(),
    )
    if len(result.ranks) < 2:
        return ModelBlock(**head, error="the model needs a real run with workers >= 2 (one process fetches nothing)")
    if not result.completed:
        return ModelBlock(**head, error="the run was abandoned (max_embeddings exceeded), so its costs are partial")
    return ModelBlock(
        **head,
        projection=project(measured, config.model_edges, cluster, machines),
        replicated=replicated(measured, config.model_edges, cluster, machines),
    )


def run(config: KuduConfig) -> KuduRun:
    """The JSON object ``workbench run kudu`` prints (see module docstring)."""
    from workbench.graphs.loaders import load_graph
    from workbench.graphs.patterns import parse_pattern

    start = time.perf_counter()
    graph = load_graph(config.graph, data_dir=config.data_dir or None)
    load_seconds = time.perf_counter() - start
    pattern = parse_pattern(config.pattern)
    result = count_distributed(
        graph,
        pattern,
        config.induced,
        workers=config.workers,
        strategy=config.strategy,
        chunk_size=config.chunk_size,
        partition=config.partition,
        cache_bytes=config.cache_kb * 1024,
        max_embeddings=config.max_embeddings,
        timeout_s=config.timeout_s,
    )
    return KuduRun(
        graph=config.graph,
        pattern=config.pattern,
        pattern_edges=pattern.edge_string(),
        induced=config.induced,
        workers=config.workers,
        strategy=config.strategy,
        chunk_size=config.chunk_size,
        cache_kb=config.cache_kb,
        graph_info=GraphInfo(vertices=graph.n, edges=graph.m, max_degree=graph.max_degree),
        label=f"real run on {config.workers} processes (torch.distributed, gloo)",
        load_seconds=load_seconds,
        **result_fields(result),
        model=model_block(result, config, vertices=graph.n, edges=graph.m),
    )


def format_table(result: dict[str, Any]) -> str:
    """A text summary: count, the measured counters, one row per rank, and the model line."""
    m = result["measured"]
    g = result["graph_info"]
    lines = [
        f"kudu  graph={result['graph']} ({g['vertices']} vertices, {g['edges']} edges)  pattern={result['pattern']}  "
        f"induced={result['induced']}  P={result['workers']}  strategy={result['strategy']}  "
        f"chunk={result['chunk_size']}  ({result['label']})",
        f"count: {result['count']:,}" + ("" if result["completed"] else "  (INCOMPLETE: max_embeddings exceeded)"),
        f"plan: {result['plan']}; partition: {result['partition']}",
        f"messages {m['messages']:,} in {m['rounds']:,} rounds; bytes {fmt_bytes(m['bytes'])}; lists fetched "
        f"{m['lists_fetched']:,} of {m['remote_uses']:,} remote uses (reuse {m['reuse_rate']:.1%}, cache hit rate "
        f"{m['cache_hit_rate']:.1%}); peak live embeddings {m['peak_embeddings']:,} "
        f"({fmt_bytes(m['peak_set_bytes'])} of sets)",
        f"seconds: {result['seconds']:.3f} mining (compute {m['compute_seconds']:.3f}, rounds {m['sync_seconds']:.3f}, "
        f"waiting {m['wait_seconds']:.3f}, idle {m['idle_seconds']:.3f}); {result['launch_seconds']:.2f} with launch",
        f"{'rank':>4}{'count':>16}{'vertices':>10}{'fetched':>10}{'served':>10}{'hit rate':>10}{'peak emb':>10}{'seconds':>9}",
    ]
    for r in result["per_rank"]:
        lines.append(
            f"{r['rank']:>4}{r['count']:>16,}{r['owned_vertices']:>10,}{r['lists_fetched']:>10,}"
            f"{r['lists_served']:>10,}{r['cache_hit_rate']:>10.1%}{r['peak_embeddings']:>10,}{r['seconds']:>9.3f}"
        )
    model = result["model"]
    if "projection" in model:
        p, rep = model["projection"], model["replicated"]
        lines.append(
            f"MODEL {model['edges']:.3g} edges on {p['machines']} machines: {p['seconds']:.3g} s, "
            f"{fmt_bytes(p['bytes_per_machine'])} fetched and {fmt_bytes(p['memory_bytes'])} held per machine "
            f"({'fits' if p['fits'] else 'does NOT fit'}); replicated graph: {fmt_bytes(rep['memory_bytes'])} "
            f"per machine ({'fits' if rep['fits'] else 'does NOT fit'})"
        )
    else:
        lines.append(f"MODEL: {model.get('error', '')}")
    return "\n".join(lines)


def pattern_count_engine(graph: Any, pattern: Any, config: Any) -> dict[str, Any]:
    """The ``--engine kudu`` engine of ``workbench run dwarvesgraph`` (alias ``pattern-count``) (``config.workers`` processes, hybrid,
    chunks of 256): ``{"count", "plan", "seconds", ...}`` plus Kudu's measurements."""
    result = count_distributed(
        graph, pattern, config.induced, workers=config.workers, strategy="hybrid", chunk_size=256
    )
    fields = result_fields(result)
    return {
        "count": fields["count"],
        "plan": f"kudu hybrid, P={config.workers}: {fields['plan']}",
        "seconds": fields["seconds"],
        "launch_seconds": fields["launch_seconds"],
        "kudu": fields["measured"],
    }


register_engine("kudu", pattern_count_engine)

TECHNIQUE = Technique(
    name="kudu",
    config=KuduConfig,
    run=run,
    format_table=format_table,
    panel="widgets.graphs.kudu:KuduPanel",
    notebook="notebooks/graphs/kudu.ipynb",
    smoke={"graph": "karate", "pattern": "triangle", "workers": 2},
    processes=True,
)
