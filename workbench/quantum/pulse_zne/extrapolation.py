"""Zero-noise extrapolation of ``E(lambda)`` to ``lambda = 0``: Richardson, linear, polynomial, exponential.

The same models as mitiq 1.1's factories (``RichardsonFactory``, ``LinearFactory``, ``PolyFactory``,
``ExpFactory``), written out so that the pulse executor needs no circuit bridge; tests check every one against
the factory's static ``extrapolate`` on the same numbers.

- Richardson: the Lagrange polynomial through all ``n`` points, at 0: ``E0 = sum_i E_i prod_(j != i) l_j / (l_j - l_i)``
  (exact for a polynomial of degree ``n - 1``).
- linear / polynomial: least squares of degree 1 / ``order``, value at 0.
- exponential: ``E(l) = a + b exp(-c l)``, ``E0 = a + b`` (mitiq's ``ExpFactory`` without asymptote). Through three
  equally spaced points it is solved in closed form (``r = (E3 - E2) / (E2 - E1) = exp(-c h)``); otherwise by
  ``scipy.optimize.curve_fit`` from mitiq's starting point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import scipy.optimize

__all__ = [
    "EXTRAPOLATIONS",
    "richardson",
    "linear",
    "polynomial",
    "exponential",
    "exponential_fit",
    "extrapolate",
    "extrapolate_noting",
    "FALLBACK_NOTE",
]

#: what a result says when "exponential" could not fit (mitiq's ExpFactory gives a wild value or raises there)
FALLBACK_NOTE = (
    "exponential: the points are not monotone-convex (no a + b exp(-c l) passes through them): linear fit used"
)

Extrapolation = Literal["richardson", "linear", "polynomial", "exponential"]
EXTRAPOLATIONS: tuple[str, ...] = ("richardson", "linear", "polynomial", "exponential")


def _arrays(scale_factors: Sequence[float], values: Sequence[float], least: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(scale_factors, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"scale_factors ({x.size}) and values ({y.size}) must be 1-D and of equal length")
    if x.size < least:
        raise ValueError(f"scale_factors has {x.size} values: this extrapolation needs at least {least}")
    if np.unique(x).size != x.size:
        raise ValueError(f"scale_factors={','.join(f'{v:g}' for v in x)} repeats a value")
    return x, y


def richardson(scale_factors: Sequence[float], values: Sequence[float]) -> float:
    """Lagrange interpolation through every point, evaluated at 0."""
    x, y = _arrays(scale_factors, values, 2)
    total = 0.0
    for i in range(x.size):
        w = 1.0
        for j in range(x.size):
            if j != i:
                w *= x[j] / (x[j] - x[i])
        total += w * y[i]
    return float(total)


def polynomial(scale_factors: Sequence[float], values: Sequence[float], order: int = 2) -> float:
    """Least-squares polynomial of degree ``order`` (``order < len(scale_factors)``), at 0."""
    x, y = _arrays(scale_factors, values, 2)
    if not 1 <= order <= x.size - 1:
        raise ValueError(f"order={order} is out of range: valid range is 1..{x.size - 1} for {x.size} points")
    return float(np.polyfit(x, y, order)[-1])


def linear(scale_factors: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares straight line, at 0."""
    return polynomial(scale_factors, values, 1)


def exponential(scale_factors: Sequence[float], values: Sequence[float]) -> float:
    """``a + b exp(-c l)`` through the points (three or more), at 0; falls back to the line when the points
    are not monotone-convex (no exponential passes through them): :func:`exponential_fit` says when."""
    return exponential_fit(scale_factors, values)[0]


def exponential_fit(scale_factors: Sequence[float], values: Sequence[float]) -> tuple[float, bool]:
    """``(E0, fell_back)``: the exponential's value at 0, and True when the linear fit was used instead."""
    x, y = _arrays(scale_factors, values, 3)
    order = np.argsort(x)
    x, y = x[order], y[order]
    if x.size == 3 and np.isclose(x[1] - x[0], x[2] - x[1]):
        d1, d2 = y[1] - y[0], y[2] - y[1]
        h = x[1] - x[0]
        if d1 != 0 and d2 / d1 > 0 and not np.isclose(d2 / d1, 1.0):
            r = d2 / d1  # exp(-c h)
            c = -np.log(r) / h
            b = d1 / (np.exp(-c * x[1]) - np.exp(-c * x[0]))
            a = y[0] - b * np.exp(-c * x[0])
            return float(a + b), False
        return linear(x, y), True
    slope = np.polyfit(x, y, 1)[0]
    p0 = [0.0, float(np.sign(-slope)), -1.0]  # mitiq's start: a, b, z1 in a + b exp(z1 l)

    def model(t, a, b, z):
        return a + b * np.exp(z * t)

    try:
        params, _ = scipy.optimize.curve_fit(model, x, y, p0=p0, maxfev=20000)
    except RuntimeError:  # no convergence: the points are not exponential-like
        return linear(x, y), True
    return float(params[0] + params[1]), False


def extrapolate(method: str, scale_factors: Sequence[float], values: Sequence[float], *, order: int = 2) -> float:
    """``E(0)`` by ``method`` (one of :data:`EXTRAPOLATIONS`)."""
    if method == "richardson":
        return richardson(scale_factors, values)
    if method == "linear":
        return linear(scale_factors, values)
    if method == "polynomial":
        return polynomial(scale_factors, values, min(order, len(scale_factors) - 1))
    if method == "exponential":
        return exponential(scale_factors, values)
    raise ValueError(f"extrapolation={method!r} is not known: valid values are {', '.join(EXTRAPOLATIONS)}")


def extrapolate_noting(
    method: str, scale_factors: Sequence[float], values: Sequence[float]
) -> tuple[float, str | None]:
    """``(E0, note)``: like :func:`extrapolate`; ``note`` is :data:`FALLBACK_NOTE` when "exponential" fell back to
    the line, else None."""
    if method == "exponential":
        value, fell_back = exponential_fit(scale_factors, values)
        return value, FALLBACK_NOTE if fell_back else None
    return extrapolate(method, scale_factors, values), None
