"""DawnPiper benchmark: the partition search (interval + binary partitioning) against the exhaustive oracle on
the traced GPT (same cost model, same process), and the real pipeline step against a single-process step."""

from __future__ import annotations

import time

from benchmarks.common import Section, Table, fmt_ratio
from workbench.llm.dawnpiper.config import DawnpiperConfig
from workbench.llm.dawnpiper.costs import StageCache
from workbench.llm.dawnpiper.dawnpiper import dawnpiper_partition
from workbench.llm.dawnpiper.reference import exhaustive
from workbench.llm.dawnpiper.study import graph_of, hardware_of


def run(*, quick: bool) -> Section:
    rows = []
    data = {}
    for stages in (2, 3) if quick else (2, 3, 4):
        cfg = DawnpiperConfig(mode="partition", stages=stages, micro_batches=4, memory_gb=0.00012)
        graph, hw = graph_of(cfg), hardware_of(cfg)
        t0 = time.perf_counter()
        ours, _ = dawnpiper_partition(StageCache(graph, stages, 4, hw, "1f1b"))
        t1 = time.perf_counter()
        best = exhaustive(StageCache(graph, stages, 4, hw, "1f1b"))
        t2 = time.perf_counter()
        gap = ours.iteration_s / best.iteration_s - 1.0 if best.feasible else float("nan")
        rows.append((str(stages), str(graph.n), f"{(t1 - t0) * 1e3:.2f}", f"{(t2 - t1) * 1e3:.2f}",
                     fmt_ratio((t2 - t1) / (t1 - t0)), f"{gap:.2%}" if best.feasible else "- (nothing fits)"))  # fmt: skip
        data[f"S{stages}"] = {"dawnpiper_s": t1 - t0, "exhaustive_s": t2 - t1, "gap": gap}
    return Section(
        title="DawnPiper: partition search vs the exhaustive oracle",
        intro="Traced 2-block GPT (26 nodes), budget 120 KB per stage, 1F1B, M = 4; both searches price stages "
        "with the same cost model (fresh stage caches).",
        tables=(
            Table(
                headers=("stages", "nodes", "DawnPiper ms", "exhaustive ms", "exhaustive / DawnPiper", "DawnPiper gap"),
                rows=tuple(rows),
            ),
        ),  # fmt: skip
        data=data,
    )
