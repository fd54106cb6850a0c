"""The orchestration of Redox's real runs, shared by the runner (``workbench run redox``) and the study (panels,
notebook): where the dataset lives and when it may be written, one checked cold epoch of every loader plus the
P-process protocol, and the storage MODEL fitted to this machine.

Data safety: a dataset is written only into a folder this code creates (a new ``--root``, or the cache folder
named after the dataset parameters), or into an existing ``--root`` when ``generate=True`` says so. An existing
``--root`` without a dataset index (an empty folder included) is refused with one line naming ``--root``, and
nothing in it is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.dataset import FORMAT_VERSION, INDEX_NAME, RedoxStore, generate, pack_folder
from workbench.llm.redox.distributed import DistributedRun, run_distributed
from workbench.llm.redox.loaders import LOADERS, LoaderRun, calibration_reads, measure
from workbench.llm.redox.model import LABEL, STORAGE, calibrate, epoch_models
from workbench.results import Result, fmt_bytes

#: above this many bytes, generating shows a progress bar (on stderr)
PROGRESS_BYTES = 256e6

Progress = Callable[[int, int, str], None]


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
    speedup_redox_vs_block_shuffle: float
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


# ---- where the dataset lives, and when it may be written ------------------------------------------------------
def dataset_root(config: RedoxConfig) -> Path:
    """The dataset folder: ``--root``, else a cache folder named after the dataset parameters (and the index
    format, so a cache of an older format is never opened)."""
    if config.root.strip():
        return Path(config.root).expanduser()
    from workbench.data import cache_dir

    name = (
        f"v{FORMAT_VERSION}-n{config.records}-kb{config.record_kb:g}-{config.sizes}-c{config.chunk_kb:g}-"
        f"{config.layout}-k{config.classes}-s{config.seed}"
    )
    return cache_dir("redox", name)


def matches(store: RedoxStore, config: RedoxConfig) -> bool:
    """Whether the dataset in ``store`` is the one ``config`` describes (records, sizes, chunks, layout, seed)."""
    m = store.meta
    return (
        m.get("records") == config.records
        and m.get("chunk_bytes") == int(config.chunk_kb * 1024)
        and m.get("sizes") == config.sizes
        and m.get("layout") == config.layout
        and m.get("seed") == config.seed
        and m.get("record_bytes") == float(config.record_kb * 1024)
    )


def claim_root(config: RedoxConfig) -> Path:
    """The folder to write a dataset into, created here unless the user allowed an existing one (``generate``).

    Raises ValueError (one line naming ``--root``) for an existing ``--root`` without ``--generate``: a folder
    this command did not create is never written to, so nothing in it can be overwritten.
    """
    root = dataset_root(config)
    if root.exists() and not root.is_dir():
        raise ValueError(f"root={str(root)!r} is not a folder: give --root a folder (a new one is created)")
    if not config.root.strip() or config.generate:
        root.mkdir(parents=True, exist_ok=True)
        return root
    try:
        root.mkdir(parents=True)  # fails if it exists: the only folder we write into unasked is one we create
    except FileExistsError:
        what = "holds a dataset" if (root / INDEX_NAME).is_file() else f"holds no dataset index ({INDEX_NAME})"
        raise ValueError(
            f"root={str(root)!r} already exists and {what}: refusing to write a dataset into a folder this command "
            f"did not create; give --root a new folder (it is created) or add --generate to write into {root} "
            "(overwriting its records/, chunks/ and index)"
        ) from None
    return root


def write_dataset(config: RedoxConfig) -> RedoxStore:
    """Generate (or, in pack mode, pack) the dataset ``config`` describes into :func:`claim_root`'s folder."""
    root = claim_root(config)
    chunk_bytes = int(config.chunk_kb * 1024)
    if config.mode == "pack":
        pack_folder(config.source, root, chunk_bytes=chunk_bytes)
        return RedoxStore(root)
    total = config.records * config.record_kb * 1024
    generate(
        root,
        records=config.records,
        record_bytes=config.record_kb * 1024,
        chunk_bytes=chunk_bytes,
        sizes=config.sizes,
        classes=config.classes,
        layout=config.layout,
        seed=config.seed,
        progress=True if total > PROGRESS_BYTES else None,
    )
    return RedoxStore(root)


def ensure_dataset(config: RedoxConfig) -> tuple[RedoxStore, bool]:
    """Open the dataset the config describes (returns it and whether it was reused), writing it only where
    :func:`claim_root` allows: check mode reads a ``--root`` that holds a dataset as it is (whatever its
    parameters; a damaged one is refused naming the file) and the cache folder when it matches; generate and
    pack modes always write.

    Raises ValueError (an existing ``--root`` with no dataset, or generate/pack into an existing ``--root``,
    without ``--generate``), or as :class:`RedoxStore` and :func:`generate`.
    """
    root = dataset_root(config)
    explicit = bool(config.root.strip())
    if config.mode == "check" and not config.generate and (root / INDEX_NAME).is_file():
        store = RedoxStore(root)
        if explicit or matches(store, config):
            return store, True
    return write_dataset(config), False


def summary(store: RedoxStore, reused: bool) -> DatasetSummary:
    """What the result says about the dataset."""
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


# ---- the storage MODEL -------------------------------------------------------------------------------------------
def model_summary(store: RedoxStore, config: RedoxConfig) -> ModelSummary:
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
        speedup_redox_vs_block_shuffle=models["block-shuffle"].io_seconds / models["redox"].io_seconds,
        this_machine_latency_s=here.latency_s,
        this_machine_bandwidth_bytes_per_s=here.bandwidth,
        this_machine_predicted_items_per_s={
            n: local[n].items_per_s for n in ("redox", "block-shuffle", "random-files")
        },
    )


# ---- one run ---------------------------------------------------------------------------------------------------
def _written(config: RedoxConfig, store: RedoxStore, reused: bool) -> RedoxResult:
    return RedoxResult(
        mode=config.mode,
        exactly_once=True,
        chunks_read_once=True,
        loaders=[],
        reference_label_kl=None,
        bytes_source="-",
        dataset=summary(store, reused),
        resident=config.resident,
        batch=config.batch,
        message=f"wrote {store.n} records in {store.n_chunks} chunks ({fmt_bytes(store.total_bytes)}) to {store.root}",
    )


def measure_loaders(store: RedoxStore, config: RedoxConfig, progress: Progress | None = None) -> list[LoaderRun]:
    """One cold epoch of every loader of :data:`~workbench.llm.redox.loaders.LOADERS`, in that order."""
    runs = []
    for k, name in enumerate(LOADERS):
        if progress is not None:
            progress(k, len(LOADERS) + 2, name)
        run, _ = measure(
            store, name, resident=config.resident, batch=config.batch, seed=config.seed, cold=config.cold,
            timeout_s=config.timeout_s,
        )  # fmt: skip
        runs.append(run)
    return runs


def check(store: RedoxStore, config: RedoxConfig, reused: bool, progress: Progress | None = None) -> RedoxResult:
    """The check: every loader, the P-process protocol and the MODEL on ``store``; the invariants checked."""
    steps = len(LOADERS) + 2
    runs = measure_loaders(store, config, progress)
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
    model = model_summary(store, config)
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
        dataset=summary(store, reused),
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


def execute(config: RedoxConfig, progress: Progress | None = None) -> RedoxResult:
    """Run ``config.mode``: check (open or write the dataset, then :func:`check`), generate or pack (write it).
    ``progress(done, total, what)`` is called per loader (panels).

    Raises ValueError (bad parameters, a ``--root`` that may not be written, a dataset that disagrees with its
    index), FileNotFoundError (missing files), TruncatedFileError (a cut-short or damaged file),
    WorkerFailed/WorkerTimeout (a killed or stuck process).
    """
    store, reused = ensure_dataset(config)
    if config.mode != "check":
        return _written(config, store, reused)
    return check(store, config, reused, progress)
