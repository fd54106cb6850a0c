"""Counted bytes == the closed-form byte model (``volume.run_bytes``), by tier, class and direction, for many
L, M, sizes, alpha and checkpoint placements; horizontal weight traffic grows with M, vertical does not."""

import pytest
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.engine import unit_sizes
from workbench.llm.greedysnake.volume import init_bytes, iteration_bytes, run_bytes

pytestmark = pytest.mark.slow  # real offloaded training runs (seconds)

CASES = [
    (2, 3, "horizontal", 0.0, "ssd", "float64", 2),
    (1, 4, "vertical", 0.0, "ssd", "float32", 3),
    (2, 5, "vertical-overlap", 0.3, "ssd", "float32", 2),
    (1, 3, "vertical-overlap", 0.77, "host", "float64", 3),
]


@pytest.mark.parametrize(("L", "M", "schedule", "alpha", "ckpt", "dtype", "mbs"), CASES)
def test_counted_equals_model(L, M, schedule, alpha, ckpt, dtype, mbs):
    cfg = tiny(layers=L, dtype=dtype, hidden=6 + 2 * L, heads=2, seq=3 + L, vocab=5 + M)
    with run_dir() as d:
        t = trainer(cfg, d, schedule, M, alpha=alpha, checkpoints=ckpt, micro_batch_size=mbs)
        init = t.init_counts
        t.train(2)
        counted = {k: v - init[k] for k, v in t.counter.snapshot().items()}
        split = t.split
        t.close()
    e = cfg.torch_dtype.itemsize
    model = run_bytes(unit_sizes(cfg), steps=2, micro_batches=M, schedule=schedule, inter_bytes=mbs * cfg.seq * cfg.hidden * e,
                      w=e, g=e, o=3 * e, deferred=split, checkpoints=ckpt)  # fmt: skip
    assert counted == {k: model.get(k, 0) for k in counted}
    assert {k: v for k, v in init.items() if v} == init_bytes(unit_sizes(cfg), w=e, o=3 * e)
    assert sum(counted.values()) > 0


def test_horizontal_weights_linear_in_M_vertical_flat():
    sizes = [100, 50, 50, 70]
    kw = {"inter_bytes": 10, "w": 2, "g": 4, "o": 12}
    h = [
        iteration_bytes(sizes, micro_batches=M, schedule="horizontal", **kw)[("ssd", "weights", "read")]
        for M in (1, 2, 3)
    ]
    v = [
        iteration_bytes(sizes, micro_batches=M, schedule="vertical", **kw)[("ssd", "weights", "read")]
        for M in (1, 2, 3)
    ]
    assert h[2] - h[1] == h[1] - h[0] > 0 and v[0] == v[1] == v[2] == h[0]


def test_unit_sizes_add_up_to_the_gpt_parameter_count():
    from workbench.llm.gpt import param_count

    cfg = tiny(layers=3)
    assert sum(unit_sizes(cfg)) == param_count(cfg.shape)
