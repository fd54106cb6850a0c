"""Profiling of unique blocks for real: every strategy of every *distinct* ParallelBlock (by structural hash) run
sharded on P gloo processes, forward + backward, timed.

CFP (v1 abstract) profiles "each ParallelBlock with different input tensor partitions at its entry" and only
representative segments. Here the profiler runs one block per hash, so its cost is the number of unique blocks'
strategies whatever the depth; :func:`profile_blocks` returns the seconds per block strategy (median over
``repeats``, max over ranks), which :func:`profiled_blocks` puts in place of the cost model's block costs
(resharding between blocks stays modelled). Small sizes only: CPU processes.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from workbench.cluster import ClusterSpec
from workbench.distributed import run_workers
from workbench.distributed.comm import Comm
from workbench.llm.cfp.blocks import Blocks
from workbench.llm.cfp.execute import axis_comms, run_op
from workbench.llm.cfp.graph import Op
from workbench.llm.cfp.problem import Problem
from workbench.llm.cfp.sharding import Mesh, input_placement, local_shape, placement

__all__ = ["ProfileResult", "profile_blocks", "profiled_blocks", "calibrate_cluster"]


@dataclass(frozen=True)
class ProfileResult:
    """``seconds[hash][k]``: measured seconds of strategy k of the block with that hash; ``runs``: block strategies
    run; ``wall_seconds``: the whole profile (processes included)."""

    seconds: dict[str, list[float]]
    runs: int
    wall_seconds: float


def _jobs(problem: Problem, blocks: Blocks) -> list[tuple[str, list[Op], list[list[tuple]]]]:
    seen = {}
    for k, h in enumerate(blocks.hashes):
        if h in seen:
            continue
        ops = [problem.graph.ops[i] for i in blocks.ops[k]]
        strategies = [[problem.strats[i][s] for i, s in zip(blocks.ops[k], chain)] for chain in blocks.strats[k]]
        seen[h] = (h, ops, strategies)
    return list(seen.values())


def _run_block(ops: list[Op], strategies: list[tuple], mesh: Mesh, comms, coords, dtype) -> None:
    root = ops[0]
    g = torch.Generator().manual_seed(0)
    ins = []
    for slot, (_, idx) in enumerate(root.inputs):
        shape = local_shape(tuple(root.size[c] for c in idx), input_placement(root, strategies[0], slot), mesh)
        ins.append(torch.randn(shape, generator=g, dtype=dtype).requires_grad_(True))
    y = None
    for op, st in zip(ops, strategies):
        ps = [
            torch.randn(
                local_shape(tuple(op.size[c] for c in idx), placement(st, idx), mesh), generator=g, dtype=dtype
            ).requires_grad_(True)
            for _, idx in op.params
        ]
        y = run_op(op, st, ins if y is None else [y], ps, comms, coords)
    y.backward(torch.ones_like(y))


def _worker(rank: int, world: int, comm: Comm, mesh_shape, jobs, repeats: int, dtype):
    mesh = Mesh(mesh_shape)
    comms = axis_comms(comm, mesh)
    coords = mesh.coords(rank)
    out = {}
    for h, ops, strategies in jobs:
        if ops[0].kind == "input":
            out[h] = [0.0] * len(strategies)
            continue
        times = []
        for st in strategies:
            samples = []
            for _ in range(repeats):
                comm.barrier()
                t0 = time.perf_counter()
                _run_block(ops, st, mesh, comms, coords, dtype)
                samples.append(time.perf_counter() - t0)
            times.append(statistics.median(samples))
        out[h] = times
    return out


def profile_blocks(
    problem: Problem, blocks: Blocks, *, repeats: int = 3, dtype: torch.dtype = torch.float32, timeout_s: float = 300.0
) -> ProfileResult:
    """Run every strategy of every unique block on ``problem.mesh.size`` processes (gloo) and time it."""
    t0 = time.perf_counter()
    jobs = _jobs(problem, blocks)
    res = run_workers(
        _worker, problem.mesh.size, problem.mesh.shape, jobs, repeats, dtype, timeout_s=timeout_s,
        oom_hint="try a smaller setting (smaller hidden/seq/batch)",
    )  # fmt: skip
    seconds = {h: [max(r[h][k] for r in res) for k in range(len(res[0][h]))] for h in res[0]}
    return ProfileResult(seconds, sum(len(s) for _, _, s in jobs), time.perf_counter() - t0)


def profiled_blocks(blocks: Blocks, profile: ProfileResult) -> Blocks:
    """``blocks`` with each block's cost replaced by its profiled seconds (same hash, same strategy order)."""
    return replace(blocks, cost=[np.array(profile.seconds[h]) for h in blocks.hashes])


def _calibration_worker(rank: int, world: int, comm: Comm, elements: int, repeats: int, dtype) -> dict:
    small, big = torch.zeros(1, dtype=dtype), torch.zeros(elements, dtype=dtype)
    out = {}
    for name, t in (("small", small), ("big", big)):
        comm.all_reduce(t)  # warm-up
        samples = []
        for _ in range(repeats):
            comm.barrier()
            t0 = time.perf_counter()
            comm.all_reduce(t)
            samples.append(time.perf_counter() - t0)
        out[name] = statistics.median(samples)
    a = torch.randn(256, 256, dtype=dtype)
    a @ a  # warm-up
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ a
        samples.append(time.perf_counter() - t0)
    out["matmul"] = statistics.median(samples)
    return out


def calibrate_cluster(
    world: int, base: ClusterSpec, *, elements: int = 1 << 20, repeats: int = 5, dtype: torch.dtype = torch.float32
) -> ClusterSpec:
    """``base`` with its compute rate and links measured on ``world`` gloo processes of this machine, so that the
    cost model prices in the profile's units: latency from a 1-element all-reduce (``2 (p - 1)`` rounds, as
    :class:`~workbench.llm.cfp.sharding.CostModel` counts), bandwidth from an ``elements`` all-reduce (its
    ``2 (p - 1) n / p`` bytes), FLOP/s from a 256^3 matmul; one node holds every process."""
    res = run_workers(_calibration_worker, world, elements, repeats, dtype, timeout_s=120.0)
    small = max(r["small"] for r in res)
    big = max(r["big"] for r in res)
    itemsize = torch.tensor([], dtype=dtype).element_size()
    rounds = 2 * (world - 1)
    lat = small / rounds if world > 1 else 0.0
    sent = 2 * (world - 1) * elements * itemsize / world
    transfer = big - rounds * lat
    if transfer < 0.5 * big:  # the 1-element all-reduce took about as long as the big one (a loaded machine):
        transfer = big  # its latency is noise, so the whole time is priced as transfer (a lower bound on bandwidth)
    bw = sent / transfer if world > 1 else base.intra_node_bytes_per_second
    tflops = 2 * 256**3 / max(statistics.median(r["matmul"] for r in res), 1e-12) / 1e12
    return base.replace(
        gpu_tflops=max(tflops, 0.001), gpus_per_node=max(world, 1), intra_node_latency_us=lat * 1e6,
        intra_node_bw_gbps=max(bw / 1e9, 0.001), inter_node_latency_us=lat * 1e6,
        inter_node_bw_gbps=max(bw / 1e9, 0.001),
    )  # fmt: skip
