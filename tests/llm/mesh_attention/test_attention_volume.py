"""``volume.predict_bytes_per_rank`` against the bytes ``Comm`` counted in real runs, and its scaling.

Reference: the byte counters of ``workbench.distributed.Comm`` during ``check.run_check`` (exact equality,
per rank: sent, received, forward part, messages, bytes to other nodes); for scaling, the paper's
V_ring / V_mesh ~ (sqrt(P)+1)/2.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from attention_cases import CASES, check_results, ids

from workbench.llm.mesh_attention.volume import predict_bytes_per_rank

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_counted_bytes_equal_prediction(case) -> None:
    gpus, seq, heads, head_dim, causal, dtype, extra = case
    for res in check_results(case):
        if "error" in res:
            continue
        model = predict_bytes_per_rank(
            res["method"],
            gpus=gpus,
            seq=seq,
            heads=heads,
            head_dim=head_dim,
            causal=causal,
            dtype_bytes=8 if dtype == "float64" else 4,
            tile=res["tile"],
            ulysses_degree=res["ulysses_degree"],
            gpus_per_node=extra.get("gpus_per_node"),
        )
        method = res["method"]
        assert res["bytes_sent_per_rank"] == model["sent"].tolist(), method
        assert res["bytes_recv_per_rank"] == model["recv"].tolist(), method
        assert res["bytes_per_rank"] == model["total"].tolist() == res["model_bytes_per_rank"], method
        assert res["forward_bytes_sent_per_rank"] == model["forward_sent"].tolist(), method
        assert res["messages_sent_per_rank"] == model["messages_sent"].tolist(), method
        assert res["bytes_sent_inter_node_per_rank"] == model["sent_inter_node"].tolist(), method
        if gpus > 1:
            assert min(res["bytes_per_rank"]) > 0


def _total(method: str, gpus: int, **kw) -> int:
    kw = {"seq": 1 << 20, "heads": 32, "head_dim": 128, "causal": True, "dtype_bytes": 2} | kw
    return int(predict_bytes_per_rank(method, gpus=gpus, **kw)["total"][0])


def test_ring_is_flat_and_mesh_falls_like_inverse_sqrt() -> None:
    gpus = [16, 64, 256, 1024]
    ring = np.array([_total("ring", p) for p in gpus], dtype=float)
    mesh = np.array([_total("mesh", p, tile=(math.isqrt(p), math.isqrt(p))) for p in gpus], dtype=float)
    assert ring.max() / ring.min() < 1.07  # 6(P-1)/P chunks of S/P... ~ constant
    scaled = mesh * np.sqrt(gpus)
    assert scaled.max() / scaled.min() < 1.3  # ~ 11 (sqrt(P)-1)/P ~ 1/sqrt(P)
    for p, r, m in zip(gpus, ring, mesh):
        paper = (math.sqrt(p) + 1) / 2
        assert paper <= r / m <= 1.1 * paper  # ours: (6/11)(sqrt(P)+1)


def test_volume_allocates_nothing_of_sequence_size() -> None:
    tracemalloc.start()
    for method in ("ring", "ulysses", "usp", "mesh"):
        heads = 1024 if method == "ulysses" else 64  # Ulysses needs heads % P == 0
        out = predict_bytes_per_rank(
            method,
            gpus=1024,
            seq=4 * 1024 * 1024,
            heads=heads,
            head_dim=128,
            causal=True,
            dtype_bytes=2,
            gpus_per_node=8,
        )
        assert out["total"].shape == (1024,) and out["total"].dtype == np.int64
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024


def test_forward_and_backward_parts_add_up() -> None:
    out = predict_bytes_per_rank("mesh", gpus=12, seq=1000, heads=4, head_dim=16, causal=False, dtype_bytes=4)
    assert np.array_equal(out["sent"], out["forward_sent"] + out["backward_sent"])
    assert np.array_equal(out["total"], out["sent"] + out["recv"])
    ring = predict_bytes_per_rank("ring", gpus=12, seq=1000, heads=4, head_dim=16, causal=False, dtype_bytes=4)
    assert np.array_equal(ring["backward_sent"], 2 * ring["forward_sent"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"method": "ulysses", "heads": 6}, r"heads=6 is not divisible by the Ulysses degree 4: .*heads % degree == 0"),
        ({"method": "usp", "ulysses_degree": 3}, r"ulysses_degree=3 does not divide gpus=4"),
        ({"method": "mesh", "tile": (2, 3)}, r"tile=\(2, 3\) has a\*b=6 but gpus=4"),
        ({"method": "ring", "seq": 0}, r"seq=0 is out of range: valid range is >= 1"),
        ({"method": "flash"}, r"method='flash' is unknown"),
    ],
)
def test_volume_rejects_bad_parameters(kwargs, message) -> None:
    base = {"gpus": 4, "seq": 64, "heads": 8, "head_dim": 8, "causal": False, "dtype_bytes": 4}
    method = kwargs.pop("method")
    with pytest.raises(ValueError, match=message):
        predict_bytes_per_rank(method, **(base | kwargs))
