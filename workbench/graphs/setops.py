"""Sorted-set primitives the generated kernels call (numba, cached to disk).

Every set is a sorted int32 array without duplicates (an adjacency row, or a prefix of a buffer). Bounds
are exclusive: ``lo < x < hi``. Intersections switch from a linear merge to binary searches of the small
side when one side is more than ``SKEW`` times longer (the usual galloping rule of GPM engines).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "lower_bound",
    "upper_bound",
    "contains",
    "clip",
    "below",
    "above",
    "intersect",
    "intersect_count",
    "difference",
    "difference_count",
]

SKEW = 16


@numba.njit(cache=True, nogil=True)
def lower_bound(a, x):
    """First index i with a[i] >= x (len(a) if none)."""
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def upper_bound(a, x):
    """First index i with a[i] > x (len(a) if none)."""
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def contains(a, x):
    i = lower_bound(a, x)
    return i < a.shape[0] and a[i] == x


@numba.njit(cache=True, nogil=True)
def clip(a, lo, hi):
    """The part of sorted ``a`` with lo < x < hi (a view)."""
    return a[upper_bound(a, lo) : lower_bound(a, hi)]


@numba.njit(cache=True, nogil=True)
def below(a, hi):
    """The part of sorted ``a`` with x < hi (a view)."""
    return a[: lower_bound(a, hi)]


@numba.njit(cache=True, nogil=True)
def above(a, lo):
    """The part of sorted ``a`` with x > lo (a view)."""
    return a[upper_bound(a, lo) :]


@numba.njit(cache=True, nogil=True)
def intersect(a, b, out):
    """Write a ∩ b into ``out`` (sorted); return its length."""
    la, lb = a.shape[0], b.shape[0]
    n = 0
    if la * SKEW < lb or lb * SKEW < la:
        if la > lb:
            a, b = b, a
            la, lb = lb, la
        j = 0
        for i in range(la):
            x = a[i]
            lo, hi = j, lb
            while lo < hi:
                mid = (lo + hi) >> 1
                if b[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            j = lo
            if j < lb and b[j] == x:
                out[n] = x
                n += 1
        return n
    i = j = 0
    while i < la and j < lb:
        x, y = a[i], b[j]
        if x < y:
            i += 1
        elif x > y:
            j += 1
        else:
            out[n] = x
            n += 1
            i += 1
            j += 1
    return n


@numba.njit(cache=True, nogil=True)
def intersect_count(a, b):
    """|a ∩ b|."""
    la, lb = a.shape[0], b.shape[0]
    n = 0
    if la * SKEW < lb or lb * SKEW < la:
        if la > lb:
            a, b = b, a
            la, lb = lb, la
        j = 0
        for i in range(la):
            x = a[i]
            lo, hi = j, lb
            while lo < hi:
                mid = (lo + hi) >> 1
                if b[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            j = lo
            if j < lb and b[j] == x:
                n += 1
        return n
    i = j = 0
    while i < la and j < lb:
        x, y = a[i], b[j]
        if x < y:
            i += 1
        elif x > y:
            j += 1
        else:
            n += 1
            i += 1
            j += 1
    return n


@numba.njit(cache=True, nogil=True)
def difference(a, b, out):
    """Write a \\ b into ``out``; return its length."""
    la, lb = a.shape[0], b.shape[0]
    n = 0
    j = 0
    for i in range(la):
        x = a[i]
        while j < lb and b[j] < x:
            j += 1
        if j < lb and b[j] == x:
            continue
        out[n] = x
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def difference_count(a, b):
    """|a \\ b|."""
    return a.shape[0] - intersect_count(a, b)


def _warm() -> None:
    """Compile (or load from the disk cache) every primitive once."""
    a = np.arange(4, dtype=np.int32)
    out = np.empty(4, dtype=np.int32)
    intersect(a, a, out), intersect_count(a, a), difference(a, a, out), difference_count(a, a)
    contains(a, 2), clip(a, 0, 3), below(a, 2), above(a, 1)
