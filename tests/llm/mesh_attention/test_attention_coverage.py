"""Coverage check: every method computes each (Q_i, KV_j) block exactly once (causal: only needed ones).

References: :func:`coverage.needed_blocks` (brute force over layout units: which chunk pairs hold a query and
a key that may interact) against (1) the blocks enumerated from each method's own plan, for every method
including StarTrail (modelled only) and the node-level Mesh, at small and paper-like sizes; and (2) the
``attend_ranges`` / ``attend_ranges_backward`` calls that real gloo runs made (recorded in each worker).
"""

from __future__ import annotations

import pytest
import torch

from workbench.distributed import run_workers
from workbench.llm.mesh_attention import blockwise, coverage, mesh, ring, ulysses
from workbench.llm.mesh_attention.check import KERNELS, make_inputs
from workbench.llm.mesh_attention.layout import shard_sequence
from workbench.llm.mesh_attention.plan import resolve_order
from workbench.llm.mesh_attention.startrail import startrail_team_sizes


@pytest.mark.parametrize(
    "method, gpus, heads, extra",
    [
        ("ring", 7, 1, {}),
        ("ulysses", 4, 4, {}),
        ("usp", 12, 6, {"ulysses_degree": 3}),
        ("usp", 64, 8, {}),
        ("mesh", 12, 1, {}),
        ("mesh", 16, 1, {"gpus_per_node": 4}),
        ("mesh", 64, 1, {"tile": (4, 16), "rotate": False}),
        ("node_mesh", 16, 4, {"gpus_per_node": 4}),
        ("node_mesh", 32, 4, {"gpus_per_node": 8, "ulysses_degree": 2}),
        ("node_mesh", 64, 8, {"gpus_per_node": 8}),
        *[("startrail", p, 1, {"team_size": c}) for p in (16, 64) for c in startrail_team_sizes(p, 8)],
        ("startrail", 256, 1, {"team_size": 8}),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_every_planned_schedule_covers_each_block_once(method, gpus, heads, extra, causal):
    counts = coverage.planned_blocks(method, gpus, heads=heads, **extra)
    # contiguous causal: blocks above the diagonal are not needed (the kernels skip them: see the executed test)
    needed = coverage.needed_blocks(gpus, 64 * gpus, causal=causal, order="contiguous" if causal else None)
    assert coverage.coverage_errors(counts, needed, planned=True) == []
    assert counts.sum() >= needed.sum() * heads


def test_the_old_startrail_layout_fails_the_check():
    """Issue 11's bug: a node-local team gathering Q, K and V gives every member the same first bundle."""
    gpus, c = 64, 8
    counts = coverage.planned_blocks("startrail", gpus, heads=1, team_size=c)
    assert counts.max() == 1
    buggy = counts * 0
    for p in range(gpus):  # team = p // c; every member holds the team's C KV chunks, sub-ring of P/C^2 = 1
        team = range(p // c * c, p // c * c + c)
        for i in team:
            for j in team:
                buggy[0, i, j] += 1
    needed = coverage.needed_blocks(gpus, 64 * gpus, causal=False)
    assert len(coverage.coverage_errors(buggy, needed, planned=True)) > 0


def _record(rank: int, world: int, comm, method: str, seq: int, heads: int, causal: bool, kwargs: dict) -> list:
    """Run ``method`` fwd+bwd with attend_ranges wrapped (in this worker only); return the calls per pass."""
    calls = {"forward": [], "backward": []}
    head_slice = {"ulysses": world, "usp": kwargs.get("ulysses_degree"), "node_mesh": kwargs.get("ulysses_degree")}
    u = head_slice.get(method) or 1
    heads_of_rank = list(range(rank % u * heads // u, (rank % u + 1) * heads // u))

    def wrap(fn, key):
        def inner(*args, **kw):
            q_ranges, k_ranges = (args[3], args[4]) if key == "forward" else (args[6], args[7])
            calls[key].append((list(q_ranges), list(k_ranges), heads_of_rank))
            return fn(*args, **kw)

        return inner

    for module in (ring, mesh, ulysses):
        module.attend_ranges = wrap(blockwise.attend_ranges, "forward")
        module.attend_ranges_backward = wrap(blockwise.attend_ranges_backward, "backward")
    order = resolve_order(None, causal)
    q, k, v, dout = (
        shard_sequence(t, rank=rank, world_size=world, order=order)
        for t in make_inputs(batch=1, heads=heads, seq=seq, head_dim=4, dtype=torch.float64, seed=3)
    )
    local = [t.clone().requires_grad_() for t in (q, k, v)]
    KERNELS[method](*local, comm, causal=causal, seq_len=seq, **kwargs).backward(dout)
    return calls


@pytest.mark.slow
@pytest.mark.parametrize(
    "method, gpus, heads, kwargs",
    [
        ("ring", 3, 2, {}),
        ("ulysses", 4, 4, {}),
        ("usp", 6, 6, {"ulysses_degree": 3}),
        ("mesh", 6, 2, {"tile": (2, 3)}),
        ("mesh", 8, 2, {"gpus_per_node": 4}),
        ("node_mesh", 8, 4, {"ulysses_degree": 4, "gpus_per_node": 4}),
        ("node_mesh", 8, 4, {"ulysses_degree": 2, "gpus_per_node": 4}),
        ("mesh", 6, 2, {"tile": (2, 3), "schedule": "greedy-backlog", "comm_blocks": 0.25}),
        ("node_mesh", 8, 4, {"ulysses_degree": 2, "gpus_per_node": 4, "schedule": "greedy-backlog"}),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
def test_every_executed_schedule_covers_each_block_once(method, gpus, heads, kwargs, causal):
    seq = 5 * gpus + 3  # padding: the last chunk(s) are partly or wholly padding
    per_rank = run_workers(_record, gpus, method, seq, heads, causal, kwargs)
    needed = coverage.needed_blocks(gpus, seq, causal=causal)
    for key in ("forward", "backward"):
        calls = [c for r in per_rank for c in r[key]]
        counts = coverage.executed_blocks(calls, gpus, seq, heads=heads, causal=causal)
        assert coverage.coverage_errors(counts, needed, planned=False) == [], key
