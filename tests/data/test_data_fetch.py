"""Tests of the downloader.

Reference: files served from a local ``http.server`` on 127.0.0.1 and ``file://`` URLs (never the
network); expected sha256 computed here with hashlib, and the real manifest's karate entry served
from the shared folder's own bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import logging
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from workbench.data import ChecksumError, ConvertSpec, DatasetInfo, FileInfo, fetch, get_dataset, verify

PAYLOAD = b"0 1\n1 2\n2 0\n" * 1000


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(base URL, folder) of a local HTTP server on 127.0.0.1 serving that folder."""
    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dataset(*files: FileInfo) -> DatasetInfo:
    return DatasetInfo(
        name="toy", description="toy", licence="MIT", origin="https://example.org", files=files, root="toy"
    )


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".part")]


def test_fetch_from_local_http_server(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    (root / "edges.txt").write_bytes(PAYLOAD)
    info = _dataset(FileInfo(path="toy/edges.txt", url=f"{base}/edges.txt", sha256=_sha(PAYLOAD)))
    calls: list[tuple[str, int, int | None]] = []
    target = tmp_path / "data"
    paths = fetch(info, target, progress=lambda *a: calls.append(a))
    assert paths == [target / "toy" / "edges.txt"]
    assert paths[0].read_bytes() == PAYLOAD
    assert calls[-1] == ("toy/edges.txt", len(PAYLOAD), len(PAYLOAD))
    assert verify(info, target) == {"toy/edges.txt": "ok"}
    assert _leftovers(target) == []


def test_fetch_from_file_url(tmp_path: Path) -> None:
    source = tmp_path / "source.bin"
    source.write_bytes(PAYLOAD)
    info = _dataset(FileInfo(path="toy/a.bin", url=source.as_uri(), sha256=_sha(PAYLOAD)))
    (path,) = fetch(info, tmp_path / "data")
    assert path.read_bytes() == PAYLOAD


def test_checksum_mismatch_leaves_nothing(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    (root / "edges.txt").write_bytes(PAYLOAD)
    wrong = _sha(b"something else")
    info = _dataset(FileInfo(path="toy/edges.txt", url=f"{base}/edges.txt", sha256=wrong))
    target = tmp_path / "data"
    with pytest.raises(ChecksumError) as err:
        fetch(info, target)
    msg = str(err.value)
    assert "toy/edges.txt" in msg and _sha(PAYLOAD) in msg and wrong in msg
    assert not (target / "toy" / "edges.txt").exists()
    assert _leftovers(target) == []


def test_mismatching_download_keeps_the_old_file(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    (root / "edges.txt").write_bytes(b"tampered")
    target = tmp_path / "data"
    (target / "toy").mkdir(parents=True)
    (target / "toy" / "edges.txt").write_bytes(b"old")
    info = _dataset(FileInfo(path="toy/edges.txt", url=f"{base}/edges.txt", sha256=_sha(PAYLOAD)))
    with pytest.raises(ChecksumError):
        fetch(info, target)
    assert (target / "toy" / "edges.txt").read_bytes() == b"old"


def test_present_files_are_skipped_unless_forced(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    (root / "edges.txt").write_bytes(PAYLOAD)
    info = _dataset(FileInfo(path="toy/edges.txt", url=f"{base}/edges.txt", sha256=_sha(PAYLOAD)))
    target = tmp_path / "data"
    fetch(info, target)
    calls: list[object] = []
    fetch(info, target, progress=lambda *a: calls.append(a))
    assert calls == []
    fetch(info, target, progress=lambda *a: calls.append(a), force=True)
    assert calls


def test_converted_file(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    original = b"0 0 4.0\n1 0 -1.0\n1 1 4.0\n"
    curated = (
        b"%%MatrixMarket matrix coordinate real symmetric\n%converted from SuiteSparse-repo/LAGraph/"
        b"ECS231HW3 copy of SuiteSparse Matrix Collection matrix tiny; full symmetric storage written as "
        b"symmetric\n2 2 3\n1 1 4\n2 1 -1\n2 2 4\n"
    )
    (root / "tiny").write_bytes(original)
    spec = ConvertSpec(kind="symmetric-triplets", index_base=0, size_line=False)
    file = FileInfo(
        path="toy/tiny.mtx", url=f"{base}/tiny", sha256=_sha(curated), url_sha256=_sha(original), convert=spec
    )
    (path,) = fetch(_dataset(file), tmp_path / "data")
    assert path.read_bytes() == curated
    bad = dataclasses.replace(file, path="toy/tiny2.mtx", sha256=_sha(b"other"))
    with pytest.raises(ChecksumError, match="converted from"):
        fetch(_dataset(bad), tmp_path / "data")
    assert not (tmp_path / "data" / "toy" / "tiny2.mtx").exists()


def test_unknown_checksum_is_fetched_unverified(
    served: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    base, root = served
    (root / "edges.txt").write_bytes(PAYLOAD)
    info = _dataset(FileInfo(path="toy/edges.txt", url=f"{base}/edges.txt", sha256=None))
    with caplog.at_level(logging.WARNING, logger="workbench.data.fetch"):
        fetch(info, tmp_path / "data")
    assert "no checksum" in caplog.text
    assert verify(info, tmp_path / "data") == {"toy/edges.txt": "unverified"}


def test_http_error_leaves_nothing(served: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = served
    info = _dataset(FileInfo(path="toy/absent.txt", url=f"{base}/absent.txt", sha256=_sha(PAYLOAD)))
    with pytest.raises(OSError, match="could not download .*absent.txt"):
        fetch(info, tmp_path / "data")
    assert _leftovers(tmp_path / "data") == []


def test_bad_arguments(tmp_path: Path) -> None:
    info = _dataset(FileInfo(path="toy/a", url="ftp://example.org/a", sha256=None))
    with pytest.raises(ValueError, match="scheme 'ftp'; valid schemes: https, http, file"):
        fetch(info, tmp_path)
    with pytest.raises(ValueError, match="timeout=0 must be > 0"):
        fetch(info, tmp_path, timeout=0)


def test_real_manifest_entry_from_local_server(shared_data: Path, served: tuple[str, Path], tmp_path: Path) -> None:
    """The karate entry, its URLs pointed at a local server holding the shared bytes, verifies."""
    base, root = served
    karate = get_dataset("karate")
    files = []
    for k, f in enumerate(karate.files):
        (root / str(k)).write_bytes((shared_data / f.path).read_bytes())
        files.append(dataclasses.replace(f, url=f"{base}/{k}"))
    target = tmp_path / "data"
    fetch(dataclasses.replace(karate, files=tuple(files)), target)
    assert verify("karate", target) == {f.path: "ok" for f in karate.files}
