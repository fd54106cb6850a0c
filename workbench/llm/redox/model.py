"""MODEL: a storage model that carries the measured loaders to the paper's datasets and machines.

A device is (latency L, bandwidth W, queue depth Q). A read of s bytes takes ``L + s / W``; with q requests in
flight (q = min(loader concurrency, Q)) a stream of n reads of s bytes takes

    T = max(n (L + s / W) / q,  n s / W)

(latency-bound when requests are small or few are in flight, bandwidth-bound otherwise). A loader is n reads of
s bytes: one per record for the random file reader (rounded up to 4 KiB pages), one per chunk for Redox and the
block shuffle (amplification 1), one per readahead block for the random reader over packed files (hit ratio of
the page cache ~ memory / dataset). An epoch overlaps I/O with compute: ``epoch = max(T_io, N / compute_rate)``;
the end-to-end speed-up of Redox over the PyTorch DataLoader is the ratio of the two epochs.

Sources. The paper (arXiv 2505.16280 v2): "up to 4.57x" end-to-end over PyTorch (abstract, v1 and v2);
ImageNet-21k "spans 1.1TB" (v2 section 1); datasets LibriSpeech, ImageNet-1k, ImageNet-21k (third-party summary).
Its machines, memory sizes and storage are NOT readable (only the abstract and first paragraph are): the storage
kinds below are typical datasheet values (INFERRED), the dataset file counts public facts (INFERRED), the
compute rates assumptions (INFERRED, e.g. ResNet-50 training at about 2,600 images/s per A100 in mixed
precision). "this-machine" is fitted to this run's cold reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

PAGE = 4096
LABEL = "MODEL"


@dataclass(frozen=True)
class Storage:
    """latency_s: per-request latency; bandwidth: bytes/s; queue_depth: requests the device serves at once."""

    name: str
    latency_s: float
    bandwidth: float
    queue_depth: int
    source: str


#: storage kinds (INFERRED typical values, not from the paper)
STORAGE = {
    "hdd": Storage("hdd", 8.5e-3, 180e6, 1, "7200 rpm datasheet class: ~8.5 ms seek+rotation, 180 MB/s (inferred)"),
    "sata-ssd": Storage("sata-ssd", 1.0e-4, 550e6, 32, "SATA 6 Gb/s SSD class: ~100 us, 550 MB/s, NCQ 32 (inferred)"),
    "nvme-ssd": Storage("nvme-ssd", 8.0e-5, 3.5e9, 64, "PCIe 3 x4 NVMe class: ~80 us, 3.5 GB/s (inferred)"),
    "network-fs": Storage("network-fs", 1.0e-3, 1.25e9, 16, "NFS over 10 GbE class: ~1 ms per request (inferred)"),
}


@dataclass(frozen=True)
class DatasetProfile:
    name: str
    files: float
    total_bytes: float
    items_per_s_per_gpu: float
    source: str

    @property
    def mean_bytes(self) -> float:
        return self.total_bytes / self.files


#: the paper's datasets (sizes: public facts except ImageNet-21k's 1.1 TB, which the paper states; INFERRED)
DATASETS = {
    "imagenet-1k": DatasetProfile(
        "imagenet-1k", 1_281_167, 138e9, 2600, "1.28 M JPEGs, ~138 GB (public); ResNet-50 ~2,600 img/s/A100 (inferred)"
    ),
    "imagenet-21k": DatasetProfile(
        "imagenet-21k", 14.2e6, 1.1e12, 2600, "1.1 TB (paper v2 section 1); ~14.2 M images (public); as imagenet-1k"
    ),
    "librispeech": DatasetProfile(
        "librispeech", 281_241, 59e9, 800, "960 h, 281 k utterances, ~59 GB FLAC (public); 800 utt/s/GPU (assumed)"
    ),
}

PAPER_SPEEDUP = 4.57


def read_time(n: float, size: float, storage: Storage, concurrency: int) -> float:
    """Seconds to read n requests of ``size`` bytes with ``concurrency`` in flight (module docstring)."""
    q = max(1, min(int(concurrency), storage.queue_depth))
    return max(n * (storage.latency_s + size / storage.bandwidth) / q, n * size / storage.bandwidth)


def pages(size: float) -> float:
    return np.ceil(size / PAGE) * PAGE


@dataclass(frozen=True)
class LoaderModel:
    """Modelled epoch of one loader: reads, bytes, I/O seconds, epoch seconds (I/O overlapped with compute)."""

    name: str
    reads: float
    bytes_read: float
    read_amplification: float
    io_seconds: float
    epoch_seconds: float
    items_per_s: float


def epoch_models(
    *,
    files: float,
    total_bytes: float,
    chunk_bytes: float,
    memory_bytes: float,
    storage: Storage,
    loader_workers: int = 8,
    prefetch: int = 2,
    compute_items_per_s: float = float("inf"),
    block_bytes: float = 128 * 1024,
) -> dict[str, LoaderModel]:
    """The modelled epoch of Redox, the random file reader (PyTorch DataLoader), the random reader over packed
    files with a page cache of ``memory_bytes``, block shuffle and sequential reads."""
    mean = total_bytes / files
    chunks = max(1.0, np.ceil(total_bytes / chunk_bytes))
    compute = files / compute_items_per_s if np.isfinite(compute_items_per_s) else 0.0
    hit = min(1.0, memory_bytes / total_bytes)
    blocks_per_record = 1 + mean / block_bytes  # blocks a record at a random offset touches, on average
    reads = {
        "redox": (chunks, total_bytes / chunks, prefetch),
        "random-files": (files, pages(mean), loader_workers),
        "random-packed": (files * blocks_per_record * (1 - hit), block_bytes, loader_workers),
        "block-shuffle": (chunks, total_bytes / chunks, prefetch),
        "sequential": (chunks, total_bytes / chunks, prefetch),
    }
    out = {}
    for name, (n, size, q) in reads.items():
        io = read_time(n, size, storage, q)
        epoch = max(io, compute)
        out[name] = LoaderModel(name, n, n * size, n * size / total_bytes, io, epoch, files / epoch if epoch else 0)
    return out


def calibrate(sizes: np.ndarray, seconds: np.ndarray, name: str = "this-machine") -> Storage:
    """Fit ``t = L + s / W`` (least squares, non-negative) to the median time of single cold reads at each size
    (queue depth 1; medians, because a shared machine's reads have a long tail)."""
    sizes = np.asarray(sizes, dtype=float)
    seconds = np.asarray(seconds, dtype=float)
    count = len(sizes)
    levels = np.unique(sizes)
    if len(levels) < len(sizes):
        seconds = np.array([np.median(seconds[sizes == v]) for v in levels])
        sizes = levels
    a = np.stack([np.ones_like(sizes), sizes], axis=1)
    (lat, inv_bw), *_ = np.linalg.lstsq(a, seconds, rcond=None)
    lat = max(float(lat), 1e-7)
    inv_bw = max(float(inv_bw), 1e-12)
    return Storage(name, lat, 1.0 / inv_bw, 1, f"fitted to {count} cold reads ({len(sizes)} sizes) on this machine")


def paper_scale(
    storage: Storage,
    dataset: DatasetProfile,
    *,
    gpus: int = 8,
    chunk_bytes: float = 64e6,
    memory_fraction: float = 0.25,
    loader_workers: int = 8,
) -> dict[str, LoaderModel]:
    """:func:`epoch_models` at a paper dataset with ``gpus`` GPUs of its compute rate and a memory budget of
    ``memory_fraction`` x the dataset (the paper's regime: memory much smaller than the data)."""
    return epoch_models(
        files=dataset.files,
        total_bytes=dataset.total_bytes,
        chunk_bytes=chunk_bytes,
        memory_bytes=memory_fraction * dataset.total_bytes,
        storage=storage,
        loader_workers=loader_workers,
        compute_items_per_s=gpus * dataset.items_per_s_per_gpu,
    )


def speedup(models: dict[str, LoaderModel], baseline: str = "random-files") -> float:
    """End-to-end epoch speed-up of Redox over ``baseline`` (MODEL)."""
    return models[baseline].epoch_seconds / models["redox"].epoch_seconds


def with_queue(storage: Storage, queue_depth: int) -> Storage:
    return replace(storage, queue_depth=int(queue_depth))
