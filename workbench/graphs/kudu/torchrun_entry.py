"""``torchrun`` entry point: Kudu across machines (or processes) started by an external launcher.

    python -m torch.distributed.run --nproc-per-node 4 -m workbench.graphs.kudu.torchrun_entry \\
        --graph wiki-vote --pattern 4-clique [--induced edge] [--strategy hybrid] [--chunk-size 256]

Every rank loads the graph, relabels it by degree, derives the same schedule and partition, keeps only its
own rows (a multi-machine deployment would load only those) and runs :func:`.engine.mine` over gloo.
Rank 0 gathers the per-rank results and prints one JSON line: the count and the measured totals.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Sequence

import torch.distributed as dist

from workbench.distributed import init_from_env
from workbench.graphs.enumerate import make_schedule
from workbench.graphs.kudu import sets
from workbench.graphs.kudu.count import summarise
from workbench.graphs.kudu.engine import STRATEGIES, EngineOptions, LevelPlan, mine
from workbench.graphs.kudu.partition import LocalGraph, Partition


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="workbench.graphs.kudu.torchrun_entry", description=__doc__.split("\n")[0])
    parser.add_argument("--graph", required=True, help="dataset name, synthetic spec or file")
    parser.add_argument("--pattern", required=True, help="pattern name or edge list")
    parser.add_argument("--induced", choices=("edge", "vertex"), default="edge")
    parser.add_argument("--strategy", choices=STRATEGIES, default="hybrid")
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--partition", choices=("hash", "range"), default="hash")
    parser.add_argument("--cache-kb", type=int, default=64)
    parser.add_argument("--data-dir", default=None, help="data directory for dataset names")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from workbench.graphs.loaders import load_graph
    from workbench.graphs.patterns import parse_pattern

    args = parse_args(argv)
    comm = init_from_env("gloo")
    try:
        graph = load_graph(args.graph, data_dir=args.data_dir).by_degree()
        pattern = parse_pattern(args.pattern)
        plan = LevelPlan.of(make_schedule(pattern, args.induced, graph=graph))
        options = EngineOptions(strategy=args.strategy, chunk_size=args.chunk_size, cache_bytes=args.cache_kb * 1024)
        local = LocalGraph.extract(graph, Partition.build(graph, comm.size, args.partition), comm.rank)
        del graph
        sets.warm()
        result = mine(local, comm, plan, options)
        gathered: list | None = [None] * comm.size if comm.rank == 0 else None
        dist.gather_object(result, gathered, dst=0)
        if comm.rank == 0:
            assert gathered is not None
            print(json.dumps({"world_size": comm.size, "backend": dist.get_backend(), "graph": args.graph,
                              "pattern": args.pattern, "induced": args.induced, "strategy": args.strategy,
                              "count": sum(r.count for r in gathered), "plan": plan.text,
                              "options": asdict(options), "measured": summarise(gathered)}))
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
