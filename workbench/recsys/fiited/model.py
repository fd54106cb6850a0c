"""MODEL: analytic memory accounting of FIITED's VHPI table at paper scale (billion-row tables), where no run
fits on this machine. Every figure or table built from this module says "MODEL".

Per table of ``R`` ids, dimension ``d``, chunk ``c`` (``nc = d / c`` chunks per vector), 4-byte floats,
load factor ``alpha`` (slots ``S = R / alpha``), pointers of ``p`` bytes (enough bits to address the pool:
``p = ceil(log2(R nc) / 8)``, at least 4), keys of 8 bytes:

    full table                      R d 4
    FIITED at k live chunks         k c 4  (weights)  +  S nc p  (pointers)  +  S 8  (keys)
    optimizer state (Adagrad)       k c 4  (moved and freed with the chunks)
    floor (one chunk per id)        R c 4 + S (nc p + 8)  -> the largest reduction with ``min_chunks = 1``

Beyond the floor, a reduction ``X`` needs ids with *no* entry at all (row pruning): a table that stores only a
share ``q`` of the ids, each with at least one chunk, a key and its pointers, costs
``q R (c 4 + (8 + nc p) / alpha)``, so ``q = d 4 / (X (c 4 + (8 + nc p) / alpha))``. Under Zipf(s) access the
share of lookups that still find their id is ``H(q R, s) / H(R, s)`` (sums as in :mod:`workbench.recsys.zipf`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.recsys.zipf import rank_grid

__all__ = ["TableModel", "LABEL", "zipf_coverage", "paper_scale_rows", "FORMULA"]

LABEL = "MODEL"
FORMULA = "bytes = k c 4 + (R / alpha) ((d / c) p + 8)   (k live chunks, p-byte pointers, 8-byte keys)"


@dataclass(frozen=True)
class TableModel:
    """One embedding table at scale (module docstring)."""

    rows: float
    dim: int
    chunk: int
    load_factor: float = 0.8

    @property
    def n_chunks(self) -> int:
        return self.dim // self.chunk

    @property
    def slots(self) -> float:
        return self.rows / self.load_factor

    @property
    def ptr_bytes(self) -> int:
        return max(4, math.ceil(math.log2(max(2.0, self.rows * self.n_chunks)) / 8))

    @property
    def full_bytes(self) -> float:
        return self.rows * self.dim * 4

    @property
    def pointer_bytes(self) -> float:
        return self.slots * self.n_chunks * self.ptr_bytes

    @property
    def key_bytes(self) -> float:
        return self.slots * 8

    def fiited_bytes(self, live_chunks: float) -> float:
        return live_chunks * self.chunk * 4 + self.pointer_bytes + self.key_bytes

    @property
    def floor_bytes(self) -> float:
        return self.fiited_bytes(self.rows)

    @property
    def max_reduction(self) -> float:
        """Full / floor: the largest reduction with every id keeping one chunk."""
        return self.full_bytes / self.floor_bytes

    def live_chunks_for(self, reduction: float) -> float:
        """Live chunks a table ``reduction`` times smaller than full can hold (NaN below the floor)."""
        k = (self.full_bytes / reduction - self.pointer_bytes) / (self.chunk * 4)
        return k if k >= self.rows else float("nan")

    def stored_share_for(self, reduction: float) -> float:
        """Share of ids that can keep an entry (one chunk, key, pointers) at ``reduction`` (capped at 1)."""
        per_id = self.chunk * 4 + (8 + self.n_chunks * self.ptr_bytes) / self.load_factor
        return min(1.0, self.dim * 4 / (reduction * per_id))


def zipf_coverage(rows: float, s: float, share: float) -> float:
    """Share of Zipf(s) lookups over ``rows`` ids that hit the top ``share`` of ids (by frequency)."""
    if share >= 1:
        return 1.0
    n = int(rows)
    ranks, weights = rank_grid(n)
    w = weights * ranks**-s
    top = share * n
    # ranks up to `top` (a bin straddling it counts in proportion)
    lo = np.concatenate([[0.0], np.cumsum(weights)[:-1]])
    inside = np.clip((top - lo) / weights, 0.0, 1.0)
    return float(np.sum(w * inside) / np.sum(w))


def paper_scale_rows(
    *,
    rows: float = 1e9,
    dims: tuple[int, ...] = (64, 128),
    chunks: tuple[int, ...] = (8, 16),
    load_factor: float = 0.8,
    zipf: float = 1.05,
) -> list[dict]:
    """MODEL rows at billion-id scale: sizes, floor, largest reduction with one chunk per id, the share of ids
    that can be stored at 2.1x and 800x, and the share of Zipf lookups those ids serve."""
    out = []
    for d in dims:
        for c in chunks:
            if d % c:
                continue
            m = TableModel(rows=rows, dim=d, chunk=c, load_factor=load_factor)
            q800 = m.stored_share_for(800.0)
            out.append(
                {
                    "label": LABEL,
                    "rows": rows,
                    "dim": d,
                    "chunk": c,
                    "ptr_bytes": m.ptr_bytes,
                    "full_gb": m.full_bytes / 1e9,
                    "floor_gb": m.floor_bytes / 1e9,
                    "pointer_share_of_full": m.pointer_bytes / m.full_bytes,
                    "max_reduction": m.max_reduction,
                    "reaches_2.1x": m.max_reduction >= 2.1,
                    "stored_share_800x": q800,
                    "lookups_served_800x": zipf_coverage(rows, zipf, q800),
                    "optimizer_gb_at_floor": rows * c * 4 / 1e9,
                }
            )
    return out
