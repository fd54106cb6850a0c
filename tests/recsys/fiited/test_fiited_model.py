"""The analytic memory model (MODEL) against the counters of a real VHPI table: equal to the byte, and its
Zipf coverage against a direct sum."""

import numpy as np
import pytest

from workbench.recsys.fiited.chunked import ChunkedEmbedding
from workbench.recsys.fiited.model import TableModel, paper_scale_rows, zipf_coverage
from workbench.recsys.zipf import zipf_probabilities


@pytest.mark.parametrize("rows,dim,chunk,alpha", [(800, 16, 4, 0.8), (1000, 12, 3, 0.5), (640, 8, 8, 0.8)])
def test_model_bytes_equal_the_counted_bytes(rows, dim, chunk, alpha):
    keys = np.arange(rows, dtype=np.int64) * 31 + 7
    emb = ChunkedEmbedding(keys, dim=dim, chunk=chunk, load_factor=alpha, by_feature=False)
    slots = emb.table.lookup(keys[: rows // 3])
    emb.table.free_chunks(slots, np.zeros_like(slots) + dim // chunk - 1)
    emb.table.compact()
    model = TableModel(rows=rows, dim=dim, chunk=chunk, load_factor=alpha)
    mem = emb.table.memory()
    assert model.fiited_bytes(mem.live_chunks) == mem.embedding_bytes
    assert model.full_bytes == rows * dim * 4 and model.key_bytes == mem.key_bytes


def test_zipf_coverage_equals_a_direct_sum():
    p = zipf_probabilities(3000, 1.05)
    assert zipf_coverage(3000, 1.05, 0.1) == pytest.approx(p[:300].sum(), rel=1e-12)


def test_billion_row_table_floor():
    rows = {(r["dim"], r["chunk"]): r for r in paper_scale_rows()}
    r = rows[128, 16]
    assert r["label"] == "MODEL" and r["ptr_bytes"] == 5  # 8e9 chunks need 33 bits
    assert r["max_reduction"] == pytest.approx(512 / (64 + (8 * 5 + 8) / 0.8))  # chunk + pointers + key
    assert r["stored_share_800x"] < 0.01
