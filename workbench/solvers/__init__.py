"""Iterative solvers in low-precision block formats: ReFloat (Song et al., SC'23) on real SuiteSparse matrices.

| file | what |
|---|---|
| ``config.py`` | ``RefloatConfig``: every parameter of ``workbench run refloat`` |
| ``refloat_format.py`` | the ReFloat format as the paper describes it (block base, saturated offsets, truncated fractions) |
| ``reference.py`` | slow per-value bit-level reference of the format (for the tests) |
| ``formats.py`` | the named formats: float64, refloat, refloat-artifact (the published code), baseline (Feinberg) |
| ``spmv.py`` | block SpMV with one partial sum per (row, block column), as a crossbar computes |
| ``krylov.py`` | CG and BiCGSTAB with quantised search directions |
| ``reram_model.py`` | the artifact's ReRAM performance model (crossbars, cycles, rounds, write time) |
| ``wathen.py`` | ``gallery('wathen', nx, ny)`` |
| ``matrices.py`` | Matrix Market loading: registry names, Wathen names, files |
| ``spectrum.py`` | extreme eigenvalues (does quantisation keep an SPD matrix definite?) |
| ``study.py`` | one solve in a format, format comparisons, (e, f) sweeps, verdicts |
| ``runner.py`` | ``run(config)`` for the CLI, ``TECHNIQUE`` |

Public names are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RefloatConfig": "config",
    "quantise_matrix": "refloat_format", "quantise_vector": "refloat_format", "quantise_values": "refloat_format",
    "truncate_fraction": "refloat_format", "QuantisedMatrix": "refloat_format",
    "Format": "formats", "make_format": "formats",
    "BlockSpMV": "spmv", "cg": "krylov", "bicgstab": "krylov", "SolveResult": "krylov",
    "solve_timing": "reram_model", "wathen": "wathen", "load_matrix": "matrices", "read_matrix_market": "matrices",
    "extreme_eigenvalues": "spectrum",
    "prepare": "study", "solve_format": "study", "compare_formats": "study", "sweep_bits": "study",
    "verdict": "study",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
