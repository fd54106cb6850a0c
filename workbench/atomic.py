"""Crash-consistent files: a writer that never leaves a half-written file in place, and readers that refuse one.

Everything the workbench writes that someone relies on later (reports, generated datasets, checkpoints, compiled
kernel sources) goes through :func:`atomic_write`: the bytes go to a temporary file in the same folder, are
flushed and ``fsync``-ed, and only then renamed over the target with ``os.replace`` (atomic on POSIX and
Windows within one file system), after which the folder is ``fsync``-ed so the rename itself survives a power
cut. A crash, a kill or a full disk at any point leaves either the old file or the new one, never a mixture;
the temporary file is removed when the write fails in this process (a killed process can leave one
``.NAME.*.tmp`` beside the target, which no reader ever opens).

Readers check before they trust: :func:`verify_file` compares a size and a SHA-256 where the caller knows them,
:func:`verify_zip` checks the central directory and every member's CRC-32 of a zip container (``torch.save``
files are zip archives). Both raise :class:`TruncatedFileError` (a ``ValueError``) naming the file, what is
wrong and how to get a good one. A write that fails for lack of space raises :class:`WriteError` (an
``OSError``) saying so and that the previous file is unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "TruncatedFileError",
    "WriteError",
    "atomic_write",
    "write_bytes",
    "write_text",
    "verify_file",
    "verify_zip",
    "sha256_of",
]

#: errno values that mean "no room": a full disk, a quota, a file-size limit (RLIMIT_FSIZE gives EFBIG)
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


class TruncatedFileError(ValueError):
    """A file is shorter than it should be, or its checksum does not match: it is never read as data."""


class WriteError(OSError):
    """A write stopped (disk full, quota, file-size limit); the previous file at the target is unchanged."""

    one_line = True  # the message is complete for the user (see workbench.distributed.errors.WorkerFailed)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", *, encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit make it ``path`` atomically.

    Parameters:
        path: the target; its parent folder is created when missing.
        mode: ``"wb"`` (bytes) or ``"w"`` (text, with ``encoding``, default utf-8).

    Raises:
        WriteError: the disk or a file-size limit ran out (the message names the file; the previous file is
            unchanged and the temporary one removed). Any exception raised inside the block propagates after
            the temporary file is removed.

    Example:
        >>> with atomic_write("/tmp/out.json", "w") as f:  # doctest: +SKIP
        ...     f.write("{}")
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode={mode!r} is not supported: valid values are 'wb', 'w'")
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with open(fd, mode, encoding=(encoding or "utf-8") if mode == "w" else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(target))
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in _NO_SPACE:
            raise WriteError(
                exc.errno,
                f"could not write {target}: no space left ({os.strerror(exc.errno)}); "
                f"the previous {target.name} is unchanged",
            ) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _file_mode(target: Path) -> int:
    """The mode the written file gets: the replaced file's, else what ``open`` would give (0666 minus the umask);
    ``mkstemp``'s private 0600 would make reports and shipped data unreadable to others."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder; the rename is still atomic
        pass
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`); returns the path."""
    with atomic_write(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write`); returns the path."""
    with atomic_write(path, "w", encoding=encoding) as f:
        f.write(text)
    return Path(path)


def sha256_of(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(
    path: str | os.PathLike[str],
    *,
    size: int | None = None,
    sha256: str | None = None,
    what: str = "file",
    remedy: str = "delete it and create it again",
) -> Path:
    """Check that ``path`` has ``size`` bytes and the SHA-256 ``sha256`` (each when given); returns the path.

    Raises:
        FileNotFoundError: no such file.
        TruncatedFileError: wrong size (``... is truncated: 812 of 4096 bytes``) or checksum, naming ``what``,
            the file and the ``remedy``.
    """
    path = Path(path)
    actual = path.stat().st_size
    if size is not None and actual != size:
        state = "truncated" if actual < size else "longer than expected"
        raise TruncatedFileError(f"{what} {path} is {state}: {actual} of {size} bytes; {remedy}")
    if sha256 is not None and sha256_of(path) != sha256.lower():
        raise TruncatedFileError(f"{what} {path} is damaged: its SHA-256 does not match; {remedy}")
    return path


def verify_zip(
    path: str | os.PathLike[str], *, what: str = "file", remedy: str = "delete it and create it again"
) -> Path:
    """Check a zip container (``torch.save`` output): central directory present, every member's CRC-32 right.

    A file cut short loses its central directory (at the end), so truncation at any byte is caught; a damaged
    member fails its CRC. Reads the whole file once. Returns the path.

    Raises:
        FileNotFoundError: no such file. TruncatedFileError: not a complete zip, naming ``what`` and ``remedy``.
    """
    path = Path(path)
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise TruncatedFileError(
            f"{what} {path} is truncated or damaged ({size} bytes, not a complete zip archive: {exc}); {remedy}"
        ) from None
    if bad is not None:
        raise TruncatedFileError(f"{what} {path} is damaged (member {bad!r} fails its CRC-32); {remedy}")
    return path
