"""``torchrun`` entry point: the real check of ``check.py`` under an external launcher (one line of JSON).

    python -m torch.distributed.run --nproc-per-node 4 -m workbench.llm.mesh_attention.torchrun_entry \\
        --seq 100 --heads 4 --head-dim 8 [--causal] [--dtype float64] [--methods ring,mesh]

Every rank draws the same seeded inputs, runs ``check.check_worker`` (gloo on CPU, NCCL with one GPU per rank
when CUDA is available), rank 0 gathers the local results, compares with float64 SDPA and prints the report
of ``run_check`` as one JSON line. Multi-node runs work the same way (torchrun's --nnodes, --rdzv-endpoint).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence

import torch
import torch.distributed as dist

from workbench.config import add_config_flag
from workbench.distributed import init_from_env
from workbench.llm.mesh_attention.check import check_worker, combine, make_inputs, make_spec
from workbench.llm.mesh_attention.config import CHECK_DTYPES, MeshAttentionConfig
from workbench.llm.mesh_attention.plan import METHODS

#: config parameters that are flags here (their spelling, help, range and type come from the config's specs);
#: the world size comes from torchrun, the mode is "check"
FLAGS = ("seq", "heads", "head_dim", "batch", "causal", "dtype", "ulysses_degree", "cluster.gpus_per_node", "seed")
#: flags without which the run is refused (the others default as described)
REQUIRED = ("seq", "heads", "head_dim")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags built from :class:`MeshAttentionConfig`'s specs (``--gpus-per-node`` is the old spelling of
    ``--cluster.gpus-per-node``), plus ``--methods``, ``--tile A B`` and ``--backend``. Values are checked by the
    same specs as ``workbench run``; an absent ``--ulysses-degree`` / ``--gpus-per-node`` means automatic /
    row-first placement, absent ``--batch``, ``--dtype``, ``--seed`` take the config's defaults."""
    parser = argparse.ArgumentParser(
        prog="workbench.llm.mesh_attention.torchrun_entry", description=__doc__.split("\n")[0]
    )
    specs = {s.name: s for s in MeshAttentionConfig.specs()}
    old: dict[str, list[str]] = {}
    for alias, name in MeshAttentionConfig.ALIASES.items():
        old.setdefault(name, []).append("--" + alias.replace("_", "-"))
    for name in FLAGS:
        add_config_flag(parser, specs[name], old.get(name, []))
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated subset of " + ",".join(METHODS))
    parser.add_argument("--tile", type=int, nargs=2, metavar=("A", "B"), help="Mesh tile a b (a*b = world size)")
    parser.add_argument("--backend", choices=("gloo", "nccl"), help="default: nccl if CUDA is available, else gloo")
    args = parser.parse_args(argv)
    for name in FLAGS:
        value = getattr(args, name)
        if value is None and name in REQUIRED:
            parser.error(f"the following argument is required: {specs[name].flag}")
        if value is None and name not in ("ulysses_degree", "cluster.gpus_per_node"):
            value = specs[name].default
        try:
            setattr(args, name, None if value is None else specs[name].check(value))
        except ValueError as exc:
            parser.error(str(exc))
    if args.dtype not in CHECK_DTYPES:
        parser.error(f"dtype={args.dtype!r} is not supported by the real check: valid values are {CHECK_DTYPES}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    comm = init_from_env(args.backend)
    try:
        spec = make_spec(
            gpus=comm.size,
            seq=args.seq,
            heads=args.heads,
            head_dim=args.head_dim,
            causal=args.causal,
            dtype=args.dtype,
            methods=[m for m in args.methods.split(",") if m],
            tile=args.tile,
            ulysses_degree=args.ulysses_degree or None,
            gpus_per_node=getattr(args, "cluster.gpus_per_node"),
            batch=args.batch,
            max_gpus=1 << 20,
        )
        if dist.get_backend() == "nccl":
            spec = dataclasses.replace(spec, device=f"cuda:{torch.cuda.current_device()}")
        inputs = make_inputs(
            batch=spec.batch,
            heads=spec.heads,
            seq=spec.seq,
            head_dim=spec.head_dim,
            dtype=spec.torch_dtype,
            seed=args.seed,
        )
        local = check_worker(comm.rank, comm.size, comm, spec, inputs)
        gathered: list | None = [None] * comm.size if comm.rank == 0 else None
        dist.gather_object(local, gathered, dst=0)
        if comm.rank == 0:
            assert gathered is not None
            report = {
                "world_size": comm.size,
                "backend": dist.get_backend(),
                "results": [r.to_json() for r in combine(spec, inputs, gathered)],
            }
            print(json.dumps(report))
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
