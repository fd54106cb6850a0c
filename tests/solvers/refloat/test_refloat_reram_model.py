"""The ReRAM performance model against hand computation from the artifact's constants.

Reference: ``linghaosong/ReFloat`` ``include/refloat_solver.h`` (reraminfo: 128*128*64 crossbars, 50.88 ns
write per row, 107 ns per cycle, 1.5 GHz) and ``src/refloat_solver.cpp`` (engines, cycles, rounds, time
accumulation), worked by hand below.
"""

from __future__ import annotations

import pytest

from workbench.solvers.refloat import model as M


def test_constants_are_the_artifacts():
    assert M.NUM_CROSSBARS == 1_048_576
    assert (M.T_WRITE_PER_ROW_S, M.T_COMP_S, M.FREQ_HZ) == (50.88e-9, 107.0e-9, 1.5e9)


def test_engines_and_cycles_by_hand():
    assert M.crossbars_per_engine(3, 3) == 4 * 12 and M.engines(3, 3) == 1_048_576 // 48 == 21845
    assert M.engines(6, 52) == 1_048_576 // 468 == 2240
    assert M.cycles_per_mvm(3, 3, 3, 8) == 28 and M.cycles_per_mvm(6, 52, 6, 52) == 233


def test_one_round_writes_once_before_the_solve():
    t = M.solve_timing(100, "cg", num_blocks=1000, bsize=128, e_m=3, f_m=3, e_v=3, f_v=8)
    per_spmv = 107e-9 * 28 + 128 / 1.5e9
    assert t.rounds == 1 and t.spmvs == 101
    assert t.total_seconds == pytest.approx(128 * 50.88e-9 + 101 * per_spmv, rel=1e-15)


def test_several_rounds_rewrite_every_spmv_and_bicgstab_does_two_spmvs():
    t = M.solve_timing(10, "bicgstab", num_blocks=5000, bsize=128, e_m=6, f_m=52, e_v=6, f_v=52)
    rounds = -(-5000 // 2240)
    per_spmv = rounds * 128 * 50.88e-9 + rounds * (107e-9 * 233 + 128 / 1.5e9)
    assert t.rounds == rounds == 3 and t.spmvs == 21 and t.setup_seconds == 0.0
    assert t.total_seconds == pytest.approx(21 * per_spmv, rel=1e-15)


def test_speedup_per_spmv_of_the_paper_default_over_the_baseline():
    kw = dict(num_blocks=100, bsize=128)
    ours = M.spmv_seconds(e_m=3, f_m=3, e_v=3, f_v=8, **kw)
    base = M.spmv_seconds(e_m=6, f_m=52, e_v=6, f_v=52, **kw)
    assert base / ours == pytest.approx((107e-9 * 233 + 128 / 1.5e9) / (107e-9 * 28 + 128 / 1.5e9), rel=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="solver='gmres' is not allowed"):
        M.solve_timing(1, "gmres", num_blocks=1, bsize=128, e_m=3, f_m=3, e_v=3, f_v=8)
    with pytest.raises(ValueError, match="need iterations >= 0"):
        M.solve_timing(-1, "cg", num_blocks=1, bsize=128, e_m=3, f_m=3, e_v=3, f_v=8)
