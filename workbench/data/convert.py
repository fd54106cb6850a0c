"""Rebuild curated files from their downloaded originals.

The shared SPD matrices were converted by the data curators from triplet files (SuiteSparse's
SPEX/CSparse/CHOLMOD demo matrices, LAGraph's ``bcsstk13.mtx``, a headerless triplet file). This
module reproduces that conversion byte for byte, so that a fetched file can be checked against the
sha256 of the shared copy.

Output format (what the curators wrote):

- ``%%MatrixMarket matrix coordinate real symmetric``;
- one ``%converted from ...`` comment naming the matrix;
- ``n n nnz``, then the lower triangle (row >= column), 1-based, sorted by (row, column);
- values as the shortest round-trip decimal, mantissa then ``E<exponent>`` when the exponent is
  not zero: ``-477.1548`` -> ``-4.771548E2``, ``2.0`` -> ``2``, ``0.405`` -> ``4.05E-1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

__all__ = ["ConvertSpec", "convert", "format_value", "symmetric_triplets_to_mtx"]

ConvertKind = Literal["symmetric-triplets"]
CONVERT_KINDS: tuple[str, ...] = ("symmetric-triplets",)


@dataclass(frozen=True, kw_only=True)
class ConvertSpec:
    """How to turn a downloaded original into the curated file.

    Attributes:
        kind: conversion; only ``"symmetric-triplets"`` (triplets of a symmetric matrix, either
            triangle or both, to curated MatrixMarket lower-triangle storage).
        index_base: 0 or 1, the index base of the triplets in the original.
        size_line: whether the first non-comment line of the original is ``n m nnz [...]``
            (otherwise n is the largest index).
    """

    kind: ConvertKind
    index_base: Literal[0, 1]
    size_line: bool

    def __post_init__(self) -> None:
        if self.kind not in CONVERT_KINDS:
            raise ValueError(f"convert kind={self.kind!r} is unknown; valid choices: {', '.join(CONVERT_KINDS)}")
        if self.index_base not in (0, 1) or isinstance(self.index_base, bool):
            raise ValueError(f"convert index_base={self.index_base!r} must be 0 or 1")
        if not isinstance(self.size_line, bool):
            raise ValueError(f"convert size_line={self.size_line!r} must be true or false")


def format_value(token: str) -> str:
    """Format one numeric token the way the curated files do (shortest round trip, ``E`` exponent).

    Example:
        >>> format_value("-477.1548"), format_value("0.199033328611999991E+004"), format_value("2")
        ('-4.771548E2', '1.99033328612E3', '2')
    """
    value = float(token)
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"matrix value token={token!r} is not finite")
    text = "".join(map(str, digits)).rstrip("0") or "0"
    lead_exponent = len(digits) + exponent - 1 if text != "0" else 0
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    out = ("-" if sign else "") + mantissa
    return out if lead_exponent == 0 else f"{out}E{lead_exponent}"


def symmetric_triplets_to_mtx(data: bytes, *, name: str, index_base: int, size_line: bool) -> bytes:
    """Convert triplets of a symmetric matrix to the curated MatrixMarket text.

    Args:
        data: the original file; lines starting with ``%`` and blank lines are skipped.
        name: matrix name written into the comment line (the curated file's stem).
        index_base: 0 or 1.
        size_line: whether the first data line is ``n m nnz [...]``.

    Returns:
        The MatrixMarket file as bytes (``\\n`` line ends).

    Raises:
        ValueError: a malformed line, an index out of range, a non-square size, or (i, j) and
            (j, i) with different values.
    """
    lines = [ln for ln in data.decode("ascii").splitlines() if ln.strip() and not ln.lstrip().startswith("%")]
    n: int | None = None
    if size_line:
        if not lines:
            raise ValueError(f"matrix {name!r}: data has no size line")
        size = lines[0].split()
        if len(size) < 2 or size[0] != size[1]:
            raise ValueError(f"matrix {name!r}: size line {lines[0]!r} must start with 'n n' (square)")
        n = int(size[0])
        lines = lines[1:]
    entries: dict[tuple[int, int], str] = {}
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            raise ValueError(f"matrix {name!r}: line {line!r} is not 'row column value'")
        i, j = int(parts[0]) - index_base + 1, int(parts[1]) - index_base + 1
        if i < 1 or j < 1 or (n is not None and max(i, j) > n):
            raise ValueError(
                f"matrix {name!r}: index ({parts[0]}, {parts[1]}) out of range for n={n}, base {index_base}"
            )
        key = (i, j) if i >= j else (j, i)
        old = entries.get(key)
        if old is not None and float(old) != float(parts[2]):
            raise ValueError(f"matrix {name!r}: entry {key} has values {old} and {parts[2]}; not symmetric")
        entries[key] = parts[2]
    if n is None:
        n = max((i for i, _ in entries), default=0)
    out = [
        "%%MatrixMarket matrix coordinate real symmetric",
        f"%converted from SuiteSparse-repo/LAGraph/ECS231HW3 copy of SuiteSparse Matrix Collection matrix {name};"
        " full symmetric storage written as symmetric",
        f"{n} {n} {len(entries)}",
    ]
    out += [f"{i} {j} {format_value(entries[(i, j)])}" for i, j in sorted(entries)]
    return ("\n".join(out) + "\n").encode("ascii")


def convert(data: bytes, spec: ConvertSpec, *, name: str) -> bytes:
    """Apply ``spec`` to a downloaded original; ``name`` is the target file's stem."""
    if spec.kind == "symmetric-triplets":
        return symmetric_triplets_to_mtx(data, name=name, index_base=spec.index_base, size_line=spec.size_line)
    raise ValueError(f"convert kind={spec.kind!r} is unknown; valid choices: {', '.join(CONVERT_KINDS)}")
