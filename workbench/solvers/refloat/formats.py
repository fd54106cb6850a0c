"""The named number formats a solve can use, and the bit widths the ReRAM model prices each one at.

=================  ==============================================  ====================  ==================
name               matrix                                          search directions     priced at (e, f)
=================  ==============================================  ====================  ==================
float64            untouched                                       untouched             11, 52 / 11, 52
refloat            ReFloat(bsize, e_m, f_m), per-block base        ReFloat(bsize, e_v,   e_m, f_m / e_v, f_v
                                                                   f_v), per segment
refloat-artifact   untouched (the published code's behaviour)      fraction truncated    e_m, f_m / e_v, f_v
                                                                   to f_v bits only
baseline           6 exponent bits around the fixed base 0 (the    same                  6, 52 / 6, 52
                   1023 bias), 52 fraction bits (Feinberg et al.)
=================  ==============================================  ====================  ==================

``refloat-artifact``: in ``linghaosong/ReFloat`` (``src/refloat_format.cpp``), ``convet2refloat`` and the
exponent step of ``vector2refloat`` copy each double's bits into a separate integer with ``memcpy``, change the
integer and store the unchanged double back; only the vectors' fraction masking reaches the data. The run
script still prices the run at the ReFloat widths, so this mode reproduces what the published numbers measure.

``baseline``: Feinberg et al. (ISCA'18) as the ReFloat artifact configures it (``src/cgbaseline_fc.cpp``:
matrix and vector exponent 6, fraction 52). The artifact's "forced functionally correct" run then solves in
plain float64; here the 6-bit exponent window [-32, 31] around the bias is applied to the matrix and the
search directions, like the other formats (values outside it saturate; with 52 fraction bits nothing else
changes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from workbench.solvers.refloat.block_format import (
    QuantisedMatrix,
    block_index,
    check_bits,
    check_bsize,
    check_rule,
    csr_canonical,
    quantise_matrix,
    quantise_vector,
    truncate_fraction,
)

FormatName = Literal["float64", "refloat", "refloat-artifact", "baseline"]
FORMAT_NAMES: tuple[str, ...] = ("float64", "refloat", "refloat-artifact", "baseline")

#: Feinberg et al. (ISCA'18) as configured in the ReFloat artifact's src/cgbaseline_fc.cpp
BASELINE_EXPONENT_BITS = 6
BASELINE_FRACTION_BITS = 52
#: "relative to the 1023 bias": the baseline has no block base, its window is centred on exponent 0
BASELINE_BASE = 0
#: float64 itself priced on the same crossbars: 11 exponent bits, 52 fraction bits
FLOAT64_EXPONENT_BITS = 11
FLOAT64_FRACTION_BITS = 52

VectorQuantiser = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Format:
    """A number format: how the matrix is stored, how search directions are quantised, and its priced widths."""

    name: str
    e_m: int
    f_m: int
    e_v: int
    f_v: int
    bsize: int = 128
    base: str = "mean"

    def __post_init__(self) -> None:
        if self.name not in FORMAT_NAMES:
            raise ValueError(
                f"format={self.name!r} is not allowed: valid values are {', '.join(map(repr, FORMAT_NAMES))}"
            )
        check_bits(self.e_m, self.f_m, what="matrix")
        check_bits(self.e_v, self.f_v, what="vector")
        check_bsize(self.bsize)
        check_rule(self.base)

    @property
    def label(self) -> str:
        if self.name in ("refloat", "refloat-artifact"):
            return f"{self.name} ({self.e_m},{self.f_m} / {self.e_v},{self.f_v})"
        return self.name

    def quantise_matrix(self, A: sp.spmatrix | sp.sparray) -> QuantisedMatrix:
        """The matrix as this format stores it (with block bases and saturation flags where it quantises)."""
        if self.name == "refloat":
            return quantise_matrix(A, e=self.e_m, f=self.f_m, bsize=self.bsize, base=self.base)
        if self.name == "baseline":
            return quantise_matrix(A, e=self.e_m, f=self.f_m, bsize=self.bsize, fixed_base=BASELINE_BASE)
        return identity_quantised(A, bsize=self.bsize, e=self.e_m, f=self.f_m)

    def vector_quantiser(self) -> VectorQuantiser | None:
        """The function applied to each search direction before its SpMV (None: left in float64)."""
        if self.name == "refloat":
            e, f, bsize, base = self.e_v, self.f_v, self.bsize, self.base
            return lambda x: quantise_vector(x, e=e, f=f, bsize=bsize, base=base)
        if self.name == "refloat-artifact":
            f = self.f_v
            return lambda x: truncate_fraction(x, f)
        if self.name == "baseline":
            e, f, bsize = self.e_v, self.f_v, self.bsize
            return lambda x: quantise_vector(x, e=e, f=f, bsize=bsize, fixed_base=BASELINE_BASE)
        return None


def identity_quantised(A: sp.spmatrix | sp.sparray, *, bsize: int, e: int = 11, f: int = 52) -> QuantisedMatrix:
    """``A`` unchanged (canonical CSR, same values bit for bit), with its block structure."""
    A = csr_canonical(A)
    block_of, blocks, grid = block_index(A, bsize)
    none = np.zeros(A.nnz, dtype=bool)
    return QuantisedMatrix(
        matrix=A,
        bsize=bsize,
        block_shape=grid,
        blocks=blocks,
        bases=np.zeros(blocks.size, dtype=np.int64),
        block_of=block_of,
        saturated_up=none,
        saturated_down=none,
        e=e,
        f=f,
        base_rule="none",
    )


def make_format(
    name: str, *, e_m: int = 3, f_m: int = 3, e_v: int = 3, f_v: int = 8, bsize: int = 128, base: str = "mean"
) -> Format:
    """The format called ``name``; ``e_*``/``f_*`` apply to refloat and refloat-artifact, the others fix their own.

    Example: ``make_format("refloat", f_v=16).label == "refloat (3,3 / 3,16)"``.
    """
    if name == "float64":
        e_m = e_v = FLOAT64_EXPONENT_BITS
        f_m = f_v = FLOAT64_FRACTION_BITS
    elif name == "baseline":
        e_m = e_v = BASELINE_EXPONENT_BITS
        f_m = f_v = BASELINE_FRACTION_BITS
    return Format(name=name, e_m=e_m, f_m=f_m, e_v=e_v, f_v=f_v, bsize=bsize, base=base)
