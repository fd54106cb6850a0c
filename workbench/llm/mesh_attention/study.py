"""What the Mesh-Attention panel draws and the notebook shows: model sweeps, block maps, headline ratios.

Everything here is computed from the library (``model.model_attention`` for bytes, memory and time on the
cluster model; ``plan.assignment_matrix`` for who computes which block) and memoised in this module only, keyed
by everything a value depends on, so moving one panel slider re-prices only what changed.
:func:`clear_caches` empties every cache. No UI: ``widgets/llm/mesh_attention.py`` only draws these views.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.cluster import PRESETS, ClusterSpec
from workbench.llm.mesh_attention.config import MeshAttentionConfig
from workbench.llm.mesh_attention.model import AttentionModelResult, model_attention
from workbench.llm.mesh_attention.plan import assignment_matrix, choose_tile, make_mesh_plan
from workbench.llm.mesh_attention.results import MODEL_METHODS

__all__ = [
    "MODEL_METHODS",
    "SWEEP_GPUS",
    "HEAT_MAX",
    "BlockMap",
    "MeshAttentionView",
    "model_point",
    "block_maps",
    "mesh_attention_view",
    "headline_speedups",
    "paper_comparison",
    "max_count_difference",
    "clear_caches",
    "VerdictPoint",
    "verdict_sweep",
    "verdict_summary",
    "inter_node_units",
    "topology_effect",
    "backlog_effect",
    "DEFAULT_CLUSTER",
]

#: GPU counts of the per-rank communication sweep (the chosen P joins them)
SWEEP_GPUS: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: block maps show at most the first HEAT_MAX x HEAT_MAX blocks
HEAT_MAX = 128


# ----------------------------------------------------------------------------------------------------------
# memoised model points
# ----------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _priced(
    method: str,
    gpus: int,
    seq: int,
    heads: int,
    head_dim: int,
    batch: int,
    causal: bool,
    dtype_bytes: int,
    cluster: ClusterSpec,
    tile: tuple[int, int] | None,
    ulysses_degree: int | None,
    schedule: str = "current",
) -> AttentionModelResult | str:
    try:
        return model_attention(
            method,
            gpus=gpus,
            seq=seq,
            heads=heads,
            head_dim=head_dim,
            causal=causal,
            dtype_bytes=dtype_bytes,
            cluster=cluster,
            batch=batch,
            tile=tile,
            ulysses_degree=ulysses_degree,
            schedule=schedule,
        )
    except ValueError as exc:
        return str(exc)


def model_point(method: str, gpus: int, config: MeshAttentionConfig) -> AttentionModelResult | str:
    """The model of ``method`` on ``gpus`` ranks at ``config``'s sizes and cluster, or the error text when the
    method cannot run there (e.g. heads % P for Ulysses). The config's tile and Ulysses degree apply only at
    ``gpus == config.gpus`` (elsewhere: automatic). Memoised on exactly the inputs that matter."""
    at_config = gpus == config.gpus
    return _priced(
        method,
        gpus,
        config.seq,
        config.heads,
        config.head_dim,
        config.batch,
        config.causal,
        config.dtype_bytes,
        config.cluster,
        config.tile if method == "mesh" and at_config else None,
        (config.ulysses_degree or None) if at_config else None,
        config.schedule if method in ("mesh", "node_mesh") else "current",
    )


# ----------------------------------------------------------------------------------------------------------
# who computes which block
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BlockMap:
    """Who computes each block: ``ranks[i, j]`` for Q chunk ``q_chunks[i]`` and KV chunk ``kv_chunks[j]``
    (chunks listed in display order, at most ``HEAT_MAX`` of each; -1 = block fully masked)."""

    ranks: np.ndarray
    q_chunks: np.ndarray
    kv_chunks: np.ndarray


@functools.lru_cache(maxsize=256)
def block_maps(gpus: int, tile: tuple[int, int] | None, causal: bool, gpus_per_node: int) -> tuple[BlockMap, BlockMap]:
    """Ring in natural chunk order; Mesh with Q and KV chunks grouped by tile (row groups, then column groups),
    so each rank's a x b tile shows as one rectangle, as in the paper's figure."""
    ring = assignment_matrix("ring", gpus, causal=causal)
    natural = np.arange(gpus)
    mesh = assignment_matrix("mesh", gpus, tile=tile, causal=causal, gpus_per_node=gpus_per_node)
    plan = make_mesh_plan(gpus, tile or choose_tile(gpus, gpus_per_node=gpus_per_node), gpus_per_node)
    grid = plan.rank_at.reshape(plan.b, plan.a)  # grid[I, J]: rank at tile cell (I, J)
    q_order, kv_order = grid.reshape(-1), grid.T.reshape(-1)  # Q chunks by tile-row, KV chunks by tile-column
    cut = slice(0, HEAT_MAX)
    return (
        BlockMap(ring[cut, cut], natural[cut], natural[cut]),
        BlockMap(mesh[np.ix_(q_order, kv_order)][cut, cut], q_order[cut], kv_order[cut]),
    )


# ----------------------------------------------------------------------------------------------------------
# the panel's view
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeshAttentionView:
    """What one redraw shows: sweeps over P, the model at the chosen P, and the two assignment matrices."""

    config: MeshAttentionConfig
    sweep: dict[str, tuple[list[int], list[float]]]  # method -> (P values, max bytes per rank)
    point: dict[str, AttentionModelResult | str]  # method -> result at config.gpus, or error text
    ring_map: BlockMap
    mesh_map: BlockMap

    @property
    def ok(self) -> dict[str, AttentionModelResult]:
        """Methods that run at the chosen point."""
        return {m: r for m, r in self.point.items() if not isinstance(r, str)}

    @property
    def errors(self) -> dict[str, str]:
        """Methods that cannot run at the chosen point, with the reason."""
        return {m: r for m, r in self.point.items() if isinstance(r, str)}

    def chosen_bytes(self) -> list[float]:
        """Max bytes per rank of every method that runs at the chosen P (the sweep's marked points)."""
        return [b for ps, bs in self.sweep.values() for p, b in zip(ps, bs) if p == self.config.gpus]

    def bytes_ratio(self) -> float | None:
        """Max bytes per rank, Ring / Mesh (None when either cannot run, or nothing moves at P = 1)."""
        ok = self.ok
        if "ring" not in ok or "mesh" not in ok or ok["mesh"].bytes_per_rank.max() <= 0:
            return None
        return float(ok["ring"].bytes_per_rank.max() / ok["mesh"].bytes_per_rank.max())

    def speedup(self, other: str) -> float | None:
        """Modelled step time of ``other`` / Mesh's (None when either cannot run)."""
        ok = self.ok
        if other not in ok or "mesh" not in ok:
            return None
        return ok[other].total_seconds / ok["mesh"].total_seconds


def mesh_attention_view(config: MeshAttentionConfig | Mapping[str, Any]) -> MeshAttentionView:
    """The view of ``config`` (or a mapping of its parameters; the mode is forced to ``"model"``)."""
    if not isinstance(config, MeshAttentionConfig):
        config = MeshAttentionConfig.from_dict({**config, "mode": "model"})
    elif config.mode != "model":
        config = config.replace(mode="model")
    sweep = {}
    for method in MODEL_METHODS:
        ps, bs = [], []
        for p in sorted(set(SWEEP_GPUS) | {config.gpus}):
            r = model_point(method, p, config)
            if not isinstance(r, str):
                ps.append(p)
                bs.append(float(r.bytes_per_rank.max()))
        sweep[method] = (ps, bs)
    point = {m: model_point(m, config.gpus, config) for m in MODEL_METHODS}
    mesh = point["mesh"]
    tile = tuple(mesh.tile) if not isinstance(mesh, str) else None
    ring_map, mesh_map = block_maps(config.gpus, tile, config.causal, config.cluster.gpus_per_node)
    return MeshAttentionView(config, sweep, point, ring_map, mesh_map)


# ----------------------------------------------------------------------------------------------------------
# the notebook's headline
# ----------------------------------------------------------------------------------------------------------
def headline_speedups(
    base: MeshAttentionConfig, *, gpus_list: tuple[int, ...], seq_list: tuple[int, ...]
) -> dict[str, dict[str, list[float | None]]]:
    """Model speed-up of Mesh over each other method, vs P (at ``base.seq``) and vs S (at ``base.gpus``).

    Returns ``{"gpus": {method: [ratio per P]}, "seq": {method: [ratio per S]}}``; None where a method cannot
    run. Tile and Ulysses degree are automatic at every point.
    """
    out: dict[str, dict[str, list[float | None]]] = {"gpus": {}, "seq": {}}
    for axis, points in (("gpus", gpus_list), ("seq", seq_list)):
        for method in MODEL_METHODS:
            if method in ("mesh", "node_mesh"):  # the paper's headline: flat Mesh over the baselines
                continue
            ratios: list[float | None] = []
            for value in points:
                config = base.replace(**{axis: value, "tile_a": 0, "ulysses_degree": 0})
                mesh, other = model_point("mesh", config.gpus, config), model_point(method, config.gpus, config)
                ok = not isinstance(mesh, str) and not isinstance(other, str)
                ratios.append(other.total_seconds / mesh.total_seconds if ok else None)
            out[axis][method] = ratios
    return out


def paper_comparison(model_run: Mapping[str, Any]) -> dict[str, float]:
    """Ratios of a ``mode='model'`` run (its JSON) to set beside the paper's
    (the paper's figures in ``claims.py``): ``bytes_ratio`` (Ring / Mesh, max bytes per
    rank), ``expected_bytes_ratio`` ((sqrt(P)+1)/2), ``speedup_<method>`` (step time of the method / Mesh's) and
    ``memory_ratio`` (peak memory, Mesh / Ring). Methods that could not run are left out."""
    by = {r["method"]: r for r in model_run["results"] if "error" not in r}
    out = {"expected_bytes_ratio": (model_run["gpus"] ** 0.5 + 1) / 2}
    if "mesh" not in by:
        return out
    mesh = by["mesh"]
    if "ring" in by:
        out["bytes_ratio"] = max(by["ring"]["model_bytes_per_rank"]) / max(mesh["model_bytes_per_rank"])
        out["memory_ratio"] = mesh["model_peak_memory_bytes"] / by["ring"]["model_peak_memory_bytes"]
    for method, r in by.items():
        if method != "mesh":
            out[f"speedup_{method}"] = r["model_seconds"] / mesh["model_seconds"]
    return out


def max_count_difference(check_run: Mapping[str, Any]) -> int:
    """Largest |counted - model| bytes on any rank of any method of a ``mode='check'`` run (its JSON); 0 = exact."""
    ok = [r for r in check_run["results"] if "error" not in r]
    return max((abs(c - m) for r in ok for c, m in zip(r["bytes_per_rank"], r["model_bytes_per_rank"])), default=0)


# ----------------------------------------------------------------------------------------------------------
# the speed-up sweep over plausible 256-GPU settings, flat and node-level Mesh against the baselines (the
# verdicts are computed from it by the claim rule: :mod:`~workbench.llm.mesh_attention.claims`)
# ----------------------------------------------------------------------------------------------------------
#: the settings a 256-GPU paper would plausibly use (8 GPUs per node, NVLink, 25-50 GB/s per GPU across nodes;
#: effective attention rate 400 (FlashAttention-2-like) or 600 (FlashAttention-3-like) TFLOP/s on Hopper)
#: the cluster the study's sweeps vary (its network bandwidth and FLOP rate) when the caller gives none
DEFAULT_CLUSTER: ClusterSpec = PRESETS["h800-sxm-nvlink-ib"]
VERDICT_SEQS: tuple[int, ...] = (131_072, 262_144, 524_288, 1_048_576)
VERDICT_INTER_BW: tuple[float, ...] = (25.0, 50.0)
VERDICT_TFLOPS: tuple[float, ...] = (400.0, 600.0)
VERDICT_BASELINES: tuple[str, ...] = ("ring", "usp", "startrail")


@dataclass(frozen=True)
class VerdictPoint:
    """One setting of the sweep: step time of every method and the speed-ups of flat and node-level Mesh."""

    seq: int
    inter_bw: float
    tflops: float
    seconds: dict[str, float]
    speedup_mesh: dict[str, float]  # baseline -> baseline time / flat Mesh time
    speedup_node_mesh: dict[str, float]  # baseline -> baseline time / node-level Mesh time


@functools.lru_cache(maxsize=256)
def verdict_sweep(
    gpus: int = 256,
    heads: int = 32,
    head_dim: int = 128,
    causal: bool = True,
    seqs: tuple[int, ...] = VERDICT_SEQS,
    inter_bw: tuple[float, ...] = VERDICT_INTER_BW,
    tflops: tuple[float, ...] = VERDICT_TFLOPS,
    cluster: ClusterSpec | None = None,
    ulysses_degree: int | None = None,
) -> tuple[VerdictPoint, ...]:
    """Model every method at each (S, network bandwidth, TFLOP/s), bf16 (memoised): on ``cluster`` (NVLink,
    node size; default :data:`DEFAULT_CLUSTER`, 8-GPU nodes) with its network bandwidth and FLOP rate replaced by
    each grid value; USP at ``ulysses_degree`` (None: the automatic degree). The claims
    (:mod:`~workbench.llm.mesh_attention.claims`) read their speed-ups from here."""
    base = DEFAULT_CLUSTER if cluster is None else cluster
    points = []
    for seq in seqs:
        for bw in inter_bw:
            for tf in tflops:
                spec = base.replace(inter_node_bw_gbps=bw, gpu_tflops=tf)
                sec = {
                    m: model_attention(
                        m,
                        gpus=gpus,
                        seq=seq,
                        heads=heads,
                        head_dim=head_dim,
                        causal=causal,
                        dtype_bytes=2,
                        cluster=spec,
                        ulysses_degree=ulysses_degree if m == "usp" else None,
                    ).total_seconds
                    for m in (*VERDICT_BASELINES, "mesh", "node_mesh")
                }
                points.append(
                    VerdictPoint(
                        seq,
                        bw,
                        tf,
                        sec,
                        {b: sec[b] / sec["mesh"] for b in VERDICT_BASELINES},
                        {b: sec[b] / sec["node_mesh"] for b in VERDICT_BASELINES},
                    )
                )
    return tuple(points)


def verdict_summary(points: tuple[VerdictPoint, ...]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """``{"mesh" | "node_mesh": {baseline: (min, mean, max) speed-up over the sweep}}``."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for form in ("mesh", "node_mesh"):
        out[form] = {}
        for b in VERDICT_BASELINES:
            vals = np.array([getattr(p, f"speedup_{form}")[b] for p in points])
            out[form][b] = (float(vals.min()), float(vals.mean()), float(vals.max()))
    return out


@functools.lru_cache(maxsize=8)
def inter_node_units(
    gpus_list: tuple[int, ...] = (64, 256),
    seq: int = 1_048_576,
    heads: int = 32,
    head_dim: int = 128,
    cluster: ClusterSpec | None = None,
) -> dict[str, dict[int, float]]:
    """Per-rank inter-node elements (fwd+bwd, max over ranks, in units of one Q chunk B*H*(S/P)*D) of each
    method with its default plan (Mesh tile, USP degree, StarTrail's fastest team), on ``cluster`` (default
    :data:`DEFAULT_CLUSTER`, 8-GPU nodes; only its node size matters)."""
    cluster = DEFAULT_CLUSTER if cluster is None else cluster
    out: dict[str, dict[int, float]] = {}
    for m in ("mesh", "node_mesh", "usp", "startrail", "ring"):
        out[m] = {}
        for p in gpus_list:
            r = model_attention(
                m, gpus=p, seq=seq, heads=heads, head_dim=head_dim, causal=True, dtype_bytes=2, cluster=cluster
            )
            out[m][p] = float(r.bytes_sent_inter_node_per_rank.max()) / (heads * (seq // p) * head_dim * 2)
    return out


@functools.lru_cache(maxsize=8)
def topology_effect(
    gpus: int = 256,
    seq: int = 262_144,
    head_dim: int = 128,
    inter_bw: tuple[float, ...] = (25.0, 50.0),
    cluster: ClusterSpec | None = None,
) -> list[dict[str, Any]]:
    """Step time with topology-aware tile placement / row-first, for the flat Mesh (heads=32) and the
    node-level Mesh when a node holds several Ulysses groups (heads=4: u=4 on 8-GPU nodes, 2 groups per
    node, tile over 64 groups) or one (heads=32: u=8, placement cannot matter); on ``cluster`` (default
    :data:`DEFAULT_CLUSTER`) with its network bandwidth replaced by each of ``inter_bw``."""
    base = DEFAULT_CLUSTER if cluster is None else cluster
    rows = []
    for bw in inter_bw:
        spec = base.replace(inter_node_bw_gbps=bw)
        for method, heads in (("mesh", 32), ("node_mesh", 4), ("node_mesh", 32)):
            t = [
                model_attention(
                    method,
                    gpus=gpus,
                    seq=seq,
                    heads=heads,
                    head_dim=head_dim,
                    causal=True,
                    dtype_bytes=2,
                    cluster=spec,
                    topology_aware=aware,
                )
                for aware in (True, False)
            ]
            rows.append(
                {
                    "method": method,
                    "heads": heads,
                    "inter_bw": bw,
                    "tile": t[0].tile,
                    "ulysses_degree": t[0].ulysses_degree,
                    "aware_s": t[0].total_seconds,
                    "row_first_s": t[1].total_seconds,
                    "inter_bytes_aware": int(t[0].bytes_sent_inter_node_per_rank.max()),
                    "inter_bytes_row_first": int(t[1].bytes_sent_inter_node_per_rank.max()),
                }
            )
    return rows


@functools.lru_cache(maxsize=8)
def backlog_effect(
    gpus: int = 256,
    heads: int = 32,
    head_dim: int = 128,
    causal: bool = True,
    seqs: tuple[int, ...] = VERDICT_SEQS,
    inter_bw: tuple[float, ...] = VERDICT_INTER_BW,
    tflops: tuple[float, ...] = VERDICT_TFLOPS,
    cluster: ClusterSpec | None = None,
) -> list[dict[str, Any]]:
    """MODEL: step time of flat and node-level Mesh with the current tile schedule and with the greedy
    compute backlog (``plan.greedy_schedule(schedule="greedy-backlog")``, an INFERENCE about the paper's rule),
    over the verdict sweep's settings (``cluster``, default :data:`DEFAULT_CLUSTER`: 8-GPU NVLink nodes, with its
    network bandwidth and FLOP rate replaced by each grid value; bf16). One row per (method, S, bandwidth,
    TFLOP/s): forward / backward / total seconds of each schedule and the gain ``1 - backlog / current``."""
    base = DEFAULT_CLUSTER if cluster is None else cluster
    rows = []
    for seq in seqs:
        for bw in inter_bw:
            for tf in tflops:
                spec = base.replace(inter_node_bw_gbps=bw, gpu_tflops=tf)
                for method in ("mesh", "node_mesh"):
                    res = {
                        sch: model_attention(
                            method,
                            gpus=gpus,
                            seq=seq,
                            heads=heads,
                            head_dim=head_dim,
                            causal=causal,
                            dtype_bytes=2,
                            cluster=spec,
                            schedule=sch,
                        )
                        for sch in ("current", "greedy-backlog")
                    }
                    cur, bl = res["current"], res["greedy-backlog"]
                    rows.append(
                        {
                            "method": method,
                            "seq": seq,
                            "inter_bw": bw,
                            "tflops": tf,
                            "tile": cur.tile,
                            "current_fwd_s": cur.forward_seconds,
                            "backlog_fwd_s": bl.forward_seconds,
                            "current_bwd_s": cur.backward_seconds,
                            "backlog_bwd_s": bl.backward_seconds,
                            "current_s": cur.total_seconds,
                            "backlog_s": bl.total_seconds,
                            "gain": 1.0 - bl.total_seconds / cur.total_seconds,
                        }
                    )
    return rows


def clear_caches() -> None:
    """Empty every memo of this module (the model points and the block maps)."""
    _priced.cache_clear()
    block_maps.cache_clear()
    verdict_sweep.cache_clear()
    inter_node_units.cache_clear()
    topology_effect.cache_clear()
    backlog_effect.cache_clear()
