"""The ReRAM performance model of the ReFloat artifact: modelled solver time from bits, blocks and iterations.

Every constant and formula is the one in ``linghaosong/ReFloat`` (``include/refloat_solver.h`` struct
``reraminfo``; ``src/refloat_solver.cpp`` ``CG_solver``/``BiCG_solver``). It is a model, not a measurement:

- the chip has ``NUM_CROSSBARS`` 128 x 128 crossbars;
- one *engine* processes one ``bsize x bsize`` block and needs ``4 * (2**e_m + f_m + 1)`` crossbars
  (``CROSSBARS_PER_BIT_SLICE = 4`` times one slice per exponent-offset value, fraction bit and the hidden
  bit; the artifact gives the factor 4 without a derivation), so ``engines = NUM_CROSSBARS // that``;
- one block MVM takes ``cycles = 2**e_m + f_m + 2**e_v + f_v + 1`` crossbar cycles of ``T_COMP_S`` each;
- ``rounds = ceil(num_blocks / engines)``: how many times the engines are refilled per SpMV;
- writing a block costs ``bsize * T_WRITE_PER_ROW_S``; when all blocks fit at once (one round) it is written
  once before the solve, otherwise every SpMV rewrites the crossbars ``rounds`` times;
- a pipeline tail of ``bsize / FREQ_HZ`` per round.

    t_spmv  = [rounds > 1] * rounds * bsize * t_write + rounds * (t_comp * cycles + bsize / freq)
    t_solve = [rounds == 1] * bsize * t_write + spmvs * t_spmv,   spmvs = 1 + k * (1 for CG, 2 for BiCGSTAB)

(the artifact counts the initial ``r = b - A x0`` SpMV even for x0 = 0, and BiCGSTAB does two SpMVs per
iteration.) Speed-ups are ratios of ``t_solve``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: 128 * 128 * 64 crossbars (reraminfo.num_aval_xbar in include/refloat_solver.h)
NUM_CROSSBARS = 128 * 128 * 64
#: seconds to write one crossbar row (reraminfo.t_write_per_row = 50.88e-9)
T_WRITE_PER_ROW_S = 50.88e-9
#: seconds per crossbar compute cycle (reraminfo.t_comp = 107.0e-9)
T_COMP_S = 107.0e-9
#: peripheral clock for the pipeline tail (reraminfo.freq = 1.5e9)
FREQ_HZ = 1.5e9
#: crossbars per (exponent value, fraction bit, hidden bit) slice of an engine (the 4 in max_num_engines)
CROSSBARS_PER_BIT_SLICE = 4
#: SpMVs per iteration (CG: A p; BiCGSTAB: A p and A s)
SPMVS_PER_ITERATION = {"cg": 1, "bicgstab": 2}

FORMULA = (
    "t_solve = [rounds == 1]*bsize*t_write + (1 + k*m) * ([rounds > 1]*rounds*bsize*t_write "
    "+ rounds*(t_comp*cycles + bsize/freq)); cycles = 2^e_m + f_m + 2^e_v + f_v + 1; "
    "engines = floor(N_xbar / (4*(2^e_m + f_m + 1))); rounds = ceil(blocks/engines); "
    "m = 1 (CG) or 2 (BiCGSTAB); N_xbar = 1,048,576, t_write = 50.88 ns/row, t_comp = 107 ns, freq = 1.5 GHz"
)


def crossbars_per_engine(e_m: int, f_m: int) -> int:
    """Crossbars one block engine needs for a matrix with ``e_m`` exponent-offset and ``f_m`` fraction bits."""
    return CROSSBARS_PER_BIT_SLICE * (2**e_m + f_m + 1)


def engines(e_m: int, f_m: int) -> int:
    """Blocks the chip processes at once: ``NUM_CROSSBARS // crossbars_per_engine``."""
    return NUM_CROSSBARS // crossbars_per_engine(e_m, f_m)


def cycles_per_mvm(e_m: int, f_m: int, e_v: int, f_v: int) -> int:
    """Crossbar cycles of one block MVM: ``2**e_m + f_m + 2**e_v + f_v + 1``."""
    return 2**e_m + f_m + 2**e_v + f_v + 1


@dataclass(frozen=True)
class ReramTiming:
    """Modelled time of one solve (seconds) and the quantities it comes from."""

    num_blocks: int
    bsize: int
    engines: int
    crossbars_per_engine: int
    cycles: int
    rounds: int
    spmvs: int
    setup_seconds: float
    spmv_seconds: float
    total_seconds: float


def spmv_seconds(*, num_blocks: int, bsize: int, e_m: int, f_m: int, e_v: int, f_v: int) -> float:
    """Modelled seconds of one SpMV (rewrites included when the blocks need more than one round)."""
    return solve_timing(0, "cg", num_blocks=num_blocks, bsize=bsize, e_m=e_m, f_m=f_m, e_v=e_v, f_v=f_v).spmv_seconds


def solve_timing(
    iterations: int, solver: str, *, num_blocks: int, bsize: int, e_m: int, f_m: int, e_v: int, f_v: int
) -> ReramTiming:
    """Modelled solver time for ``iterations`` iterations of ``solver`` ('cg' or 'bicgstab') (see module doc).

    Example: 100 CG iterations on 1000 blocks at ReFloat(128, 3, 3 / 3, 8):
    ``solve_timing(100, "cg", num_blocks=1000, bsize=128, e_m=3, f_m=3, e_v=3, f_v=8).total_seconds``.
    """
    if solver not in SPMVS_PER_ITERATION:
        raise ValueError(f"solver={solver!r} is not allowed: valid values are 'cg', 'bicgstab'")
    if iterations < 0 or num_blocks < 0 or bsize < 1:
        raise ValueError(
            f"iterations={iterations}, num_blocks={num_blocks}, bsize={bsize}: "
            "need iterations >= 0, num_blocks >= 0, bsize >= 1"
        )
    per_engine = crossbars_per_engine(e_m, f_m)
    n_engines = NUM_CROSSBARS // per_engine
    cycles = cycles_per_mvm(e_m, f_m, e_v, f_v)
    rounds = -(-num_blocks // n_engines)
    t_write = T_WRITE_PER_ROW_S * bsize  # one block's rows
    t_tail = bsize / FREQ_HZ
    per_spmv = (rounds * t_write if rounds > 1 else 0.0) + rounds * (T_COMP_S * cycles + t_tail)
    setup = t_write if rounds == 1 else 0.0
    spmvs = 1 + iterations * SPMVS_PER_ITERATION[solver]
    return ReramTiming(
        num_blocks=num_blocks,
        bsize=bsize,
        engines=n_engines,
        crossbars_per_engine=per_engine,
        cycles=cycles,
        rounds=rounds,
        spmvs=spmvs,
        setup_seconds=setup,
        spmv_seconds=per_spmv,
        total_seconds=setup + spmvs * per_spmv,
    )
