"""ReFloat (Song et al., SC'23): block floating point in CG/BiCGSTAB on real SuiteSparse matrices.

| file | what |
|---|---|
| ``config.py`` | ``RefloatConfig``: every parameter of ``workbench run refloat`` |
| ``block_format.py`` | the ReFloat format as the paper describes it (block base, saturated offsets, truncated fractions) |
| ``reference.py`` | slow per-value bit-level reference of the format (for the tests) |
| ``formats.py`` | the named formats: float64, refloat, refloat-artifact (the published code), baseline (Feinberg) |
| ``spmv.py`` | block SpMV with one partial sum per (row, block column), as a crossbar computes |
| ``model.py`` | the artifact's ReRAM performance model (crossbars, cycles, rounds, write time) |
| ``study.py`` | one solve in a format, format comparisons, (e, f) sweeps, the panel's memoised view, per-block grids, ``clear_caches()`` |
| ``claims.py`` | the paper's claims as data (``CLAIMS``), verdicts computed by ``workbench.claims`` |
| ``runner.py`` | ``run(config)`` for the CLI, ``TECHNIQUE`` |
"""
