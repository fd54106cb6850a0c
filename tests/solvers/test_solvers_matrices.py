"""Loading matrices by registry name, Wathen name or file, and the errors for bad input.

Reference: the shared data folder's README (sizes and symmetry of each matrix) and the Matrix Market
format's rules (banner, size line, entry count); error messages are checked by their text.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.solvers.matrices import load_matrix, matrix_names, read_matrix_market

# (name, n, nonzeros when expanded, symmetric) from ../shared/papers/README.md; zenios's explicit zeros dropped
SIZES = [
    ("LF10", 18, 82, True),
    ("mesh1e1", 48, 306, True),
    ("bcsstk01", 48, 400, True),
    ("bcsstk16", 4884, 290_378, True),
    ("west0067", 67, 294, False),
    ("olm1000", 1000, 3996, False),
]


@pytest.mark.parametrize("name, n, nnz, symmetric", SIZES)
def test_registry_names_load_with_their_documented_sizes(shared_data, name, n, nnz, symmetric):
    m = load_matrix(name)
    assert m.A.shape == (n, n) and m.nnz == nnz and m.symmetric is symmetric
    assert m.A.has_sorted_indices and m.A.dtype == np.float64


def test_names_list_spd_first(shared_data):
    names = matrix_names()
    assert names[:3] == ["LF10", "bcsstk01", "mesh1e1"]  # by order n, then name
    assert set(names) >= {"bcsstk13", "zenios", "cryg2500"}


def test_wathen_names_and_files(shared_data, tmp_path):
    assert load_matrix("wathen-3-2").n == 3 * 3 * 2 + 2 * 3 + 2 * 2 + 1
    path = tmp_path / "tiny.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 4.0\n2 1 1.0\n2 2 3.0\n")
    m = load_matrix(str(path))
    assert m.name == "tiny" and m.kind == "file" and m.symmetric and m.A.toarray().tolist() == [[4, 1], [1, 3]]


def write(tmp_path, text: str, name: str = "m.mtx"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 2.0\n",
            r"is 3 x 4: the solvers need a square matrix",
        ),
        ("hello world\n", r"is not a valid Matrix Market file: .*banner"),
        ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 2.0\n", r"is not a valid Matrix Market file"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 2.0\n", r"is not a valid Matrix Market file"),
        ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 2.0 1.0\n", r"holds complex values"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 inf\n", r"holds inf or NaN values"),
    ],
)
def test_malformed_files_are_clear_errors(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_matrix_market(write(tmp_path, text))


def test_missing_file_and_unknown_name(shared_data, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"matrix file '.*nope.mtx' does not exist"):
        load_matrix(str(tmp_path / "nope.mtx"))
    with pytest.raises(ValueError, match=r"matrix='bcsstk99' is unknown: valid names are bcsstk01, .*wathen-NX-NY"):
        load_matrix("bcsstk99")


def test_missing_data_folder_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"dataset 'spd-matrices'.*workbench data fetch spd-matrices"):
        load_matrix("mesh1e1", data_dir=str(tmp_path))
