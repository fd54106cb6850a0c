"""The search problem: strategies of every operator, their costs and the resharding cost of every edge.

Costs are computed once per *structural signature* (operator kind, index strings, sizes): the repeated layers
of a model share them, which is what makes a 96-layer graph cheap to price (CFP's segment reuse applied to the
cost tables). :func:`evaluate` prices one per-operator assignment; every solver (DP, ILP, brute force) is
judged by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.cluster import ClusterSpec
from workbench.llm.cfp.graph import Graph, Op
from workbench.llm.cfp.sharding import CostModel, Mesh, input_placement, op_strategies, output_placement

__all__ = ["Problem", "build_problem", "evaluate", "op_signature"]


def op_signature(op: Op) -> tuple:
    """What determines an operator's strategies and costs (names and layer left out)."""
    return (op.kind, tuple(i for _, i in op.inputs), tuple(i for _, i in op.params), op.output, op.sizes, op.bias)


@dataclass
class Problem:
    """``strats[i]``: strategies of op i; ``cost[i]``/``mem[i]``/``nbytes[i]``: per strategy (seconds, bytes held,
    bytes sent); ``edges``: (producer, consumer, slot); ``reshard[k]``/``reshard_bytes[k]``: matrices
    [producer strategy, consumer strategy] of edge k."""

    graph: Graph
    mesh: Mesh
    model: CostModel
    strats: list[list[tuple]]
    cost: list[np.ndarray]
    mem: list[np.ndarray]
    nbytes: list[np.ndarray]
    edges: list[tuple[int, int, int]]
    reshard: list[np.ndarray]
    reshard_bytes: list[np.ndarray]
    unique_ops: int
    unique_edges: int

    @property
    def combinations_log10(self) -> float:
        return float(sum(math.log10(len(s)) for s in self.strats))


def build_problem(
    graph: Graph,
    mesh: Mesh,
    cluster: ClusterSpec,
    *,
    itemsize: int = 2,
    compute: bool = True,
    allow_replicated_compute: bool = True,
) -> Problem:
    """Enumerate strategies and price them (see :class:`~workbench.llm.cfp.sharding.CostModel`)."""
    model = CostModel(mesh, cluster, itemsize=itemsize, compute=compute)
    op_cache: dict = {}
    strats, cost, mem, nb = [], [], [], []
    for op in graph.ops:
        key = op_signature(op)
        if key not in op_cache:
            ss = op_strategies(op, mesh, allow_replicated_compute=allow_replicated_compute)
            if not ss:
                raise ValueError(
                    f"mesh={'x'.join(map(str, mesh.shape))} leaves operator {op.name} no strategy: its sizes "
                    f"{dict(op.sizes)} are not divisible by the mesh axes"
                )
            op_cache[key] = (
                ss,
                np.array([model.op_seconds(op, s) for s in ss]),
                np.array([model.op_memory(op, s) for s in ss], dtype=np.int64),
                np.array([model.op_bytes(op, s) for s in ss], dtype=np.int64),
            )
        ss, c, m, b = op_cache[key]
        strats.append(ss)
        cost.append(c)
        mem.append(m)
        nb.append(b)
    edges = graph.edges()
    edge_cache: dict = {}
    place_cache: dict = {}
    reshard, reshard_b = [], []
    for p, c, slot in edges:
        po, co = graph.ops[p], graph.ops[c]
        key = (op_signature(po), op_signature(co), slot)
        if key not in edge_cache:
            idx = co.inputs[slot][1]
            shape = tuple(co.size[ch] for ch in idx)
            srcs = [output_placement(po, s) for s in strats[p]]
            dsts = [input_placement(co, s, slot) for s in strats[c]]
            R = np.zeros((len(srcs), len(dsts)))
            B = np.zeros((len(srcs), len(dsts)), dtype=np.int64)
            for a, sp in enumerate(srcs):
                for b_, dp in enumerate(dsts):
                    k2 = (sp, dp, shape)
                    if k2 not in place_cache:
                        place_cache[k2] = model.reshard(sp, dp, shape)
                    R[a, b_], B[a, b_] = place_cache[k2]
            edge_cache[key] = (R, B)
        R, B = edge_cache[key]
        reshard.append(R)
        reshard_b.append(B)
    return Problem(graph, mesh, model, strats, cost, mem, nb, edges, reshard, reshard_b, len(op_cache), len(edge_cache))


def evaluate(problem: Problem, assignment: list[int]) -> tuple[float, int, int]:
    """(seconds, memory bytes per rank, bytes sent per rank) of the per-operator strategy indices ``assignment``."""
    secs = sum(float(problem.cost[i][s]) for i, s in enumerate(assignment))
    mem = sum(int(problem.mem[i][s]) for i, s in enumerate(assignment))
    nbytes = sum(int(problem.nbytes[i][s]) for i, s in enumerate(assignment))
    for k, (p, c, _) in enumerate(problem.edges):
        secs += float(problem.reshard[k][assignment[p], assignment[c]])
        nbytes += int(problem.reshard_bytes[k][assignment[p], assignment[c]])
    return secs, mem, nbytes
