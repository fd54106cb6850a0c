"""``torchrun`` entry point: the real check of ``check.py`` under an external launcher (one line of JSON).

    python -m torch.distributed.run --nproc-per-node 4 -m workbench.llm.mesh_attention.torchrun_entry \\
        --seq 100 --heads 4 --head-dim 8 [--causal] [--dtype float64] [--methods ring,mesh]

Every rank draws the same seeded inputs, runs ``check.check_worker`` (gloo on CPU, NCCL with one GPU per rank
when CUDA is available), rank 0 gathers the local results, compares with float64 SDPA and prints the report
of ``run_check`` as one JSON line. Multi-node runs work the same way (torchrun's --nnodes, --rdzv-endpoint).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import torch
import torch.distributed as dist

from workbench.llm.mesh_attention.check import check_worker, combine, make_inputs, make_spec
from workbench.llm.mesh_attention.plan import METHODS
from workbench.distributed import init_from_env


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="workbench.llm.mesh_attention.torchrun_entry", description=__doc__.split("\n")[0])
    parser.add_argument("--seq", type=int, required=True, help="sequence length S (tokens)")
    parser.add_argument("--heads", type=int, required=True, help="attention heads H")
    parser.add_argument("--head-dim", type=int, required=True, help="head dimension D")
    parser.add_argument("--batch", type=int, default=1, help="batch size B")
    parser.add_argument("--causal", action="store_true", help="causal mask (zigzag layout)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated subset of " + ",".join(METHODS))
    parser.add_argument("--tile", type=int, nargs=2, metavar=("A", "B"), help="Mesh tile a b (a*b = world size)")
    parser.add_argument("--ulysses-degree", type=int, help="USP Ulysses degree u")
    parser.add_argument("--gpus-per-node", type=int, help="GPUs per node (Mesh placement, USP default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=("gloo", "nccl"), help="default: nccl if CUDA is available, else gloo")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    comm = init_from_env(args.backend)
    try:
        spec = make_spec(
            gpus=comm.size, seq=args.seq, heads=args.heads, head_dim=args.head_dim, causal=args.causal,
            dtype=args.dtype, methods=[m for m in args.methods.split(",") if m], tile=args.tile,
            ulysses_degree=args.ulysses_degree, gpus_per_node=args.gpus_per_node, batch=args.batch,
            max_gpus=1 << 20,
        )
        if dist.get_backend() == "nccl":
            spec["device"] = f"cuda:{torch.cuda.current_device()}"
        inputs = make_inputs(batch=spec["batch"], heads=spec["heads"], seq=spec["seq"], head_dim=spec["head_dim"],
                             dtype=getattr(torch, spec["dtype"]), seed=args.seed)
        local = check_worker(comm.rank, comm.size, comm, spec, inputs)
        gathered: list | None = [None] * comm.size if comm.rank == 0 else None
        dist.gather_object(local, gathered, dst=0)
        if comm.rank == 0:
            assert gathered is not None
            report = {"world_size": comm.size, "backend": dist.get_backend(),
                      "results": combine(spec, inputs, gathered)}
            print(json.dumps(report))
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
