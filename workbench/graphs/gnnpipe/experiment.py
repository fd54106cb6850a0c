"""GNNPipe's orchestration, shared by the runner and the study: memoised datasets, cuts and halos, the real runs
of every method (full-graph in this process; graph-parallel, GNNPipe and the hybrid on P gloo processes), the
check, the closed-form bytes over depth and over (depth, partitions) with the crossover, the accuracy over
depth, and the paper-scale projection (MODEL). :func:`clear_caches` empties every memo.
"""

from __future__ import annotations

import dataclasses
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
from workbench.graphs.gnnpipe.model import CLUSTER, MODEL_LABEL, PAPER_DEPTHS, PAPER_GRAPHS, param_count, project
from workbench.graphs.gnnpipe.models import ModelSpec, param_names
from workbench.graphs.gnnpipe.partition import Cut, halo_pairs, make_cut
from workbench.graphs.gnnpipe.pipeline import PipeSpec, pipeline_worker
from workbench.graphs.gnnpipe.volume import gnnpipe_bytes, graph_parallel_bytes, hybrid_bytes
from workbench.threads import one_thread

__all__ = [
    "METHODS",
    "MethodRun",
    "CheckOutcome",
    "CrossoverRow",
    "dataset",
    "model_spec",
    "train_spec",
    "cut_of",
    "halo_of",
    "run_method",
    "cached_run",
    "check",
    "hybrid_note",
    "bytes_vs_layers",
    "crossover",
    "depth_accuracy",
    "locality_factor",
    "paper_scale",
    "clear_caches",
]

METHODS = ("full", "graph-parallel", "gnnpipe", "gnnpipe-k1", "hybrid")

_DATA: dict[tuple, GraphData] = {}
_CUTS: dict[tuple, tuple[Cut, GraphData]] = {}
_RUNS: dict[tuple, MethodRun] = {}
_HALOS: dict[tuple, int] = {}
_PAPER: dict[tuple, list[dict[str, Any]]] = {}


def clear_caches() -> None:
    """Forget every memoised dataset, cut, halo, run and projection."""
    for cache in (_DATA, _CUTS, _RUNS, _HALOS, _PAPER):
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
    """The config's model on ``data`` (its feature width and classes)."""
    return ModelSpec(cfg.model, cfg.layers, cfg.hidden, data.features, data.classes, cfg.alpha, cfg.lam, cfg.dropout)


def train_spec(cfg: GnnpipeConfig) -> TrainSpec:
    """The config's epochs, optimiser, seed and snapshot interval."""
    return TrainSpec(cfg.epochs, cfg.lr, cfg.weight_decay, cfg.seed, cfg.eval_every)


def cut_of(cfg: GnnpipeConfig, parts: int) -> tuple[Cut, GraphData]:
    """The memoised ``parts``-way cut of the config's dataset (cfg.partition, cfg.seed) and the renumbered data.

    Raises ValueError when ``parts`` exceeds the vertices (``chunks`` larger than the graph).
    """
    data = _data(cfg)
    _check_parts(cfg, parts, data)
    key = (cfg.dataset, cfg.dtype, cfg.data_dir, cfg.seed, parts, cfg.partition)
    if key not in _CUTS:
        cut = make_cut(data.indptr, data.indices, parts, cfg.partition, cfg.seed)
        _CUTS[key] = (cut, data if parts == 1 else permuted(data, cut.order))
    return _CUTS[key]


def _check_parts(cfg: GnnpipeConfig, parts: int, data: GraphData) -> None:
    if parts > data.n:
        raise ValueError(
            f"chunks={parts} is more than the {data.n:,} nodes of {cfg.dataset}: valid range is 1..{data.n} (chunks)"
        )


def halo_of(cfg: GnnpipeConfig, parts: int) -> int:
    """Total halo H (vertices read by another part, counted per reading part) of the ``parts``-way cut."""
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
        """The largest epoch's counted bytes (all epochs are equal when ``bytes_match_model``)."""
        return max(self.bytes_each_epoch) if self.bytes_each_epoch else 0

    @property
    def bytes_match_model(self) -> bool:
        return all(b == self.model_bytes_per_epoch for b in self.bytes_each_epoch)


@dataclass(frozen=True)
class _Launched:
    """What one multi-process method returned: every rank's :class:`WorkerRun`, the closed-form bytes, notes."""

    results: list[WorkerRun]
    model_bytes: int
    info: dict[str, Any]


_NEUTRAL = dict(mode="check", eval_every=5, timeout_s=600.0, paper_graph="ogbn-products", gpus=4)
_EXACT = dict(chunks=1, chunk_order="fixed", staleness=1, warmup=0, stale_gradients="drop")


def _key(cfg: GnnpipeConfig, name: str) -> tuple:
    """The fields that decide a method's numbers (others normalised), so equal runs share a memo entry."""
    fields = dict(_NEUTRAL, eval_every=cfg.eval_every, stages=0)
    if name == "hybrid":
        fields.update(_EXACT, stages=cfg.hybrid_stages)
    elif name == "full":
        fields.update(_EXACT, workers=1, partition="metis")
    elif name == "graph-parallel":
        fields.update(_EXACT)
    elif name == "gnnpipe-k1":
        fields.update(_EXACT, partition="metis")
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


_HINT = "try a smaller setting (fewer workers, layers or hidden channels, or a smaller dataset)"


def _launch_graph_parallel(cfg: GnnpipeConfig, spec: ModelSpec, train: TrainSpec, itemsize: int) -> _Launched:
    cut, pdata = cut_of(cfg, cfg.workers)
    results = run_workers(
        graph_parallel_worker, cfg.workers, pdata, spec, train, cut.bounds, timeout_s=cfg.timeout_s, oom_hint=_HINT
    )
    halo = halo_of(cfg, cfg.workers)
    pbytes = sum(v.numel() for v in results[0].params.values()) * itemsize
    model_bytes = graph_parallel_bytes(halo, cfg.layers, cfg.hidden, itemsize, pbytes, cfg.workers)
    return _Launched(results, model_bytes, {"halo": halo, "partition": cfg.partition, "parts": cut.sizes()})


def _launch_hybrid(cfg: GnnpipeConfig, spec: ModelSpec, train: TrainSpec, itemsize: int, n: int) -> _Launched:
    stages = cfg.hybrid_stages
    groups = check_grid(cfg.workers, stages, cfg.layers)
    cut, pdata = cut_of(cfg, groups)
    results = run_workers(
        hybrid_worker, cfg.workers, pdata, spec, train, cut.bounds, stages, timeout_s=cfg.timeout_s, oom_hint=_HINT
    )
    halo = halo_of(cfg, groups)
    pbytes = [c * itemsize for c in stage_param_counts(spec, stages)]
    model_bytes = hybrid_bytes(n, stages, groups, halo, cfg.layers, cfg.hidden, spec.message_width, itemsize, pbytes)
    info = {"stages": stages, "groups": groups, "halo": halo, "partition": cfg.partition, "parts": cut.sizes()}
    return _Launched(results, model_bytes, info)


def _launch_pipeline(
    cfg: GnnpipeConfig, spec: ModelSpec, train: TrainSpec, itemsize: int, n: int, chunks: int
) -> _Launched:
    cut, pdata = cut_of(cfg, chunks)
    pipe = PipeSpec(cut.bounds, cfg.chunk_order, cfg.staleness, 0 if chunks == 1 else cfg.warmup, cfg.stale_gradients)
    results = run_workers(
        pipeline_worker, cfg.workers, pdata, spec, train, pipe, timeout_s=cfg.timeout_s, oom_hint=_HINT
    )
    model_bytes = gnnpipe_bytes(n, cfg.workers, spec.message_width, itemsize)
    return _Launched(results, model_bytes, {"chunks": chunks, "chunk_sizes": cut.sizes()})


def _losses(cfg: GnnpipeConfig, name: str, results: list[WorkerRun]) -> tuple[float, ...]:
    """The training loss per epoch: summed over the ranks that hold a share of it."""
    if name == "graph-parallel":
        holders = results
    elif name == "hybrid":  # the last stage's G ranks each hold their part's share of the loss
        holders = results[-(cfg.workers // cfg.hybrid_stages) :]
    else:
        return tuple(float(x) for x in results[-1].losses)
    return tuple(float(sum(r.losses[e] for r in holders)) for e in range(cfg.epochs))


def _distributed(cfg: GnnpipeConfig, name: str, data: GraphData, spec: ModelSpec, train: TrainSpec) -> tuple:
    """Launch ``name`` on cfg.workers processes; returns (params, snapshots, losses, seconds, bytes each epoch,
    closed-form bytes, info)."""
    itemsize = data.x.element_size()
    if name == "graph-parallel":
        out = _launch_graph_parallel(cfg, spec, train, itemsize)
    elif name == "hybrid":
        out = _launch_hybrid(cfg, spec, train, itemsize, data.n)
    else:
        out = _launch_pipeline(cfg, spec, train, itemsize, data.n, 1 if name == "gnnpipe-k1" else cfg.chunks)
    results = out.results
    params, snaps = _merge(results, spec)
    each = tuple(int(sum(r.sent[e] for r in results)) for e in range(cfg.epochs))
    per_epoch = [max(r.seconds[e] for r in results) for e in range(cfg.epochs)]
    secs = float(np.median(per_epoch[1:] or per_epoch))
    return params, snaps, _losses(cfg, name, results), secs, each, out.model_bytes, out.info


def run_method(cfg: GnnpipeConfig, name: str) -> MethodRun:
    """Train ``name`` (full | graph-parallel | gnnpipe | gnnpipe-k1 | hybrid) for real, memoised by its deciding fields.

    Every run (the in-process full-graph one too) is limited to ``cfg.timeout_s`` seconds. Raises ValueError for
    settings the method cannot run (chunks above the vertex count, workers above the layers) and
    :class:`~workbench.graphs.gnnpipe.full.TrainingTimeout` (a ValueError) when the full-graph run outlives the
    limit; WorkerFailed / WorkerTimeout from the launcher.
    """
    if name not in METHODS:
        raise ValueError(f"method={name!r} is not allowed: valid values are {', '.join(map(repr, METHODS))}")
    key = _key(cfg, name)
    if key in _RUNS:
        return _RUNS[key]
    data = _data(cfg)
    spec, train = model_spec(cfg, data), train_spec(cfg)
    if name == "full":
        with one_thread():
            run = train_full(data, spec, train, timeout_s=cfg.timeout_s)
        params, snaps, losses, secs = run.params, run.snapshots, run.losses, run.seconds_per_epoch
        each, model_bytes, info = tuple(0 for _ in range(cfg.epochs)), 0, {}
    else:
        params, snaps, losses, secs, each, model_bytes, info = _distributed(cfg, name, data, spec, train)
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
    (memoised); ``progress(done, total, name)`` is called before each. Raises ValueError for chunks above the
    vertex count before anything trains."""
    _check_parts(cfg, cfg.chunks, _data(cfg))
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


def hybrid_note(cfg: GnnpipeConfig) -> str | None:
    """What the hybrid of ``cfg`` degenerates to, or None when it mixes both parallelisms (S > 1 and G > 1).

    >>> hybrid_note(GnnpipeConfig(workers=5, layers=16))[:68]
    'workers=5 is prime: the automatic hybrid (stages=0) is 5 stages x 1 '
    """
    stages = cfg.hybrid_stages
    groups = cfg.workers // stages if stages and cfg.workers % stages == 0 else 0
    if stages > 1 and groups > 1:
        return None
    if cfg.workers == 1:
        return "workers=1: the hybrid is one process (1 stage x 1 rank), full-graph training"
    what = "GNNPipe with one chunk (K = 1), no graph parallelism" if groups == 1 else "graph parallelism, no pipeline"
    if cfg.stages == 0:
        return (
            f"workers={cfg.workers} is prime: the automatic hybrid (stages=0) is {stages} stages x {groups} "
            f"graph-parallel rank, i.e. {what}; a prime process count has no grid with both S > 1 and G > 1 "
            f"(choose a composite workers, e.g. {cfg.workers - 1 if cfg.workers > 3 else 4})"
        )
    return f"stages={stages} x {groups} over workers={cfg.workers}: the hybrid is {what}"


# ----------------------------------------------------------------------------------------------- closed forms
def bytes_vs_layers(cfg: GnnpipeConfig, layers: tuple[int, ...] = (2, 4, 8, 16, 32, 64)) -> list[dict[str, Any]]:
    """Closed-form bytes per epoch (= the counted bytes) of graph parallelism, GNNPipe and the hybrid (S x G,
    ``cfg.hybrid_stages``) at depths ``layers`` with the real halos of the config's partition (P-way; G-way for the
    hybrid); rows with L below P (below S) have no GNNPipe (hybrid) value."""
    data = _data(cfg)
    halo = halo_of(cfg, cfg.workers)
    stages = cfg.hybrid_stages
    groups = cfg.workers // stages if cfg.workers % stages == 0 else None
    halo_g = halo_of(cfg, groups) if groups else None
    itemsize = data.x.element_size()
    width = cfg.hidden * (2 if cfg.model == "gcnii" else 1)
    rows = []
    for L in layers:
        pbytes = param_count(cfg.model, L, cfg.hidden, data.features, data.classes) * itemsize
        gp = graph_parallel_bytes(halo, L, cfg.hidden, itemsize, pbytes, cfg.workers)
        pp = gnnpipe_bytes(data.n, cfg.workers, width, itemsize) if L >= cfg.workers else None
        hy = None
        if groups and L >= stages:
            counts = stage_param_counts(dataclasses.replace(model_spec(cfg, data), layers=L), stages)
            hy = hybrid_bytes(
                data.n, stages, groups, halo_g, L, cfg.hidden, width, itemsize, [c * itemsize for c in counts]
            )
        rows.append(
            {"layers": L, "graph-parallel": gp, "gnnpipe": pp, "ratio": (gp / pp) if pp else None, "halo": halo}
            | {"hybrid": hy}
        )
    return rows


@dataclass(frozen=True)
class CrossoverRow:
    """Graph parallelism (the config's partition) / GNNPipe bytes per epoch at P = ``workers`` over depth, and the
    crossover: the smallest L (>= P) at which GNNPipe moves fewer bytes (ratio > 1), None beyond ``max_layers``."""

    dataset: str
    model: str
    workers: int
    halo: int
    layers: tuple[int, ...]
    ratios: tuple[float, ...]
    crossover_layers: int | None


def crossover(
    cfg: GnnpipeConfig,
    workers: tuple[int, ...] = (2, 3, 4, 5, 8),
    layers: tuple[int, ...] = (4, 8, 16, 32, 64, 128),
    max_layers: int = 1024,
) -> list[CrossoverRow]:
    """Where GNNPipe starts to move fewer bytes than graph parallelism on cfg.dataset (cfg.model, cfg.hidden,
    cfg.partition's real halos; closed forms = counted): per P in ``workers``, the ratio at ``layers`` (NaN where
    L < P) and the crossover depth (searched over P..``max_layers``)."""
    data = _data(cfg)
    itemsize, width = data.x.element_size(), cfg.hidden * (2 if cfg.model == "gcnii" else 1)
    out = []
    for P in workers:
        halo = halo_of(cfg, P)

        def ratio(L: int, P: int = P, halo: int = halo) -> float:  # the closed forms of bytes_vs_layers
            pbytes = param_count(cfg.model, L, cfg.hidden, data.features, data.classes) * itemsize
            gp = graph_parallel_bytes(halo, L, cfg.hidden, itemsize, pbytes, P)
            return gp / gnnpipe_bytes(data.n, P, width, itemsize)

        ratios = tuple(ratio(L) if L >= P else float("nan") for L in layers)
        cross = next((L for L in range(max(P, 1), max_layers + 1) if ratio(L) > 1.0), None)
        out.append(CrossoverRow(cfg.dataset, cfg.model, P, halo, tuple(layers), ratios, cross))
    return out


def depth_accuracy(
    cfg: GnnpipeConfig,
    depths: tuple[int, ...] = (2, 4, 8, 16, 32),
    models: tuple[str, ...] = ("gcn", "gcnii"),
    progress: Callable[[int, int, str], None] | None = None,
) -> list[dict[str, Any]]:
    """Final test and validation accuracy of full-graph training (the exact baseline; memoised) per model and
    depth, at the config's width, epochs and seed: ``[{"model", "layers", "test", "val"}]``."""
    rows, total = [], len(models) * len(depths)
    for i, (model, L) in enumerate((m, L) for m in models for L in depths):
        if progress:
            progress(i, total, f"{model} L = {L}")
        run = run_method(dataclasses.replace(cfg, model=model, layers=L, workers=1, stages=0), "full")
        rows.append({"model": model, "layers": L, "test": run.test_accuracy, "val": run.curves["val"][-1]})
    if progress:
        progress(total, total, "done")
    return rows


# ----------------------------------------------------------------------------------------------- paper scale
def locality_factor(cfg: GnnpipeConfig) -> float:
    """Measured METIS halo / random halo of the config's dataset at P = cfg.gpus (clipped to the graph)."""
    parts = min(cfg.gpus, _data(cfg).n)
    metis = halo_of(dataclasses.replace(cfg, partition="metis"), parts)
    rand = halo_of(dataclasses.replace(cfg, partition="random"), parts)
    return metis / rand if rand else 1.0


def paper_scale(
    cfg: GnnpipeConfig, layers: tuple[int, ...] = PAPER_DEPTHS, cluster: ClusterSpec = CLUSTER
) -> list[dict[str, Any]]:
    """MODEL rows: graph-parallel / GNNPipe volume, overhead and time ratios on ``cfg.paper_graph`` with cfg.gpus
    GPUs, for METIS-like (locality measured on cfg.dataset) and random partitions, at depths ``layers`` (by default
    the paper's 16-64; depths below cfg.gpus are left out). Memoised."""
    key = (cfg.paper_graph, cfg.model, cfg.hidden, cfg.gpus, cfg.chunks, cfg.dataset, cfg.data_dir, cfg.seed)
    key += (layers, cluster)
    if key not in _PAPER:
        _PAPER[key] = _paper_scale(cfg, layers, cluster)
    return _PAPER[key]


def _paper_scale(cfg: GnnpipeConfig, layers: tuple[int, ...], cluster: ClusterSpec) -> list[dict[str, Any]]:
    graph = PAPER_GRAPHS[cfg.paper_graph]
    loc = locality_factor(cfg)
    rows = []
    for L in (L for L in layers if L >= cfg.gpus):
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
