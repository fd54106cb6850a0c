"""Tests of ``workbench data ...`` (argparse glue).

Reference: the shared data folder (status and paths) and a local ``file://`` dataset for fetch.
"""

from __future__ import annotations

import argparse
import hashlib
import io
from pathlib import Path

import pytest

from workbench.data import DatasetInfo, FileInfo, cli, list_datasets


def _run(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="workbench")
    cli.add_data_subparser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    assert args.func is cli.run_data_command
    return cli.run_data_command(args, out, err), out.getvalue(), err.getvalue()


def test_list(shared_data: Path) -> None:
    rc, out, _ = _run("data", "list", "--data-dir", str(shared_data))
    assert rc == 0 and str(shared_data) in out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:]}
    assert set(rows) == {d.name for d in list_datasets()}
    assert rows["karate"] == "present" and rows["planetoid-pubmed"] == "partial"
    assert rows["peregrine-citeseer"] == "missing"


def test_path(shared_data: Path) -> None:
    rc, out, _ = _run("data", "path", "karate")
    assert rc == 0 and out.strip() == str(shared_data / "graphs" / "karate.mtx")


def test_path_missing_exits_2(tmp_path: Path) -> None:
    rc, out, err = _run("data", "path", "wiki-vote", "--data-dir", str(tmp_path))
    assert rc == 2 and out == ""
    assert "graphs/wiki-vote.txt" in err and "workbench data fetch wiki-vote" in err


def test_unknown_name_exits_2(tmp_path: Path) -> None:
    rc, _, err = _run("data", "path", "cora", "--data-dir", str(tmp_path))
    assert rc == 2 and "valid names: planetoid-cora" in err


def test_verify(shared_data: Path, tmp_path: Path) -> None:
    assert _run("data", "verify", "ctr-samples")[0] == 0
    rc, out, _ = _run("data", "verify", "planetoid-pubmed")
    assert rc == 0 and "missing     planetoid/ind.pubmed.allx (optional)" in out
    assert _run("data", "verify", "karate", "--data-dir", str(tmp_path))[0] == 1


def test_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "a.txt"
    source.write_bytes(b"hello\n")
    good = FileInfo(path="toy/a.txt", url=source.as_uri(), sha256=hashlib.sha256(b"hello\n").hexdigest())
    toy = DatasetInfo(
        name="toy",
        description="t",
        licence="MIT",
        origin="https://example.org",
        files=(good,),
        root="toy",
        notes="full data elsewhere",
    )
    monkeypatch.setattr(cli, "get_dataset", lambda name: toy)
    rc, out, err = _run("data", "fetch", "toy", "--data-dir", str(tmp_path / "d"))
    assert rc == 0 and "1 files" in out and "(1 downloaded)" in out and "full data elsewhere" in out
    assert "downloading toy/a.txt" in err
    bad = DatasetInfo(
        name="toy",
        description="t",
        licence="MIT",
        origin="https://example.org",
        files=(FileInfo(path="toy/b.txt", url=source.as_uri(), sha256="0" * 64),),
        root="toy",
    )
    monkeypatch.setattr(cli, "get_dataset", lambda name: bad)
    rc, _, err = _run("data", "fetch", "toy", "--data-dir", str(tmp_path / "d"))
    assert rc == 1 and "does not match" in err
