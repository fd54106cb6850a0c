"""Closed-form bytes per epoch of each parallel mode; equal to what :class:`~workbench.distributed.comm.Comm`
counts on every run (summed over ranks, bytes sent).

- GNNPipe, P stages: every vertex crosses each of the P-1 stage boundaries once forward (its layer output,
  ``width`` columns: d for GCN, 2d for GCNII's h and h0) and once backward (the gradient of the same):
  ``2 (P - 1) n width itemsize``. Warm-up epochs (one chunk) move the same bytes. K does not enter.
- Graph parallelism, P parts with total halo H: per layer the dropped inputs of the halo forward and their
  gradients backward, ``2 L H d itemsize``, plus one all-reduce of the B parameter bytes, counted as a ring:
  ``P * (2 (P - 1) B // P)``.
- Hybrid (MODEL only here, no kernel): S stages of G graph-parallel ranks: the stage boundaries as GNNPipe
  (``2 (S - 1) n width itemsize``), every layer's halo across its group (``2 L H_G d itemsize``), and each
  group's all-reduce of its stage's parameters.
"""

from __future__ import annotations

__all__ = ["gnnpipe_bytes", "graph_parallel_bytes", "allreduce_bytes", "hybrid_bytes"]


def allreduce_bytes(nbytes: int, ranks: int) -> int:
    """Bytes sent by all ranks of a ring all-reduce of ``nbytes`` (as ``Comm.all_reduce`` counts them)."""
    return 0 if ranks <= 1 else ranks * (2 * (ranks - 1) * nbytes // ranks)


def gnnpipe_bytes(n: int, stages: int, width: int, itemsize: int) -> int:
    """``2 (P - 1) n width itemsize``: activations forward and their gradients backward, per epoch."""
    return 2 * (stages - 1) * n * width * itemsize


def graph_parallel_bytes(halo: int, layers: int, hidden: int, itemsize: int, param_bytes: int, parts: int) -> int:
    """``2 L H d itemsize`` halo traffic plus the gradient all-reduce, per epoch."""
    return 2 * layers * halo * hidden * itemsize + allreduce_bytes(param_bytes, parts)


def hybrid_bytes(n: int, stages: int, groups: int, halo_group: float, layers: int, hidden: int, width: int,
                 itemsize: int, param_bytes: int) -> float:
    """Hybrid of S stages x G graph-parallel ranks (parameters split evenly over the stages)."""
    boundary = 2 * (stages - 1) * n * width * itemsize
    halo = 2 * layers * halo_group * hidden * itemsize
    reduce = stages * allreduce_bytes(int(param_bytes // stages), groups)
    return boundary + halo + reduce
