"""Record-size distributions of the generated datasets (deterministic from a seed).

``imagenet``: a log-normal whose mean is ``mean_bytes`` and whose spread (sigma = 0.62 in log space) is our
INFERRED stand-in for ImageNet-1k JPEG sizes (about 138 GB over 1,281,167 training files, a mean of about
108 KB, a long right tail; public dataset facts, not from the Redox paper). The tail is cut at
``TAIL_FACTOR`` x the mean so a chunk of a few records always holds the largest one. ``uniform``: uniform on
[mean/2, 3 mean/2]. ``fixed``: every record ``mean_bytes``.
"""

from __future__ import annotations

import numpy as np

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
