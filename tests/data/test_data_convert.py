"""Tests of the triplet -> curated MatrixMarket conversion.

Reference: the curated SPD matrices in ``../shared/data/matrices/spd`` (converting a curated file
again must give it back byte for byte) and small matrices written out by hand below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.data.convert import ConvertSpec, convert, format_value, symmetric_triplets_to_mtx

HEADER = (
    "%%MatrixMarket matrix coordinate real symmetric\n%converted from SuiteSparse-repo/LAGraph/ECS231HW3 "
    "copy of SuiteSparse Matrix Collection matrix {name}; full symmetric storage written as symmetric\n"
)
SPD = ["LF10", "mesh1e1", "bcsstk01", "bcsstk02", "Trefethen_500", "bcsstk13", "bcsstk15", "bcsstk16"]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("-477.1548", "-4.771548E2"),
        ("0.199033328611999991E+004", "1.99033328612E3"),
        ("2", "2"),
        ("2.0", "2"),
        ("3571", "3.571E3"),
        ("100", "1E2"),
        ("-0.405002", "-4.05002E-1"),
        ("3.53448", "3.53448"),
        ("0", "0"),
        ("1.0e+06", "1E6"),
        ("2.160668373108e-07", "2.160668373108E-7"),
    ],
)
def test_format_value(token: str, expected: str) -> None:
    assert format_value(token) == expected


def test_full_storage_one_based_with_size_line() -> None:
    original = b"% comment\n3 3 5\n1 1 4\n2 1 -1\n1 2 -1\n2 2 4.0\n3 3 0.5\n"
    expected = HEADER.format(name="m") + "3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 5E-1\n"
    assert symmetric_triplets_to_mtx(original, name="m", index_base=1, size_line=True).decode() == expected


def test_upper_triangle_zero_based_headerless() -> None:
    original = b"1 1  2.0e+00\n0 0  1.0e+00\n0 1 -3.0e-01\n"
    expected = HEADER.format(name="z") + "2 2 3\n1 1 1\n2 1 -3E-1\n2 2 2\n"
    spec = ConvertSpec(kind="symmetric-triplets", index_base=0, size_line=False)
    assert convert(original, spec, name="z").decode() == expected


@pytest.mark.parametrize(
    ("original", "size_line", "match"),
    [
        (b"2 2 2\n1 2 1\n2 1 5\n", True, r"entry \(2, 1\) has values 1 and 5; not symmetric"),
        (b"2 2 1\n3 1 1\n", True, r"index \(3, 1\) out of range for n=2"),
        (b"2 3 1\n1 1 1\n", True, "must start with 'n n'"),
        (b"1 1\n", False, "is not 'row column value'"),
    ],
)
def test_bad_input_raises(original: bytes, size_line: bool, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        symmetric_triplets_to_mtx(original, name="bad", index_base=1, size_line=size_line)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kind": "gzip", "index_base": 1, "size_line": True}, "kind='gzip' is unknown; valid choices: symmetric-"),
        ({"kind": "symmetric-triplets", "index_base": 2, "size_line": True}, "index_base=2 must be 0 or 1"),
        ({"kind": "symmetric-triplets", "index_base": 1, "size_line": 1}, "size_line=1 must be true or false"),
    ],
)
def test_spec_validation(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ConvertSpec(**kwargs)


@pytest.mark.parametrize("name", SPD)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_curated_matrix_is_a_fixed_point(shared_data: Path, name: str) -> None:
    curated = (shared_data / "matrices" / "spd" / f"{name}.mtx").read_bytes()
    spec = ConvertSpec(kind="symmetric-triplets", index_base=1, size_line=True)
    assert convert(curated, spec, name=name) == curated
