"""Zipf distributions over a finite vocabulary: probabilities, sampling, and fitting the exponent to a sample.

A feature with cardinality ``N`` and exponent ``s`` draws rank ``k`` (1 = most frequent) with probability
``p_k = k^-s / H(N, s)``, ``H(N, s) = sum_{k<=N} k^-s``.

Fitting on a small sample. The shared Criteo sample has 200 rows while a feature has up to 10^7 values, so the
rank-frequency plot of the sample says little (ranking the observed values by their sample counts is biased:
every singleton looks like a rank <= 200). :func:`fit_zipf_exponent` therefore matches the **frequency of
frequencies** instead: ``F_m`` = number of distinct values seen exactly ``m`` times (m = 1..4, and >= 5), whose
expectation under Zipf(s, N) with n draws is ``E F_m = sum_k Binom(n, p_k)(m)`` and does not depend on which
value has which rank. The exponent minimises ``sum_m (F_m - E F_m)^2 / max(E F_m, 1)`` over a grid of s
(0.00..3.00 in steps of 0.01). Sums over up to 10^7 ranks are exact for the first 4096 ranks and use 400
log-spaced bins beyond (each bin's ranks share the probability of its geometric midpoint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

__all__ = ["ZipfFit", "fit_zipf_exponent", "rank_grid", "zipf_probabilities", "zipf_sampler", "frequency_profile"]

S_GRID = np.round(np.arange(0.0, 3.0001, 0.01), 2)
_EXACT = 4096
_BINS = 400


def zipf_probabilities(n_values: int, s: float) -> np.ndarray:
    """``p_k`` for k = 1..n_values (float64, sums to 1)."""
    if n_values < 1:
        raise ValueError(f"n_values={n_values} is out of range: valid range is >= 1")
    if s < 0:
        raise ValueError(f"s={s} is out of range: valid range is >= 0")
    w = np.arange(1, n_values + 1, dtype=np.float64) ** -s
    return w / w.sum()


def rank_grid(n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """(representative ranks, how many ranks each stands for): exact up to 4096, then log-spaced bins."""
    exact = np.arange(1, min(n_values, _EXACT) + 1, dtype=np.float64)
    if n_values <= _EXACT:
        return exact, np.ones_like(exact)
    edges = np.unique(np.round(np.geomspace(_EXACT + 1, n_values + 1, _BINS + 1)).astype(np.int64))
    lo, hi = edges[:-1], edges[1:]
    mid = np.sqrt(lo * (hi - 1.0))
    return np.concatenate([exact, mid]), np.concatenate([np.ones_like(exact), (hi - lo).astype(np.float64)])


def frequency_profile(ids: np.ndarray, top: int = 5) -> np.ndarray:
    """``F_1..F_{top-1}`` and ``F_{>=top}`` of a sample of ids: how many distinct values occur m times."""
    _, counts = np.unique(np.asarray(ids), return_counts=True)
    out = np.array([np.sum(counts == m) for m in range(1, top)] + [np.sum(counts >= top)], dtype=np.float64)
    return out


def _expected_profile(ranks: np.ndarray, weights: np.ndarray, n: int, s: float, top: int) -> np.ndarray:
    p = ranks**-s
    p = p / np.sum(weights * p)
    pm = [np.sum(weights * binom.pmf(m, n, p)) for m in range(1, top)]
    pm.append(np.sum(weights * binom.sf(top - 1, n, p)))
    return np.array(pm)


@dataclass(frozen=True)
class ZipfFit:
    """A fitted exponent: s, the sample size n, the cardinality used, observed and expected profiles, and
    ``at_bound`` when the best s is an end of the grid (the sample only bounds it)."""

    s: float
    n: int
    cardinality: int
    observed: tuple[float, ...]
    expected: tuple[float, ...]
    at_bound: bool


def fit_zipf_exponent(ids: np.ndarray, cardinality: int, *, top: int = 5) -> ZipfFit:
    """The Zipf exponent whose frequency-of-frequencies profile best matches ``ids`` (module docstring).

    ids: one feature's values in a sample (any hashable numpy dtype); cardinality: the feature's number of
    distinct values in the full data set (at least the number seen in the sample).
    """
    ids = np.asarray(ids)
    n = int(ids.size)
    if n < 2:
        raise ValueError(f"ids has {n} values: need at least 2 to fit an exponent")
    seen = np.unique(ids).size
    if cardinality < seen:
        raise ValueError(f"cardinality={cardinality} is below the {seen} distinct values in the sample")
    obs = frequency_profile(ids, top)
    ranks, weights = rank_grid(cardinality)
    best, best_err, best_exp = 0.0, np.inf, None
    for s in S_GRID:
        exp = _expected_profile(ranks, weights, n, float(s), top)
        err = float(np.sum((obs - exp) ** 2 / np.maximum(exp, 1.0)))
        if err < best_err - 1e-12:
            best, best_err, best_exp = float(s), err, exp
    return ZipfFit(
        best,
        n,
        int(cardinality),
        tuple(obs),
        tuple(np.round(best_exp, 3)),
        best in (float(S_GRID[0]), float(S_GRID[-1])),
    )


def zipf_sampler(n_values: int, s: float):
    """A function ``draw(rng, size) -> ranks`` (0-based, int64) of Zipf(s, n_values), by inverse CDF."""
    cdf = np.cumsum(zipf_probabilities(n_values, s))
    cdf[-1] = 1.0

    def draw(rng: np.random.Generator, size: int) -> np.ndarray:
        return np.searchsorted(cdf, rng.random(size), side="right").astype(np.int64).clip(0, n_values - 1)

    return draw
