"""DawnPiper benchmark, measured side by side in one run:

1. the partition search (theorem interval + binary partitioning, then the exact refinement) against the exhaustive
   oracle on the traced GPT (both price stages with the same cost model, fresh caches; the ratio is the oracle's
   time over DawnPiper's);
2. the real pipeline step (DawnPiper's partition on S gloo processes, its swap/recompute plan carried out;
   slowest stage from a common barrier) against the single-process step of the same GPT and micro-batches.
"""

from __future__ import annotations

import time

from benchmarks.common import Section, Table, fmt_ratio
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.experiment import budget_of, check, graph_of
from workbench.llm.dawnpiper.graph import activation_table
from workbench.llm.dawnpiper.reference import exhaustive

#: bytes per stage of the traced GPT's budget times the stage count (tight enough to need swap/recompute)
BUDGET_GB_X_STAGES = 0.00036


def run(*, quick: bool) -> list[Section]:
    stage_counts = (2, 3) if quick else (2, 3, 4)
    rows, data = [], {}
    for stages in stage_counts:
        cfg = DawnpiperConfig(mode="partition", stages=stages, micro_batches=4, memory_gb=BUDGET_GB_X_STAGES / stages)
        graph, hw = graph_of(cfg), budget_of(cfg)
        activation_table(graph), graph.next_saver_table()  # the graph's shared tables, built once for both searches
        ours_s, best_s = [], []
        for _ in range(3 if quick else 5):  # interleaved repeats, fresh stage caches each time; the fastest counts
            t0 = time.perf_counter()
            ours, _ = dawnpiper_partition(StageCache(graph, stages, 4, hw, "1f1b"))
            t1 = time.perf_counter()
            best = exhaustive(StageCache(graph, stages, 4, hw, "1f1b"))
            t2 = time.perf_counter()
            ours_s.append(t1 - t0)
            best_s.append(t2 - t1)
        t0, t1, t2 = 0.0, min(ours_s), min(ours_s) + min(best_s)
        gap = ours.iteration_s / best.iteration_s - 1.0 if best.feasible else float("nan")
        rows.append((str(stages), str(graph.n), f"{cfg.memory_gb * 1e6:.0f} KB", f"{(t1 - t0) * 1e3:.2f}",
                     f"{(t2 - t1) * 1e3:.2f}", fmt_ratio((t2 - t1) / (t1 - t0)),
                     f"{gap:.2%}" if best.feasible else "- (nothing fits)"))  # fmt: skip
        data[f"search_S{stages}"] = {"dawnpiper_s": t1 - t0, "exhaustive_s": t2 - t1, "gap": gap}
    search = Section(
        title="DawnPiper: partition search vs the exhaustive oracle",
        intro="Traced 2-block GPT (26 nodes, fp64), 1F1B, M = 4, a budget per stage that forces swap or recompute; "
        "both searches price stages with the same cost model (fresh stage caches).",
        tables=(
            Table(
                headers=(
                    "stages",
                    "nodes",
                    "budget",
                    "DawnPiper ms",
                    "exhaustive ms",
                    "exhaustive / DawnPiper",
                    "DawnPiper gap",
                ),
                rows=tuple(rows),
            ),
        ),  # fmt: skip
        data=data,
    )
    prow, pdata = [], {}
    settings = [(2, "1f1b")] if quick else [(2, "1f1b"), (3, "1f1b"), (3, "gpipe"), (4, "1f1b")]
    for stages, schedule in settings:
        cfg = DawnpiperConfig(mode="check", stages=stages, micro_batches=8, memory_gb=BUDGET_GB_X_STAGES / stages,
                              schedule=schedule)  # fmt: skip
        part, out = check(cfg)
        moved = sum(len(s.swap) + len(s.recompute) for s in part.stages)
        prow.append((str(stages), schedule, str(moved), f"{out.step_seconds * 1e3:.2f}",
                     f"{out.reference_seconds * 1e3:.2f}", fmt_ratio(out.step_seconds / out.reference_seconds),
                     f"{out.max_abs_grad_diff:.1e}"))  # fmt: skip
        pdata[f"{schedule}_S{stages}"] = {"step_s": out.step_seconds, "single_s": out.reference_seconds}
    pipe = Section(
        title="DawnPiper: real pipeline step vs single-process step",
        intro="The same GPT and 8 micro-batches: DawnPiper's partition run on S gloo processes (its swaps and "
        "recomputes carried out) against one process. On a CPU machine the stages share cores, so the ratio "
        "measures the pipeline's overheads (communication, bubbles, swap copies), not a speed-up.",
        tables=(
            Table(
                headers=(
                    "stages",
                    "schedule",
                    "values swapped/recomputed",
                    "pipeline step ms",
                    "single-process ms",
                    "pipeline / single",
                    "max abs grad diff",
                ),
                rows=tuple(prow),
            ),
        ),  # fmt: skip
        data=pdata,
    )
    return [search, pipe]
