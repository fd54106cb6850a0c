"""CFP: search time of CFP's block DP against the Alpa-style per-operator ILP (scipy.optimize.milp / HiGHS), in
one process on the same graphs.

Both search the GPT graph of growing depth on one mesh under one cost model: CFP (ParallelBlocks, segments,
DP over blocks) and the ILP over every operator's strategies at the full depth (exact, no tiling). Times are
medians over interleaved rounds; the ratio is ILP / CFP (how many times faster CFP searches). The plan costs are
printed beside: the ILP's is never higher (its space contains CFP's), and the gap says what the block space lost.
"""

from __future__ import annotations

import logging

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, interleaved, median
from workbench.cluster import ClusterSpec
from workbench.llm.cfp.blocks import build_blocks, segments
from workbench.llm.cfp.dp import solve
from workbench.llm.cfp.graph import graph_for
from workbench.llm.cfp.ilp import solve_ilp
from workbench.llm.cfp.problem import build_problem
from workbench.llm.cfp.sharding import parse_mesh

log = logging.getLogger(__name__)

FULL = {"model": "gpt-1.3b", "mesh": "2x4", "batch": 8, "layers": (1, 2, 4, 8), "rounds": 3}
QUICK = {"model": "gpt-1.3b", "mesh": "2x4", "batch": 8, "layers": (1, 2), "rounds": 1}


def run(*, quick: bool) -> Section:
    """CFP vs ILP search seconds at each depth (quick: two depths, one round)."""
    plan = QUICK if quick else FULL
    mesh = parse_mesh(plan["mesh"])
    cluster = ClusterSpec()
    rows, ratios = [], []
    for L in plan["layers"]:
        problem = build_problem(graph_for(plan["model"], batch=plan["batch"], layers=L), mesh, cluster)
        limit = cluster.memory_bytes
        out: dict = {}

        def cfp(problem=problem, limit=limit, out=out):
            blocks = build_blocks(problem)
            segments(blocks)
            out["cfp"] = solve(blocks, memory_limit=limit).cost

        def ilp(problem=problem, limit=limit, out=out):
            out["ilp"] = solve_ilp(problem, memory_limit=limit).cost

        times = interleaved({"cfp": cfp, "ilp": ilp}, rounds=plan["rounds"], warmup=0)
        ratio = median([b / a for a, b in zip(times["cfp"], times["ilp"])])
        ratios.append(ratio)
        rows.append((
            str(L), f"{len(problem.graph.ops):,}", f"{problem.combinations_log10:.0f}", fmt_ms(median(times["cfp"])),
            fmt_ms(median(times["ilp"])), fmt_ratio(ratio), f"{out['cfp']:.6g}", f"{out['ilp']:.6g}",
        ))  # fmt: skip
    table = Table(
        headers=("layers", "operators", "log10 combinations", "CFP (ms)", "ILP (ms)", "ILP / CFP", "CFP plan s",
                 "ILP plan s"),
        rows=tuple(rows),
    )  # fmt: skip
    intro = (
        f"CFP's search (ParallelBlocks, segment hashing and the DP over blocks with the memory limit) against the "
        f"Alpa-style ILP over per-operator strategies solved by HiGHS through scipy.optimize.milp, both on the "
        f"{plan['model']} transformer graph on a {plan['mesh']} mesh of the default ClusterSpec, at growing depth. "
        "The ILP / CFP column is how many times longer the ILP takes; the plan costs (seconds per step, cost MODEL) "
        "show what each found."
    )
    return Section(
        title="CFP: search time, block DP vs per-operator ILP",
        intro=intro,
        tables=(table,),
        summary=(("CFP search vs the ILP (ILP / CFP time)", f"{min(ratios):.0f}x .. {max(ratios):.0f}x"),),
        data={"rows": rows},
    )


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv).markdown())
