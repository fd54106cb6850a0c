"""The typed results of ``workbench run mesh-attention`` (one module, so that the runner and the real check
both use them without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.results import Result

CHECK_METHODS = ("ring", "ulysses", "usp", "mesh", "node_mesh")
MODEL_METHODS = ("ring", "ulysses", "usp", "startrail", "mesh", "node_mesh")


@dataclass(frozen=True, kw_only=True)
class MethodError(Result):
    """A method that cannot run with these parameters (e.g. heads not divisible by the Ulysses degree)."""

    method: str
    error: str


@dataclass(frozen=True, kw_only=True)
class ModelMethodResult(Result):
    """One method on the cluster model (``mode="model"``): bytes, peak memory and step time, slowest rank."""

    method: str
    tile: tuple[int, int] | None  # Mesh (a, b); Ring (1, P); None for the head-sharded methods and StarTrail
    model_bytes_per_rank: tuple[int, ...]  # sent + received, fwd + bwd
    model_peak_memory_bytes: int
    model_seconds: float
    model_compute_seconds: float
    model_exposed_comm_seconds: float
    model_bytes_sent_inter_node_per_rank: tuple[int, ...] = ()  # of the bytes sent, to other nodes
    ulysses_degree: int | None = None  # usp and node_mesh


@dataclass(frozen=True, kw_only=True)
class CheckMethodResult(Result):
    """One method run for real (``mode="check"``): errors against float64 SDPA, bytes counted vs the model."""

    method: str
    max_abs_err_out: float
    max_abs_err_grad: float  # max of the three below
    max_abs_err_dq: float
    max_abs_err_dk: float
    max_abs_err_dv: float
    bytes_sent_per_rank: tuple[int, ...]
    bytes_recv_per_rank: tuple[int, ...]
    bytes_per_rank: tuple[int, ...]  # sent + received
    forward_bytes_sent_per_rank: tuple[int, ...]
    messages_sent_per_rank: tuple[int, ...]
    bytes_sent_inter_node_per_rank: tuple[int, ...]
    model_bytes_per_rank: tuple[int, ...]  # volume.py's closed form
    model_bytes_sent_inter_node_per_rank: tuple[int, ...]
    tile: tuple[int, int] | None
    ulysses_degree: int | None
    seconds: float  # slowest rank, fwd + bwd
    bytes_sent_intra_node_per_rank: tuple[int, ...] = ()  # to ranks of the same node (cluster.gpus_per_node)
    model_bytes_sent_intra_node_per_rank: tuple[int, ...] = ()
    bytes_recv_inter_node_per_rank: tuple[int, ...] = ()


MethodResult = CheckMethodResult | ModelMethodResult | MethodError


@dataclass(frozen=True, kw_only=True)
class MeshAttentionResult(Result):
    """What ``workbench run mesh-attention`` prints: the run's sizes, a label saying what ran, one entry per method."""

    technique: str = "mesh-attention"
    mode: str
    gpus: int
    seq: int
    heads: int
    head_dim: int
    causal: bool
    dtype: str
    label: str
    results: tuple[MethodResult, ...]
    schedule: str = "current"  # Mesh tile schedule (plan.SCHEDULES)
