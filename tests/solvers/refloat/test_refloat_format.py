"""The vectorised ReFloat format against the slow per-value bit-level reference, and its identities.

Reference: ``workbench.solvers.refloat.reference`` (one value at a time on the IEEE-754 bits, Python-integer bases),
and float64 itself (e = 11, f = 52 must change nothing, bit for bit). Random data is seeded; sizes are odd and
not multiples of the block size, so edge blocks and edge segments are exercised.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from workbench.solvers.matrices import load_matrix
from workbench.solvers.refloat.block_format import (
    exponents,
    group_bases,
    quantise_matrix,
    quantise_values,
    quantise_vector,
    truncate_fraction,
)
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.refloat.reference import (
    base_of,
    quantise_matrix_reference,
    quantise_vector_reference,
    truncate_fraction_reference,
)
from workbench.solvers.refloat.reference import quantise_value as quantise_value_reference

SMALL_SPD = ("mesh1e1", "LF10", "bcsstk01", "bcsstk02", "Trefethen_500")


def random_values(rng: np.random.Generator, size: int, spread: float = 12.0) -> np.ndarray:
    """Signed values whose magnitudes span ``2**spread`` binades each way (so saturation happens at small e)."""
    mags = np.exp2(rng.uniform(-spread, spread, size)) * rng.uniform(1.0, 2.0, size)
    return np.where(rng.random(size) < 0.5, -mags, mags)


def random_sparse(rng: np.random.Generator, n_rows: int, n_cols: int, density: float) -> sp.csr_matrix:
    A = sp.random(n_rows, n_cols, density=density, random_state=rng, format="csr")
    A.data = random_values(rng, A.nnz)
    return A


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    as_bits = lambda v: np.asarray(v, dtype=np.float64).view(np.uint64)  # noqa: E731
    return np.array_equal(as_bits(a), as_bits(b))


@pytest.mark.parametrize("rule", ["mean", "median", "max-coverage"])
@pytest.mark.parametrize(
    "e, f, bsize, shape",
    [
        (3, 3, 16, (37, 41)),
        (1, 0, 7, (23, 23)),
        (2, 5, 10, (31, 19)),
        (4, 8, 128, (45, 45)),
        (5, 23, 9, (29, 33)),
        (11, 52, 12, (25, 25)),
    ],
)
def test_matrix_matches_per_value_reference(rule, e, f, bsize, shape):
    rng = np.random.default_rng(hash((rule, e, f, bsize)) % 2**32)
    A = random_sparse(rng, *shape, density=0.3)
    got = quantise_matrix(A, e=e, f=f, bsize=bsize, base=rule).matrix.toarray()
    want = quantise_matrix_reference(A, e=e, f=f, bsize=bsize, base=rule)
    assert bits_equal(got, want)


@pytest.mark.parametrize("rule", ["mean", "median", "max-coverage"])
@pytest.mark.parametrize(
    "e, f, bsize, n",
    [
        (3, 8, 16, 101),
        (3, 16, 128, 333),
        (2, 0, 5, 17),
        (6, 52, 7, 50),
        (3, 8, 128, 100),
        (2, 3, 64, 64),  # one segment
        (11, 52, 10, 99),
    ],
)
def test_vector_matches_per_value_reference(rule, e, f, bsize, n):
    rng = np.random.default_rng(n * e + f)
    x = random_values(rng, n)
    x[rng.random(n) < 0.15] = 0.0  # zeros take no part in the base and stay zero
    got = quantise_vector(x, e=e, f=f, bsize=bsize, base=rule)
    want = quantise_vector_reference(x, e=e, f=f, bsize=bsize, base=rule)
    assert bits_equal(got, want)


@pytest.mark.parametrize("f", [0, 1, 8, 16, 51, 52])
def test_fraction_truncation_matches_bit_mask(f):
    x = random_values(np.random.default_rng(f), 257)
    assert bits_equal(truncate_fraction(x, f), truncate_fraction_reference(x, f))


def test_bases_by_brute_force_on_random_groups():
    rng = np.random.default_rng(7)
    group = rng.integers(0, 13, 400)
    exps = rng.integers(-40, 40, 400)
    for rule in ("mean", "median", "max-coverage"):
        for e in (1, 2, 3, 5):
            got = group_bases(group, exps, 13, rule, e)
            want = [base_of(exps[group == g].tolist(), rule, e) for g in range(13)]
            assert got.tolist() == want, (rule, e)


def test_mean_base_truncates_toward_zero_like_c():
    # exponents -3, -2, -2: mean -7/3 = -2.33 -> -2 (C truncation), not -3 (floor)
    x = np.array([2.0**-3, 2.0**-2, 2.0**-2])
    assert group_bases(np.zeros(3, dtype=int), exponents(x), 1, "mean", 3).tolist() == [-2]
    assert group_bases(np.zeros(2, dtype=int), np.array([5, 6]), 1, "mean", 3).tolist() == [5]


def test_saturation_window_and_truncation_by_hand():
    # base 0, e = 2: exponent window [-2, 1]; 2**5 saturates down to 2**1 * M, 2**-6 up to 2**-2 * M
    x = np.array([1.75 * 2.0**5, 1.75 * 2.0**-6, -1.9375, 1.5])
    got = quantise_values(x, 0, 2, 1)  # 1 fraction bit: 1.75 -> 1.5, 1.9375 -> 1.5
    assert got.tolist() == [1.5 * 2.0, 1.5 * 2.0**-2, -1.5, 1.5]


def test_zeros_inf_nan_pass_through():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.0])
    out = quantise_vector(x, e=2, f=2, bsize=4)
    assert bits_equal(out[:2], x[:2]) and np.isposinf(out[2]) and np.isneginf(out[3]) and np.isnan(out[4])
    assert out[5] == 3.0


@pytest.mark.parametrize("bsize", [7, 128])
def test_e11_f52_is_bit_identical_to_float64_on_random_data(bsize):
    rng = np.random.default_rng(bsize)
    A = random_sparse(rng, 301, 299, density=0.05)
    A.data = random_values(rng, A.nnz, spread=300.0)  # exponents over +-300 binades: inside the 2048 window
    assert bits_equal(quantise_matrix(A, e=11, f=52, bsize=bsize).matrix.data, A.data)
    x = random_values(rng, 1001, spread=300.0)
    assert bits_equal(quantise_vector(x, e=11, f=52, bsize=bsize), x)


def test_e11_f52_keeps_subnormals():
    x = np.array([5e-324, 3e-310, 1e-300, 2.5])
    assert bits_equal(quantise_vector(x, e=11, f=52, bsize=4), x)


@pytest.mark.parametrize("name", SMALL_SPD + ("bcsstk13", "west0067", "zenios"))
def test_e11_f52_is_bit_identical_on_real_matrices(shared_data, name):
    A = load_matrix(name).A
    q = quantise_matrix(A, e=11, f=52, bsize=128)
    assert bits_equal(q.matrix.data, A.data) and not q.saturated_up.any() and not q.saturated_down.any()


@pytest.mark.parametrize("name", SMALL_SPD + ("west0067",))
def test_artifact_mode_leaves_the_matrix_bit_identical(shared_data, name):
    A = load_matrix(name).A
    stored = make_format("refloat-artifact", e_m=3, f_m=3, e_v=3, f_v=8).quantise_matrix(A).matrix
    assert np.array_equal(stored.indptr, A.indptr) and np.array_equal(stored.indices, A.indices)
    assert bits_equal(stored.data, A.data)


def test_artifact_vectors_are_fraction_truncation_only():
    x = random_values(np.random.default_rng(3), 300, spread=30.0)
    quantise = make_format("refloat-artifact", f_v=8).vector_quantiser()
    assert bits_equal(quantise(x), truncate_fraction_reference(x, 8))
    assert np.array_equal(exponents(quantise(x)), exponents(x))  # no exponent clamping


def test_baseline_uses_a_fixed_6_bit_window_around_zero():
    fmt = make_format("baseline")
    assert (fmt.e_m, fmt.f_m, fmt.e_v, fmt.f_v) == (6, 52, 6, 52)
    x = np.array([2.0**40, 2.0**31 * 1.5, 2.0**-32, 2.0**-40, 1.0 + 2.0**-52])
    got = fmt.vector_quantiser()(x)
    assert got.tolist() == [2.0**31, 2.0**31 * 1.5, 2.0**-32, 2.0**-32, 1.0 + 2.0**-52]


def test_refloat_saturates_a_spd_matrix_into_indefiniteness(shared_data):
    """The effect the issue asks to show: LF10 at (3, 3) loses positive definiteness."""
    A = load_matrix("LF10").A
    q = quantise_matrix(A, e=3, f=3, bsize=128)
    assert q.saturated_up.mean() > 0.1 and q.saturated_down.mean() > 0.1
    assert np.linalg.eigvalsh(A.toarray())[0] > 0 > np.linalg.eigvalsh(q.matrix.toarray())[0]
    assert abs(q.matrix - q.matrix.T).max() == 0  # symmetric stays symmetric: mirrored blocks share a base


def test_block_count_and_saturation_flags():
    A = sp.csr_matrix(np.array([[1.0, 0, 0, 2.0**10], [0, 1.0, 0, 0], [0, 0, 0, 0], [0, 0, 2.0**-10, 1.0]]))
    q = quantise_matrix(A, e=2, f=52, bsize=2)  # blocks (0,0), (0,1), (1,0), (1,1): (1,0) is empty -> 3 blocks
    assert q.num_blocks == 3 and q.block_shape == (2, 2)
    assert q.bases.tolist() == [0, 10, -5]  # (0,0): mean(0, 0); (0,1): 10; (1,1): mean(-10, 0) = -5
    up, down = q.saturation_per_block()
    assert up.tolist() == [0.0, 0.0, 0.5] and down.tolist() == [0.0, 0.0, 0.5]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"e": 0, "f": 3}, r"e=0 is out of range: valid range is 1..11"),
        ({"e": 12, "f": 3}, r"e=12 is out of range: valid range is 1..11"),
        ({"e": 3, "f": 53}, r"f=53 is out of range: valid range is 0..52"),
        ({"e": 3, "f": -1}, r"f=-1 is out of range"),
        ({"e": 3, "f": 3, "bsize": 0}, r"bsize=0 is out of range: valid range is >= 1"),
        (
            {"e": 3, "f": 3, "base": "mode"},
            r"base='mode' is not allowed: valid values are 'mean', 'median', 'max-coverage'",
        ),
    ],
)
def test_bad_format_parameters_are_clear_errors(kwargs, message):
    A = sp.identity(4, format="csr")
    with pytest.raises(ValueError, match=message):
        quantise_matrix(A, **kwargs)


def test_unknown_format_name():
    with pytest.raises(ValueError, match=r"format='fp16' is not allowed: valid values are 'float64', 'refloat'"):
        make_format("fp16")


@pytest.mark.parametrize("n", [300, 100])  # several segments; one segment
@pytest.mark.parametrize("case", ["zeros", "subnormal", "inf", "saturate_to_subnormal", "fixed"])
def test_vector_fast_path_equals_general_path(case, n):
    """The bit-pattern fast path (mean / fixed base) against the frexp path (median of one value = the value)."""
    from workbench.solvers.refloat.block_format import _quantise_vector_bits

    rng = np.random.default_rng(11)
    x = random_values(rng, n, spread=40.0)
    x[::7] = 0.0
    if case == "subnormal":
        x[5] = 3e-310
    if case == "inf":
        x[9] = np.inf
    if case == "saturate_to_subnormal":
        x[:100] = 2.0**-1020 * rng.uniform(1, 2, 100)
        x[0] = 2.0**-1060  # a subnormal pulls the segment's base; saturating up stays in range, down may not
    fixed = 0 if case == "fixed" else None
    got = quantise_vector(x, e=2, f=5, bsize=128, fixed_base=fixed)
    want = (
        quantise_vector_reference(x, e=2, f=5, bsize=128)
        if fixed is None
        else np.array([quantise_value_reference(v, 0, 2, 5) for v in x])
    )
    assert bits_equal(got, want)
    if case in ("zeros", "fixed"):
        assert _quantise_vector_bits(x, 2, 5, 128, fixed) is not None  # the fast path really ran
