"""Mesh-Attention specifics: a = 1, b = P reproduces Ring; every tile shape and placement is exact.

References: ``ring.ring_attention`` on the same shards (outputs bit-for-bit: same blocks merged in the same
order; gradients to 1e-12: the dk/dv partial sums associate differently), and float64 SDPA via
``check.run_check`` for every factorisation a x b of P, with and without topology-aware placement.
"""

from __future__ import annotations

import pytest
import torch

from workbench.distributed import run_workers
from workbench.llm.mesh_attention.check import make_inputs, run_check
from workbench.llm.mesh_attention.layout import shard_sequence
from workbench.llm.mesh_attention.mesh import mesh_attention
from workbench.llm.mesh_attention.plan import factor_pairs
from workbench.llm.mesh_attention.ring import ring_attention

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def _ring_vs_mesh(rank: int, world: int, comm, seq: int, causal: bool) -> tuple:
    order = "zigzag" if causal else "contiguous"
    inputs = make_inputs(batch=2, heads=3, seq=seq, head_dim=4, dtype=torch.float64, seed=seq)
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order) for t in inputs)
    results = []
    for fn, kwargs in ((ring_attention, {}), (mesh_attention, {"tile": (1, world)})):
        local = [t.clone().requires_grad_() for t in (q, k, v)]
        comm.reset_counters()
        out = fn(*local, comm, causal=causal, seq_len=seq, **kwargs)
        out.backward(dout)
        results.append((out.detach(), [t.grad for t in local], comm.bytes_sent, comm.counter.messages_sent))
    return results


@pytest.mark.parametrize("world, seq, causal", [(1, 5, True), (3, 22, True), (4, 30, True), (5, 23, False)])
def test_mesh_with_one_row_is_ring(world: int, seq: int, causal: bool) -> None:
    for (ring_out, ring_grads, ring_bytes, ring_msgs), (mesh_out, mesh_grads, mesh_bytes, mesh_msgs) in run_workers(
        _ring_vs_mesh, world, seq, causal
    ):
        assert torch.equal(mesh_out, ring_out)
        for g_mesh, g_ring in zip(mesh_grads, ring_grads):
            assert (g_mesh - g_ring).abs().max().item() <= 1e-12
        assert mesh_bytes == ring_bytes and mesh_msgs == ring_msgs


@pytest.mark.parametrize("gpus, per_node", [(4, None), (6, None), (8, 4), (8, 2)])
@pytest.mark.parametrize("causal", [False, True])
def test_every_tile_matches_sdpa(gpus: int, per_node, causal: bool) -> None:
    for tile in factor_pairs(gpus):
        (res,) = run_check(
            gpus=gpus,
            seq=3 * gpus + 1,
            heads=2,
            head_dim=4,
            causal=causal,
            dtype="float64",
            methods=("mesh",),
            tile=tile,
            gpus_per_node=per_node,
            seed=gpus,
        )
        assert res["tile"] == list(tile)
        assert res["max_abs_err_out"] <= 1e-10 and res["max_abs_err_grad"] <= 1e-10, tile
        assert res["bytes_per_rank"] == res["model_bytes_per_rank"], tile
        assert res["bytes_sent_inter_node_per_rank"] == res["model_bytes_sent_inter_node_per_rank"], tile


def test_square_tile_moves_fewer_bytes_than_ring() -> None:
    ring, mesh = run_check(gpus=9, seq=36, heads=2, head_dim=8, causal=True, dtype="float64", methods=("ring", "mesh"))
    assert mesh["tile"] == [3, 3]
    ratio = ring["bytes_per_rank"][0] / mesh["bytes_per_rank"][0]
    assert 1.9 <= ratio <= 2.3  # (6/11)(sqrt(9)+1) = 2.18, the paper's (sqrt(P)+1)/2 = 2


def _rotation(rank: int, world: int, comm, causal: bool) -> tuple:
    inputs = make_inputs(batch=1, heads=2, seq=4 * world, head_dim=4, dtype=torch.float64, seed=7)
    order = "zigzag" if causal else "contiguous"
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order) for t in inputs)
    found = []
    for rotation in (True, False):
        local = [t.clone().requires_grad_() for t in (q, k, v)]
        comm.reset_counters()
        out = mesh_attention(*local, comm, causal=causal, tile=(3, 3), kv_rotation=rotation)
        out.backward(dout)
        found.append((out.detach(), [t.grad for t in local], comm.bytes_sent))
    return found


def test_kv_rotation_changes_order_not_results() -> None:
    for (out_r, grads_r, bytes_r), (out_n, grads_n, bytes_n) in run_workers(_rotation, 9, True):
        assert bytes_r == bytes_n
        assert (out_r - out_n).abs().max().item() <= 1e-12
        for g_r, g_n in zip(grads_r, grads_n):
            assert (g_r - g_n).abs().max().item() <= 1e-12
