"""Paper scale (MODEL): node graphs generated from the GPT shapes on A100s, every partitioner's largest trainable
micro-batch under the memory limit, and iteration time and throughput at an equal batch.

The largest trainable micro-batch of a partitioner is the largest b for which the partition it finds fits every
stage in memory (its own memory management included: none for the balanced partitions and PipeDream, per-layer
swap/recompute for vPipe, per-tensor for DawnPiper); found by doubling then bisection (feasibility grows
monotonically harder with b: every activation scales with it). Everything here is labelled MODEL.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from workbench.cluster import ClusterSpec
from workbench.llm.dawnpiper.balance import balance_by_size, balance_by_time
from workbench.llm.dawnpiper.costs import Partition, StageBudget, StageCache
from workbench.llm.dawnpiper.dawnpiper import cut_positions, dawnpiper_partition, greedy_feasible_cuts
from workbench.llm.dawnpiper.generate import generate_graph
from workbench.llm.dawnpiper.graph import NodeGraph, layer_cuts
from workbench.llm.dawnpiper.pipedream import pipedream_partition
from workbench.llm.dawnpiper.vpipe import vpipe_partition
from workbench.llm.gpt import PAPER_SHAPES

__all__ = [
    "MODEL_LABEL",
    "PARTITIONERS",
    "paper_budget",
    "paper_graph",
    "LAYER_GRANULAR",
    "cannot_cut",
    "run_partitioner",
    "partition_all",
    "max_batch",
    "fits",
    "BatchRow",
]

MODEL_LABEL = "MODEL: A100 cost model over node graphs generated from the GPT shapes (not measured)"
PARTITIONERS = ("compute-balanced", "memory-balanced", "pipedream", "vpipe", "dawnpiper")
#: the partitioners that cut only between layers (the embedding, each block and the head are layers)
LAYER_GRANULAR = ("pipedream", "vpipe", "dawnpiper-layer")
#: the largest micro-batch the search tries
MAX_MICRO_BATCH = 4096


def paper_budget(memory_gb: float, cluster: ClusterSpec, host_gb: float = math.inf) -> StageBudget:
    """A stage of ``memory_gb`` on ``cluster``'s GPUs (the A100 preset at paper scale): mixed-precision Adam (16
    bytes per parameter: fp16 weight and gradient, fp32 master, m, v), one fp16 weight per stashed version
    (PipeDream), and ``host_gb`` of host memory for swapped tensors."""
    return StageBudget(
        memory_bytes=memory_gb * 1e9,
        cluster=cluster,
        state_bytes_per_param=16.0,
        weight_bytes_per_param=2.0,
        host_bytes=host_gb * 1e9,
    )


def paper_graph(model: str, micro_batch: int, tflops: float, hbm_gbps: float) -> NodeGraph:
    """The generated node graph of a paper-scale GPT (fp16 activations, fp32 statistics)."""
    if model not in PAPER_SHAPES:
        raise ValueError(f"model={model!r} is unknown: valid paper-scale models are {tuple(PAPER_SHAPES)}")
    return generate_graph(PAPER_SHAPES[model], micro_batch, flops_per_s=tflops * 1e12, hbm_bytes_per_s=hbm_gbps * 1e9)


def cannot_cut(name: str, graph: NodeGraph, stages: int) -> str | None:
    """Why partitioner ``name`` cannot cut ``graph`` into ``stages`` stages (None: it can). A layer-granular one
    needs ``stages - 1`` layer boundaries; DawnPiper and the balanced partitions cut between any two nodes."""
    if name not in LAYER_GRANULAR:
        return None
    layers = len(layer_cuts(graph)) + 1
    if stages <= layers:
        return None
    return (
        f"cuts between layers only, and the graph's {layers} layers (embedding, blocks, head) allow at most "
        f"{layers} stages, not {stages}"
    )


def run_partitioner(name: str, graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget, schedule: str
                    ) -> Partition:  # fmt: skip
    """One partitioner's partition, judged under its own memory management."""
    if name == "pipedream":
        return pipedream_partition(graph, stages, micro_batches, hw)
    if name == "vpipe":
        return vpipe_partition(graph, stages, micro_batches, hw, schedule)
    if name == "dawnpiper":
        return dawnpiper_partition(StageCache(graph, stages, micro_batches, hw, schedule))[0]
    if name == "dawnpiper-layer":  # the same search with cuts between layers only (the fine-grained premise)
        cache = StageCache(graph, stages, micro_batches, hw, schedule)
        return dawnpiper_partition(cache, allowed=layer_cuts(graph) + 1, name=name)[0]
    plain = StageCache(graph, stages, micro_batches, hw, schedule, optimize=False)
    if name == "compute-balanced":
        return balance_by_time(graph, plain)
    if name == "memory-balanced":
        return balance_by_size(graph, plain)
    raise ValueError(f"partitioner={name!r} is unknown: valid partitioners are {(*PARTITIONERS, 'dawnpiper-layer')}")


def partition_all(graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget, schedule: str
                  ) -> dict[str, Partition]:  # fmt: skip
    return {name: run_partitioner(name, graph, stages, micro_batches, hw, schedule) for name in PARTITIONERS}


def max_batch(
    name: str,
    graph_at: Callable[[int], NodeGraph],
    stages: int,
    micro_batches: int,
    hw: StageBudget,
    schedule: str,
    cap: int = MAX_MICRO_BATCH,
) -> tuple[int, Partition | None]:
    """The largest micro-batch (<= ``cap``) partitioner ``name`` can train, and its partition (0, None: none).

    DawnPiper's search is exact (:mod:`~workbench.llm.dawnpiper.dawnpiper`), so it trains b exactly when some
    partition fits; that is asked of :func:`~workbench.llm.dawnpiper.dawnpiper.greedy_feasible_cuts` (a few
    dozen stage plans instead of the whole search), and the search runs once, at the largest b.
    """
    if not fits(name, graph_at(1), stages, micro_batches, hw, schedule):
        return 0, None
    lo, hi = 1, 2
    while hi <= cap and fits(name, graph_at(hi), stages, micro_batches, hw, schedule):
        lo, hi = hi, hi * 2
    hi = min(hi, cap + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(name, graph_at(mid), stages, micro_batches, hw, schedule) else (lo, mid)
    part = run_partitioner(name, graph_at(lo), stages, micro_batches, hw, schedule)
    if not part.feasible:
        raise RuntimeError(f"{name} found no partition at micro-batch {lo} where one fits")
    return lo, part


def fits(name: str, graph: NodeGraph, stages: int, micro_batches: int, hw: StageBudget, schedule: str) -> bool:
    """Whether partitioner ``name`` finds a partition of ``graph`` that fits (for DawnPiper: whether any
    partition fits, which its exact search then finds)."""
    if name in ("dawnpiper", "dawnpiper-layer"):
        allowed = layer_cuts(graph) + 1 if name == "dawnpiper-layer" else None
        cache = StageCache(graph, stages, micro_batches, hw, schedule)
        return greedy_feasible_cuts(cache, cut_positions(graph.n, allowed)) is not None
    return run_partitioner(name, graph, stages, micro_batches, hw, schedule).feasible


@dataclass(frozen=True, kw_only=True)
class BatchRow:
    """One partitioner at paper scale: max micro-batch, and iteration time and throughput at the equal batch."""

    name: str
    max_micro_batch: int
    max_global_batch: int
    iteration_seconds: float
    tokens_per_second: float
    feasible_at_equal_batch: bool


def tokens_per_second(part: Partition, micro_batch: int, micro_batches: int, seq: int) -> float:
    return micro_batch * micro_batches * seq / part.iteration_s if part.feasible and part.iteration_s > 0 else 0.0
