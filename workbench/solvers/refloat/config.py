"""Parameters of the ReFloat technique (``workbench run refloat ...``): matrix, solver, number format and bits."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

#: the named number formats (see :mod:`workbench.solvers.refloat.formats`)
FORMATS = ("float64", "refloat", "refloat-artifact", "baseline")
SOLVERS = ("cg", "bicgstab")
#: how a block's exponent base is chosen: the authors' code (truncated mean) or two alternatives
BASE_RULES = ("mean", "median", "max-coverage")
CRITERIA = ("absolute", "relative")
PRECONDITIONERS = ("none", "jacobi")


@dataclass(frozen=True, kw_only=True)
class RefloatConfig(Config):
    """One Krylov solve of ``A x = ones`` with the matrix and search directions held in a chosen format."""

    matrix: str = param(
        "bcsstk01",
        help="matrix: a file stem of the data registry's spd-matrices or "
        "general-matrices (e.g. bcsstk01, west0067), wathen-NX-NY, or a .mtx path",
    )
    solver: str = param("cg", choices=SOLVERS, help="Krylov solver: cg (SPD matrices) or bicgstab (general)")
    format: str = param(
        "refloat",
        choices=FORMATS,
        help="float64; refloat (the format as the paper describes it); refloat-artifact (the "
        "published code: matrix untouched, vectors fraction-truncated); baseline (Feinberg "
        "et al.: 6 exponent bits around a fixed base, 52 fraction bits)",
    )
    e_m: int = param(
        3,
        lo=1,
        hi=11,
        unit="bits",
        label="matrix exponent bits e_m",
        help="matrix exponent-offset bits e (refloat, refloat-artifact)",
    )
    f_m: int = param(
        3,
        lo=0,
        hi=52,
        unit="bits",
        label="matrix fraction bits f_m",
        help="matrix fraction bits f (refloat, refloat-artifact)",
    )
    e_v: int = param(
        3,
        lo=1,
        hi=11,
        unit="bits",
        label="vector exponent bits e_v",
        help="vector exponent-offset bits (refloat, refloat-artifact)",
    )
    f_v: int = param(
        8,
        lo=0,
        hi=52,
        unit="bits",
        label="vector fraction bits f_v",
        help="vector fraction bits (refloat, refloat-artifact)",
    )
    bsize: int = param(
        128,
        lo=1,
        hi=1_048_576,
        unit="rows",
        label="block size",
        help="block size: square matrix blocks and vector segments (a crossbar is 128 x 128)",
    )
    base: str = param(
        "mean",
        choices=BASE_RULES,
        help="block exponent base: mean (authors' code, truncated toward zero), median, or "
        "max-coverage (the base that leaves the most entries unsaturated)",
    )
    max_iter: int = param(
        1000, lo=1, hi=1_000_000, unit="iterations", label="max iterations", help="iteration limit (the paper: 1000)"
    )
    criterion: str = param(
        "absolute",
        choices=CRITERIA,
        label="stopping rule",
        help="stop on ||r||^2 <= threshold (the paper) or ||r|| < rtol * ||b|| (scipy)",
    )
    threshold: float = param(1e-8, lo=0.0, hi=1e300, help="absolute criterion: squared residual threshold")
    rtol: float = param(1e-10, lo=0.0, hi=1.0, help="relative criterion: residual norm relative to ||b||")
    precondition: str = param(
        "none",
        choices=PRECONDITIONERS,
        label="preconditioner",
        help="jacobi: solve the symmetrically scaled D^-1/2 A D^-1/2 (then quantised)",
    )
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the random densities of a wathen-NX-NY matrix")

    def check_combination(self) -> None:
        if not self.matrix.strip():
            raise ValueError("matrix='' is empty: valid values are a registry matrix name, wathen-NX-NY or a .mtx path")
