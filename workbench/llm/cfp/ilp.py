"""Alpa-style ILP over per-operator strategies (Zheng et al., OSDI'22, sec. 4.2; alpa's
``alpa/shard_parallel/auto_sharding.py::_call_solver_serialized_args``), solved with ``scipy.optimize.milp``
(HiGHS) instead of Alpa's pulp/CBC.

Variables: one-hot ``s_v`` per operator and ``e_uv`` per edge over strategy pairs. Objective
``sum_v s_v . c_v + sum_uv e_uv . R_uv`` (operator seconds, resharding seconds); constraints ``sum s_v = 1``,
``sum_j e_uv[i, j] = s_u[i]``, ``sum_i e_uv[i, j] = s_v[j]`` (Alpa writes the last two as <= with
``sum e_uv = 1``), memory ``sum_v s_v . m_v <= M`` (Alpa sums per liveness point; here all memory is live).
It searches the full per-operator space, so its optimum is <= the block DP's by construction.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from workbench.llm.cfp.problem import Problem

__all__ = ["ILPResult", "solve_ilp"]


@dataclass
class ILPResult:
    """``assignment``: strategy index per operator ([] when none); ``cost``: seconds (inf when none); ``status``:
    "optimal", "time limit" (the best plan found in ``time_limit`` s, not proven optimal, or none) or
    "infeasible"; ``variables``: the ILP's 0/1 variables."""

    assignment: list[int]
    cost: float
    feasible: bool
    seconds: float
    variables: int
    status: str


def solve_ilp(problem: Problem, *, memory_limit: float | None = None, time_limit: float = 120.0) -> ILPResult:
    """Solve the ILP; ``cost`` is the objective of the returned plan (inf when infeasible)."""
    t0 = time.perf_counter()
    offs, n = [], 0
    for s in problem.strats:
        offs.append(n)
        n += len(s)
    eoffs = []
    for R in problem.reshard:
        eoffs.append(n)
        n += R.size
    c = np.zeros(n)
    for i, cost in enumerate(problem.cost):
        c[offs[i] : offs[i] + len(cost)] = cost
    for k, R in enumerate(problem.reshard):
        c[eoffs[k] : eoffs[k] + R.size] = R.ravel()
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for i, s in enumerate(problem.strats):
        for j in range(len(s)):
            rows.append(r)
            cols.append(offs[i] + j)
            vals.append(1.0)
        lo.append(1.0)
        hi.append(1.0)
        r += 1
    for k, (p, q, _) in enumerate(problem.edges):
        Sp, Sq = problem.reshard[k].shape
        for a in range(Sp):  # sum_j e[a, j] - s_p[a] = 0
            for b in range(Sq):
                rows.append(r)
                cols.append(eoffs[k] + a * Sq + b)
                vals.append(1.0)
            rows.append(r)
            cols.append(offs[p] + a)
            vals.append(-1.0)
            lo.append(0.0)
            hi.append(0.0)
            r += 1
        for b in range(Sq):  # sum_i e[i, b] - s_q[b] = 0
            for a in range(Sp):
                rows.append(r)
                cols.append(eoffs[k] + a * Sq + b)
                vals.append(1.0)
            rows.append(r)
            cols.append(offs[q] + b)
            vals.append(-1.0)
            lo.append(0.0)
            hi.append(0.0)
            r += 1
    if memory_limit is not None and math.isfinite(memory_limit):
        for i, m in enumerate(problem.mem):
            for j, v in enumerate(m):
                rows.append(r)
                cols.append(offs[i] + j)
                vals.append(float(v))
        lo.append(-np.inf)
        hi.append(float(memory_limit))
        r += 1
    A = coo_matrix((vals, (rows, cols)), shape=(r, n)).tocsr()
    # HiGHS stops at an absolute gap of 1e-6: scale seconds so the objective is O(1e3) and that gap is negligible
    scale = 1e3 / max(float(np.abs(c).max()), 1e-300)
    res = milp(
        c * scale,
        constraints=LinearConstraint(A, lo, hi),
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        options={"time_limit": time_limit, "mip_rel_gap": 0.0},
    )
    seconds = time.perf_counter() - t0
    status = {0: "optimal", 1: "time limit", 2: "infeasible"}.get(res.status, str(res.message))
    if res.x is None:
        return ILPResult([], math.inf, False, seconds, n, status)
    x = res.x
    assign = [int(np.argmax(x[offs[i] : offs[i] + len(s)])) for i, s in enumerate(problem.strats)]
    return ILPResult(assign, float(res.fun) / scale, True, seconds, n, status)
