"""The greedy compute backlog (``plan.greedy_schedule(schedule="greedy-backlog")``, an INFERENCE about the
paper's greedy rule): hand-checked timelines, coverage, model consistency, bad input.

References: timelines worked out by hand (block = 1 s; every message on one FIFO link, posted at t=0); the
brute-force :func:`coverage.needed_blocks`; the event-by-event :func:`timeline.schedule_events` against the
closed-form :func:`timeline.tile_timeline` the cluster model uses. The real gloo runs (exact against SDPA,
same bytes as the current schedule, executed coverage) are in ``test_attention_backlog_runs.py`` (slow).
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention import coverage
from workbench.llm.mesh_attention.model import _tile_program, model_attention
from workbench.llm.mesh_attention.plan import SCHEDULES, factor_pairs, greedy_schedule
from workbench.llm.mesh_attention.timeline import schedule_events, tile_timeline


def _events(schedule: str, comm_blocks: float, fetch: dict, send: dict) -> dict[str, tuple[float, float]]:
    steps = greedy_schedule(2, 3, schedule=schedule, comm_blocks=comm_blocks)
    return {
        label: (start, end)
        for _, label, start, end in schedule_events(steps, block_seconds=1.0, fetch_seconds=fetch, send_seconds=send)
    }


def test_hand_checked_backlog_fills_the_partial_return_wait():
    """Tile (2, 3), rank at (0, 0), forward. Fetch order q1, kv2, kv1 (rule 1); q 0.25 s, kv 0.5 s: the chunks
    land at 0.25, 0.75, 1.25 s (compute-bound); the partial O+LSE of row 1 takes 2 s to its owner.

    current:        (0,0) 0-1, (1,0) 1-2, (1,2) 2-3, (0,2) 3-4, (1,1) 4-5 -> out1 5-7, (0,1) 5-6: ends at 7 s,
                    1 s of the return exposed.
    greedy-backlog: (0,0) 0-1 [fills the wait for q1: est. arrival 0.25], (1,0) 1-2, (1,2) 2-3 [(0,2) held
                    back], (1,1) 3-4 -> out1 4-6, then the backlog (0,2) 4-5, (0,1) 5-6: ends at 6 s, the return
                    hidden behind the two held-back blocks.
    """
    fetch, send = {"q": 0.25, "kv": 0.5}, {"out": 2.0}
    cur = _events("current", 1.0, fetch, send)
    bl = _events("greedy-backlog", 0.25, fetch, send)
    assert cur["(0,2)"] == (3.0, 4.0) and cur["(1,1)"] == (4.0, 5.0) and cur["out1"] == (5.0, 7.0)
    assert max(e for _, e in cur.values()) == 7.0
    assert bl["(1,1)"] == (3.0, 4.0) and bl["out1"] == (4.0, 6.0)
    assert bl["(0,2)"] == (4.0, 5.0) and bl["(0,1)"] == (5.0, 6.0)  # the backlog runs while out1 travels
    assert max(e for _, e in bl.values()) == 6.0
    # (0,2) was ready at 0.75 s (kv2 landed) and was held back behind the urgent (1,2) and (1,1)
    assert bl["kv2"][1] < bl["(1,2)"][0] < bl["(0,2)"][0] and bl["(1,1)"][1] <= bl["(0,2)"][0]


def test_hand_checked_backlog_fills_a_fetch_wait():
    """Same tile, communication-bound: q 1 s, kv 2 s (land at 1, 3, 5 s), planner estimate comm_blocks = 1.

    greedy-backlog: (0,0) 0-1 fills the wait for q1, (1,0) 1-2, idle 2-3 (backlog empty), kv2 lands at 3:
    (1,2) 3-4 urgent, (0,2) held back; est. clock 4 < kv1's est. arrival 5, so the held-back (0,2) runs 4-5
    while the rank waits for kv1; then (1,1) 5-6 -> out1, (0,1) 6-7.
    """
    ev = _events("greedy-backlog", 1.0, {"q": 1.0, "kv": 2.0}, {"out": 0.5})
    assert ev["q1"][1] == 1.0 and ev["kv2"][1] == 3.0 and ev["kv1"][1] == 5.0
    assert ev["(0,0)"] == (0.0, 1.0) and ev["(1,0)"] == (1.0, 2.0) and ev["(1,2)"] == (3.0, 4.0)
    assert ev["(0,2)"] == (4.0, 5.0)  # ready at 3 s, held back, spent inside the wait for kv1 (lands at 5 s)
    assert ev["(0,2)"][1] <= ev["kv1"][1]
    assert ev["(1,1)"] == (5.0, 6.0) and ev["out1"] == (6.0, 6.5) and ev["(0,1)"] == (6.0, 7.0)
    steps = greedy_schedule(2, 3, schedule="greedy-backlog", comm_blocks=1.0)
    order = [(s.op, s.kind, s.row, s.col) for s in steps if s.op != "fetch"]
    assert order.index(("compute", None, 0, 2)) < order.index(("wait", "kv", None, 1))


def test_backward_backlog_holds_only_the_diagonal():
    """Every off-diagonal block feeds a dQ or dK/dV partial that leaves, so with comm_blocks > 0 the backward
    program is the current one (the diagonal fills the first wait in both)."""
    for a, b in ((2, 3), (4, 4), (3, 5)):
        assert greedy_schedule(a, b, backward=True, schedule="greedy-backlog", comm_blocks=0.5) == greedy_schedule(
            a, b, backward=True
        )


@pytest.mark.parametrize("comm_blocks", [0.0, 0.1, 1.0, 7.0])
@pytest.mark.parametrize("backward", [False, True])
def test_every_tile_schedule_computes_each_block_once(comm_blocks, backward):
    for a, b in factor_pairs(12):
        for row in range(a):
            for col in range(b):
                steps = greedy_schedule(
                    a, b, row=row, col=col, backward=backward, schedule="greedy-backlog", comm_blocks=comm_blocks
                )
                blocks = sorted((s.row, s.col) for s in steps if s.op == "compute")
                assert blocks == [(r, c) for r in range(a) for c in range(b)]
                sends = [(s.kind, s.row, s.col) for s in steps if s.op == "send"]
                assert len(sends) == len(set(sends)) == (a - 1) + (b - 1 if backward else 0)


@pytest.mark.parametrize(
    "method, gpus, heads, extra",
    [
        ("mesh", 12, 1, {}),
        ("mesh", 16, 1, {"gpus_per_node": 4}),
        ("mesh", 64, 1, {"tile": (4, 16), "rotate": False}),
        ("node_mesh", 16, 4, {"gpus_per_node": 4}),
        ("node_mesh", 64, 8, {"gpus_per_node": 8}),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backward", [False, True])
def test_backlog_plan_passes_the_coverage_check(method, gpus, heads, extra, causal, backward):
    counts = coverage.planned_blocks(
        method, gpus, heads=heads, schedule="greedy-backlog", comm_blocks=0.3, backward=backward, **extra
    )
    needed = coverage.needed_blocks(gpus, 64 * gpus, causal=causal, order="contiguous" if causal else None)
    assert coverage.coverage_errors(counts, needed, planned=True) == []


@pytest.mark.parametrize("schedule, comm_blocks", [("current", 1.0), ("greedy-backlog", 0.25), ("greedy-backlog", 3)])
@pytest.mark.parametrize("backward", [False, True])
def test_event_timeline_equals_the_closed_form(schedule, comm_blocks, backward):
    """One rank, mixed link classes: schedule_events (event by event) == tile_timeline (closed form)."""
    a, b, blk = 3, 4, 0.7
    steps = greedy_schedule(a, b, backward=backward, schedule=schedule, comm_blocks=comm_blocks)
    prog = _tile_program(a, b, backward, schedule, float(comm_blocks))
    sec = {"q": 0.4, "kv": 0.9, "out": 0.5, "dq": 0.45, "dkv": 1.1}
    queue = {"q": 0, "kv": 1, "out": 1, "dq": 0, "dkv": 1}
    ev = schedule_events(
        steps, block_seconds=blk, fetch_seconds=sec, send_seconds=sec, fetch_queue=queue, send_queue=queue
    )
    col = lambda kinds: np.array([[sec[k]] for k in kinds])  # noqa: E731
    qcol = lambda kinds: np.array([[queue[k]] for k in kinds])  # noqa: E731
    tt = tile_timeline(
        fetch_seconds=col(prog.fetch_kind),
        fetch_queue=qcol(prog.fetch_kind),
        wait_order=prog.wait_order,
        segment_waits=prog.segment_waits,
        segment_seconds=prog.segment_blocks * blk,
        send_after_segment=prog.send_after,
        send_seconds=col(prog.send_kind),
        send_queue=qcol(prog.send_kind),
    )
    compute_end = max(e for kind, _, _, e in ev if kind == "compute")
    send_end = sorted(e for kind, _, _, e in ev if kind == "send")
    assert compute_end == pytest.approx(float(tt.compute_end[0]), abs=1e-12)
    assert send_end == pytest.approx(sorted(tt.send_end[:, 0]), abs=1e-12)


def test_model_backlog_gains_forward_only_at_paper_scale():
    """MODEL, 256 GPUs, 1M tokens, 50 GB/s: the backlog shortens the forward pass; backward is the same
    program (diagonal-only backlog), so its time is unchanged; bytes are identical."""
    kw = dict(gpus=256, seq=1 << 20, heads=32, head_dim=128, causal=True, dtype_bytes=2,
              cluster=ClusterSpec(inter_node_bw_gbps=50.0, gpu_tflops=400.0, gpus_per_node=8))  # fmt: skip
    cur = model_attention("mesh", **kw)
    bl = model_attention("mesh", schedule="greedy-backlog", **kw)
    assert bl.forward_seconds < cur.forward_seconds
    assert bl.backward_seconds == pytest.approx(cur.backward_seconds, rel=1e-12)
    assert np.array_equal(bl.bytes_per_rank, cur.bytes_per_rank)
    assert bl.compute_seconds == pytest.approx(cur.compute_seconds, rel=1e-12)


def test_schedule_refusals_name_the_parameter():
    with pytest.raises(ValueError, match=r"schedule='eager' is unknown: valid values are"):
        greedy_schedule(2, 2, schedule="eager")
    with pytest.raises(ValueError, match=r"comm_blocks=-1 is out of range"):
        greedy_schedule(2, 2, schedule="greedy-backlog", comm_blocks=-1)
    with pytest.raises(ValueError, match=r"schedule='x' is unknown"):
        model_attention("mesh", gpus=4, seq=64, heads=2, head_dim=8, causal=False, dtype_bytes=4,
                        cluster=ClusterSpec(), schedule="x")  # fmt: skip
    assert SCHEDULES == ("current", "greedy-backlog")


def test_config_schedule_reaches_the_model_and_the_json():
    from workbench.llm.mesh_attention.config import MeshAttentionConfig
    from workbench.llm.mesh_attention.runner import run

    base = dict(mode="model", gpus=256, seq=1 << 20, heads=32, head_dim=128, causal=True, dtype="bfloat16")
    cur, bl = (run(MeshAttentionConfig(**base, schedule=s)).to_json() for s in ("current", "greedy-backlog"))
    assert (cur["schedule"], bl["schedule"]) == ("current", "greedy-backlog")
    sec = {name: {r["method"]: r.get("model_seconds") for r in d["results"]} for name, d in (("c", cur), ("b", bl))}
    assert sec["b"]["mesh"] < sec["c"]["mesh"] and sec["b"]["node_mesh"] <= sec["c"]["node_mesh"]
    assert sec["b"]["ring"] == sec["c"]["ring"] and sec["b"]["usp"] == sec["c"]["usp"]  # only Mesh is scheduled
    with pytest.raises(ValueError, match=r"schedule='eager' is not allowed"):
        MeshAttentionConfig(**base, schedule="eager")
