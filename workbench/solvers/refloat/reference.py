"""Slow, obvious references for the ReFloat format: one value at a time, on the IEEE-754 bit pattern.

This is the format as the paper describes it (and as the authors' ``src/refloat_format.cpp`` would compute it
had it written the modified bits back): read the sign, the 11-bit exponent field and the 52-bit fraction of
each double, clamp the exponent field into the block's window, mask the fraction, reassemble. Bases are
computed with Python integers and plain loops. Used only by the tests, against the vectorised
:mod:`workbench.solvers.refloat.block_format`.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import scipy.sparse as sp

_FRAC_BITS = 52
_FRAC_MASK = (1 << 52) - 1


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def exponent_of(x: float) -> int:
    """Unbiased exponent E of a finite nonzero double (x = s * M * 2**E, M in [1, 2)), from its bits."""
    field = (_bits(x) >> 52) & 0x7FF
    if field == 0:  # subnormal: scale by 2**64 (exact) into the normal range and correct
        return exponent_of(x * 2.0**64) - 64
    return field - 1023


def quantise_value(x: float, base: int, e: int, f: int) -> float:
    """One value: exponent clamped to [base - 2**(e-1), base + 2**(e-1) - 1], fraction masked to f bits."""
    if x == 0.0 or not math.isfinite(x):
        return x
    bits = _bits(x)
    sign = bits >> 63
    exp = exponent_of(x)
    if (bits >> 52) & 0x7FF == 0:  # subnormal: the fraction of its normalised form
        frac = _bits(x * 2.0**64) & _FRAC_MASK
    else:
        frac = bits & _FRAC_MASK
    frac &= (_FRAC_MASK >> (_FRAC_BITS - f)) << (_FRAC_BITS - f) if f > 0 else 0
    half = 2 ** (e - 1)
    exp = min(max(exp, base - half), base + half - 1)
    if -1022 <= exp <= 1023:
        return _double((sign << 63) | ((exp + 1023) << 52) | frac)
    # outside the normal range: let float64 round into the subnormals (cannot exceed 1023, see module doc)
    value = math.ldexp(float((1 << 52) | frac), exp - 52)
    return -value if sign else value


def base_of(exps: list[int], rule: str, e: int) -> int:
    """Base of one block from its exponents, by brute force."""
    if not exps:
        return 0
    if rule == "mean":
        s, n = sum(exps), len(exps)
        return (abs(s) // n) * (1 if s >= 0 else -1)  # C's integer division truncates toward zero
    if rule == "median":
        s = sorted(exps)
        mid = s[(len(s) - 1) // 2] + s[len(s) // 2]
        return (abs(mid) // 2) * (1 if mid >= 0 else -1)
    if rule == "max-coverage":
        half = 2 ** (e - 1)
        best, best_b = -1, 0
        for b in range(min(exps) - 2 * half, max(exps) + 2 * half + 1):  # ascending: first best is the smallest
            cover = sum(b - half <= x <= b + half - 1 for x in exps)
            if cover > best:
                best, best_b = cover, b
        return best_b
    raise ValueError(f"base={rule!r} is not allowed")


def quantise_matrix_reference(A: sp.spmatrix, *, e: int, f: int, bsize: int, base: str = "mean") -> np.ndarray:
    """Dense quantised copy of ``A``: loop over blocks, then over each block's entries (slow)."""
    D = np.asarray(sp.csr_matrix(A).toarray(), dtype=np.float64)
    out = D.copy()
    n_rows, n_cols = D.shape
    for r0 in range(0, n_rows, bsize):
        for c0 in range(0, n_cols, bsize):
            entries = [
                (i, j)
                for i in range(r0, min(r0 + bsize, n_rows))
                for j in range(c0, min(c0 + bsize, n_cols))
                if D[i, j] != 0.0 and math.isfinite(D[i, j])
            ]
            b = base_of([exponent_of(float(D[i, j])) for i, j in entries], base, e)
            for i, j in entries:
                out[i, j] = quantise_value(float(D[i, j]), b, e, f)
    return out


def quantise_vector_reference(x: np.ndarray, *, e: int, f: int, bsize: int, base: str = "mean") -> np.ndarray:
    """Vector quantised segment by segment (slow)."""
    out = np.array(x, dtype=np.float64)
    for s0 in range(0, len(out), bsize):
        seg = [i for i in range(s0, min(s0 + bsize, len(out))) if out[i] != 0.0 and math.isfinite(out[i])]
        b = base_of([exponent_of(float(out[i])) for i in seg], base, e)
        for i in seg:
            out[i] = quantise_value(float(out[i]), b, e, f)
    return out


def truncate_fraction_reference(x: np.ndarray, f: int) -> np.ndarray:
    """The published code's vectors: fraction masked to f bits, exponent untouched (per value, on the bits)."""
    mask = ((1 << 12) - 1) << 52 | ((_FRAC_MASK >> (_FRAC_BITS - f)) << (_FRAC_BITS - f) if f > 0 else 0)
    mask |= 1 << 63
    return np.array([_double(_bits(float(v)) & mask) for v in np.asarray(x, dtype=np.float64)])
