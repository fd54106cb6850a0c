"""Every schedule gives the parameters of plain in-memory training with gradient accumulation.

Reference: ``reference.train_in_memory`` (the whole GPT in memory, ``(loss/M).backward()`` per micro-batch,
``torch.optim.Adam(foreach=False)``). fp64: bit-identical where the reduction order is the same (horizontal:
micro-batches 0..M-1 as the reference; vertical: the snake order, against the reference summing in that order,
and any order when M <= 2 since addition commutes); otherwise fp64 within 1e-12 and fp32 within 1e-6 relative
(round-off of a different summation order, amplified by at most a few Adam steps).
"""

import pytest
import torch
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.reference import train_in_memory

pytestmark = pytest.mark.slow  # real offloaded training runs (seconds)

#: Adam turns a round-off difference in a nearly cancelled gradient into up to lr x O(1) of a parameter (the
#: update is about lr x sign(g)); lr = 1e-3 keeps fp32 summation-order noise near 1e-7 of the largest
#: parameter (at lr = 1e-2 it reaches 2e-6, measured): the tolerance below is relative to the largest one.
LR = 1e-3


def _ref(cfg, M, steps, accumulation="sequential"):
    return train_in_memory(cfg, micro_batches=M, micro_batch_size=2, steps=steps, lr=LR, data_seed=0,
                           accumulation=accumulation)  # fmt: skip


def _run(cfg, schedule, M, steps, **kw):
    with run_dir() as d:
        t = trainer(cfg, d, schedule, M, **kw)
        t.train(steps)
        out = t.parameters()
        peak, budget = t.memory.peak, t.memory.budget
        t.close()
    return out, peak, budget


def _rel(a, b):
    """max |a - b| / max |b| over all parameters of the model."""
    a, b = torch.cat(a), torch.cat(b)
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize(("schedule", "M", "ckpt"), [("horizontal", 3, "ssd"), ("vertical", 2, "host")])  # fmt: skip
def test_fp64_bit_identical_same_reduction_order(schedule, M, ckpt):
    cfg = tiny(layers=2)
    got, _, _ = _run(cfg, schedule, M, 2, checkpoints=ckpt)
    for a, b in zip(got, _ref(cfg, M, 2), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("schedule", ["vertical", "vertical-overlap"])
def test_fp64_snake_order_bit_identical_to_reference_summing_in_snake_order(schedule):
    cfg = tiny(layers=3)
    got, _, _ = _run(cfg, schedule, 3, 2, alpha=0.4)
    for a, b in zip(got, _ref(cfg, 3, 2, "snake"), strict=True):
        assert torch.equal(a, b)
    assert _rel(got, _ref(cfg, 3, 2)) <= 1e-12


@pytest.mark.parametrize("schedule", ["horizontal", "vertical", "vertical-overlap"])
def test_fp32_within_1e_6_of_plain_training(schedule):
    cfg = tiny(layers=2, dtype="float32", hidden=12, heads=3, seq=7)
    got, peak, budget = _run(cfg, schedule, 5, 2, alpha=0.3)
    assert _rel(got, _ref(cfg, 5, 2)) <= 1e-6
    assert 0 < peak <= budget


def test_training_changes_the_parameters():  # the comparisons above are not trivially equal
    cfg = tiny(layers=1)
    before = train_in_memory(cfg, micro_batches=2, micro_batch_size=2, steps=0, lr=LR, data_seed=0)
    after, _, _ = _run(cfg, "vertical-overlap", 2, 2)
    assert all(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
