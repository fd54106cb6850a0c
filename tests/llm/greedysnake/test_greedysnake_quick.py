"""The fast lane's share of the offloaded trainer: one bit-identical fp64 run, counted == model bytes, the device
budget enforced and refused below one unit and one micro-batch. References: ``reference.train_in_memory`` and
``volume.run_bytes`` (the slow files cover every schedule, size and fault)."""

import pytest
import torch
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.engine import min_budget_bytes, unit_sizes
from workbench.llm.greedysnake.reference import train_in_memory
from workbench.llm.greedysnake.volume import run_bytes


def test_vertical_overlap_one_layer_bit_identical_and_counted_equals_model():
    cfg = tiny(layers=1)
    budget = min_budget_bytes(cfg, 2)
    with run_dir() as d:
        t = trainer(cfg, d, "vertical-overlap", 2, checkpoints="ssd", memory_budget=budget)
        t.train(2)
        got = t.parameters()
        counted = {k: v - t.init_counts[k] for k, v in t.counter.snapshot().items()}
        resident = (t.sizes[0] + t.sizes[-1]) * t.wi  # the embedding and head stay on the device (flextrain)
        assert 0 < t.memory.peak <= budget and t.memory.used == resident  # enforced, and the rest freed again
        split = t.split
        t.close()
    ref = train_in_memory(cfg, micro_batches=2, micro_batch_size=2, steps=2, lr=1e-3, data_seed=0)
    assert all(torch.equal(a, b) for a, b in zip(got, ref, strict=True))
    e = 8
    model = run_bytes(unit_sizes(cfg), steps=2, micro_batches=2, schedule="vertical-overlap",
                      inter_bytes=2 * cfg.seq * cfg.hidden * e, w=e, g=e, o=3 * e, deferred=split, checkpoints="ssd",
                      layout="flextrain")  # fmt: skip
    assert counted == {k: model.get(k, 0) for k in counted}


def test_budget_below_one_unit_and_one_micro_batch_is_refused():
    cfg = tiny(layers=1)
    need = min_budget_bytes(cfg, 2)
    with run_dir() as d, pytest.raises(ValueError, match=r"memory_budget_mb=.* valid range is >= "):
        trainer(cfg, d, "vertical", 2, memory_budget=need - 1)


@pytest.mark.parametrize(("kw", "word"), [({"alpha": 1.0}, "alpha=1.0"), ({"checkpoints": "gpu"}, "checkpoints='gpu'"),
                                          ({"sync": "never"}, "sync='never'")])  # fmt: skip
def test_bad_engine_arguments_name_the_parameter(kw, word):
    with run_dir() as d, pytest.raises(ValueError, match=word):
        trainer(tiny(layers=1), d, "vertical-overlap", 2, **kw)
