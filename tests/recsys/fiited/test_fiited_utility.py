"""Utility plan and pruning schedule against brute force: the plan keeps a prefix per vector, chunk 0 always, the
budget exactly, and the best chunks (checked against sorting every chunk); the schedule meets the final budget."""

import numpy as np
import pytest
import torch

from workbench.recsys.fiited.utility import ChunkUtility, Schedule, plan_chunks, schedule_curve, target_chunks


@pytest.mark.parametrize("seed", range(5))
def test_plan_is_a_prefix_meets_the_budget_and_keeps_the_best(seed):
    rng = np.random.default_rng(seed)
    s, nc = 31, 5
    u = rng.random((s, nc))
    occupied = rng.random(s) < 0.8
    live = np.ones((s, nc), dtype=bool)
    budget = int(occupied.sum()) + 17
    keep = plan_chunks(u, live, occupied, budget, regrow=True)
    assert keep.sum() == budget
    assert np.all(keep[occupied, 0]) and not keep[~occupied].any()
    assert np.all(np.diff(keep.astype(int), axis=1) <= 0)  # prefixes
    # brute force: the 17 extra chunks are the best of the running-minimum utilities of chunks 1..nc-1
    mono = np.minimum.accumulate(u, axis=1)[occupied][:, 1:].reshape(-1)
    chosen = keep[occupied][:, 1:].reshape(-1)
    assert mono[chosen].min() >= mono[~chosen].max()


def test_without_regrowth_only_live_chunks_compete():
    u = np.array([[1.0, 5.0, 5.0], [1.0, 0.1, 0.1]])
    live = np.array([[True, False, False], [True, True, True]])
    keep = plan_chunks(u, live, np.array([True, True]), 4, regrow=False)
    assert keep.tolist() == [[True, False, False], [True, True, True]]
    keep = plan_chunks(u, live, np.array([True, True]), 4, regrow=True)
    assert keep.tolist() == [[True, True, True], [True, False, False]]


def test_schedule_reaches_the_final_budget_and_starts_full():
    sched = Schedule(total_steps=97, warmup=20, interval=13, kind="gradual", ramp=0.5)
    assert sched.events()[0] == 20 and sched.events()[-1] == 97
    steps, budget = schedule_curve(sched, 1000, 300)
    assert budget[0] == 1000 and budget[19] == 1000 and budget[-1] == 300
    assert np.all(np.diff(budget) <= 0)
    assert target_chunks(Schedule(total_steps=10, warmup=2, interval=3, kind="one-shot"), 2, 1000, 300) == 300


def test_utility_is_frequency_times_gradient():
    util = ChunkUtility(4, 2, 3, decay=0.5)
    slots = np.array([0, 0, 1])
    out = torch.zeros(3, 6, requires_grad=True)
    util.observe(slots, out)
    grad = torch.tensor([[3.0, 4, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0]])
    out.backward(grad)
    util.update()
    u = util.utility()
    assert u[0, 0] == pytest.approx(2 * 2.5)  # 2 accesses per step x mean norm (5 + 0) / 2
    assert u[1, 1] == pytest.approx(1.0) and u[2].sum() == 0
    with pytest.raises(ValueError, match="decay=1"):
        ChunkUtility(2, 2, 2, decay=1)


@pytest.mark.parametrize("seed", range(4))
def test_plan_may_drop_a_vector_entirely_when_min_chunks_is_0(seed):
    """Brute force: with no forced chunk 0 the plan keeps exactly the ``budget`` best running-minimum utilities,
    a prefix per vector, and vectors whose first chunk loses keep nothing."""
    rng = np.random.default_rng(seed)
    s, nc = 23, 4
    u = rng.random((s, nc))
    occupied = rng.random(s) < 0.8
    live = np.ones((s, nc), dtype=bool)
    budget = 9
    keep = plan_chunks(u, live, occupied, budget, regrow=True, min_chunks=0)
    assert keep.sum() == budget and not keep[~occupied].any()
    assert np.all(np.diff(keep.astype(int), axis=1) <= 0)
    mono = np.minimum.accumulate(u, axis=1)[occupied].reshape(-1)
    chosen = keep[occupied].reshape(-1)
    assert mono[chosen].min() >= mono[~chosen].max()
    assert (keep[occupied].sum(axis=1) == 0).any()  # some vectors drop to no chunk at all
