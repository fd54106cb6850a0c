"""Crash-consistent files (``workbench.atomic``) and the writers that use it: reports, QuEst datasets and checkpoints.

Reference: the file system itself. A write either replaces the target whole or leaves the old bytes (compared byte
for byte); a truncated file (cut at several points, as a crash would leave it) is refused with a message naming
the file, never read as data; a full disk is emulated with ``RLIMIT_FSIZE`` in a subprocess.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.atomic import TruncatedFileError, WriteError, atomic_write, verify_file, verify_zip, write_bytes

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_write_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "a.bin"
    write_bytes(target, b"old")
    write_bytes(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.bin"]


def test_error_inside_the_block_keeps_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("previous")
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target, "w") as f:
        f.write("half of the new")
        raise RuntimeError("boom")
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_verify_file_checks_size_and_checksum(tmp_path: Path) -> None:
    path = write_bytes(tmp_path / "d.bin", b"x" * 100)
    digest = hashlib.sha256(b"x" * 100).hexdigest()
    assert verify_file(path, size=100, sha256=digest) == path
    with pytest.raises(TruncatedFileError, match=r"dataset .*d\.bin is truncated: 100 of 4096 bytes; fetch it"):
        verify_file(path, size=4096, what="dataset", remedy="fetch it again")
    with pytest.raises(TruncatedFileError, match="SHA-256 does not match"):
        verify_file(path, sha256="0" * 64)


def _truncate(src: Path, dst: Path, keep: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * keep)])
    return dst


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.999])
def test_truncated_quest_checkpoint_is_refused(tmp_path: Path, keep: float) -> None:
    from workbench.quantum.quest.checkpoint import SHIPPED, load_checkpoint

    cut = _truncate(SHIPPED, tmp_path / "quest.pt", keep)
    with pytest.raises(TruncatedFileError, match=r"QuEst checkpoint .*quest\.pt is truncated or damaged .*retrain it"):
        load_checkpoint(cut)


def test_saved_checkpoint_loads_and_is_a_complete_zip(tmp_path: Path) -> None:
    from workbench.quantum.quest.checkpoint import load_checkpoint, save_checkpoint

    ckpt = load_checkpoint()
    path = save_checkpoint(ckpt, tmp_path / "again.pt")
    verify_zip(path)
    assert load_checkpoint(path).metrics == ckpt.metrics
    assert [p.name for p in tmp_path.iterdir()] == ["again.pt"]


def test_truncated_quest_dataset_cache_is_refused(tmp_path: Path) -> None:
    from workbench.quantum.quest.checkpoint import SHIPPED
    from workbench.quantum.quest.dataset import DatasetSpec, cache_path, load_or_generate

    spec = DatasetSpec(random_samples=4, algorithm_samples=0, seed=11)
    path = cache_path(spec, tmp_path)
    _truncate(SHIPPED, path, 0.5)  # any torch zip cut in half stands for a crash in the middle of the write
    with pytest.raises(TruncatedFileError, match=r"QuEst dataset .*quest-.*\.pt is truncated .*delete it"):
        load_or_generate(spec, tmp_path)


FULL_DISK = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    import nbformat
    import workbench.report as report

    nb_path, out = Path(sys.argv[1]), Path(sys.argv[2])
    report.execute_notebook = lambda nb, **kwargs: nb  # the write is under test, not the kernel
    report.render_html = lambda nb, title, **kwargs: "<p>" + "x" * 200_000 + "</p>"
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
    try:
        report.export_report(nb_path, out)
    except OSError as exc:
        print(type(exc).__name__, exc)
        sys.exit(1)
""")


@pytest.mark.slow
def test_full_disk_stops_the_report_and_keeps_the_previous_one(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]})])
    nb_path = tmp_path / "n.ipynb"
    nbformat.write(nb, nb_path)
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    out.write_text("<p>the previous report</p>")
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(nb_path), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(f"{WriteError.__name__} [Errno 27] could not write {out}: no space left"), done.stdout
    assert "the previous report.html is unchanged" in done.stdout
    assert out.read_text() == "<p>the previous report</p>"
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # the temporary file is gone


def test_a_new_file_gets_the_usual_mode_and_a_replaced_file_keeps_its_own(tmp_path):
    import os
    import stat

    from workbench.atomic import atomic_write

    old = os.umask(0o022)
    try:
        new = tmp_path / "new.json"
        with atomic_write(new, "w") as f:
            f.write("{}")
        assert stat.S_IMODE(new.stat().st_mode) == 0o644  # not mkstemp's private 0600
        kept = tmp_path / "kept.txt"
        kept.write_text("x")
        kept.chmod(0o640)
        with atomic_write(kept, "w") as f:
            f.write("y")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "y"
    finally:
        os.umask(old)
