"""Headless runner of Redox: ``workbench run redox --mode check --records N --chunk-kb C --resident K --workers P
--json``.

check: generate (or reuse) the dataset, serve one cold epoch with Redox and with every baseline through a real
``DataLoader`` (bytes from ``/proc/self/io``), run the distributed protocol on P gloo processes, and check that
every loader served each record exactly once and that Redox read each chunk once. The storage model (MODEL),
calibrated on this run's cold reads, carries the epoch to the chosen storage kind. generate: write the dataset
only (a progress bar for big ones). pack: pack a folder of files into a dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.dataset import INDEX_NAME, RedoxStore, generate, pack_folder
from workbench.llm.redox.distributed import DistributedRun, run_distributed
from workbench.llm.redox.loaders import LOADERS, LoaderRun, calibration_reads, measure
from workbench.llm.redox.model import LABEL, STORAGE, calibrate, epoch_models
from workbench.registry import Technique
from workbench.results import Result, fmt, fmt_bytes, fmt_seconds

#: above this many bytes, generating shows a progress bar (on stderr)
PROGRESS_BYTES = 256e6


@dataclass(frozen=True, kw_only=True)
class DatasetSummary:
    root: str
    records: int
    chunks: int
    total_bytes: int
    mean_record_bytes: float
    max_record_bytes: int
    chunk_bytes: int
    sizes: str
    layout: str
    reused: bool


@dataclass(frozen=True, kw_only=True)
class ModelLoader:
    name: str
    bytes_read: float
    read_amplification: float
    io_seconds: float
    items_per_s: float


@dataclass(frozen=True, kw_only=True)
class ModelSummary:
    """MODEL: this dataset's epoch on ``storage`` (I/O only, no compute), and the fit to this machine."""

    label: str
    storage: str
    latency_s: float
    bandwidth_bytes_per_s: float
    queue_depth: int
    source: str
    loaders: list[ModelLoader]
    speedup_redox_vs_random_files: float
    this_machine_latency_s: float
    this_machine_bandwidth_bytes_per_s: float
    this_machine_predicted_items_per_s: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class RedoxResult(Result):
    """What ``workbench run redox --json`` prints. Keys of the issue's schema: exactly_once (every loader and the
    P-process run served each record once), chunks_read_once (Redox, local and distributed), loaders (name,
    bytes_read, bytes_served, read_amplification, items_per_s, label_kl, disk_order_spearman, then the tail
    figures, time to first batch, and where bytes_read came from: /proc/self/io or counted)."""

    OMIT_NONE: ClassVar[tuple[str, ...]] = ("distributed", "model")

    technique: str = "redox"
    mode: str
    exactly_once: bool
    chunks_read_once: bool
    loaders: list[LoaderRun]
    reference_label_kl: float | None
    bytes_source: str
    dataset: DatasetSummary
    distributed: DistributedRun | None = None
    model: ModelSummary | None = None
    resident: int
    batch: int
    message: str


def dataset_root(config: RedoxConfig) -> Path:
    """The dataset folder: ``--root``, else a cache folder named after the dataset parameters."""
    if config.root.strip():
        return Path(config.root).expanduser()
    from workbench.data import cache_dir

    name = (
        f"n{config.records}-kb{config.record_kb:g}-{config.sizes}-c{config.chunk_kb:g}-{config.layout}-"
        f"k{config.classes}-s{config.seed}"
    )
    return cache_dir("redox", name)


def _matches(store: RedoxStore, config: RedoxConfig) -> bool:
    m = store.meta
    return (
        m.get("records") == config.records
        and m.get("chunk_bytes") == int(config.chunk_kb * 1024)
        and m.get("sizes") == config.sizes
        and m.get("layout") == config.layout
        and m.get("seed") == config.seed
        and m.get("record_bytes") == float(config.record_kb * 1024)
    )


def ensure_dataset(config: RedoxConfig) -> tuple[RedoxStore, bool]:
    """Open the dataset the config describes, generating it when missing (or, in the cache, different).

    A ``--root`` folder that already holds a dataset is used as it is (whatever its parameters); a damaged one
    is refused with the error naming the file.
    """
    root = dataset_root(config)
    explicit = bool(config.root.strip())
    if (root / INDEX_NAME).is_file():
        store = RedoxStore(root)
        if explicit or _matches(store, config):
            return store, True
    total = config.records * config.record_kb * 1024
    generate(
        root,
        records=config.records,
        record_bytes=config.record_kb * 1024,
        chunk_bytes=int(config.chunk_kb * 1024),
        sizes=config.sizes,
        classes=config.classes,
        layout=config.layout,
        seed=config.seed,
        progress=True if total > PROGRESS_BYTES else None,
    )
    return RedoxStore(root), False


def _summary(store: RedoxStore, reused: bool) -> DatasetSummary:
    return DatasetSummary(
        root=str(store.root),
        records=store.n,
        chunks=store.n_chunks,
        total_bytes=store.total_bytes,
        mean_record_bytes=float(store.length.mean()),
        max_record_bytes=int(store.length.max()),
        chunk_bytes=int(store.meta["chunk_bytes"]),
        sizes=str(store.meta.get("sizes")),
        layout=str(store.meta.get("layout")),
        reused=reused,
    )


def model_summary(store: RedoxStore, config: RedoxConfig, runs: list[LoaderRun]) -> ModelSummary:
    """Calibrate on cold single reads here; carry this dataset to ``config.storage`` (MODEL)."""
    sizes, seconds = calibration_reads(store, seed=config.seed)
    here = calibrate(sizes, seconds)
    storage = here if config.storage == "this-machine" else STORAGE[config.storage]
    common = dict(
        files=store.n,
        total_bytes=store.total_bytes,
        chunk_bytes=int(store.meta["chunk_bytes"]),
        memory_bytes=config.resident * int(store.meta["chunk_bytes"]),
    )
    models = epoch_models(storage=storage, **common)
    local = epoch_models(storage=here, loader_workers=1, prefetch=1, **common)
    return ModelSummary(
        label=LABEL,
        storage=storage.name,
        latency_s=storage.latency_s,
        bandwidth_bytes_per_s=storage.bandwidth,
        queue_depth=storage.queue_depth,
        source=storage.source,
        loaders=[
            ModelLoader(
                name=m.name,
                bytes_read=m.bytes_read,
                read_amplification=m.read_amplification,
                io_seconds=m.io_seconds,
                items_per_s=m.items_per_s,
            )
            for m in models.values()
        ],
        speedup_redox_vs_random_files=models["random-files"].io_seconds / models["redox"].io_seconds,
        this_machine_latency_s=here.latency_s,
        this_machine_bandwidth_bytes_per_s=here.bandwidth,
        this_machine_predicted_items_per_s={n: local[n].items_per_s for n in ("redox", "random-files")},
    )


def run(config: RedoxConfig, *, progress=None) -> RedoxResult:
    """Run ``config.mode`` (module docstring). ``progress(done, total, what)`` is called per loader (panels).

    Raises ValueError (bad parameters, a dataset that disagrees with its index), FileNotFoundError (missing
    files), TruncatedFileError (a cut-short file), WorkerFailed/WorkerTimeout (a killed or stuck process).
    """
    if config.mode == "pack":
        root = dataset_root(config)
        pack_folder(config.source, root, chunk_bytes=int(config.chunk_kb * 1024))
        store, reused = RedoxStore(root), False
    else:
        store, reused = ensure_dataset(config)
    summary = _summary(store, reused)
    if config.mode != "check":
        return RedoxResult(
            mode=config.mode,
            exactly_once=True,
            chunks_read_once=True,
            loaders=[],
            reference_label_kl=None,
            bytes_source="-",
            dataset=summary,
            resident=config.resident,
            batch=config.batch,
            message=f"wrote {store.n} records in {store.n_chunks} chunks ({fmt_bytes(store.total_bytes)}) to {store.root}",
        )
    runs = []
    steps = len(LOADERS) + 2
    for k, name in enumerate(LOADERS):
        if progress is not None:
            progress(k, steps, name)
        runs.append(
            measure(store, name, resident=config.resident, batch=config.batch, seed=config.seed, cold=config.cold)[0]
        )
    if progress is not None:
        progress(len(LOADERS), steps, f"{config.workers} processes")
    dist, _ = run_distributed(
        store.root,
        processes=config.workers,
        resident=config.resident,
        batch=config.batch,
        seed=config.seed,
        cold=config.cold,
        timeout_s=config.timeout_s,
    )
    if progress is not None:
        progress(len(LOADERS) + 1, steps, "model")
    model = model_summary(store, config, runs)
    if progress is not None:
        progress(steps, steps, "done")
    redox = runs[0]
    exactly = all(r.exactly_once for r in runs) and dist.exactly_once
    once = redox.max_chunk_reads == 1 and dist.chunks_read_once
    sources = {r.bytes_source for r in runs} | {dist.bytes_source}
    return RedoxResult(
        mode="check",
        exactly_once=exactly,
        chunks_read_once=once,
        loaders=runs,
        reference_label_kl=next(r.label_kl for r in runs if r.name == "random-files"),
        bytes_source=sources.pop() if len(sources) == 1 else "mixed",
        dataset=summary,
        distributed=dist,
        model=model,
        resident=config.resident,
        batch=config.batch,
        message=(
            "every record served exactly once by every loader and by the P-process protocol; Redox read each chunk once"
            if exactly and once
            else "INVARIANT BROKEN: see exactly_once / chunks_read_once"
        ),
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    d = result["dataset"]
    lines = [
        f"redox  {result['mode']}: {d['records']} records ({d['sizes']}, mean {fmt_bytes(d['mean_record_bytes'])}, "
        f"max {fmt_bytes(d['max_record_bytes'])}) in {d['chunks']} chunks of <= {fmt_bytes(d['chunk_bytes'])} "
        f"({fmt_bytes(d['total_bytes'])}) at {d['root']}",
        f"  {result['message']}",
    ]
    if result["loaders"]:
        lines.append(
            f"  K={result['resident']} resident chunks, batch {result['batch']}; bytes from {result['bytes_source']}"
        )
        lines.append(
            f"  {'loader':<18} {'read':>9} {'ampl.':>6} {'items/s':>9} {'1st batch':>9} {'KL':>6} "
            f"{'KL tail':>7} {'rho disk':>8}"
        )
        for r in result["loaders"]:
            lines.append(
                f"  {r['name']:<18} {fmt_bytes(r['bytes_read']):>9} {r['read_amplification']:>6.2f} "
                f"{fmt(r['items_per_s'], 3):>9} {fmt_seconds(r['time_to_first_batch_s']):>9} {r['label_kl']:>6.3f} "
                f"{r['label_kl_tail']:>7.3f} {r['disk_order_spearman']:>8.3f}"
            )
    dist = result.get("distributed")
    if dist:
        lines.append(
            f"  distributed: {dist['processes']} processes, {dist['steps']} steps, exactly once "
            f"{str(dist['exactly_once']).lower()}, chunks once {str(dist['chunks_read_once']).lower()}, "
            f"{dist['remote_records']} records served remotely ({fmt_bytes(dist['comm_bytes'])} over gloo)"
        )
    model = result.get("model")
    if model:
        lines.append(
            f"  MODEL on {model['storage']}: Redox I/O {model['speedup_redox_vs_random_files']:.2f}x faster than "
            f"random file reads (this machine fitted: {fmt_seconds(model['this_machine_latency_s'])} + "
            f"{fmt_bytes(model['this_machine_bandwidth_bytes_per_s'])}/s)"
        )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="redox",
    config=RedoxConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.redox:RedoxPanel",
    notebook="notebooks/llm/redox.ipynb",
    smoke={"records": 240, "record_kb": 4.0, "chunk_kb": 48.0, "resident": 2, "workers": 2, "batch": 16},
    processes=True,
)
