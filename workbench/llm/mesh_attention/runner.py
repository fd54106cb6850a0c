"""Headless runner of the distributed-attention technique: ``workbench run mesh-attention ...``.

``mode="check"`` launches ``gpus`` real processes (gloo) and runs Ring, Ulysses, USP, Mesh and the node-level
Mesh (the workbench's extension: Ulysses inside a node x Mesh across nodes) forward and
backward against torch SDPA, with every byte counted; ``mode="model"`` runs nothing and prices the same
methods (and StarTrail) on the cluster model, for up to 1024 GPUs and 4M tokens.
"""

from __future__ import annotations

from typing import Any

from workbench.llm.mesh_attention.config import MeshAttentionConfig
from workbench.llm.mesh_attention.results import (
    CHECK_METHODS,
    MODEL_METHODS,
    CheckMethodResult,
    MeshAttentionResult,
    MethodError,
    ModelMethodResult,
)
from workbench.registry import Technique
from workbench.results import fmt_bytes

__all__ = [
    "CHECK_METHODS",
    "MODEL_METHODS",
    "MethodError",
    "ModelMethodResult",
    "CheckMethodResult",
    "MeshAttentionResult",
    "model_results",
    "run",
    "format_table",
    "TECHNIQUE",
]


def model_results(
    config: MeshAttentionConfig, methods: tuple[str, ...] = MODEL_METHODS
) -> list[ModelMethodResult | MethodError]:
    """Cluster-model results per method: bytes, peak memory and step time (each ``model_*``)."""
    from workbench.llm.mesh_attention.model import model_attention

    out: list[ModelMethodResult | MethodError] = []
    for method in methods:
        try:
            r = model_attention(
                method,
                gpus=config.gpus,
                seq=config.seq,
                heads=config.heads,
                head_dim=config.head_dim,
                causal=config.causal,
                dtype_bytes=config.dtype_bytes,
                cluster=config.cluster,
                batch=config.batch,
                tile=config.tile if method == "mesh" else None,
                ulysses_degree=config.ulysses_degree or None,
                schedule=config.schedule,
            )
        except ValueError as exc:
            out.append(MethodError(method=method, error=str(exc)))
            continue
        out.append(
            ModelMethodResult(
                method=method,
                tile=tuple(r.tile) if r.tile is not None else None,
                model_bytes_per_rank=tuple(int(x) for x in r.bytes_per_rank),
                model_peak_memory_bytes=int(max(r.peak_memory_bytes)),
                model_seconds=float(r.total_seconds),
                model_compute_seconds=float(r.compute_seconds),
                model_exposed_comm_seconds=float(r.exposed_comm_seconds),
                model_bytes_sent_inter_node_per_rank=tuple(int(x) for x in r.bytes_sent_inter_node_per_rank),
                ulysses_degree=r.ulysses_degree,
            )
        )
    return out


def run(config: MeshAttentionConfig) -> MeshAttentionResult:
    """Run ``config``: the real check on ``config.gpus`` processes, or the cluster model (JSON keys in the README)."""
    head = dict(
        mode=config.mode,
        gpus=config.gpus,
        seq=config.seq,
        heads=config.heads,
        head_dim=config.head_dim,
        causal=config.causal,
        dtype=config.dtype,
        schedule=config.schedule,
    )
    if config.mode == "model":
        return MeshAttentionResult(
            **head, label="cluster model (nothing was run)", results=tuple(model_results(config))
        )
    from workbench.llm.mesh_attention.check import CheckSpec, check_results

    results = check_results(
        CheckSpec.from_config(config, methods=CHECK_METHODS), seed=config.seed, timeout_s=config.timeout_s
    )
    return MeshAttentionResult(**head, label=f"real run on {config.gpus} processes (gloo)", results=tuple(results))


def format_table(result: dict[str, Any]) -> str:
    """A text table of a run's results (one row per method)."""
    lines = [
        f"mesh-attention  mode={result['mode']}  gpus={result['gpus']}  seq={result['seq']}  "
        f"heads={result['heads']}  head_dim={result['head_dim']}  causal={result['causal']}  ({result['label']})"
    ]
    if result["mode"] == "check":
        lines.append(f"{'method':<10}{'tile':>10}{'err out':>12}{'err grad':>12}{'max bytes/rank':>16}{'model':>12}")
        for r in result["results"]:
            if "error" in r:
                lines.append(f"{r['method']:<10}  error: {r['error']}")
                continue
            tile = "x".join(map(str, r["tile"])) if r.get("tile") else f"u={r.get('ulysses_degree')}"
            lines.append(
                f"{r['method']:<10}{tile:>10}{r['max_abs_err_out']:>12.2e}{r['max_abs_err_grad']:>12.2e}"
                f"{fmt_bytes(max(r['bytes_per_rank'])):>16}{fmt_bytes(max(r['model_bytes_per_rank'])):>12}"
            )
    else:
        lines.append(
            f"{'method':<10}{'tile':>10}{'bytes/rank':>12}{'peak mem':>12}{'compute s':>12}"
            f"{'exposed s':>12}{'step s':>12}"
        )
        for r in result["results"]:
            if "error" in r:
                lines.append(f"{r['method']:<10}  error: {r['error']}")
                continue
            tile = "x".join(map(str, r["tile"])) if r["tile"] else "-"
            lines.append(
                f"{r['method']:<10}{tile:>10}{fmt_bytes(max(r['model_bytes_per_rank'])):>12}"
                f"{fmt_bytes(r['model_peak_memory_bytes']):>12}{r['model_compute_seconds']:>12.4g}"
                f"{r['model_exposed_comm_seconds']:>12.4g}{r['model_seconds']:>12.4g}"
            )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="mesh-attention",
    config=MeshAttentionConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.mesh_attention:MeshAttentionPanel",
    notebook="notebooks/llm/mesh_attention.ipynb",
    smoke={"mode": "check", "gpus": 2, "seq": 20, "heads": 2, "head_dim": 4, "causal": True},
    processes=True,
)
