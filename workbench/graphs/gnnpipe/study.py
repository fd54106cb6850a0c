"""GNNPipe studies: memoised real runs (full-graph, graph-parallel, GNNPipe), the byte model over depth, stale-edge
shares of chunk orders, the staleness schedule, paper-scale projections: what the panel draws, the notebook shows and the claims
(:mod:`workbench.graphs.gnnpipe.claims`) measure. :func:`clear_caches` empties every memo.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from workbench.cluster import ClusterSpec
from workbench.distributed.launch import run_workers
from workbench.graphs.gnnpipe.config import GnnpipeConfig
from workbench.graphs.gnnpipe.data import GraphData, load_data, permuted
from workbench.graphs.gnnpipe.full import Snapshot, TrainRun, TrainSpec, WorkerRun, curves, train_full
from workbench.graphs.gnnpipe.graph_parallel import graph_parallel_worker
from workbench.graphs.gnnpipe.hybrid import check_grid, hybrid_worker, stage_param_counts
from workbench.graphs.gnnpipe.model import CLUSTER, MODEL_LABEL, PAPER_GRAPHS, param_count, project
from workbench.graphs.gnnpipe.models import ModelSpec, param_names
from workbench.graphs.gnnpipe.partition import Cut, epoch_order, halo_pairs, make_cut, stale_edge_share
from workbench.graphs.gnnpipe.pipeline import PipeSpec, pipeline_worker
from workbench.graphs.gnnpipe.volume import gnnpipe_bytes, graph_parallel_bytes, hybrid_bytes
from workbench.threads import one_thread

__all__ = [
    "MethodRun",
    "CheckOutcome",
    "dataset",
    "model_spec",
    "train_spec",
    "cut_of",
    "run_method",
    "cached_run",
    "check",
    "bytes_vs_layers",
    "stale_shares",
    "schedule",
    "GnnpipeView",
    "gnnpipe_view",
    "paper_scale",
    "locality_factor",
    "accuracy_over_seeds",
    "chunk_sweep",
    "clear_caches",
    "METHODS",
]

METHODS = ("full", "graph-parallel", "gnnpipe", "gnnpipe-k1", "hybrid")

_DATA: dict[tuple, GraphData] = {}
_CUTS: dict[tuple, tuple[Cut, GraphData]] = {}
_RUNS: dict[tuple, MethodRun] = {}
_HALOS: dict[tuple, int] = {}
_VIEWS: dict[tuple, Any] = {}


def clear_caches() -> None:
    """Forget every memoised dataset, cut, halo and run."""
    for cache in (_DATA, _CUTS, _RUNS, _HALOS, _VIEWS):
        cache.clear()


# ----------------------------------------------------------------------------------------------- building blocks
def dataset(name: str, dtype: str = "float64", data_dir: str = "", seed: int = 0) -> GraphData:
    """The memoised dataset (PubMed's random features depend on ``seed``)."""
    key = (name, dtype, data_dir, seed if name == "pubmed" else 0)
    if key not in _DATA:
        _DATA[key] = load_data(name, dtype=dtype, data_dir=data_dir or None, seed=key[3])
    return _DATA[key]


def _data(cfg: GnnpipeConfig) -> GraphData:
    return dataset(cfg.dataset, cfg.dtype, cfg.data_dir, cfg.seed)


def model_spec(cfg: GnnpipeConfig, data: GraphData) -> ModelSpec:
    return ModelSpec(cfg.model, cfg.layers, cfg.hidden, data.features, data.classes, cfg.alpha, cfg.lam, cfg.dropout)


def train_spec(cfg: GnnpipeConfig) -> TrainSpec:
    return TrainSpec(cfg.epochs, cfg.lr, cfg.weight_decay, cfg.seed, cfg.eval_every)


def cut_of(cfg: GnnpipeConfig, parts: int) -> tuple[Cut, GraphData]:
    """The memoised ``parts``-way cut of the config's dataset (cfg.partition, cfg.seed) and the renumbered data.

    Raises ValueError when ``parts`` exceeds the vertices (``chunks`` larger than the graph).
    """
    data = _data(cfg)
    if parts > data.n:
        raise ValueError(
            f"chunks={parts} is more than the {data.n:,} nodes of {cfg.dataset}: valid range is 1..{data.n} (chunks)"
        )
    key = (cfg.dataset, cfg.dtype, cfg.data_dir, cfg.seed, parts, cfg.partition)
    if key not in _CUTS:
        cut = make_cut(data.indptr, data.indices, parts, cfg.partition, cfg.seed)
        _CUTS[key] = (cut, data if parts == 1 else permuted(data, cut.order))
    return _CUTS[key]


def _halo(cfg: GnnpipeConfig, parts: int) -> int:
    key = (cfg.dataset, cfg.seed, parts, cfg.partition)
    if key not in _HALOS:
        cut, data = cut_of(cfg, parts)
        _HALOS[key] = halo_pairs(data.indptr, data.indices, cut.bounds)
    return _HALOS[key]


# ----------------------------------------------------------------------------------------------- real runs
@dataclass(frozen=True)
class MethodRun:
    """One trained method: accuracy curves (exact full-graph evaluation of its snapshots), bytes counted per epoch
    (all ranks, sent), the closed-form bytes, median seconds per epoch (slowest rank), final parameters."""

    name: str
    curves: dict[str, list[float]]
    test_accuracy: float
    bytes_each_epoch: tuple[int, ...]
    model_bytes_per_epoch: int
    seconds_per_epoch: float
    losses: tuple[float, ...]
    params: dict[str, torch.Tensor] = field(repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def bytes_per_epoch(self) -> int:
        return max(self.bytes_each_epoch) if self.bytes_each_epoch else 0

    @property
    def bytes_match_model(self) -> bool:
        return all(b == self.model_bytes_per_epoch for b in self.bytes_each_epoch)


_NEUTRAL = dict(mode="check", eval_every=5, timeout_s=600.0, paper_graph="ogbn-products", gpus=4)


def _key(cfg: GnnpipeConfig, name: str) -> tuple:
    """The fields that decide a method's numbers (others normalised), so equal runs share a memo entry."""
    fields = dict(_NEUTRAL, eval_every=cfg.eval_every, stages=0)
    if name == "hybrid":
        fields.update(
            chunks=1, chunk_order="fixed", staleness=1, warmup=0, stale_gradients="drop", stages=cfg.hybrid_stages
        )
    elif name == "full":
        fields.update(
            workers=1, chunks=1, chunk_order="fixed", staleness=1, warmup=0, stale_gradients="drop", partition="metis"
        )
    elif name == "graph-parallel":
        fields.update(chunks=1, chunk_order="fixed", staleness=1, warmup=0, stale_gradients="drop")
    elif name == "gnnpipe-k1":
        fields.update(chunks=1, chunk_order="fixed", staleness=1, warmup=0, stale_gradients="drop", partition="metis")
    return (name, dataclasses.replace(cfg, **fields))


def _merge(results: list[WorkerRun], spec: ModelSpec) -> tuple[dict[str, torch.Tensor], tuple[Snapshot, ...]]:
    """Parameters and snapshots of all stages merged (graph parallel: rank 0's, which all ranks equal)."""
    params: dict[str, torch.Tensor] = {}
    for r in results:
        params.update(r.params)
    snaps = []
    for i, snap in enumerate(results[0].snapshots):
        merged: dict[str, torch.Tensor] = {}
        for r in results:
            if r.snapshots:
                merged.update(r.snapshots[i].params)
        snaps.append(Snapshot(snap.epoch, merged))
    return {k: params[k] for k in param_names(spec)}, tuple(snaps)


def run_method(cfg: GnnpipeConfig, name: str) -> MethodRun:
    """Train ``name`` (full | graph-parallel | gnnpipe | gnnpipe-k1 | hybrid) for real, memoised by its deciding fields.

    Raises ValueError for settings the method cannot run (chunks above the vertex count, workers above the
    layers); WorkerFailed / WorkerTimeout from the launcher.
    """
    if name not in METHODS:
        raise ValueError(f"method={name!r} is not allowed: valid values are {', '.join(map(repr, METHODS))}")
    key = _key(cfg, name)
    if key in _RUNS:
        return _RUNS[key]
    data = _data(cfg)
    spec, train = model_spec(cfg, data), train_spec(cfg)
    itemsize = data.x.element_size()
    hint = "try a smaller setting (fewer workers, layers or hidden channels, or a smaller dataset)"
    if name == "full":
        with one_thread():
            run = train_full(data, spec, train)
        model_bytes, each, info = 0, tuple(0 for _ in range(cfg.epochs)), {}
        params, snaps, losses, secs = run.params, run.snapshots, run.losses, run.seconds_per_epoch
    else:
        if name == "graph-parallel":
            cut, pdata = cut_of(cfg, cfg.workers)
            results = run_workers(
                graph_parallel_worker,
                cfg.workers,
                pdata,
                spec,
                train,
                cut.bounds,
                timeout_s=cfg.timeout_s,
                oom_hint=hint,
            )
            halo = _halo(cfg, cfg.workers)
            pbytes = sum(v.numel() for v in results[0].params.values()) * itemsize
            model_bytes = graph_parallel_bytes(halo, cfg.layers, cfg.hidden, itemsize, pbytes, cfg.workers)
            info = {"halo": halo, "partition": cfg.partition, "parts": cut.sizes()}
        elif name == "hybrid":
            stages = cfg.hybrid_stages
            groups = check_grid(cfg.workers, stages, cfg.layers)
            cut, pdata = cut_of(cfg, groups)
            results = run_workers(
                hybrid_worker,
                cfg.workers,
                pdata,
                spec,
                train,
                cut.bounds,
                stages,
                timeout_s=cfg.timeout_s,
                oom_hint=hint,
            )
            halo = _halo(cfg, groups)
            pbytes = [c * itemsize for c in stage_param_counts(spec, stages)]
            model_bytes = hybrid_bytes(
                data.n, stages, groups, halo, cfg.layers, cfg.hidden, spec.message_width, itemsize, pbytes
            )
            info = {"stages": stages, "groups": groups, "halo": halo, "partition": cfg.partition, "parts": cut.sizes()}
        else:
            chunks = 1 if name == "gnnpipe-k1" else cfg.chunks
            cut, pdata = cut_of(cfg, chunks)
            pipe = PipeSpec(
                cut.bounds, cfg.chunk_order, cfg.staleness, 0 if chunks == 1 else cfg.warmup, cfg.stale_gradients
            )
            results = run_workers(
                pipeline_worker, cfg.workers, pdata, spec, train, pipe, timeout_s=cfg.timeout_s, oom_hint=hint
            )
            model_bytes = gnnpipe_bytes(data.n, cfg.workers, spec.message_width, itemsize)
            info = {"chunks": chunks, "chunk_sizes": cut.sizes()}
        params, snaps = _merge(results, spec)
        each = tuple(int(sum(r.sent[e] for r in results)) for e in range(cfg.epochs))
        per_epoch = [max(r.seconds[e] for r in results) for e in range(cfg.epochs)]
        secs = float(np.median(per_epoch[1:] or per_epoch))
        if name == "graph-parallel":
            losses = tuple(float(sum(r.losses[e] for r in results)) for e in range(cfg.epochs))
        elif name == "hybrid":  # the last stage's G ranks each hold their part's share of the loss
            last = results[-(cfg.workers // cfg.hybrid_stages) :]
            losses = tuple(float(sum(r.losses[e] for r in last)) for e in range(cfg.epochs))
        else:
            losses = tuple(float(x) for x in results[-1].losses)
    trained = TrainRun(params=params, snapshots=snaps, losses=tuple(losses), epoch_seconds=(secs,))
    cur = curves(data, spec, trained)
    out = MethodRun(
        name=name,
        curves=cur,
        test_accuracy=cur["test"][-1],
        bytes_each_epoch=each,
        model_bytes_per_epoch=int(model_bytes),
        seconds_per_epoch=float(secs),
        losses=tuple(losses),
        params=params,
        info=info,
    )
    _RUNS[key] = out
    return out


def cached_run(cfg: GnnpipeConfig, name: str) -> MethodRun | None:
    """The memoised run of ``name`` at ``cfg``, or None when it has not run (nothing is started)."""
    return _RUNS.get(_key(cfg, name))


def _max_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    return max(float((a[k] - b[k]).abs().max()) for k in a)


@dataclass(frozen=True)
class CheckOutcome:
    """The runs of a check and the exactness figures (max |parameter difference| vs full-graph training)."""

    runs: dict[str, MethodRun]
    k1_max_abs_param_diff: float
    graph_parallel_max_abs_param_diff: float
    hybrid_max_abs_param_diff: float


def check(cfg: GnnpipeConfig, progress: Callable[[int, int, str], None] | None = None) -> CheckOutcome:
    """Run full-graph, graph-parallel, GNNPipe (K = cfg.chunks), GNNPipe with K = 1 and the hybrid (S x G, K = 1)
    (memoised)."""
    runs = {}
    for i, name in enumerate(METHODS):
        if progress:
            progress(i, len(METHODS), name)
        runs[name] = run_method(cfg, name)
    if progress:
        progress(len(METHODS), len(METHODS), "done")
    full = runs["full"].params
    return CheckOutcome(
        runs,
        _max_diff(runs["gnnpipe-k1"].params, full),
        _max_diff(runs["graph-parallel"].params, full),
        _max_diff(runs["hybrid"].params, full),
    )


# ----------------------------------------------------------------------------------------------- fast views
def bytes_vs_layers(cfg: GnnpipeConfig, layers: tuple[int, ...] = (2, 4, 8, 16, 32, 64)) -> list[dict[str, Any]]:
    """Closed-form bytes per epoch (= the counted bytes) of graph parallelism, GNNPipe and the hybrid (S x G,
    ``cfg.hybrid_stages``) at depths ``layers`` with the real halos of the config's partition (P-way; G-way for the
    hybrid); rows with L below P (below S) have no GNNPipe (hybrid) value."""
    data = _data(cfg)
    halo = _halo(cfg, cfg.workers)
    stages = cfg.hybrid_stages
    groups = cfg.workers // stages if cfg.workers % stages == 0 else None
    halo_g = _halo(cfg, groups) if groups else None
    itemsize = data.x.element_size()
    width = cfg.hidden * (2 if cfg.model == "gcnii" else 1)
    rows = []
    for L in layers:
        pbytes = param_count(cfg.model, L, cfg.hidden, data.features, data.classes) * itemsize
        gp = graph_parallel_bytes(halo, L, cfg.hidden, itemsize, pbytes, cfg.workers)
        pp = gnnpipe_bytes(data.n, cfg.workers, width, itemsize) if L >= cfg.workers else None
        hy = None
        if groups and L >= stages:
            counts = stage_param_counts(dataclasses.replace(model_spec(cfg, data), layers=L), stages)  # L < P is fine
            hy = hybrid_bytes(
                data.n, stages, groups, halo_g, L, cfg.hidden, width, itemsize, [c * itemsize for c in counts]
            )
        rows.append(
            {
                "layers": L,
                "graph-parallel": gp,
                "gnnpipe": pp,
                "ratio": (gp / pp) if pp else None,
                "halo": halo,
                "hybrid": hy,
            }
        )
    return rows


def stale_shares(cfg: GnnpipeConfig, epochs: int = 20) -> dict[str, dict[str, Any]]:
    """Per chunk order: the share of edges read from history in each of ``epochs`` epochs (after warm-up) and the
    share of edges stale in *every* one of them (a fixed order always stales the same edges). Memoised."""
    key = ("stale", cfg.dataset, cfg.data_dir, cfg.seed, cfg.chunks, cfg.partition, epochs)
    if key not in _VIEWS:
        _VIEWS[key] = _stale_shares(cfg, epochs)
    return _VIEWS[key]


def _stale_shares(cfg: GnnpipeConfig, epochs: int) -> dict[str, dict[str, Any]]:
    cut, data = cut_of(cfg, cfg.chunks)
    rows = np.repeat(np.arange(data.n), np.diff(data.indptr))
    owner = np.repeat(np.arange(cut.parts), np.diff(np.asarray(cut.bounds)))
    out = {}
    for order in ("fixed", "shuffled", "alternate"):
        shares, always = [], np.ones(len(data.indices), dtype=bool)
        for e in range(epochs):
            seq = epoch_order(cut.parts, order, cfg.seed, e)
            pos = np.empty(cut.parts, dtype=np.int64)
            pos[np.asarray(seq)] = np.arange(cut.parts)
            stale = pos[owner[data.indices]] > pos[owner[rows]]
            always &= stale
            shares.append(float(stale.mean()) if len(stale) else 0.0)
        out[order] = {
            "per_epoch": shares,
            "always": float(always.mean()) if len(always) else 0.0,
            "cross": float(np.mean(owner[data.indices] != owner[rows])) if len(rows) else 0.0,
        }
    assert math.isclose(
        out["fixed"]["per_epoch"][0], stale_edge_share(data.indptr, data.indices, cut.bounds, list(range(cut.parts)))
    )
    return out


def schedule(epochs: int, warmup: int, staleness: int) -> dict[str, list]:
    """Per epoch: whether it is a warm-up (exact) epoch and the age in epochs of the history it reads (0: exact;
    None: no history yet or staleness 0, so edges to later chunks are dropped)."""
    ages: list[int | None] = []
    last_refresh: int | None = None
    for e in range(epochs):
        warm = e < warmup
        if warm:
            ages.append(0)
        elif staleness == 0 or last_refresh is None:
            ages.append(None)
        else:
            ages.append(e - last_refresh)
        if staleness >= 1 and (warm or e % staleness == 0):
            last_refresh = e
    return {"epoch": list(range(epochs)), "warmup": [e < warmup for e in range(epochs)], "age": ages}


def locality_factor(cfg: GnnpipeConfig) -> float:
    """Measured METIS halo / random halo of the config's dataset at P = cfg.gpus (clipped to the graph)."""
    parts = min(cfg.gpus, _data(cfg).n)
    metis = _halo(dataclasses.replace(cfg, partition="metis"), parts)
    rand = _halo(dataclasses.replace(cfg, partition="random"), parts)
    return metis / rand if rand else 1.0


def paper_scale(
    cfg: GnnpipeConfig, layers: tuple[int, ...] = (4, 8, 16, 32, 64, 128), cluster: ClusterSpec = CLUSTER
) -> list[dict[str, Any]]:
    """MODEL rows: graph-parallel / GNNPipe volume, overhead and time ratios on ``cfg.paper_graph`` with cfg.gpus
    GPUs, for METIS-like (locality measured on cfg.dataset) and random partitions, at depths ``layers``. Memoised."""
    key = (
        "paper",
        cfg.paper_graph,
        cfg.model,
        cfg.hidden,
        cfg.gpus,
        cfg.chunks,
        cfg.dataset,
        cfg.data_dir,
        cfg.seed,
        layers,
        cluster,
    )
    if key not in _VIEWS:
        _VIEWS[key] = _paper_scale(cfg, layers, cluster)
    return _VIEWS[key]


def _paper_scale(cfg: GnnpipeConfig, layers: tuple[int, ...], cluster: ClusterSpec) -> list[dict[str, Any]]:
    graph = PAPER_GRAPHS[cfg.paper_graph]
    loc = locality_factor(cfg)
    rows = []
    for L in layers:
        if L < cfg.gpus:
            continue
        for part, factor in (("metis-like", loc), ("random", 1.0)):
            p = project(
                graph,
                kind=cfg.model,
                layers=L,
                hidden=cfg.hidden,
                gpus=cfg.gpus,
                chunks=cfg.chunks,
                itemsize=4,
                locality=factor,
                cluster=cluster,
            )
            rows.append(
                {
                    "label": MODEL_LABEL,
                    "graph": graph.name,
                    "layers": L,
                    "partition": part,
                    "locality": factor,
                    "halo": p["halo"],
                    "gp_bytes": p["graph-parallel"].bytes_per_epoch,
                    "gnnpipe_bytes": p["gnnpipe"].bytes_per_epoch,
                    "volume_ratio": p["volume_ratio"],
                    "overhead_ratio": p["overhead_ratio"],
                    "time_ratio": p["time_ratio"],
                    "gp_seconds": p["graph-parallel"].seconds,
                    "gnnpipe_seconds": p["gnnpipe"].seconds,
                }
            )
    return rows


@dataclass(frozen=True)
class GnnpipeView:
    """What the panel draws: the byte model over depth, stale-edge shares, the schedule, the paper-scale model,
    and the memoised runs of this setting (None when not run yet)."""

    config: GnnpipeConfig
    bytes_rows: list[dict[str, Any]]
    stale: dict[str, dict[str, Any]]
    schedule: dict[str, list]
    paper: list[dict[str, Any]]
    runs: dict[str, MethodRun] | None
    feature_note: str
    n: int


def gnnpipe_view(cfg: GnnpipeConfig) -> GnnpipeView:
    """The panel's view (fast: cached halos, closed forms, memo look-ups; no training)."""
    data = _data(cfg)
    if cfg.chunks > data.n:
        raise ValueError(
            f"chunks={cfg.chunks} is more than the {data.n:,} nodes of {cfg.dataset}: valid range is "
            f"1..{data.n} (chunks)"
        )
    layers = tuple(sorted({2, 4, 8, 16, 32, 64, cfg.layers}))
    runs = {name: cached_run(cfg, name) for name in METHODS}
    done = None if any(r is None for r in runs.values()) else runs
    return GnnpipeView(
        config=cfg,
        bytes_rows=bytes_vs_layers(cfg, layers),
        stale=stale_shares(cfg),
        schedule=schedule(cfg.epochs, cfg.warmup, cfg.staleness),
        paper=paper_scale(cfg),
        runs=done,
        feature_note=data.feature_note,
        n=data.n,
    )


# ----------------------------------------------------------------------------------------------- notebook studies
def accuracy_over_seeds(
    cfg: GnnpipeConfig, seeds: tuple[int, ...], warmup: int, progress: Callable[[int, int, str], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Test-accuracy curves of full-graph, graph-parallel, GNNPipe (no warm-up), GNNPipe + warm-up and the hybrid over
    ``seeds``: ``{label: {"epoch": [...], "mean": [...], "std": [...], "final": [...]}}``."""
    plan = [
        ("full", "full", {}),
        ("graph parallel", "graph-parallel", {}),
        ("GNNPipe", "gnnpipe", {"warmup": 0}),
        (f"GNNPipe + warm-up {warmup}", "gnnpipe", {"warmup": warmup}),
        (f"hybrid {cfg.hybrid_stages} x {cfg.workers // cfg.hybrid_stages}", "hybrid", {}),
    ]
    out: dict[str, dict[str, Any]] = {}
    total, step = len(plan) * len(seeds), 0
    for label, name, extra in plan:
        curves_ = []
        for seed in seeds:
            if progress:
                progress(step, total, f"{label}, seed {seed}")
            step += 1
            curves_.append(run_method(dataclasses.replace(cfg, seed=seed, **extra), name).curves)
        acc = np.array([c["test"] for c in curves_])
        out[label] = {
            "epoch": curves_[0]["epoch"],
            "mean": acc.mean(axis=0).tolist(),
            "std": acc.std(axis=0).tolist(),
            "final": acc[:, -1].tolist(),
        }
    return out


def chunk_sweep(
    cfg: GnnpipeConfig, chunks: tuple[int, ...], orders: tuple[str, ...], seeds: tuple[int, ...]
) -> list[dict[str, Any]]:
    """Final test accuracy of GNNPipe per (K, chunk order), mean and std over ``seeds``, with the stale-edge share."""
    rows = []
    for K in chunks:
        for order in orders:
            accs = [
                run_method(dataclasses.replace(cfg, chunks=K, chunk_order=order, seed=s), "gnnpipe").test_accuracy
                for s in seeds
            ]
            share = stale_shares(dataclasses.replace(cfg, chunks=K))[order]
            rows.append(
                {
                    "chunks": K,
                    "order": order,
                    "mean": float(np.mean(accs)),
                    "std": float(np.std(accs)),
                    "stale_share": float(np.mean(share["per_epoch"])),
                    "always_stale": share["always"],
                }
            )
    return rows
