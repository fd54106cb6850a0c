"""Matrices for the solvers: a name in the data registry, a generated Wathen matrix, or a Matrix Market file.

A name is a file stem in the registry datasets ``spd-matrices`` (SPD, for CG) or ``general-matrices``
(non-symmetric, for BiCGSTAB), e.g. ``bcsstk01`` or ``west0067``; ``wathen-NX-NY`` generates
``gallery('wathen', NX, NY)``; anything ending in ``.mtx`` or naming an existing file is read as Matrix Market.
Matrices come back as canonical float64 CSR (sorted, duplicates summed, explicit zeros dropped). Bad input
raises FileNotFoundError (missing file or data folder) or ValueError (unknown name, malformed file, not
square, complex, non-finite values), each message naming the file and the rule.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from workbench.data.fetch import ensure_dataset
from workbench.memory import require
from workbench.solvers.wathen import parse_wathen_name, wathen

log = logging.getLogger(__name__)

#: registry dataset -> what its matrices are for
DATASETS = {"spd-matrices": "spd", "general-matrices": "general"}


def csr_canonical(A: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """float64 CSR with sorted indices, duplicates summed and explicit zeros removed (a copy)."""
    A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    A.sum_duplicates()
    A.eliminate_zeros()
    A.sort_indices()
    return A


@dataclass(frozen=True)
class LoadedMatrix:
    """A matrix ready for the solvers: ``name``, ``A`` (canonical float64 CSR), ``kind`` ('spd', 'general',
    'wathen' or 'file'), ``source`` (path or generator call) and ``symmetric`` (exactly, A == A^T)."""

    name: str
    A: sp.csr_matrix
    kind: str
    source: str
    symmetric: bool

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def nnz(self) -> int:
        return self.A.nnz


def _looks_like_path(ref: str) -> bool:
    return ref.endswith(".mtx") or os.sep in ref or "/" in ref or Path(ref).is_file()


def registry_matrices(data_dir: str | os.PathLike[str] | None = None) -> dict[str, tuple[str, Path]]:
    """Name -> (kind, path) of every matrix in the registry datasets (FileNotFoundError if a folder is missing)."""
    out: dict[str, tuple[str, Path]] = {}
    for dataset, kind in DATASETS.items():
        folder = ensure_dataset(dataset, data_dir)
        for path in sorted(folder.glob("*.mtx")):
            out[path.stem] = (kind, path)
    return out


def read_matrix_market(path: str | os.PathLike[str]) -> sp.csr_matrix:
    """Read a real, square Matrix Market file as canonical float64 CSR.

    Raises FileNotFoundError (no such file), ValueError (not Matrix Market, not real, not square, empty,
    non-finite values).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"matrix file {str(path)!r} does not exist")
    require(
        path.stat().st_size * 40,
        what=f"reading matrix file {str(path)!r}",
        hint="valid files fit in memory once parsed (about 40x their size): use a smaller matrix",
    )
    try:
        raw = scipy.io.mmread(path)
    except Exception as exc:  # the parser raises several types (ValueError, OverflowError, ...): one message
        raise ValueError(f"matrix file {str(path)!r} is not a valid Matrix Market file: {exc}") from None
    if np.iscomplexobj(raw):
        raise ValueError(f"matrix file {str(path)!r} holds complex values: valid matrices are real")
    shape = raw.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"matrix file {str(path)!r} is {shape[0]} x {shape[1]}: the solvers need a square matrix")
    if shape[0] == 0:
        raise ValueError(f"matrix file {str(path)!r} is 0 x 0: the solvers need at least one row")
    A = csr_canonical(sp.csr_matrix(raw))
    if not np.all(np.isfinite(A.data)):
        raise ValueError(f"matrix file {str(path)!r} holds inf or NaN values: valid entries are finite")
    return A


@functools.lru_cache(maxsize=32)
def _cached_file(path: str, mtime_ns: int) -> sp.csr_matrix:
    return read_matrix_market(path)


def clear_file_cache() -> None:
    """Forget every memoised Matrix Market read."""
    _cached_file.cache_clear()


def _is_symmetric(A: sp.csr_matrix) -> bool:
    diff = A - A.T
    return diff.nnz == 0 or not np.any(diff.data)


def load_matrix(ref: str, *, seed: int = 0, data_dir: str | None = None) -> LoadedMatrix:
    """The matrix called ``ref`` (registry name, ``wathen-NX-NY`` or ``.mtx`` path).

    Not memoised itself (a technique's study caches what it prepares, keyed by the data directory); file reads
    are memoised per (resolved path, modification time), see :func:`clear_file_cache`. Treat the returned ``A``
    as read-only (it may be shared between calls).
    Example: ``load_matrix("bcsstk01").A.shape == (48, 48)``.
    """
    ref = str(ref).strip()
    grid = parse_wathen_name(ref)
    if grid is not None:
        A = wathen(*grid, seed=seed)
        source = f"gallery('wathen', {grid[0]}, {grid[1]}), seed {seed}"
        return LoadedMatrix(name=ref, A=A, kind="wathen", source=source, symmetric=True)
    if _looks_like_path(ref):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"matrix file {ref!r} does not exist")
        A = _cached_file(str(path.resolve()), path.stat().st_mtime_ns)
        return LoadedMatrix(name=path.stem, A=A, kind="file", source=str(path), symmetric=_is_symmetric(A))
    known = registry_matrices(data_dir)
    if ref not in known:
        raise ValueError(
            f"matrix={ref!r} is unknown: valid names are {', '.join(sorted(known, key=str.lower))}, "
            "wathen-NX-NY (e.g. wathen-10-10), or a path to a .mtx file"
        )
    kind, path = known[ref]
    A = _cached_file(str(path), path.stat().st_mtime_ns)
    return LoadedMatrix(name=ref, A=A, kind=kind, source=str(path), symmetric=_is_symmetric(A))


def matrix_names(data_dir: str | None = None) -> list[str]:
    """Registry matrix names, SPD ones first, each group by size (rows); [] when the data folder is missing."""
    try:
        known = registry_matrices(data_dir)
    except FileNotFoundError:
        return []
    sizes = {}
    for name, (_, path) in known.items():
        with open(path) as fh:  # the size line is the first line not starting with '%'
            sizes[name] = next((int(line.split()[0]) for line in fh if not line.startswith("%") and line.strip()), 0)
    return sorted(known, key=lambda n: (known[n][0] != "spd", sizes[n], n.lower()))
