"""The paper-scale MODEL. References: the closed-form byte model (``volume.iteration_bytes``) for the simulator's
SSD bytes; bounds every schedule must respect (no faster than its busiest resource, no slower than doing
everything one after the other); a brute-force grid over the placement fractions for both LPs' optima (the
authors' for the snake, ours for horizontal), with the constraints restated here from the resources."""

import itertools

import numpy as np
import pytest

from workbench.llm.gpt import PAPER_SHAPES, GPTShape
from workbench.llm.greedysnake.experiment import SATURATION_GAIN, has_saturated
from workbench.llm.greedysnake.model import (
    Placement,
    Rates,
    Widths,
    configuration_search,
    horizontal_lp_bytes,
    horizontal_search,
    simulate,
    unit_sizes_of,
)
from workbench.llm.greedysnake.volume import iteration_bytes

SHAPE = GPTShape(layers=5, hidden=64, heads=4, seq=32, vocab=100)
RATES = Rates(flops=1e12, pcie=5e9, ssd_read=2e9, ssd_write=1e9, adam=5e7, host_memory=1e12)


@pytest.mark.parametrize(("schedule", "M"), [("horizontal", 3), ("vertical", 4), ("vertical", 1)])
def test_simulated_ssd_bytes_equal_the_closed_form(schedule, M):
    w = Widths()
    sim = simulate(SHAPE, schedule=schedule, micro_batches=M, micro_batch_size=2, gpus=1, rates=RATES,
                   placement=Placement(1.0, 1.0, 1.0), iterations=2)  # fmt: skip
    X = 2 * SHAPE.seq * SHAPE.hidden * w.x
    vol = iteration_bytes(unit_sizes_of(SHAPE), micro_batches=M, schedule=schedule, inter_bytes=X, w=w.w, g=w.g,
                          o=w.o, checkpoints="ssd")  # fmt: skip
    both = lambda c: vol[("ssd", c, "read")] + vol[("ssd", c, "written")]  # noqa: E731
    assert sim.ssd_bytes["weights"] == pytest.approx(both("weights"), rel=1e-12)
    assert sim.ssd_bytes["optimizer"] == pytest.approx(both("optimizer"), rel=1e-12)
    assert sim.ssd_bytes["checkpoints"] == pytest.approx(both("checkpoints"), rel=1e-12)


@pytest.mark.parametrize("schedule", ["horizontal", "vertical", "vertical-overlap"])
def test_iteration_between_busiest_resource_and_fully_serial(schedule):
    # (prefetching is not asserted to be faster: a greedy list schedule can lose a little to it when the CPU binds)
    sim = simulate(SHAPE, schedule=schedule, micro_batches=3, micro_batch_size=2, gpus=1, rates=RATES, alpha=0.2,
                   placement=Placement(0.5, 0.5, 0.5), iterations=3)  # fmt: skip
    assert max(sim.busy.values()) <= sim.iteration_s * (1 + 1e-9)
    assert sim.iteration_s <= sum(sim.busy.values()) * (1 + 1e-9)


def test_horizontal_weight_traffic_linear_in_M_vertical_flat():
    kw = dict(micro_batch_size=1, gpus=1, rates=RATES, placement=Placement(0.0, 1.0, 1.0), iterations=2)
    h = [simulate(SHAPE, schedule="horizontal", micro_batches=m, **kw).ssd_bytes["weights"] for m in (1, 2, 3)]
    v = [simulate(SHAPE, schedule="vertical", micro_batches=m, **kw).ssd_bytes["weights"] for m in (1, 2, 3)]
    assert h[2] - h[1] == pytest.approx(h[1] - h[0]) and h[1] > h[0]
    assert v[0] == pytest.approx(v[1]) == pytest.approx(v[2])


def test_free_optimizer_is_never_slower():
    kw = dict(schedule="vertical-overlap", micro_batches=2, micro_batch_size=2, gpus=1, rates=RATES, alpha=0.3)
    assert simulate(SHAPE, optimizer=False, **kw).iteration_s <= simulate(SHAPE, **kw).iteration_s


def test_lp_optimum_not_beaten_by_a_grid():
    shape, rates = PAPER_SHAPES["gpt-65b"], Rates(flops=150e12, pcie=25e9, ssd_read=6.5e9, ssd_write=3.5e9, adam=2e9,
                                                   host_memory=512e9)  # fmt: skip
    lp = configuration_search(shape, micro_batches=8, micro_batch_size=4, gpus=1, rates=rates, alphas=(0.1,))
    assert lp.feasible
    # the objective at a grid point: the smallest feasible T_f + T_b (+ 0.01 (p + o)) for fixed fractions
    best_grid = np.inf
    for c, p, o in itertools.product(np.linspace(0, 1, 11), repeat=3):
        fixed = configuration_search_fixed(shape, rates, c, p, o)
        if fixed is not None:
            best_grid = min(best_grid, fixed)
    lp_obj = lp.unit_fwd_s + lp.unit_bwd_s + 0.01 * (lp.placement.para_ssd + lp.placement.opt_ssd)
    assert lp_obj <= best_grid + 1e-9


def configuration_search_fixed(shape, rates, c, p, o, M=8, mbs=4, a=0.1):  # noqa: ANN001, ANN201
    """The LP's constraints evaluated directly at fixed fractions (restated from FlexTrain's auto_config.py)."""
    from workbench.llm.gpt import block_param_count
    from workbench.llm.greedysnake.model import unit_flops_of

    w = Widths()
    N, psi, L = block_param_count(shape), sum(unit_sizes_of(shape)), shape.layers
    X = mbs * shape.seq * shape.hidden * w.x
    t_f = unit_flops_of(shape)[1] * mbs * shape.seq / rates.flops
    para, opts, ck = w.w * N, w.o * N, X * max(M - 4, 0)
    R, W = rates.ssd_read, rates.ssd_write
    host = (1 - p) * psi * w.w + (1 - o) * psi * w.o + (1 - c) * L * M * X + a * psi * w.g
    if host > 0.95 * rates.host_memory:
        return None
    Tf = max(t_f * M, a * N / rates.adam, (2 * X * M + para) / rates.pcie,
             ((1 - a) * p * para + a * o * opts) / R + (ck * c + a * p * para + a * o * opts) / W)  # fmt: skip
    Tb = max(3 * t_f * M, (1 - a) * N / rates.adam, (3 * X * M + para + w.g * N) / rates.pcie,
             (ck * c + p * para + (1 - a) * o * opts) / R + ((1 - a) * p * para + (1 - a) * o * opts) / W)  # fmt: skip
    return Tf + Tb + 0.01 * (p + o)


def test_horizontal_lp_optimum_not_beaten_by_a_grid():
    shape, rates = PAPER_SHAPES["gpt-65b"], Rates(flops=150e12, pcie=25e9, ssd_read=6.5e9, ssd_write=3.5e9, adam=2e9,
                                                   host_memory=512e9)  # fmt: skip
    M, mbs = 16, 1
    lp = horizontal_search(shape, micro_batches=M, micro_batch_size=mbs, gpus=1, rates=rates)
    assert lp.feasible and lp.alpha == 0.0
    pl = lp.placement
    lp_obj = horizontal_fixed(shape, rates, pl.ckpt_ssd, pl.para_ssd, pl.opt_ssd, pl.grad_ssd, M, mbs)
    assert lp_obj is not None  # the LP's own point satisfies the restated constraints
    best_grid = min(
        (v for c, p, o, q in itertools.product(np.linspace(0, 1, 6), repeat=4)
         if (v := horizontal_fixed(shape, rates, c, p, o, q, M, mbs)) is not None),
        default=np.inf,
    )  # fmt: skip
    assert lp_obj <= best_grid + 1e-6
    assert lp.throughput == pytest.approx(
        M * mbs * shape.seq / (lp_obj - 0.01 * (pl.para_ssd + pl.opt_ssd + pl.grad_ssd))
    )


def horizontal_fixed(shape, rates, c, p, o, q, M, mbs):  # noqa: ANN001, ANN201
    """Horizontal's iteration seconds (+ the tie-break) at fixed SSD fractions, restated from its resources: per layer
    and micro-batch the forward and backward run at their slowest resource, the optimizer after the backward."""
    from workbench.llm.gpt import block_param_count
    from workbench.llm.greedysnake.model import unit_flops_of

    w = Widths()
    N, psi, L = block_param_count(shape), sum(unit_sizes_of(shape)), shape.layers
    X = mbs * shape.seq * shape.hidden * w.x
    t_f = unit_flops_of(shape)[1] * mbs * shape.seq / rates.flops
    R, W = rates.ssd_read, rates.ssd_write
    host = (1 - p) * psi * w.w + (1 - o) * psi * w.o + (1 - c) * L * M * X + (1 - q) * psi * w.g
    if host > 0.95 * rates.host_memory * (1 + 1e-9):
        return None
    Tf = max(t_f, (w.w * N + X) / rates.pcie, p * w.w * N / R, c * X / W)
    Tb = max(3 * t_f, (2 * w.w * N + X) / rates.pcie, (p * w.w * N + c * X + q * w.g * N * (M - 1) / M) / R,
             q * w.g * N / W)  # fmt: skip  # the buffer is empty at the first micro-batch: read M - 1 times
    To = max(psi / rates.adam, (o * w.o + q * w.g) * psi / R, (o * w.o + p * w.w) * psi / W)
    return L * M * (Tf + Tb) + To + 0.01 * (p + o + q)


def test_gradient_buffer_on_ssd_bytes_equal_the_closed_form():
    # horizontal with a share q of its fp32 gradient buffer on SSD: every backward task writes q g n and every one
    # but the first (the buffer is empty: the real engine reads nothing) reads it, the optimizer reads it once
    # more: q g psi 2 M bytes per iteration
    w, M, q = Widths(), 3, 0.4
    sim = simulate(SHAPE, schedule="horizontal", micro_batches=M, micro_batch_size=2, gpus=1, rates=RATES,
                   placement=Placement(1.0, 1.0, 1.0, q), iterations=2)  # fmt: skip
    psi = sum(unit_sizes_of(SHAPE))
    assert sim.ssd_bytes["gradients"] == pytest.approx(q * w.g * psi * 2 * M, rel=1e-12)
    # the snake never accumulates on the host: the share is ignored
    v = simulate(SHAPE, schedule="vertical", micro_batches=M, micro_batch_size=2, gpus=1, rates=RATES,
                 placement=Placement(1.0, 1.0, 1.0, q), iterations=2)  # fmt: skip
    assert v.ssd_bytes["gradients"] == 0.0


@pytest.mark.parametrize(("M", "q", "gpus"), [(1, 1.0, 1), (3, 0.4, 1), (8, 0.7, 2)])
def test_horizontal_lp_bytes_equal_simulator_and_closed_form(M, q, gpus):
    # what the horizontal LP charges for the gradient buffer and the optimizer per iteration (its rows times L M)
    # is what the simulator moves and the closed form counts, in the paper's flextrain layout
    w = Widths()
    place = Placement(0.3, 0.6, 0.5, q)
    lp = horizontal_lp_bytes(SHAPE, place, micro_batches=M, micro_batch_size=2, gpus=gpus, layout="flextrain")
    sim = simulate(SHAPE, schedule="horizontal", micro_batches=M, micro_batch_size=2, gpus=gpus, rates=RATES,
                   placement=place, iterations=2, layout="flextrain")  # fmt: skip
    vol = iteration_bytes(unit_sizes_of(SHAPE), micro_batches=M, schedule="horizontal",
                          inter_bytes=2 * SHAPE.seq * SHAPE.hidden * w.x, w=w.w, g=w.g, o=w.o, layout="flextrain")  # fmt: skip
    grads = q * (vol[("ssd", "gradients", "read")] + vol[("ssd", "gradients", "written")])
    opt = place.opt_ssd * (vol[("ssd", "optimizer", "read")] + vol[("ssd", "optimizer", "written")])
    assert lp["gradients"] == pytest.approx(sim.ssd_bytes["gradients"], rel=1e-12)
    assert lp["gradients"] == pytest.approx(grads, rel=1e-12)
    assert lp["optimizer"] == pytest.approx(sim.ssd_bytes["optimizer"], rel=1e-12)
    assert lp["optimizer"] == pytest.approx(opt, rel=1e-12)


@pytest.mark.parametrize(("curve", "done"), [([10.0], False), ([10.0, 15.0], False), ([100.0, 101.9], True),
                                             ([100.0, 102.1], False), ([100.0, 90.0], True)])  # fmt: skip
def test_saturation_rule(curve, done):
    assert SATURATION_GAIN == 0.02
    assert has_saturated(curve) is done


def test_horizontal_runs_at_its_fastest_placement_that_fits_its_dram():
    from workbench.llm.greedysnake.config import GreedySnakeConfig
    from workbench.llm.greedysnake.experiment import horizontal_host_bytes, rates_of, schedule_point

    rates, shape = rates_of(GreedySnakeConfig()), PAPER_SHAPES["gpt-65b"]
    point = schedule_point("gpt-65b", 1, 4, 1, 0.25, rates, exposed=False)
    lp = point["lp"]
    chosen = Placement(lp["horizontal_ckpt_ssd"], lp["horizontal_para_ssd"], lp["horizontal_opt_ssd"],
                       lp["horizontal_grad_ssd"])  # fmt: skip
    assert horizontal_host_bytes(shape, chosen, micro_batches=4, micro_batch_size=1, gpus=1) <= 0.95 * 512e9 * 1.000001
    # the snake's placement does not fit horizontal's DRAM at 65B (fp16 weights and the fp32 gradient in DRAM)
    snake = Placement(lp["ckpt_ssd"], lp["para_ssd"], lp["opt_ssd"])
    assert horizontal_host_bytes(shape, snake, micro_batches=4, micro_batch_size=1, gpus=1) > 0.95 * 512e9
    h = point["schedules"][0]["throughput"]
    for on_ssd in (True, False):
        other = horizontal_search(shape, micro_batches=4, micro_batch_size=1, gpus=1, rates=rates,
                                  gradients_on_ssd=on_ssd, layout="flextrain").placement  # fmt: skip
        alt = simulate(shape, schedule="horizontal", micro_batches=4, micro_batch_size=1, gpus=1, rates=rates,
                       placement=other, iterations=2, layout="flextrain").throughput  # fmt: skip
        assert h >= alt * (1 - 1e-12)
