"""The ReFloat block floating-point format, applied as the paper describes it (Song et al., SC'23, arXiv 2011.03190).

Write a nonzero float64 as ``x = s * M * 2**E`` with ``M`` in [1, 2) (52 fraction bits) and integer ``E``.
A block of values (a ``bsize x bsize`` tile of a sparse matrix, or a ``bsize`` segment of a vector) shares an
exponent base ``b``: the mean of its nonzeros' exponents, truncated toward zero (the authors' code,
``convet2refloat`` in ``src/refloat_format.cpp``; median and max-coverage are offered as alternatives, since
the paper frames the base as an optimisation). Each value then keeps

- its sign,
- an ``e``-bit exponent offset from ``b``: ``E`` is saturated to ``[b - 2**(e-1), b + 2**(e-1) - 1]``,
- ``f`` fraction bits: the top ``f`` of ``M``'s 52, truncated (a bit mask; no rounding),

and is stored back as float64 ("fake quantisation"). Zeros stay zero and take no part in the base; inf and
NaN pass through unchanged (the solvers detect them). With ``e = 11`` and ``f = 52`` the format is the
identity on float64 whenever every exponent of a block lies in the 2048-wide window around its base, which
holds for any block whose exponents span less than 1024 (tested bit-for-bit).

Everything is vectorised over all nonzeros at once (``np.frexp``/``np.ldexp`` arithmetic, not bit twiddling;
:mod:`workbench.solvers.refloat.reference` is the slow per-value bit-level reference it is tested against). Values
whose quantised exponent falls in float64's subnormal range keep float64's subnormal precision.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from workbench.solvers.matrices import csr_canonical

BaseRule = Literal["mean", "median", "max-coverage"]
BASE_RULES: tuple[str, ...] = ("mean", "median", "max-coverage")
#: exponents of finite nonzero float64 lie in [-1074, 1023]; this offset makes them non-negative sort keys
_EXP_OFFSET = 2048
_KEY_STRIDE = 8192


def check_bits(e: int, f: int, *, what: str = "") -> None:
    """ValueError unless 1 <= e <= 11 and 0 <= f <= 52 (the widths a float64 can carry)."""
    pre = f"{what}_" if what else ""
    if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 1 <= e <= 11:
        raise ValueError(f"{pre}e={e!r} is out of range: valid range is 1..11 (exponent-offset bits)")
    if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or not 0 <= f <= 52:
        raise ValueError(f"{pre}f={f!r} is out of range: valid range is 0..52 (fraction bits)")


def check_bsize(bsize: int) -> None:
    if isinstance(bsize, bool) or not isinstance(bsize, (int, np.integer)) or bsize < 1:
        raise ValueError(f"bsize={bsize!r} is out of range: valid range is >= 1 (rows of a square block)")


def check_rule(rule: str) -> None:
    if rule not in BASE_RULES:
        raise ValueError(f"base={rule!r} is not allowed: valid values are {', '.join(map(repr, BASE_RULES))}")


def exponents(x: np.ndarray) -> np.ndarray:
    """Unbiased binary exponent ``E`` of each value (``x = s * M * 2**E``, ``M`` in [1, 2)); 0 for zeros.

    For normal numbers this is the exponent field minus 1023; subnormals get their true exponent.
    """
    return (np.frexp(x)[1] - 1).astype(np.int64)


def quantise_values(x: np.ndarray, base: np.ndarray | int, e: int, f: int) -> np.ndarray:
    """Each value of ``x`` with its exponent saturated around ``base`` (per value, or one int) and its
    fraction truncated to ``f`` bits; shapes broadcast. Zeros, inf and NaN are returned unchanged.

    ``x = m * 2**k`` with ``|m|`` in [0.5, 1) (``np.frexp``); ``trunc(m * 2**(f+1)) / 2**(f+1)`` keeps exactly the
    top ``f`` fraction bits of ``M = 2m`` (every step is exact in float64), and ``np.ldexp`` puts back the
    saturated exponent.
    """
    m, k = np.frexp(x)
    scale = float(2 ** (f + 1))
    m_t = np.trunc(m * scale) / scale  # top f fraction bits of M = 2m, sign kept (truncation toward zero)
    half = 1 << (e - 1)
    base = np.asarray(base, dtype=np.int64)
    exp = np.clip(k.astype(np.int64) - 1, base - half, base + half - 1)  # saturate the exponent offset
    return np.ldexp(m_t, exp + 1)


def truncate_fraction(x: np.ndarray, f: int) -> np.ndarray:
    """Keep the top ``f`` of 52 fraction bits of every value (no exponent change): the published code's vectors."""
    m, k = np.frexp(x)
    scale = float(2 ** (f + 1))
    return np.ldexp(np.trunc(m * scale) / scale, k)


def _trunc_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Integer division truncated toward zero (C's ``/``), elementwise; ``den`` > 0."""
    return np.sign(num) * (np.abs(num) // den)


def group_bases(group: np.ndarray, exps: np.ndarray, n_groups: int, rule: BaseRule, e: int) -> np.ndarray:
    """Exponent base of each group ``0..n_groups-1`` from the exponents ``exps`` of its nonzeros.

    group: int array (one group id per nonzero); exps: int array, same length.
    rule: ``mean`` (sum // count, truncated toward zero, as the authors' code), ``median`` (the middle exponent;
    for an even count the mean of the two middle ones, truncated toward zero), or ``max-coverage`` (the base
    whose window ``[b - 2**(e-1), b + 2**(e-1) - 1]`` holds the most exponents; the smallest such base on ties).
    Returns an int64 array of length ``n_groups`` (0 for empty groups).
    """
    group = np.asarray(group, dtype=np.int64)
    exps = np.asarray(exps, dtype=np.int64)
    counts = np.bincount(group, minlength=n_groups)
    bases = np.zeros(n_groups, dtype=np.int64)
    if exps.size == 0:
        return bases
    filled = counts > 0
    if rule == "mean":
        sums = np.bincount(group, weights=exps, minlength=n_groups)  # exact: |sum| << 2**53
        bases[filled] = _trunc_div(sums[filled].astype(np.int64), counts[filled])
        return bases
    order = np.lexsort((exps, group))  # by group, then exponent
    g_sorted, e_sorted = group[order], exps[order]
    starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
    groups_present = g_sorted[starts]
    c = counts[groups_present]
    if rule == "median":
        lo, hi = e_sorted[starts + (c - 1) // 2], e_sorted[starts + c // 2]
        bases[groups_present] = _trunc_div(lo + hi, np.full_like(lo, 2))
        return bases
    if rule != "max-coverage":
        check_rule(rule)
    width = 1 << e
    key = g_sorted * _KEY_STRIDE + (e_sorted + _EXP_OFFSET)  # sorted ascending
    # windows whose top is each exponent: [E_i - width + 1, E_i] inside the same group
    count = np.searchsorted(key, key, side="right") - np.searchsorted(key, key - (width - 1), side="left")
    best = np.maximum.reduceat(count, starts)
    seg = np.repeat(np.arange(len(starts)), c)
    idx = np.where(count == best[seg], np.arange(len(count)), len(count))
    first = np.minimum.reduceat(idx, starts)  # lowest window top with the best count
    bases[groups_present] = e_sorted[first] - width // 2 + 1
    return bases


@dataclass(frozen=True)
class QuantisedMatrix:
    """A sparse matrix in the ReFloat format, with what the format did to it.

    matrix: the quantised values in the same CSR structure as the input (float64, fake-quantised).
    bsize: block size; block_shape: (block rows, block columns) of the grid.
    blocks: flat ids ``I * block_cols + J`` of the non-empty blocks (ascending); bases: their exponent bases.
    block_of: per stored entry (CSR order), the index into ``blocks``.
    saturated_up / saturated_down: per stored entry, exponent below / above the block's window (pushed up/down).
    e, f: the widths; base_rule: how bases were chosen (``fixed`` when one base was given for every block).
    """

    matrix: sp.csr_matrix
    bsize: int
    block_shape: tuple[int, int]
    blocks: np.ndarray
    bases: np.ndarray
    block_of: np.ndarray
    saturated_up: np.ndarray
    saturated_down: np.ndarray
    e: int
    f: int
    base_rule: str

    @property
    def num_blocks(self) -> int:
        """Non-empty ``bsize x bsize`` blocks: the crossbars' unit of work in the performance model."""
        return int(self.blocks.size)

    def saturation_per_block(self) -> tuple[np.ndarray, np.ndarray]:
        """(fraction of entries pushed up, fraction pushed down) per non-empty block."""
        total = np.bincount(self.block_of, minlength=self.num_blocks).astype(float)
        up = np.bincount(self.block_of, weights=self.saturated_up, minlength=self.num_blocks)
        down = np.bincount(self.block_of, weights=self.saturated_down, minlength=self.num_blocks)
        return up / np.maximum(total, 1), down / np.maximum(total, 1)


def block_index(A: sp.csr_matrix, bsize: int) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Per stored entry of CSR ``A``: flat block id ``I * block_cols + J``; the unique ids; the grid shape."""
    check_bsize(bsize)
    n_rows, n_cols = A.shape
    grid = (-(-n_rows // bsize), -(-n_cols // bsize))
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(A.indptr))
    flat = (rows // bsize) * grid[1] + A.indices.astype(np.int64) // bsize
    blocks, block_of = np.unique(flat, return_inverse=True)
    return block_of.reshape(-1), blocks, grid


def quantise_matrix(
    A: sp.spmatrix | sp.sparray,
    *,
    e: int,
    f: int,
    bsize: int = 128,
    base: BaseRule = "mean",
    fixed_base: int | None = None,
) -> QuantisedMatrix:
    """Quantise sparse ``A`` block by block (``bsize x bsize`` blocks; edge blocks are smaller).

    fixed_base: one exponent base for every block instead of a per-block rule (the Feinberg baseline uses 0).
    Raises ValueError for bad ``e``/``f``/``bsize``/``base``.
    Example: ``quantise_matrix(A, e=3, f=3).matrix`` is A in ReFloat(128, 3, 3).
    """
    check_bits(e, f)
    check_rule(base)
    A = csr_canonical(A)
    block_of, blocks, grid = block_index(A, bsize)
    exps = exponents(A.data)
    finite = np.isfinite(A.data) & (A.data != 0)
    if fixed_base is None:
        bases = group_bases(block_of[finite], exps[finite], blocks.size, base, e)
        rule = base
    else:
        bases = np.full(blocks.size, int(fixed_base), dtype=np.int64)
        rule = "fixed"
    per_entry = bases[block_of]
    half = 1 << (e - 1)
    Q = A.copy()
    Q.data = quantise_values(A.data, per_entry, e, f)
    return QuantisedMatrix(
        matrix=Q,
        bsize=bsize,
        block_shape=grid,
        blocks=blocks,
        bases=bases,
        block_of=block_of,
        saturated_up=finite & (exps < per_entry - half),
        saturated_down=finite & (exps > per_entry + half - 1),
        e=e,
        f=f,
        base_rule=rule,
    )


@functools.lru_cache(maxsize=64)
def _segments(n: int, bsize: int) -> np.ndarray:
    seg = np.arange(n, dtype=np.int64) // bsize
    seg.setflags(write=False)
    return seg


_SIGN = np.uint64(1 << 63)
_FIELD = np.uint64(0x7FF)


@functools.lru_cache(maxsize=64)
def _segment_layout(n: int, bsize: int) -> tuple[np.ndarray, np.ndarray]:
    """(start index, length) of each ``bsize`` segment of an (n,) vector (read-only, cached)."""
    starts = np.arange(0, n, bsize, dtype=np.int64)
    lengths = np.minimum(starts + bsize, n) - starts
    starts.setflags(write=False)
    lengths.setflags(write=False)
    return starts, lengths


def _quantise_vector_bits(x: np.ndarray, e: int, f: int, bsize: int, fixed_base: int | None) -> np.ndarray | None:
    """Fast path of :func:`quantise_vector` (mean or fixed base) on the bit pattern, for vectors of zeros and
    normal numbers whose saturated exponents stay normal; None when that does not hold (then the general path
    runs). Same result as the general path, bit for bit (tested). Few numpy calls and temporaries: the solvers
    call it every iteration."""
    n = x.size
    bits = x.view(np.uint64)
    field = bits >> np.uint64(52)
    field &= _FIELD  # biased exponent field: 0 for zeros (and subnormals), 0x7FF for inf/NaN
    if n == 0 or field.max() == 0x7FF:
        return None
    zero = field == 0
    n_zero = int(np.count_nonzero(zero))
    if n_zero and np.any(bits[zero] << np.uint64(1)):
        return None  # a subnormal (nonzero with field 0)
    ef = field.view(np.int64)  # fields < 2048: same values as int64
    half = 1 << (e - 1)
    if fixed_base is not None or n <= bsize:
        if fixed_base is not None:
            base = int(fixed_base)
        else:  # one segment: the base in Python integers (C's truncating division)
            count = n - n_zero
            total = int(ef.sum()) - 1023 * count  # zeros add 0 to the field sum
            base = (abs(total) // count) * (1 if total >= 0 else -1) if count else 0
        lo = base + 1023 - half
        if lo + 2 * half - 1 < 1:
            return None  # saturating down would land in the subnormal range
        np.maximum(ef, lo, out=ef)
        np.minimum(ef, lo + 2 * half - 1, out=ef)
    else:
        starts, lengths = _segment_layout(n, bsize)
        counts = lengths - np.add.reduceat(zero, starts, dtype=np.int64) if n_zero else lengths
        sums = np.add.reduceat(ef, starts) - 1023 * counts
        lo = _trunc_div(sums, np.maximum(counts, 1)) + (1023 - half)
        if np.any((lo + 2 * half - 1 < 1) & (counts > 0)):
            return None
        lo_each = np.repeat(lo, bsize)[:n]
        np.maximum(ef, lo_each, out=ef)
        lo_each += 2 * half - 1
        np.minimum(ef, lo_each, out=ef)
    if n_zero:
        ef[zero] = 0
    field <<= np.uint64(52)
    out = bits & (_SIGN | np.uint64(((1 << 52) - 1) >> (52 - f) << (52 - f)))  # sign, top f fraction bits
    out |= field
    return out.view(np.float64)


def quantise_vector(
    x: np.ndarray, *, e: int, f: int, bsize: int = 128, base: BaseRule = "mean", fixed_base: int | None = None
) -> np.ndarray:
    """Quantise a vector per ``bsize`` segment (base over the segment's finite nonzeros); returns a new array.

    Same value format as :func:`quantise_matrix`; ``x`` has shape (n,). The mean and fixed-base rules run on
    the bit pattern (the solvers call this every iteration); other cases use ``frexp``/``ldexp``.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if base == "mean" or fixed_base is not None:
        fast = _quantise_vector_bits(x, e, f, bsize, fixed_base)
        if fast is not None:
            return fast
    m, k = np.frexp(x)
    scale = float(2 ** (f + 1))
    m_t = np.trunc(m * scale) / scale  # fraction truncated first (as the authors' vector2refloat)
    exp = k.astype(np.int64) - 1
    if fixed_base is None:
        seg = _segments(x.size, bsize)
        ok = np.isfinite(m) & (m != 0)
        bases = group_bases(seg[ok], exp[ok], -(-x.size // bsize), base, e)[seg]
    else:
        bases = np.int64(fixed_base)
    half = 1 << (e - 1)
    return np.ldexp(m_t, np.clip(exp, bases - half, bases + half - 1) + 1)
