"""Tests of the manifest, the data directory and the registry's paths and checksums.

Reference: the files in the shared data folder ``../shared/data`` (their sha256, computed here
with hashlib), its README, and ``../shared/papers/README.md`` section "Data" for names and gaps
(``ind.pubmed.allx`` and Peregrine's CiteSeer are not in the folder).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from workbench.data import (
    DatasetInfo,
    FileInfo,
    data_dir,
    dataset_path,
    dataset_status,
    fetch,
    get_dataset,
    list_datasets,
    verify,
)
from workbench.data.registry import load_manifest

EXPECTED_NAMES = {
    "planetoid-cora",
    "planetoid-citeseer",
    "planetoid-pubmed",
    "karate",
    "wiki-vote",
    "peregrine-citeseer",
    "spd-matrices",
    "general-matrices",
    "ctr-samples",
}
NOT_IN_SHARED = {"peregrine-citeseer"}  # fetch-only dataset; optional files are also absent
ALL_FILES = [(d.name, f) for d in list_datasets() for f in d.files]
SHARED_FILES = [(n, f) for n, f in ALL_FILES if n not in NOT_IN_SHARED and not f.optional]


def test_manifest_names_and_fields() -> None:
    infos = list_datasets()
    assert {d.name for d in infos} == EXPECTED_NAMES
    for d in infos:
        assert d.description and "\n" not in d.description
        assert d.licence and d.origin.startswith("https://")
        assert d.files and all(f.path for f in d.files)
        # the root is a file of the dataset or a folder holding some of its files
        assert any(f.path == d.root or f.path.startswith(d.root + "/") for f in d.files)


@pytest.mark.parametrize(("name", "file"), ALL_FILES, ids=[f"{n}:{f.path}" for n, f in ALL_FILES])
def test_urls_pinned_to_a_commit(name: str, file: FileInfo) -> None:
    assert re.match(r"^https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+$", file.url)


def test_only_the_known_gap_lacks_a_checksum() -> None:
    unknown = [f.path for _, f in ALL_FILES if f.sha256 is None]
    assert unknown == ["planetoid/ind.pubmed.allx"]


@pytest.mark.parametrize(("name", "file"), SHARED_FILES, ids=[f"{n}:{f.path}" for n, f in SHARED_FILES])
def test_manifest_checksum_matches_shared_file(shared_data: Path, name: str, file: FileInfo) -> None:
    digest = hashlib.sha256((shared_data / file.path).read_bytes()).hexdigest()
    assert digest == file.sha256


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES - NOT_IN_SHARED))
def test_verify_shared(shared_data: Path, name: str) -> None:
    info = get_dataset(name)
    expected = {f.path: ("missing" if f.optional else "ok") for f in info.files}
    assert verify(name) == expected


def test_status_of_shared_datasets(shared_data: Path) -> None:
    status = {d.name: dataset_status(d) for d in list_datasets()}
    assert status.pop("planetoid-pubmed") == "partial"
    assert status.pop("peregrine-citeseer") == "missing"
    assert set(status.values()) == {"present"}


def test_dataset_path_shared(shared_data: Path) -> None:
    assert dataset_path("karate") == shared_data / "graphs" / "karate.mtx"
    assert dataset_path("planetoid-cora") == shared_data / "planetoid"
    assert dataset_path("planetoid-pubmed").is_dir()  # the missing allx is optional
    assert dataset_path("spd-matrices", shared_data) == shared_data / "matrices" / "spd"


@pytest.mark.parametrize("call", [get_dataset, dataset_path, verify, dataset_status, fetch])
def test_unknown_name_lists_valid_names(tmp_path: Path, call) -> None:
    args = ("cora",) if call is get_dataset else ("cora", tmp_path)
    with pytest.raises(ValueError, match=r"name='cora' is unknown; valid names: planetoid-cora, .*karate"):
        call(*args)


def test_missing_data_message(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as err:
        dataset_path("karate", tmp_path)
    msg = str(err.value)
    assert "graphs/karate.mtx" in msg and str(tmp_path) in msg
    assert "given as argument" in msg
    assert "workbench data fetch karate" in msg and "WORKBENCH_DATA" in msg


def test_missing_data_message_names_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="from WORKBENCH_DATA"):
        dataset_path("wiki-vote")


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = data_dir()  # the folder beside the checkout, the project's data/ or the per-user one
    monkeypatch.setenv("WORKBENCH_DATA", "")
    assert data_dir() == default  # empty means unset (the full order: tests/data/test_data_home.py)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert data_dir(str(tmp_path / "x" / ".." / "arg")) == tmp_path / "arg"


def test_verify_reports_mismatch_and_missing(tmp_path: Path) -> None:
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "karate.mtx").write_text("not karate\n")
    assert verify("karate", tmp_path) == {"graphs/karate.mtx": "mismatch", "graphs/LICENSE.lagraph": "missing"}


def _write_manifest(tmp_path: Path, file_entry: dict, **dataset_extra) -> Path:
    entry = {
        "description": "d",
        "licence": "MIT",
        "origin": "https://example.org",
        "root": "x",
        "files": [file_entry],
        **dataset_extra,
    }
    path = tmp_path / f"manifest-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps({"schema": 1, "datasets": {"x": entry}}))
    return path


GOOD_FILE = {"path": "x/a.txt", "url": "https://example.org/a.txt", "sha256": "0" * 64}


def test_load_manifest_accepts_a_good_entry(tmp_path: Path) -> None:
    (info,) = load_manifest(_write_manifest(tmp_path, GOOD_FILE))
    assert isinstance(info, DatasetInfo) and info.files[0].path == "x/a.txt"


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"colour": "red"}, r"unknown key\(s\) \['colour'\]"),
        ({"path": "/etc/passwd"}, "must be a relative POSIX path"),
        ({"path": "x/../../a"}, "must be a relative POSIX path"),
        ({"sha256": "ABC"}, "sha256='ABC' must be 64 lower-case hex"),
        ({"url": "ftp://example.org/a"}, "must use https, http or file"),
        ({"convert": {"kind": "gzip", "index_base": 1, "size_line": True}}, "convert kind='gzip' is unknown"),
        ({"optional": "yes"}, "optional='yes' must be true or false"),
    ],
)
def test_load_manifest_rejects_bad_file_entries(tmp_path: Path, change: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_manifest(_write_manifest(tmp_path, {**GOOD_FILE, **change}))


def test_load_manifest_rejects_unknown_dataset_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"dataset 'x': unknown key\(s\) \['licence_url'\]"):
        load_manifest(_write_manifest(tmp_path, GOOD_FILE, licence_url="https://example.org"))
