"""Record-size distributions of the generated datasets (deterministic from a seed).

``imagenet``: a log-normal whose mean is ``mean_bytes`` and whose spread (sigma = 0.62 in log space) is our
INFERRED stand-in for ImageNet-1k JPEG sizes (about 138 GB over 1,281,167 training files, a mean of about
108 KB, a long right tail; public dataset facts, not from the Redox paper). The tail is cut at
``TAIL_FACTOR`` x the mean so a chunk of a few records always holds the largest one. ``uniform``: uniform on
[mean/2, 3 mean/2]. ``fixed``: every record ``mean_bytes``.

``estimate(config)`` (issue #29) sizes a run before it starts: every process (the parent and ``workers`` DataLoader
or protocol ranks) holds up to ``resident`` chunks of ``chunk_kb``, the per-record index arrays (sizes, offsets,
labels, the epoch's permutation) are ``records`` long, and the seconds are the dataset written once and read by
each loader at about :data:`DISK_BYTES_PER_S`. Constants marked *measured* come from the smoke run's peak RSS.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.memory import MB, PROCESS_BYTES, Estimate

DISTRIBUTIONS = ("imagenet", "uniform", "fixed")
#: log-space standard deviation of the ImageNet-like sizes (inferred)
IMAGENET_SIGMA = 0.62
#: no record is larger than this many times the mean (the log-normal tail is clipped there)
TAIL_FACTOR = 8.0
#: smallest record payload (bytes): the 16-byte header plus at least some data
MIN_RECORD = 32


def record_sizes(n: int, mean_bytes: float, distribution: str = "imagenet", *, seed: int = 0) -> np.ndarray:
    """``n`` record sizes in bytes (int64), mean close to ``mean_bytes``.

    Raises:
        ValueError: n < 1, mean_bytes < MIN_RECORD, or an unknown distribution (named with the valid values).
    """
    if n < 1:
        raise ValueError(f"records={n} is out of range: valid range is >= 1 (records)")
    if mean_bytes < MIN_RECORD:
        raise ValueError(f"record size {mean_bytes:g} B is out of range: valid range is >= {MIN_RECORD} B")
    rng = np.random.default_rng([seed, 0x5123])
    if distribution == "imagenet":
        mu = np.log(mean_bytes) - IMAGENET_SIGMA**2 / 2  # E[lognormal] = exp(mu + sigma^2/2)
        sizes = rng.lognormal(mu, IMAGENET_SIGMA, n)
    elif distribution == "uniform":
        sizes = rng.uniform(0.5 * mean_bytes, 1.5 * mean_bytes, n)
    elif distribution == "fixed":
        sizes = np.full(n, float(mean_bytes))
    else:
        raise ValueError(
            f"sizes={distribution!r} is not allowed: valid values are {', '.join(map(repr, DISTRIBUTIONS))}"
        )
    return np.clip(np.rint(sizes), MIN_RECORD, TAIL_FACTOR * mean_bytes).astype(np.int64)


def max_record_bytes(mean_bytes: float, distribution: str) -> float:
    """The largest size :func:`record_sizes` can return (for checking a chunk size before generating)."""
    if distribution == "imagenet":
        return TAIL_FACTOR * mean_bytes
    if distribution == "uniform":
        return 1.5 * mean_bytes
    return float(mean_bytes)


#: the whole run is bounded by this config field (``--timeout-s``)
RUN_LIMIT = "timeout_s"
#: measured: the parent's fixed overhead at the smoke settings (lazy imports, the loaders' buffers)
BASE_BYTES = 80 * MB
#: bytes per record of the index arrays held at once (sizes, offsets, labels, permutations, seen-sets)
INDEX_BYTES = 96
#: throughput of writing and reading the dataset through the page cache (bytes/s), a laptop's order of magnitude
DISK_BYTES_PER_S = 300e6
#: passes over the dataset in check mode: written once, then read by each loader and the P-process protocol
CHECK_PASSES = 6


def estimate(config: Any) -> Estimate:
    """Peak bytes and seconds of ``workbench run redox`` with ``config`` (a ``RedoxConfig``: this module is imported
    by the config, so it names only the base class)."""
    dataset = config.records * config.record_kb * 1024
    index = config.records * INDEX_BYTES
    if config.mode == "generate":
        return Estimate(BASE_BYTES + index + 2 * config.chunk_kb * 1024, 1.0 + dataset / DISK_BYTES_PER_S,
                        own_progress=True)  # fmt: skip
    resident = config.resident * config.chunk_kb * 1024
    batch = config.batch * max_record_bytes(config.record_kb * 1024, config.sizes) * 2
    per_process = resident + batch + index
    need = BASE_BYTES + per_process + config.workers * (PROCESS_BYTES + per_process)
    return Estimate(need, 3.0 + config.workers + CHECK_PASSES * dataset / DISK_BYTES_PER_S)
