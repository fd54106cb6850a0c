"""Closed-form bytes per epoch of each parallel mode; equal to what :class:`~workbench.distributed.comm.Comm`
counts on every run (summed over ranks, bytes sent).

- GNNPipe, P stages: every vertex crosses each of the P-1 stage boundaries once forward (its layer output,
  ``width`` columns: d for GCN, 2d for GCNII's h and h0) and once backward (the gradient of the same):
  ``2 (P - 1) n width itemsize``. Warm-up epochs (one chunk) move the same bytes. K does not enter.
- Graph parallelism, P parts with total halo H: per layer the dropped inputs of the halo forward and their
  gradients backward, ``2 L H d itemsize``, plus one all-reduce of the B parameter bytes, a ring of counted
  point-to-point steps (:meth:`~workbench.distributed.comm.Comm.all_reduce`): ``2 (P - 1) B`` over all ranks.
- Hybrid (:mod:`.hybrid`), S stages of G graph-parallel ranks: the stage boundaries as GNNPipe
  (``2 (S - 1) n width itemsize``), every layer's halo across its group (``2 L H_G d itemsize``), and each
  group's all-reduce of its own stage's parameter bytes B_s (not an even split: the input and output layers
  make the first and last stages heavier).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["gnnpipe_bytes", "graph_parallel_bytes", "allreduce_bytes", "hybrid_bytes"]


def allreduce_bytes(nbytes: int, ranks: int) -> int:
    """Bytes sent by all ranks of a ring all-reduce of ``nbytes``: ``2 (ranks - 1) nbytes`` (each of the ranks
    chunks travels ranks - 1 hops reducing and ranks - 1 hops gathering; ``Comm.all_reduce`` sends exactly this,
    per rank :func:`workbench.distributed.comm.ring_all_reduce_bytes`)."""
    return 0 if ranks <= 1 else 2 * (ranks - 1) * nbytes


def gnnpipe_bytes(n: int, stages: int, width: int, itemsize: int) -> int:
    """``2 (P - 1) n width itemsize``: activations forward and their gradients backward, per epoch."""
    return 2 * (stages - 1) * n * width * itemsize


def graph_parallel_bytes(halo: int, layers: int, hidden: int, itemsize: int, param_bytes: int, parts: int) -> int:
    """``2 L H d itemsize`` halo traffic plus the gradient all-reduce, per epoch."""
    return 2 * layers * halo * hidden * itemsize + allreduce_bytes(param_bytes, parts)


def hybrid_bytes(
    n: int,
    stages: int,
    groups: int,
    halo_group: int,
    layers: int,
    hidden: int,
    width: int,
    itemsize: int,
    stage_param_bytes: Sequence[int],
) -> int:
    """Hybrid of S stages x G graph-parallel ranks (:mod:`.hybrid`), per epoch: ``2 (S - 1) n width itemsize`` at
    the stage boundaries, ``2 L H_G d itemsize`` of halo (H_G: the total halo of the G-way cut), and each stage's
    ring all-reduce of its own B_s parameter bytes, ``sum_s 2 (G - 1) B_s``.

    ``stage_param_bytes``: B_s per stage (:func:`.hybrid.stage_param_counts` times itemsize), length S.
    Raises ValueError when its length is not ``stages``.

    >>> hybrid_bytes(10, 2, 1, 0, 2, 4, 8, 8, [100, 100])  # G = 1: GNNPipe's 2 (S-1) n width itemsize
    1280
    """
    if len(stage_param_bytes) != stages:
        raise ValueError(
            f"stage_param_bytes has {len(stage_param_bytes)} entries: it needs one per stage (stages={stages})"
        )
    boundary = 2 * (stages - 1) * n * width * itemsize
    halo = 2 * layers * halo_group * hidden * itemsize
    reduce = sum(allreduce_bytes(int(b), groups) for b in stage_param_bytes)
    return boundary + halo + reduce
