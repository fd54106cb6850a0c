"""The greedy compute backlog on real gloo processes: exact against SDPA, same bytes as the current schedule.

References: float64 ``torch.nn.functional.scaled_dot_product_attention`` on the whole sequence (forward and
the three gradients, tolerance 1e-10: only the order of the LSE merges and gradient sums differs, ~1e-15
observed); the bytes and messages ``Comm`` counts for the current schedule on the same processes (equal: the
backlog reorders compute and moves when partials leave, never what travels). Sequence lengths are not
divisible by P (or 2P), so padding is exercised; finishing at all shows the reordered returns do not deadlock.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from workbench.distributed import run_workers
from workbench.llm.mesh_attention.check import KERNELS, make_inputs
from workbench.llm.mesh_attention.layout import shard_sequence, unshard_sequence
from workbench.llm.mesh_attention.plan import resolve_order

pytestmark = pytest.mark.slow
TOL = 1e-10


def _both_schedules(rank: int, world: int, comm, method: str, seq: int, heads: int, causal: bool, kwargs: dict):
    order = resolve_order(None, causal)
    inputs = make_inputs(batch=1, heads=heads, seq=seq, head_dim=4, dtype=torch.float64, seed=seq)
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order) for t in inputs)
    out = {}
    for schedule, comm_blocks in (("current", 1.0), ("greedy-backlog", 0.25), ("greedy-backlog", 4.0)):
        local = [t.clone().requires_grad_() for t in (q, k, v)]
        comm.reset_counters()
        o = KERNELS[method](
            *local, comm, causal=causal, seq_len=seq, schedule=schedule, comm_blocks=comm_blocks, **kwargs
        )
        o.backward(dout)
        out[(schedule, comm_blocks)] = (
            o.detach(),
            [t.grad for t in local],
            comm.bytes_sent,
            comm.counter.messages_sent,
        )
    return out


@pytest.mark.parametrize(
    "method, gpus, seq, heads, causal, kwargs",
    [
        ("mesh", 6, 29, 2, True, {"tile": (2, 3)}),
        ("mesh", 6, 31, 2, False, {"tile": (3, 2)}),
        ("mesh", 8, 37, 2, True, {"gpus_per_node": 4}),
        ("node_mesh", 8, 35, 4, False, {"ulysses_degree": 2, "gpus_per_node": 4}),
    ],
)
def test_backlog_kernel_is_exact_and_moves_the_same_bytes(method, gpus, seq, heads, causal, kwargs):
    per_rank = run_workers(_both_schedules, gpus, method, seq, heads, causal, kwargs, timeout_s=120)
    order = resolve_order(None, causal)
    q, k, v, dout = (t.clone().requires_grad_() for t in make_inputs(
        batch=1, heads=heads, seq=seq, head_dim=4, dtype=torch.float64, seed=seq))  # fmt: skip
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref_grads = torch.autograd.grad(ref, (q, k, v), dout)
    for key in per_rank[0]:
        whole = lambda pick: unshard_sequence([pick(r[key]) for r in per_rank], seq_len=seq, order=order)  # noqa: E731
        assert (whole(lambda x: x[0]) - ref).abs().max().item() <= TOL, key
        for i in range(3):
            assert (whole(lambda x, i=i: x[1][i]) - ref_grads[i]).abs().max().item() <= TOL, (key, i)
        for r in per_rank:
            assert r[key][2:] == r[("current", 1.0)][2:], key  # bytes and messages: identical
