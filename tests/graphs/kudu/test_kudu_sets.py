"""Batched set kernels of the Kudu engine against numpy's set routines on seeded random sets.

Reference: ``np.intersect1d`` / ``np.setdiff1d`` / ``np.union1d`` and a Python filter for the bounds and
the distinct vertices (integers: exact equality).
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.graphs.kudu import sets as S


def _store(rng, rows: int, universe: int):
    lists = [np.unique(rng.integers(0, universe, rng.integers(0, 14))).astype(np.int32) for _ in range(rows)]
    indptr = np.zeros(rows + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([x.shape[0] for x in lists])
    return indptr, np.concatenate(lists + [np.zeros(0, np.int32)]), lists


NUMPY = {
    S.OP_AND: np.intersect1d,
    S.OP_SUB: np.setdiff1d,
    S.OP_OR: np.union1d,
    S.OP_RSUB: lambda a, b: np.setdiff1d(b, a),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("op", [S.OP_AND, S.OP_SUB, S.OP_OR, S.OP_RSUB])
def test_row_op_matches_numpy(seed: int, op: int) -> None:
    rng = np.random.default_rng(seed)
    sip, svals, slists = _store(rng, 7, 40)
    lip, lvals, llists = _store(rng, 5, 40)
    rows = rng.integers(-1, 7, 30)  # -1: no set yet
    lidx = rng.integers(0, 5, 30)
    ip, vals = S.row_op(op, sip, svals, rows, lip, lvals, lidx)
    for i, (r, j) in enumerate(zip(rows, lidx)):
        if r < 0:
            expect = np.zeros(0) if op == S.OP_SUB else llists[j]
        else:
            expect = NUMPY[op](slists[r], llists[j])
        assert vals[ip[i] : ip[i + 1]].tolist() == list(expect)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(
    "lower, upper, distinct",
    [((), (), ()), ((0,), (), (1, 2)), ((0,), (1,), (2,)), ((), (2,), (0, 1)), ((0, 1), (), (2,))],
)
def test_filter_and_count_rows(seed: int, lower, upper, distinct) -> None:
    rng = np.random.default_rng(seed)
    ip, vals, lists = _store(rng, 9, 25)
    verts = np.stack([rng.permutation(25)[:3] for _ in range(9)]).astype(np.int32)  # distinct per embedding
    rows = np.arange(9, dtype=np.int64)
    cols = [np.asarray(c, dtype=np.int64) for c in (lower, upper, distinct)]
    cip, cvals = S.filter_rows(ip, vals, rows, verts, *cols)
    total = 0
    for i in range(9):
        lo = max([int(verts[i, j]) for j in lower], default=-1)
        hi = min([int(verts[i, j]) for j in upper], default=1 << 40)
        expect = [int(x) for x in lists[i] if lo < x < hi and all(x != verts[i, j] for j in distinct)]
        assert cvals[cip[i] : cip[i + 1]].tolist() == expect
        total += len(expect)
    assert S.count_rows(ip, vals, rows, verts, *cols) == total


def test_count_rows_removes_two_distinct_vertices_inside_the_set() -> None:
    # regression: after removing the first distinct vertex the second must still be found
    ip = np.array([0, 4], dtype=np.int64)
    vals = np.array([1, 2, 3, 4], dtype=np.int32)
    verts = np.array([[4, 3]], dtype=np.int32)
    none, both = np.zeros(0, np.int64), np.array([0, 1], np.int64)
    assert S.count_rows(ip, vals, np.zeros(1, np.int64), verts, none, none, both) == 2
