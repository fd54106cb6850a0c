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
from collections.abc import Sequence
from dataclasses import asdict

import torch.distributed as dist

from workbench.config import add_config_flag
from workbench.distributed import init_from_env
from workbench.graphs.enumerate import make_schedule
from workbench.graphs.kudu import sets
from workbench.graphs.kudu.config import KuduConfig
from workbench.graphs.kudu.count import summarise
from workbench.graphs.kudu.engine import EngineOptions, LevelPlan, mine
from workbench.graphs.kudu.partition import LocalGraph, Partition

#: the config parameters a torchrun launch takes (the rest belong to the in-process launcher and the model)
FLAGS = ("graph", "pattern", "induced", "strategy", "chunk_size", "partition", "cache_kb", "data_dir")
REQUIRED = ("graph", "pattern")


def parse_args(argv: Sequence[str] | None = None) -> KuduConfig:
    """Flags built from :class:`KuduConfig`'s specs (same names, ranges and messages as ``workbench run kudu``);
    ``--graph`` and ``--pattern`` are required."""
    parser = argparse.ArgumentParser(prog="workbench.graphs.kudu.torchrun_entry", description=__doc__.split("\n")[0])
    specs = {s.name: s for s in KuduConfig.specs()}
    for name in FLAGS:
        add_config_flag(parser, specs[name])
    args = parser.parse_args(argv)
    missing = [specs[n].flag for n in REQUIRED if getattr(args, n) is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    try:
        return KuduConfig.from_dict({n: getattr(args, n) for n in FLAGS if getattr(args, n) is not None})
    except ValueError as exc:
        parser.error(str(exc))
        raise  # unreachable: parser.error exits


def main(argv: Sequence[str] | None = None) -> int:
    from workbench.graphs.loaders import load_graph
    from workbench.graphs.patterns import parse_pattern

    args = parse_args(argv)
    comm = init_from_env("gloo")
    try:
        graph = load_graph(args.graph, data_dir=args.data_dir or None).by_degree()
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
            print(
                json.dumps(
                    {
                        "world_size": comm.size,
                        "backend": dist.get_backend(),
                        "graph": args.graph,
                        "pattern": args.pattern,
                        "induced": args.induced,
                        "strategy": args.strategy,
                        "count": sum(r.count for r in gathered),
                        "plan": plan.text,
                        "options": asdict(options),
                        "measured": summarise(gathered),
                    }
                )
            )
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
