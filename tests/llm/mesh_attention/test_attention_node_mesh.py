"""Node-level Mesh (the workbench's extension: Ulysses inside a node x Mesh across nodes).

References: float64 SDPA on the whole sequence via ``check.run_check`` (forward and each gradient on its own,
fp64 1e-10: only the order of the LSE merges and gradient sums differs from SDPA, ~1e-15 observed); the bytes
``Comm`` counted per peer, split by node (exact equality with ``volume.predict_bytes_per_rank``, intra-node
and inter-node separately); the flat Mesh on the same processes (fewer bytes cross the network).
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.check import run_check
from workbench.llm.mesh_attention.model import model_attention
from workbench.llm.mesh_attention.volume import predict_bytes_per_rank

TOL = 1e-10  # fp64 against fp64 SDPA: merge and summation order only


# (gpus, gpus_per_node, seq, heads, causal, ulysses_degree, node_tile): seq not divisible by P (or 2P) anywhere
CASES = [
    (8, 4, 37, 4, True, None, (1, 2)),  # 2 nodes of 4: u = 4, Mesh over 2 groups, one row
    (8, 4, 35, 4, False, None, (2, 1)),  # ... one column
    (8, 4, 35, 4, True, 2, None),  # u = 2: 4 groups, 2 per node, tile (2, 2) placed topology-aware
    (4, 2, 21, 2, False, None, None),
    (6, 3, 26, 3, True, None, None),  # odd node size
]


@pytest.mark.slow
@pytest.mark.parametrize("gpus, per_node, seq, heads, causal, u, node_tile", CASES)
def test_node_mesh_is_exact_and_counted_bytes_equal_the_model(gpus, per_node, seq, heads, causal, u, node_tile):
    node, flat = run_check(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=4,
        causal=causal,
        dtype="float64",
        methods=("node_mesh", "mesh"),
        gpus_per_node=per_node,
        ulysses_degree=u,
        node_tile=node_tile,
        seed=seq,
    )
    assert node["method"] == "node_mesh"
    if node_tile is not None:
        assert node["tile"] == list(node_tile)
    for key in ("max_abs_err_out", "max_abs_err_dq", "max_abs_err_dk", "max_abs_err_dv"):
        assert node[key] <= TOL, key
    assert node["bytes_per_rank"] == node["model_bytes_per_rank"]
    assert node["bytes_sent_inter_node_per_rank"] == node["model_bytes_sent_inter_node_per_rank"]
    assert node["bytes_sent_intra_node_per_rank"] == node["model_bytes_sent_intra_node_per_rank"]
    assert node["bytes_recv_inter_node_per_rank"] == node["bytes_sent_inter_node_per_rank"]  # symmetric
    assert min(node["bytes_sent_inter_node_per_rank"]) > 0 and min(node["bytes_sent_intra_node_per_rank"]) > 0
    # never more than the flat Mesh across the network (equal at 2 nodes with a 1 x 2 tile: one KV peer each)
    assert max(node["bytes_sent_inter_node_per_rank"]) <= max(flat["bytes_sent_inter_node_per_rank"])


def test_node_mesh_with_degree_one_is_the_flat_mesh():
    kw = {"gpus": 16, "seq": 1000, "heads": 4, "head_dim": 8, "causal": True, "dtype_bytes": 4, "gpus_per_node": 4}
    node = predict_bytes_per_rank("node_mesh", **kw, ulysses_degree=1, tile=(4, 4))
    flat = predict_bytes_per_rank("mesh", **kw, tile=(4, 4))
    for key in ("sent", "recv", "forward_sent", "messages_sent", "sent_inter_node", "sent_intra_node"):
        np.testing.assert_array_equal(node[key], flat[key], err_msg=key)


def _inter_units(method: str, gpus: int) -> float:
    seq, heads, d = 1 << 20, 32, 128
    r = model_attention(
        method, gpus=gpus, seq=seq, heads=heads, head_dim=d, causal=True, dtype_bytes=2, cluster=ClusterSpec()
    )
    return float(r.bytes_sent_inter_node_per_rank.max()) / (heads * (seq // gpus) * d * 2)


def test_node_level_cuts_what_crosses_the_network_at_paper_scale():
    """Inter-node elements per rank (fwd+bwd, Q-chunk units), 8 GPUs/node: the node level fetches each
    off-node chunk once per node. P=256: flat Mesh 16x16 ~123, node-level (u=8, 8x4 over 32 nodes) ~53."""
    assert _inter_units("node_mesh", 256) == pytest.approx(53, abs=0.5)
    assert _inter_units("mesh", 256) == pytest.approx(123, abs=0.5)
    for p in (64, 256):
        node = _inter_units("node_mesh", p)
        assert all(node < _inter_units(m, p) for m in ("mesh", "usp", "startrail", "ring"))
