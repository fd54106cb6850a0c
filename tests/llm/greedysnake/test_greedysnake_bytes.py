"""Counted bytes == the closed-form byte model (``volume.run_bytes``), by tier, class and direction, for many
L, M, sizes, alpha, checkpoint placements, both layouts and mixed precision; horizontal weight traffic grows with
M, vertical does not."""

import pytest
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.engine import unit_sizes
from workbench.llm.greedysnake.volume import init_bytes, iteration_bytes, run_bytes

pytestmark = pytest.mark.slow  # real offloaded training runs (seconds)

CASES = [
    (2, 3, "horizontal", 0.0, "ssd", "float64", 2, "offloaded", "same"),
    (1, 4, "vertical", 0.0, "ssd", "float32", 3, "offloaded", "same"),
    (2, 5, "vertical-overlap", 0.3, "ssd", "float32", 2, "offloaded", "bfloat16"),
    (1, 3, "vertical-overlap", 0.77, "host", "float64", 3, "offloaded", "same"),
    (3, 3, "horizontal", 0.0, "ssd", "float32", 2, "flextrain", "bfloat16"),
    (1, 3, "horizontal", 0.0, "ssd", "float64", 1, "flextrain", "same"),
    (2, 4, "vertical", 0.0, "ssd", "float32", 2, "flextrain", "float16"),
    (1, 3, "vertical-overlap", 0.4, "ssd", "float32", 2, "flextrain", "same"),
    (3, 2, "vertical-overlap", 0.25, "host", "float32", 2, "flextrain", "bfloat16"),
]


@pytest.mark.parametrize(("L", "M", "schedule", "alpha", "ckpt", "dtype", "mbs", "layout", "compute"), CASES)
def test_counted_equals_model(L, M, schedule, alpha, ckpt, dtype, mbs, layout, compute):
    cfg = tiny(layers=L, dtype=dtype, hidden=6 + 2 * L, heads=2, seq=3 + L, vocab=5 + M)
    with run_dir() as d:
        t = trainer(cfg, d, schedule, M, alpha=alpha, checkpoints=ckpt, micro_batch_size=mbs, layout=layout,
                    compute_dtype=compute)  # fmt: skip
        init = t.init_counts
        t.train(2)
        counted = {k: v - init[k] for k, v in t.counter.snapshot().items()}
        split, w = t.split, t.wi
        t.close()
    e = cfg.torch_dtype.itemsize
    model = run_bytes(unit_sizes(cfg), steps=2, micro_batches=M, schedule=schedule,
                      inter_bytes=mbs * cfg.seq * cfg.hidden * w, w=w, g=e, o=3 * e, deferred=split, checkpoints=ckpt,
                      layout=layout)  # fmt: skip
    assert counted == {k: model.get(k, 0) for k in counted}
    assert {k: v for k, v in init.items() if v} == init_bytes(unit_sizes(cfg), w=w, o=3 * e, layout=layout)
    assert sum(counted.values()) > 0
    assert w == (e if compute == "same" else 2)


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


LEDGER_CASES = [
    ("flextrain", "horizontal", "bfloat16", 0.0),
    ("flextrain", "vertical", "float16", 0.0),
    ("flextrain", "vertical-overlap", "bfloat16", 0.5),
    ("offloaded", "horizontal", "same", 0.0),
    ("offloaded", "vertical-overlap", "bfloat16", 0.5),
]


@pytest.mark.parametrize(("layout", "schedule", "compute", "alpha"), LEDGER_CASES)
def test_engine_ledger_equals_the_simulators_iteration(layout, schedule, compute, alpha):
    """A steady iteration (the second: the first's deferred parts applied in it) moves, per class, the SSD bytes
    the discrete-event MODEL charges for the same layout, widths, alpha and everything on SSD (reference:
    ``model.simulate`` with ``park_ssd``, the engine's crash-consistent parking of the deferred gradient)."""
    from workbench.llm.greedysnake.model import Placement, Rates, Widths, simulate

    cfg = tiny(layers=3, dtype="float32", hidden=8, heads=2, seq=5, vocab=11)  # even sizes: alpha = 0.5 is exact
    with run_dir() as d:
        t = trainer(cfg, d, schedule, 3, alpha=alpha, checkpoints="ssd", layout=layout, compute_dtype=compute)
        t.iteration()
        before = t.counter.snapshot()
        t.iteration()
        after = t.counter.snapshot()
        w = t.wi
        t.close()
    counted = {c: sum(after[("ssd", c, d)] - before[("ssd", c, d)] for d in ("read", "written"))
               for c in ("weights", "gradients", "optimizer", "checkpoints")}  # fmt: skip
    rates = Rates(flops=1e9, pcie=1e9, ssd_read=1e9, ssd_write=1e9, adam=1e9)
    sim = simulate(cfg.shape, schedule=schedule, micro_batches=3, micro_batch_size=2, gpus=1, rates=rates,
                   placement=Placement(1.0, 1.0, 1.0, 1.0), widths=Widths(w=w, g=4, o=12, x=w), alpha=alpha,
                   iterations=2, layout=layout, park_ssd=True)  # fmt: skip
    assert counted == {c: pytest.approx(v, rel=1e-12) for c, v in sim.ssd_bytes.items()}
    assert counted["weights"] > 0 and counted["optimizer"] > 0


def test_flextrain_layout_moves_fewer_weight_bytes():
    sizes = [110, 60, 60, 90]
    kw = {"inter_bytes": 10, "w": 2, "g": 4, "o": 12, "micro_batches": 4}
    for schedule in ("horizontal", "vertical"):
        off = iteration_bytes(sizes, schedule=schedule, layout="offloaded", **kw)
        flex = iteration_bytes(sizes, schedule=schedule, layout="flextrain", **kw)
        assert flex[("ssd", "weights", "read")] < off[("ssd", "weights", "read")]
        assert flex[("ssd", "optimizer", "read")] == off[("ssd", "optimizer", "read")]  # every master stepped
