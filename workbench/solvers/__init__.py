"""Iterative solvers shared by the solver techniques (each technique is a sub-package, e.g. ``refloat``).

| file | what |
|---|---|
| ``krylov.py`` | CG and BiCGSTAB with an optional quantiser of the search directions |
| ``matrices.py`` | Matrix Market loading: registry names, Wathen names, files; canonical CSR |
| ``wathen.py`` | ``gallery('wathen', nx, ny)`` |
| ``spectrum.py`` | extreme eigenvalues (does quantisation keep an SPD matrix definite?) |
"""
