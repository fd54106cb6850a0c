"""Views and sweeps of Redox: what the panel draws and the notebook shows (its claims: ``claims.py``).

Live views are computed from the served orders alone (the same functions the loaders run, over the chunk table
the generator would write: nothing on disk), so they redraw in well under 100 ms; the measured run (real files,
cold reads, P processes) is :func:`measured`, behind the panel's button. The model (MODEL) is
:mod:`workbench.llm.redox.model`. Every memo of this technique lives here; :func:`clear_caches` empties them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.llm.redox import experiment
from workbench.llm.redox import model as M
from workbench.llm.redox.baselines import block_shuffle_order, ffcv_quasi_random_order, random_sampler_order
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.dataset import make_labels, pack_chunks
from workbench.llm.redox.distributed import schedule
from workbench.llm.redox.learning import Curve, train
from workbench.llm.redox.randomness import Randomness, batch_label_kl, randomness
from workbench.llm.redox.redox import epoch_seed, first_request_order, partition_chunks, plan_local, request_stream
from workbench.llm.redox.sizes import record_sizes

ORDER_NAMES = ("redox", "random-sampler", "block-shuffle", "ffcv-quasi-random")


@dataclass(frozen=True)
class OrderView:
    """The live view: sizes, chunks and every loader's order for one epoch, with their randomness."""

    sizes: np.ndarray
    chunk_of: np.ndarray
    labels: np.ndarray
    orders: dict[str, np.ndarray]
    randomness: dict[str, Randomness]
    batch_kl: dict[str, np.ndarray]
    redirected_share: float
    chunk_bytes: int
    owned: list[int]
    remote: list[int]
    steps: int


def _config_key(values: dict) -> tuple:
    names = {s.name for s in RedoxConfig.specs()}
    c = RedoxConfig.from_dict({k: v for k, v in values.items() if k in names})
    return (c.records, c.record_kb, c.sizes, c.chunk_kb, c.resident, c.workers, c.batch, c.classes, c.layout, c.seed)


@functools.lru_cache(maxsize=64)
def _order_view(records, record_kb, sizes, chunk_kb, resident, workers, batch, classes, layout, seed) -> OrderView:
    lengths = record_sizes(records, record_kb * 1024, sizes, seed=seed)
    chunk_bytes = int(chunk_kb * 1024)
    chunk_of = pack_chunks(lengths, chunk_bytes)
    labels = make_labels(records, classes, layout, seed)
    chunk_records = [np.flatnonzero(chunk_of == c) for c in range(int(chunk_of.max()) + 1)]
    requests = request_stream(records, seed, 0)
    plan = plan_local(requests, chunk_of, resident, epoch_seed(seed, 0) ^ 0x5EED)
    orders = {
        "redox": plan.order,
        "random-sampler": random_sampler_order(records, seed),
        "block-shuffle": block_shuffle_order(chunk_of, resident, epoch_seed(seed, 0)),
        "ffcv-quasi-random": ffcv_quasi_random_order(chunk_records, 2 * batch, epoch_seed(seed, 0)),
    }
    parts = partition_chunks(first_request_order(requests, chunk_of), workers)
    owned = [int(sum(len(chunk_records[c]) for c in p)) for p in parts]
    steps = schedule(owned, batch)
    remote = [sum(s.give[d][r] for s in steps for d in range(workers)) for r in range(workers)]
    return OrderView(
        sizes=lengths,
        chunk_of=chunk_of,
        labels=labels,
        orders=orders,
        randomness={k: randomness(o, labels, classes, batch, chunk_of=chunk_of) for k, o in orders.items()},
        batch_kl={k: batch_label_kl(o, labels, classes, batch) for k, o in orders.items()},
        redirected_share=float(plan.redirected.mean()),
        chunk_bytes=chunk_bytes,
        owned=owned,
        remote=remote,
        steps=len(steps),
    )


def order_view(values: dict) -> OrderView:
    """The live view of ``values`` (the panel's controls; validated through :class:`RedoxConfig`)."""
    return _order_view(*_config_key(values))


@dataclass(frozen=True)
class ModelView:
    """MODEL: end-to-end speed-up of Redox over the PyTorch DataLoader and over block shuffle vs GPUs, per paper
    dataset (each an array over ``gpus``)."""

    storage: str
    gpus: np.ndarray
    speedup: dict[str, np.ndarray]
    speedup_vs_block_shuffle: dict[str, np.ndarray]
    io_bound_gpus: dict[str, float]  # GPUs from which the PyTorch loader, not compute, sets the pace


GPUS = np.array([1, 2, 4, 8, 16, 32, 64, 128])


@functools.lru_cache(maxsize=64)
def model_view(storage: str, chunk_kb: float, memory_fraction: float = 0.25) -> ModelView:
    dev = M.STORAGE.get(storage) or calibrated_storage()
    speed, block, bound = {}, {}, {}
    for name, prof in M.DATASETS.items():
        models = [
            M.paper_scale(
                dev, prof, gpus=int(g), chunk_bytes=max(chunk_kb * 1024, 64e6), memory_fraction=memory_fraction
            )
            for g in GPUS
        ]
        speed[name] = np.array([M.speedup(m) for m in models])
        block[name] = np.array([M.speedup(m, baseline="block-shuffle") for m in models])
        io = M.paper_scale(dev, prof, gpus=1)["random-files"].io_seconds
        bound[name] = float(io / (prof.files / prof.items_per_s_per_gpu))
    return ModelView(storage, GPUS, speed, block, bound)


@functools.lru_cache(maxsize=1)
def calibrated_storage() -> M.Storage:
    """This machine's storage fitted to cold reads of a small generated dataset (cached folder)."""
    from workbench.llm.redox.loaders import calibration_reads

    store, _ = experiment.ensure_dataset(RedoxConfig(records=400, record_kb=16, chunk_kb=512))
    sizes, seconds = calibration_reads(store)
    return M.calibrate(sizes, seconds)


def paper_scale_table(storages=("hdd", "sata-ssd", "nvme-ssd", "network-fs"), gpus: int = 8) -> list[dict]:
    """MODEL at each paper dataset and storage kind: epoch seconds and the end-to-end speed-up."""
    rows = []
    for st in storages:
        dev = M.STORAGE[st] if st in M.STORAGE else calibrated_storage()
        for name, prof in M.DATASETS.items():
            m = M.paper_scale(dev, prof, gpus=gpus)
            rows.append(
                dict(
                    storage=st,
                    dataset=name,
                    gpus=gpus,
                    pytorch_epoch_s=m["random-files"].epoch_seconds,
                    redox_epoch_s=m["redox"].epoch_seconds,
                    block_shuffle_epoch_s=m["block-shuffle"].epoch_seconds,
                    speedup=M.speedup(m),
                    speedup_vs_block_shuffle=M.speedup(m, baseline="block-shuffle"),
                    label=M.LABEL,
                )
            )
    return rows


# ---- measured (behind the panel's button) ---------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _measured(config: RedoxConfig) -> experiment.RedoxResult:
    return experiment.execute(config, _PROGRESS[0])


_PROGRESS: list[Callable | None] = [None]


def measured(config: RedoxConfig, progress: Callable | None = None) -> experiment.RedoxResult:
    """The real check run of ``config`` (memoised; what ``workbench run redox`` runs): cold reads, every loader,
    P processes."""
    _PROGRESS[0] = progress
    try:
        return _measured(config)
    finally:
        _PROGRESS[0] = None


# ---- learning ---------------------------------------------------------------------------------------------------
LEARNING_RUNS = (
    ("full-shuffle", 1),
    ("redox", 1),
    ("redox", 4),
    ("redox", 16),
    ("block-shuffle", 1),
    ("block-shuffle", 4),
)


@functools.lru_cache(maxsize=16)
def learning_curves(
    layout: str = "shipped", seeds: int = 3, epochs: int = 8, runs: tuple = LEARNING_RUNS
) -> dict[tuple[str, int], list[Curve]]:
    """Test-accuracy curves of the digits MLP per (order, K) over ``seeds`` seeds."""
    return {
        (kind, k): [train(kind, resident=k, seed=s, epochs=epochs, layout=layout) for s in range(seeds)]
        for kind, k in runs
    }


def learning_summary(curves: dict) -> list[dict]:
    out = []
    for (kind, k), cs in curves.items():
        final = np.array([c.accuracy[-1] for c in cs])
        out.append(
            dict(order=kind, resident=k, final_mean=float(final.mean()), final_std=float(final.std()), seeds=len(cs))
        )
    return out


def clear_caches() -> None:
    """Empty every memo of this technique."""
    for f in (_order_view, model_view, calibrated_storage, _measured, learning_curves):
        f.cache_clear()


#: the loaders a comparison table shows, the fair baseline first after Redox
COMPARED = ("redox", "block-shuffle", "random-files", "random-files-workers")


def comparison(result: dict) -> list[dict]:
    """Redox beside block shuffle and the PyTorch DataLoader from one measured check (``measured(...).to_json()``):
    read amplification, records/s, time to first batch (s), per-batch label KL and each ratio Redox / loader."""
    runs = {r["name"]: r for r in result["loaders"]}
    redox = runs["redox"]
    return [
        dict(
            loader=name,
            read_amplification=runs[name]["read_amplification"],
            items_per_s=runs[name]["items_per_s"],
            first_batch_s=runs[name]["time_to_first_batch_s"],
            label_kl=runs[name]["label_kl"],
            redox_over_loader_items_per_s=redox["items_per_s"] / runs[name]["items_per_s"],
            bytes_source=runs[name]["bytes_source"],
        )
        for name in COMPARED
        if name in runs
    ]


def randomness_by_layout(values: dict, layouts: tuple[str, ...] = ("shuffled", "class-sorted")) -> list[dict]:
    """Per-batch label KL (whole epoch, last 10 %) of Redox, block shuffle and RandomSampler at ``values``' K, with
    labels shuffled on disk and sorted by class on disk."""
    rows = []
    for layout in layouts:
        view = order_view({**values, "layout": layout})
        for name in ("redox", "block-shuffle", "random-sampler"):
            r = view.randomness[name]
            rows.append(dict(layout=layout, order=name, label_kl=r.label_kl, label_kl_tail=r.label_kl_tail))
    return rows


def randomness_sweep(values: dict, resident_values=(1, 4, 16, 64, 1024)) -> list[dict]:
    """Randomness of Redox at each K beside RandomSampler and the block shuffle (live view per K)."""
    rows = []
    for k in resident_values:
        view = order_view({**values, "resident": k})
        for name in ("redox", "block-shuffle", "ffcv-quasi-random", "random-sampler"):
            r = view.randomness[name]
            rows.append(
                dict(
                    resident=k,
                    order=name,
                    label_kl=r.label_kl,
                    label_kl_tail=r.label_kl_tail,
                    spearman=r.disk_order_spearman,
                    spearman_tail=r.disk_order_spearman_tail,
                    chunkmate_spread=r.chunkmate_spread,
                    redirected=view.redirected_share if name == "redox" else None,
                )
            )
    return rows


def markdown_table(rows: list[dict], columns: list[str] | None = None, digits: int = 4) -> str:
    """Rows of dicts as a Markdown table (numbers with ``digits`` significant digits)."""
    if not rows:
        return ""
    columns = columns or list(rows[0])

    def cell(v) -> str:
        if v is None:
            return "-"
        if isinstance(v, (bool, np.bool_)):
            return str(bool(v)).lower()
        if isinstance(v, (int, np.integer)):
            return f"{int(v):,}"
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.{digits}g}"
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)
