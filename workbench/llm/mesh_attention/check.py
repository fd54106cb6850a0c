"""Real check of the distributed attention kernels against SDPA on the whole sequence.

``run_check`` starts ``gpus`` real processes once (forked, gloo), runs every requested method forward and
backward on the same seeded q, k, v, dout (each rank takes its shard), brings outputs and gradients back to
whole sequences and compares them with ``torch.nn.functional.scaled_dot_product_attention`` computed in one
process in float64. It also reports the bytes each rank really sent and received (counted by ``Comm``) next
to the closed-form prediction of ``volume.py``. ``torchrun_entry.py`` runs the same worker under torchrun.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from workbench.distributed import Comm, run_workers
from workbench.llm.mesh_attention.config import CHECK_DTYPES, DTYPE_BYTES, MAX_CHECK_GPUS
from workbench.llm.mesh_attention.layout import shard_sequence, unshard_sequence
from workbench.llm.mesh_attention.mesh import mesh_attention
from workbench.llm.mesh_attention.node_mesh import node_mesh_attention
from workbench.llm.mesh_attention.plan import METHODS, check_positive_int, check_tile, divisors, resolve_order
from workbench.llm.mesh_attention.results import CheckMethodResult, MethodError
from workbench.llm.mesh_attention.ring import ring_attention
from workbench.llm.mesh_attention.ulysses import ulysses_attention
from workbench.llm.mesh_attention.usp import usp_attention
from workbench.llm.mesh_attention.volume import predict_bytes_per_rank, resolve_method_params

if TYPE_CHECKING:
    from workbench.llm.mesh_attention.config import MeshAttentionConfig

KERNELS: dict[str, Callable[..., torch.Tensor]] = {
    "ring": ring_attention,
    "ulysses": ulysses_attention,
    "usp": usp_attention,
    "mesh": mesh_attention,
    "node_mesh": node_mesh_attention,
}


@dataclass(frozen=True)
class MethodPlan:
    """How one method runs: its kernel's keyword arguments, tile and Ulysses degree, or why it cannot run."""

    method: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    tile: tuple[int, int] | None = None
    ulysses_degree: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class CheckSpec:
    """A validated check, built once (:func:`make_spec` or :meth:`from_config`) and handed to every worker."""

    gpus: int
    seq: int
    heads: int
    head_dim: int
    batch: int
    causal: bool
    dtype: str  # one of config.CHECK_DTYPES
    gpus_per_node: int | None
    plans: tuple[MethodPlan, ...]
    device: str = "cpu"

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)

    @classmethod
    def from_config(cls, config: MeshAttentionConfig, methods: Sequence[str] = METHODS) -> CheckSpec:
        """The check of a validated ``mode="check"`` config (nothing is checked twice; methods resolve their
        tile and Ulysses degree here)."""
        tile = config.tile
        u = config.ulysses_degree or None
        g = config.cluster.gpus_per_node
        return cls(
            gpus=config.gpus,
            seq=config.seq,
            heads=config.heads,
            head_dim=config.head_dim,
            batch=config.batch,
            causal=config.causal,
            dtype=config.dtype,
            gpus_per_node=g,
            plans=plan_methods(
                methods,
                gpus=config.gpus,
                heads=config.heads,
                head_dim=config.head_dim,
                tile=tile,
                ulysses_degree=u,
                gpus_per_node=g,
                schedule=config.schedule,
            ),
        )


def make_inputs(
    *, batch: int, heads: int, seq: int, head_dim: int, dtype: torch.dtype, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Seeded standard-normal q, k, v, dout of shape [B, H, S, D] (drawn in float64, then cast)."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(  # type: ignore[return-value]
        torch.randn(batch, heads, seq, head_dim, generator=gen, dtype=torch.float64).to(dtype) for _ in range(4)
    )


def plan_methods(
    methods: Sequence[str],
    *,
    gpus: int,
    heads: int,
    head_dim: int,
    tile: Sequence[int] | None,
    ulysses_degree: int | None,
    gpus_per_node: int | None,
    node_tile: Sequence[int] | None = None,
    schedule: str = "current",
) -> tuple[MethodPlan, ...]:
    """Per method: kernel keyword arguments, tile and Ulysses degree, or ``error`` when it cannot run here.

    ``tile`` is the flat Mesh's (a*b = P); ``node_tile`` the node-level Mesh's (a*b = P/u; None: automatic);
    ``schedule`` the Mesh tile schedule of both (``plan.SCHEDULES``)."""
    plans = []
    for method in methods:
        try:
            tile_ab, u = resolve_method_params(
                method,
                gpus=gpus,
                heads=heads,
                tile=node_tile if method == "node_mesh" else tile,
                ulysses_degree=ulysses_degree,
                gpus_per_node=gpus_per_node,
                head_dim=head_dim,
            )
        except ValueError as err:
            plans.append(MethodPlan(method, error=str(err)))
            continue
        kwargs: dict[str, Any] = {}
        if method == "mesh":
            kwargs = {"tile": tile_ab, "gpus_per_node": gpus_per_node, "schedule": schedule}
        elif method == "usp":
            kwargs = {"ulysses_degree": u}
        elif method == "node_mesh":
            kwargs = {"ulysses_degree": u, "tile": tile_ab, "gpus_per_node": gpus_per_node, "schedule": schedule}
        plans.append(MethodPlan(method, kwargs, tuple(tile_ab) if tile_ab else None, u))
    return tuple(plans)


def check_worker(
    rank: int, world: int, comm: Comm, spec: CheckSpec, inputs: Sequence[torch.Tensor]
) -> dict[str, dict[str, Any]]:
    """One rank: run each planned method fwd+bwd on its shard; return local out/grads and counted bytes."""
    order = resolve_order(None, spec.causal)
    device = torch.device(spec.device)
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order).to(device) for t in inputs)
    results: dict[str, dict[str, Any]] = {}
    for plan in spec.plans:
        if plan.error is not None:
            continue
        local = [t.clone().requires_grad_() for t in (q, k, v)]
        comm.barrier()  # start the clock together (ranks start up at different times); moves no counted bytes
        comm.reset_counters()
        start = time.perf_counter()
        out = KERNELS[plan.method](*local, comm, causal=spec.causal, seq_len=spec.seq, **plan.kwargs)
        fwd = comm.counter.snapshot()
        out.backward(dout)
        results[plan.method] = {
            "out": out.detach().cpu(),
            "grads": [t.grad.cpu() for t in local],
            "seconds": time.perf_counter() - start,
            "sent": comm.bytes_sent,
            "recv": comm.bytes_recv,
            "forward_sent": fwd["sent"],
            "forward_recv": fwd["recv"],
            "messages_sent": comm.counter.messages_sent,
            "sent_to": dict(comm.counter.sent_to),
            "recv_from": dict(comm.counter.recv_from),
        }
    return results


def combine(
    spec: CheckSpec, inputs: Sequence[torch.Tensor], per_rank: Sequence[dict]
) -> list[CheckMethodResult | MethodError]:
    """Whole-sequence comparison with float64 SDPA, and bytes counted vs predicted, per method."""
    q, k, v, dout = (t.to(torch.float64) for t in inputs)
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=spec.causal)  # [B, H, S, D] float64
    ref_grads = torch.autograd.grad(ref, (q, k, v), dout)
    order = resolve_order(None, spec.causal)
    report: list[CheckMethodResult | MethodError] = []
    for plan in spec.plans:
        method = plan.method
        if plan.error is not None:
            report.append(MethodError(method=method, error=plan.error))
            continue
        ranks = [r[method] for r in per_rank]

        def whole(pick: Callable[[dict], torch.Tensor]) -> torch.Tensor:
            return unshard_sequence([pick(r) for r in ranks], seq_len=spec.seq, order=order).to(torch.float64)

        err_out = (whole(lambda r: r["out"]) - ref).abs().max().item()
        err_grads = [(whole(lambda r, i=i: r["grads"][i]) - g).abs().max().item() for i, g in enumerate(ref_grads)]  # type: ignore[misc]  # mypy cannot infer a lambda with a default argument
        model = predict_bytes_per_rank(
            method,
            gpus=spec.gpus,
            seq=spec.seq,
            heads=spec.heads,
            head_dim=spec.head_dim,
            causal=spec.causal,
            dtype_bytes=spec.dtype_bytes,
            batch=spec.batch,
            tile=plan.tile,
            ulysses_degree=plan.ulysses_degree,
            gpus_per_node=spec.gpus_per_node,
        )
        sent = [int(r["sent"]) for r in ranks]
        recv = [int(r["recv"]) for r in ranks]
        g = spec.gpus_per_node
        inter = [
            sum(n for peer, n in r["sent_to"].items() if g and peer // g != rank // g) for rank, r in enumerate(ranks)
        ]
        inter_recv = [
            sum(n for peer, n in r["recv_from"].items() if g and peer // g != rank // g) for rank, r in enumerate(ranks)
        ]
        report.append(
            CheckMethodResult(
                method=method,
                max_abs_err_out=err_out,
                max_abs_err_grad=max(err_grads),
                max_abs_err_dq=err_grads[0],
                max_abs_err_dk=err_grads[1],
                max_abs_err_dv=err_grads[2],
                bytes_sent_per_rank=tuple(sent),
                bytes_recv_per_rank=tuple(recv),
                bytes_per_rank=tuple(s + r for s, r in zip(sent, recv)),
                forward_bytes_sent_per_rank=tuple(int(r["forward_sent"]) for r in ranks),
                messages_sent_per_rank=tuple(int(r["messages_sent"]) for r in ranks),
                bytes_sent_inter_node_per_rank=tuple(inter),
                model_bytes_per_rank=tuple(int(x) for x in model["total"]),
                model_bytes_sent_inter_node_per_rank=tuple(int(x) for x in model["sent_inter_node"]),
                tile=plan.tile,
                ulysses_degree=plan.ulysses_degree,
                seconds=max(float(r["seconds"]) for r in ranks),
                bytes_sent_intra_node_per_rank=tuple(s - i for s, i in zip(sent, inter)),
                model_bytes_sent_intra_node_per_rank=tuple(int(x) for x in model["sent_intra_node"]),
                bytes_recv_inter_node_per_rank=tuple(inter_recv),
            )
        )
    return report


def make_spec(
    *,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    causal: bool,
    dtype: str | torch.dtype,
    methods: Sequence[str],
    tile: Sequence[int] | None,
    ulysses_degree: int | None,
    gpus_per_node: int | None,
    batch: int,
    max_gpus: int = MAX_CHECK_GPUS,
    node_tile: Sequence[int] | None = None,
) -> CheckSpec:
    """Validate the check's arguments (ValueError naming parameter, value and valid range) into a spec."""
    gpus = check_positive_int("gpus", gpus, hi=max_gpus)
    seq = check_positive_int("seq", seq)
    heads = check_positive_int("heads", heads)
    head_dim = check_positive_int("head_dim", head_dim)
    batch = check_positive_int("batch", batch)
    if gpus_per_node is not None:
        check_positive_int("gpus_per_node", gpus_per_node)
    name = str(dtype).removeprefix("torch.")
    if name not in CHECK_DTYPES:
        raise ValueError(f"dtype={dtype!r} is not supported by the real check: valid values are {tuple(CHECK_DTYPES)}")
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown or len(set(methods)) != len(methods):
        raise ValueError(f"methods={methods!r} must be distinct names from {METHODS} (at least one)")
    if tile is not None:
        tile = check_tile(tile, gpus)
    if ulysses_degree is not None and gpus % check_positive_int("ulysses_degree", ulysses_degree):
        raise ValueError(
            f"ulysses_degree={ulysses_degree} does not divide gpus={gpus}: valid values are {divisors(gpus)}"
        )
    plans = plan_methods(
        methods,
        gpus=gpus,
        heads=heads,
        head_dim=head_dim,
        tile=tile,
        ulysses_degree=ulysses_degree,
        gpus_per_node=gpus_per_node,
        node_tile=node_tile,
    )
    return CheckSpec(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=head_dim,
        batch=batch,
        causal=bool(causal),
        dtype=name,
        gpus_per_node=gpus_per_node,
        plans=plans,
    )


def run_check(
    *,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    causal: bool,
    dtype: str | torch.dtype,
    methods: Sequence[str] = METHODS,
    tile: Sequence[int] | None = None,
    ulysses_degree: int | None = None,
    gpus_per_node: int | None = None,
    seed: int = 0,
    batch: int = 1,
    timeout_s: float = 300.0,
    node_tile: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Run the methods for real on ``gpus`` processes and compare with float64 SDPA on the whole sequence.

    Parameters:
        gpus: processes P, 1..16. seq: tokens S (any; padded). heads, head_dim, batch: H, D, B (>= 1).
        causal: causal mask (zigzag layout). dtype: "float32" or "float64" (kernels run in it; errors are
            measured against a float64 reference). methods: subset of ("ring", "ulysses", "usp", "mesh", "node_mesh").
        tile: Mesh (a, b), a*b = P (None: ``choose_tile``). ulysses_degree: USP and node-level Mesh u (None:
            default, inside a node). node_tile: the node-level Mesh's tile over the P/u groups (None: automatic).
        gpus_per_node: topology-aware Mesh placement and USP default. seed: input seed.
        timeout_s: limit for the whole multi-process run.

    Returns:
        One dict per method, in order: ``method``, ``max_abs_err_out``, ``max_abs_err_grad`` (max over dq, dk,
        dv; each also given), ``bytes_sent_per_rank``, ``bytes_recv_per_rank``, ``bytes_per_rank`` (sent +
        recv), ``forward_bytes_sent_per_rank``, ``messages_sent_per_rank``, ``bytes_sent_inter_node_per_rank``
        (to ranks of other nodes; 0 without ``gpus_per_node``), ``model_bytes_per_rank`` (``volume.py`` total)
        and ``model_bytes_sent_inter_node_per_rank``, ``tile`` ([1, P] for ring, [a, b] for mesh, None for
        the head-sharded ulysses and usp; [a, b] over the P/u groups for node_mesh), ``ulysses_degree`` (P for
        ulysses, u for usp and node_mesh, None otherwise), ``bytes_sent_intra_node_per_rank`` and
        ``model_bytes_sent_intra_node_per_rank`` (sent to ranks of the same node), ``bytes_recv_inter_node_per_rank``,
        ``seconds`` (slowest rank, fwd+bwd) -- or ``{"method", "error"}`` when the method cannot run with these parameters (e.g.
        heads not divisible by the Ulysses degree).

    Raises:
        ValueError: an argument out of range (named, with its value and the valid range).

    Example:
        >>> [r["method"] for r in run_check(gpus=2, seq=10, heads=2, head_dim=4, causal=True, dtype="float64")]
        ['ring', 'ulysses', 'usp', 'mesh', 'node_mesh']
    """
    spec = make_spec(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype=dtype,
        methods=methods,
        tile=tile,
        ulysses_degree=ulysses_degree,
        gpus_per_node=gpus_per_node,
        node_tile=node_tile,
        batch=batch,
    )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed={seed!r} is out of range: valid range is 0..2**63-1")
    return [r.to_json() for r in check_results(spec, seed=seed, timeout_s=timeout_s)]


def check_results(spec: CheckSpec, *, seed: int, timeout_s: float = 300.0) -> list[CheckMethodResult | MethodError]:
    """:func:`run_check` on an already validated :class:`CheckSpec`: typed results, one per planned method."""
    inputs = make_inputs(
        batch=spec.batch, heads=spec.heads, seq=spec.seq, head_dim=spec.head_dim, dtype=spec.torch_dtype, seed=seed
    )
    per_rank = []
    if any(p.error is None for p in spec.plans):
        per_rank = run_workers(
            check_worker,
            spec.gpus,
            spec,
            inputs,
            timeout_s=timeout_s,
            oom_hint="try a smaller seq, batch or heads (or fewer gpus)",
        )
    return combine(spec, inputs, per_rank)
