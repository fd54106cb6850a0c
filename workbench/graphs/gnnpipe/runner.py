"""Headless runner of GNNPipe.

``workbench run gnnpipe --mode check --dataset cora --layers 16 --workers 4 --chunks 4 --epochs 100 --json``
trains the deep GNN five ways for real: full-graph in this process, graph-parallel on P gloo processes (METIS or
random parts, counted halo exchange), GNNPipe on P pipeline stages with K chunks, GNNPipe with K = 1, and the
hybrid (``--stages S``: S pipeline stages x P/S graph-parallel ranks, K = 1; 0 picks S), and
prints per method the test accuracy, the counted bytes per epoch, the closed-form bytes, and seconds per epoch,
plus the K = 1 exactness figure (max |parameter difference| against full-graph training).

``--mode model`` prints the paper-scale projection (MODEL) on ogbn-products or ogbn-papers100M.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.graphs.gnnpipe.claims import PAPER_FIGURES
from workbench.graphs.gnnpipe.config import GnnpipeConfig
from workbench.graphs.gnnpipe.experiment import bytes_vs_layers, check, crossover, dataset, hybrid_note, paper_scale
from workbench.graphs.gnnpipe.model import MODEL_LABEL, PAPER_GRAPHS
from workbench.registry import Technique
from workbench.results import Result, fmt, fmt_bytes

__all__ = ["MethodRow", "GnnpipeResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class MethodRow(Result):
    """One method of a check: test accuracy, bytes per epoch (counted, all ranks), the closed form, seconds."""

    name: str
    test_accuracy: float
    bytes_per_epoch: int
    model_bytes_per_epoch: int
    seconds_per_epoch: float
    bytes_match_model: bool


@dataclass(frozen=True, kw_only=True)
class GnnpipeResult(Result):
    """What ``workbench run gnnpipe --json`` prints. check: methods, k1_max_abs_param_diff and the setting,
    ``hybrid_note`` (what the hybrid degenerates to, e.g. K = 1 GNNPipe for a prime P; absent for a real S x G grid)
    and ``bytes_crossover_layers`` (the smallest L at which GNNPipe moves fewer bytes than graph parallelism at
    this P, dataset and partition; None up to 1024); model: the paper-scale rows (``label`` says MODEL)."""

    OMIT_NONE: ClassVar[tuple[str, ...]] = (
        "methods",
        "k1_max_abs_param_diff",
        "graph_parallel_max_abs_param_diff",
        "bytes_vs_layers",
        "feature_note",
        "paper_scale",
        "label",
        "paper_claims",
        "hybrid_stages",
        "hybrid_max_abs_param_diff",
        "hybrid_note",
        "bytes_crossover_layers",
    )

    technique: str = "gnnpipe"
    mode: str
    dataset: str
    model: str
    layers: int
    hidden: int
    workers: int
    chunks: int
    epochs: int
    methods: tuple[MethodRow, ...] | None = None
    k1_max_abs_param_diff: float | None = None
    graph_parallel_max_abs_param_diff: float | None = None
    bytes_vs_layers: tuple[dict, ...] | None = None
    feature_note: str | None = None
    label: str | None = None
    paper_scale: tuple[dict, ...] | None = None
    paper_claims: dict | None = None
    hybrid_stages: int | None = None
    hybrid_max_abs_param_diff: float | None = None
    hybrid_note: str | None = None
    bytes_crossover_layers: int | None = None


def run(config: GnnpipeConfig) -> GnnpipeResult:
    """Run the check (real processes) or the paper-scale model.

    Raises ValueError for bad combinations (chunks above the vertex count, workers above the layers, stages not
    dividing workers or above the layers), a corrupt
    dataset file (named); FileNotFoundError for a missing dataset; WorkerFailed / WorkerTimeout from workers.
    """
    common = dict(
        mode=config.mode,
        dataset=config.dataset,
        model=config.model,
        layers=config.layers,
        hidden=config.hidden,
        workers=config.workers,
        chunks=config.chunks,
        epochs=config.epochs,
    )
    if config.mode == "model":
        rows = paper_scale(config)
        return GnnpipeResult(
            **common,
            label=MODEL_LABEL,
            paper_scale=tuple(rows),
            paper_claims={v: _paper_numbers(v) for v in PAPER_FIGURES}
            | {"graph": vars(PAPER_GRAPHS[config.paper_graph])},
        )
    outcome = check(config)
    order = ("full", "graph-parallel", "gnnpipe", "hybrid")
    methods = tuple(
        MethodRow(
            name=name,
            test_accuracy=r.test_accuracy,
            bytes_per_epoch=r.bytes_per_epoch,
            model_bytes_per_epoch=r.model_bytes_per_epoch,
            seconds_per_epoch=r.seconds_per_epoch,
            bytes_match_model=r.bytes_match_model,
        )
        for name, r in ((n, outcome.runs[n]) for n in order)
    )
    return GnnpipeResult(
        **common,
        methods=methods,
        k1_max_abs_param_diff=outcome.k1_max_abs_param_diff,
        graph_parallel_max_abs_param_diff=outcome.graph_parallel_max_abs_param_diff,
        bytes_vs_layers=tuple(bytes_vs_layers(config)),
        feature_note=dataset(config.dataset, config.dtype, config.data_dir, config.seed).feature_note,
        hybrid_stages=config.hybrid_stages,
        hybrid_max_abs_param_diff=outcome.hybrid_max_abs_param_diff,
        hybrid_note=hybrid_note(config),
        bytes_crossover_layers=crossover(config, (config.workers,), ())[0].crossover_layers,
    )


_NAMES = {"time": "time_speedup", "volume": "volume_reduction", "overhead": "overhead_reduction"}


def _paper_numbers(version: str) -> dict[str, float]:
    """The abstract's numbers of ``version`` (the claims' :data:`PAPER_FIGURES`), keyed as in the JSON."""
    return {
        f"{_NAMES[m]}_{stat}": PAPER_FIGURES[version][m][i]
        for m in PAPER_FIGURES[version]
        for i, stat in enumerate(("max", "avg"))
    }


def format_table(result: dict[str, Any]) -> str:
    """A short text report of a check or a model run."""
    head = (
        f"gnnpipe  {result['mode']}  {result['dataset']}  {result['model']} L={result['layers']} "
        f"d={result['hidden']}  P={result['workers']} K={result['chunks']}  epochs={result['epochs']}"
    )
    lines = [head]
    if result["mode"] == "model":
        lines.append(f"  {result['label']}")
        lines.append(
            f"  {'L':>4} {'partition':>10} {'GP bytes':>10} {'pipe bytes':>10} {'volume':>8} {'overhead':>9} "
            f"{'time':>6}"
        )
        for r in result["paper_scale"]:
            lines.append(
                f"  {r['layers']:>4} {r['partition']:>10} {fmt_bytes(r['gp_bytes']):>10} "
                f"{fmt_bytes(r['gnnpipe_bytes']):>10} {r['volume_ratio']:>7.2f}x {r['overhead_ratio']:>8.2f}x "
                f"{r['time_ratio']:>5.2f}x"
            )
        v2 = result["paper_claims"]["v2"]
        lines.append(
            f"  paper (v2): time up to {v2['time_speedup_max']}x, volume up to {v2['volume_reduction_max']}x, "
            f"overhead up to {v2['overhead_reduction_max']}x"
        )
        return "\n".join(lines)
    lines.append(f"  {'method':<15} {'test acc':>8} {'bytes/epoch':>12} {'model':>12} {'= model':>7} {'s/epoch':>8}")
    for m in result["methods"]:
        lines.append(
            f"  {m['name']:<15} {m['test_accuracy']:>8.3f} {fmt_bytes(m['bytes_per_epoch']):>12} "
            f"{fmt_bytes(m['model_bytes_per_epoch']):>12} {str(m['bytes_match_model']):>7} "
            f"{m['seconds_per_epoch']:>8.3f}"
        )
    lines.append(
        f"  K=1 max |param - full| = {fmt(result['k1_max_abs_param_diff'])}; graph parallel "
        f"{fmt(result['graph_parallel_max_abs_param_diff'])}; hybrid ({result['hybrid_stages']} stages x "
        f"{result['workers'] // result['hybrid_stages']}) {fmt(result['hybrid_max_abs_param_diff'])}"
    )
    if result.get("hybrid_note"):
        lines.append(f"  hybrid: {result['hybrid_note']}")
    cross = result.get("bytes_crossover_layers")
    lines.append(
        f"  bytes: GNNPipe moves fewer than graph parallelism over P = {result['workers']} parts from "
        + (f"L = {cross} on" if cross else "no L up to 1024 on")
        + f" {result['dataset']}"
    )
    lines.append(f"  features: {result['feature_note']}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="gnnpipe",
    config=GnnpipeConfig,
    run=run,
    format_table=format_table,
    panel="widgets.graphs.gnnpipe:GnnpipePanel",
    notebook="notebooks/graphs/gnnpipe.ipynb",
    smoke={"layers": 4, "hidden": 8, "workers": 2, "chunks": 2, "epochs": 3, "eval_every": 3},
    processes=True,
)
