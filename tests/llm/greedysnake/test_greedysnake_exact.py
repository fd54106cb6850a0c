"""Every schedule gives the parameters of plain in-memory training with gradient accumulation.

Reference: ``reference.train_in_memory`` (the whole GPT in memory, ``(loss/M).backward()`` per micro-batch,
``torch.optim.Adam(foreach=False)``). fp64: bit-identical where the reduction order is the same (horizontal:
micro-batches 0..M-1 as the reference; vertical: the snake order, against the reference summing in that order,
and any order when M <= 2 since addition commutes); otherwise fp64 within 1e-12 and fp32 within 1e-6 relative
(round-off of a different summation order, amplified by at most a few Adam steps). Both layouts (FlexTrain's
resident embedding and head, and everything offloaded) give the same bits.

Mixed precision (bf16 / fp16 compute copy, fp32 masters): reference ``train_in_memory(compute_dtype=...)``, plain
torch with the engine's casts (``master.to(bf16)`` each iteration, loss x scale, per-micro-batch gradients cast
to fp32 and summed, divided by the scale before Adam). Same reduction order: bit-identical (the casts and the
operations are the same, so nothing can differ); against fp32 training the difference is declared as Adam's
step bound: each run moves a parameter by about lr per step (|m_hat / sqrt(v_hat)| ~ 1), so two runs that differ
only in rounding differ by at most 2 lr per step.
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


def _ref(cfg, M, steps, accumulation="sequential", **kw):
    return train_in_memory(cfg, micro_batches=M, micro_batch_size=2, steps=steps, lr=LR, data_seed=0,
                           accumulation=accumulation, **kw)  # fmt: skip


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


@pytest.mark.parametrize(("schedule", "M", "ckpt", "layout"), [("horizontal", 3, "ssd", "flextrain"),
                                                               ("vertical", 2, "host", "flextrain"),
                                                               ("horizontal", 3, "host", "offloaded")])  # fmt: skip
def test_fp64_bit_identical_same_reduction_order(schedule, M, ckpt, layout):
    cfg = tiny(layers=2)
    got, _, _ = _run(cfg, schedule, M, 2, checkpoints=ckpt, layout=layout)
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


MIXED = [("horizontal", "bfloat16", "sequential", 1.0), ("vertical-overlap", "bfloat16", "snake", 1.0),
         ("vertical", "float16", "snake", 1024.0)]  # fmt: skip


@pytest.mark.parametrize(("schedule", "compute", "accumulation", "scale"), MIXED)
def test_mixed_precision_equals_torch_with_the_same_casts_and_fp32_within_adams_bound(schedule, compute,
                                                                                      accumulation, scale):  # fmt: skip
    cfg = tiny(layers=2, dtype="float32", hidden=12, heads=3, seq=7)
    steps, cd = 2, getattr(torch, compute)
    got, peak, budget = _run(cfg, schedule, 3, steps, alpha=0.3, compute_dtype=compute, checkpoints="ssd")
    ref = _ref(cfg, 3, steps, accumulation, compute_dtype=cd, loss_scale=scale)
    assert all(torch.equal(a, b) for a, b in zip(got, ref, strict=True))
    fp32 = torch.cat(_ref(cfg, 3, steps))
    diff = (torch.cat(got) - fp32).abs().max().item()
    assert 0 < diff <= 2 * LR * steps  # rounding moved something, within Adam's step bound
    assert all(t.dtype == torch.float32 for t in got) and 0 < peak <= budget


def test_fp16_overflow_names_the_loss_scale():
    cfg = tiny(layers=1, dtype="float32")
    with pytest.raises(ValueError, match=r"loss_scale=1.67772e\+07 overflowed .* valid values are smaller"):
        _run(cfg, "vertical", 2, 1, compute_dtype="float16", loss_scale=2.0**24)
