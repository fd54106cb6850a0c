"""The shared CTR samples (DeepCTR's Criteo, Avazu and MovieLens excerpts) read as categorical ids.

The registry's ``ctr-samples`` dataset holds ``criteo_sample.txt`` (200 rows: ``label, I1..I13, C1..C26``),
``avazu_sample.txt`` (100 rows) and ``movielens_sample.txt`` (200 rows). They are for API and smoke tests
only: **far too small for accuracy claims**. :func:`load_sample` turns one into a :class:`CTRData` (label,
dense features, categorical ids re-indexed per feature in order of first appearance, with the empty string
as a category of its own), and :func:`fit_zipf_exponent` (in :mod:`workbench.recsys.zipf`) fits the skew
the synthetic generator uses.

Example:
    >>> data = load_sample("criteo")  # doctest: +SKIP
    >>> data.sparse.shape
    (200, 26)
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CTRData", "SAMPLES", "load_sample", "read_columns", "sample_path"]

#: sample name -> (file, label column, dense columns, categorical columns); ``None`` = every other column
SAMPLES = {
    "criteo": (
        "criteo_sample.txt",
        "label",
        tuple(f"I{i}" for i in range(1, 14)),
        tuple(f"C{i}" for i in range(1, 27)),
    ),
    "avazu": ("avazu_sample.txt", "click", (), None),
    # MovieLens has ratings, not clicks: label = rating >= 4 (the usual implicit-feedback reading)
    "movielens": (
        "movielens_sample.txt",
        "rating",
        (),
        ("user_id", "movie_id", "gender", "age", "occupation", "zip", "genres"),
    ),
}
_AVAZU_SKIP = ("id", "click", "hour")


@dataclass(frozen=True)
class CTRData:
    """Click-through data: ``label`` [N] float32 in {0, 1}, ``dense`` [N, D] float32, ``sparse`` [N, F] int64
    (per-feature ids in ``0..cardinalities[f] - 1``), the feature names and where it came from."""

    label: np.ndarray
    dense: np.ndarray
    sparse: np.ndarray
    cardinalities: tuple[int, ...]
    features: tuple[str, ...]
    source: str

    @property
    def rows(self) -> int:
        return int(self.label.shape[0])

    def split(self, test_fraction: float) -> tuple[CTRData, CTRData]:
        """(train, test): the last ``test_fraction`` of the rows is the test set (rows are already shuffled)."""
        if not 0 < test_fraction < 1:
            raise ValueError(f"test_fraction={test_fraction} is out of range: valid range is 0..1 (exclusive)")
        n_test = max(1, int(round(self.rows * test_fraction)))
        if n_test >= self.rows:
            raise ValueError(f"rows={self.rows} is too few to split off a test set: need at least 2")
        cut = self.rows - n_test

        def part(s: slice) -> CTRData:
            return CTRData(self.label[s], self.dense[s], self.sparse[s], self.cardinalities, self.features, self.source)

        return part(slice(0, cut)), part(slice(cut, None))


def sample_path(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The file of sample ``name`` (``criteo``, ``avazu``, ``movielens``) in the data directory, through the
    registry (``ctr-samples``); FileNotFoundError naming ``workbench data fetch ctr-samples`` when absent."""
    if name not in SAMPLES:
        raise ValueError(f"sample={name!r} is not allowed: valid values are {', '.join(map(repr, SAMPLES))}")
    from workbench.data.fetch import ensure_dataset

    folder = ensure_dataset("ctr-samples", data_dir)
    return Path(folder) / SAMPLES[name][0]


def read_columns(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Every column of a CSV file with a header, as strings; ValueError naming the file and the line when a
    row has the wrong number of fields or the file is empty or not text."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if not header:
                raise ValueError(
                    f"dataset file {path} is empty or has no header line: it is corrupt; "
                    "run `workbench data fetch ctr-samples` to restore it"
                )
            cols: dict[str, list[str]] = {h: [] for h in header}
            for line, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise ValueError(
                        f"dataset file {path} line {line} has {len(row)} fields, the header has "
                        f"{len(header)}: the file is corrupt; run `workbench data fetch ctr-samples`"
                    )
                for h, v in zip(header, row):
                    cols[h].append(v)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"dataset file {path} is not UTF-8 text (byte {exc.start}): the file is corrupt; "
            "run `workbench data fetch ctr-samples`"
        ) from None
    if not cols[header[0]]:
        raise ValueError(f"dataset file {path} has a header but no rows: the file is corrupt")
    return cols


def _floats(path: Path, name: str, values: list[str]) -> np.ndarray:
    out = np.zeros(len(values), dtype=np.float32)
    for i, v in enumerate(values):
        if v.strip() == "":
            continue  # missing dense value: 0 after the log transform, as DLRM's preprocessing does
        try:
            out[i] = float(v)
        except ValueError:
            raise ValueError(
                f"dataset file {path} line {i + 2} column {name}={v!r} is not a number: the file is corrupt"
            ) from None
    return out


def load_sample(name: str, data_dir: str | os.PathLike[str] | None = None) -> CTRData:
    """Sample ``name`` as :class:`CTRData`. Dense values become ``log(1 + max(x, 0))`` (DLRM's transform);
    categorical values are re-indexed per column in order of first appearance (``""`` is a value).

    Raises: FileNotFoundError (dataset absent), ValueError (corrupt file: names the file and line).
    """
    path = sample_path(name, data_dir)
    file, label_col, dense_cols, cat_cols = SAMPLES[name]
    cols = read_columns(path)
    needed = [label_col, *dense_cols, *(cat_cols or ())]
    missing = [c for c in needed if c not in cols]
    if missing:
        raise ValueError(f"dataset file {path} lacks column(s) {missing}: the file is corrupt")
    if cat_cols is None:
        cat_cols = tuple(c for c in cols if c not in _AVAZU_SKIP)
    raw_label = _floats(path, label_col, cols[label_col])
    label = (raw_label >= 4).astype(np.float32) if name == "movielens" else (raw_label > 0).astype(np.float32)
    n = label.size
    dense = (
        np.stack([np.log1p(np.maximum(_floats(path, c, cols[c]), 0)) for c in dense_cols], axis=1)
        if dense_cols
        else np.zeros((n, 0), dtype=np.float32)
    )
    sparse = np.zeros((n, len(cat_cols)), dtype=np.int64)
    cards = []
    for j, c in enumerate(cat_cols):
        index: dict[str, int] = {}
        sparse[:, j] = [index.setdefault(v, len(index)) for v in cols[c]]
        cards.append(len(index))
    return CTRData(label, dense.astype(np.float32), sparse, tuple(cards), tuple(cat_cols), f"{name}-sample")
