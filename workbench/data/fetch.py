"""Download datasets from their public origins into a data directory.

Each file is streamed to a temporary file beside its target, its sha256 checked where the
manifest knows it, converted where the manifest says so (then checked again), and renamed into
place atomically; a failed download leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from urllib.error import URLError

from workbench.data.convert import convert
from workbench.data.registry import (
    DatasetMissing,
    DatasetRef,
    FileInfo,
    dataset_path,
    file_status,
    get_dataset,
    resolve_data_dir,
)

__all__ = ["ChecksumError", "MIRROR_ENV_VAR", "Progress", "ensure_dataset", "fetch", "fetch_file", "source_url"]

log = logging.getLogger(__name__)

Progress = Callable[[str, int, "int | None"], None]
"""``progress(relative path, bytes received, total bytes or None)``, called per chunk."""

URL_SCHEMES = ("https", "http", "file")
#: a base URL that replaces every file's origin: ``{mirror}/{file.path}`` (an institution's copy, or a test server)
MIRROR_ENV_VAR = "WORKBENCH_DATA_MIRROR"
#: set to 0 to turn off downloading a missing dataset on first use
AUTO_FETCH_ENV_VAR = "WORKBENCH_DATA_AUTOFETCH"
CHUNK_BYTES = 1 << 20
USER_AGENT = "research-workbench-data-fetch"


class ChecksumError(ValueError):
    """A downloaded or converted file does not have the sha256 the manifest records."""


def _check(what: str, expected: str | None, actual: str) -> None:
    if expected is not None and actual != expected:
        raise ChecksumError(f"{what}: sha256 {actual} does not match the manifest's {expected}")


def _download(url: str, dest_dir: Path, label: str, progress: Progress | None, timeout: float) -> tuple[Path, str]:
    """Stream ``url`` into a temporary file in ``dest_dir``; return its path and sha256."""
    scheme = url.split(":", 1)[0].lower()
    if scheme not in URL_SCHEMES:
        raise ValueError(f"url={url!r} has scheme {scheme!r}; valid schemes: {', '.join(URL_SCHEMES)}")
    fd, tmp_name = tempfile.mkstemp(dir=dest_dir, prefix=f".{PurePosixPath(label).name}.", suffix=".part")
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            done = 0
            while chunk := response.read(CHUNK_BYTES):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(label, done, total)
    except (URLError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(f"could not download {url} for {label}: {exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp, digest.hexdigest()


def source_url(file: FileInfo) -> str:
    """Where ``file`` is downloaded from: ``$WORKBENCH_DATA_MIRROR/<path>`` when a mirror is set, else its origin."""
    mirror = os.environ.get(MIRROR_ENV_VAR, "").rstrip("/")
    return f"{mirror}/{file.path}" if mirror else file.url


def fetch_file(
    file: FileInfo,
    root: Path,
    *,
    progress: Progress | None = None,
    force: bool = False,
    timeout: float = 60.0,
) -> Path:
    """Download one manifest file into the data directory ``root``.

    A file already there with the right checksum (or any present file whose checksum is unknown)
    is kept unless ``force``.

    Returns:
        The file's path.

    Raises:
        ChecksumError: the download, or its conversion, does not match the manifest.
        OSError: the download failed.
        ValueError: an unsupported URL scheme.
    """
    target = root / file.path
    status = file_status(file, root)
    if not force and status in ("ok", "unverified"):
        log.info("%s already present (%s), skipped", file.path, status)
        return target
    if status == "mismatch":
        log.warning("%s exists with a different sha256; downloading it again", file.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    url = source_url(file)
    log.info("downloading %s from %s", file.path, url)
    tmp, digest = _download(url, target.parent, file.path, progress, timeout)
    try:
        if file.convert is None:
            _check(f"{file.path} from {file.url}", file.url_sha256 or file.sha256, digest)
        else:
            _check(f"{file.path}: original {file.url}", file.url_sha256, digest)
            data = convert(tmp.read_bytes(), file.convert, name=PurePosixPath(file.path).stem)
            _check(f"{file.path} converted from {file.url}", file.sha256, hashlib.sha256(data).hexdigest())
            tmp.write_bytes(data)
        if file.sha256 is None and file.url_sha256 is None:
            log.warning("%s has no checksum in the manifest; kept unverified", file.path)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def fetch(
    name: DatasetRef,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    force: bool = False,
    timeout: float = 60.0,
) -> list[Path]:
    """Download every file of a dataset into the data directory.

    Args:
        name: registry name, e.g. ``"peregrine-citeseer"``, or a :class:`DatasetInfo`.
        data_dir: target data directory; default as in :func:`workbench.data.data_dir`.
        progress: optional per-chunk callback ``(relative path, bytes so far, total or None)``.
        force: download again even when a file is present and matches.
        timeout: socket timeout per request, seconds (> 0).

    Returns:
        The paths of the dataset's files.

    Raises:
        ValueError: unknown name or ``timeout`` <= 0.
        ChecksumError: a file does not match the manifest (nothing is left in its place).
        OSError: a download failed.

    Example:
        >>> fetch("karate", "/tmp/wb-data")  # doctest: +SKIP
        [PosixPath('/tmp/wb-data/graphs/karate.mtx'), PosixPath('/tmp/wb-data/graphs/LICENSE.lagraph')]
    """
    if not timeout > 0:
        raise ValueError(f"timeout={timeout!r} must be > 0 seconds")
    info = get_dataset(name)
    root = resolve_data_dir(data_dir)[0]
    log.info("fetching dataset %s into %s", info.name, root)
    return [fetch_file(f, root, progress=progress, force=force, timeout=timeout) for f in info.files]


def _progress_bar() -> tuple[Progress, Callable[[], None]]:
    from tqdm.auto import tqdm

    bars: dict[str, tqdm] = {}

    def update(label: str, done: int, total: int | None) -> None:
        bar = bars.get(label)
        if bar is None:
            bar = bars[label] = tqdm(total=total, unit="B", unit_scale=True, desc=label, leave=False)
        bar.update(done - bar.n)

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return update, close


def ensure_dataset(name: DatasetRef, data_dir: str | os.PathLike[str] | None = None, *, timeout: float = 30.0) -> Path:
    """The dataset's path, as :func:`workbench.data.dataset_path`; a missing dataset is downloaded first (with a
    progress bar and checksums) unless ``WORKBENCH_DATA_AUTOFETCH=0``.

    Raises:
        FileNotFoundError: still missing: one line naming the data directory and ``workbench data fetch NAME``.
    """
    info = get_dataset(name)
    try:
        return dataset_path(info, data_dir)
    except FileNotFoundError as missing:
        if os.environ.get(AUTO_FETCH_ENV_VAR, "1") == "0":
            raise
        root, how = resolve_data_dir(data_dir)
        log.warning("dataset %s is not in %s (%s): downloading it", info.name, root, how)
        update, close = _progress_bar()
        try:
            fetch(info, root, progress=update, timeout=timeout)
        except (OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatasetMissing(
                f"dataset {info.name!r} is not in {root} ({how}) and could not be downloaded ({reason}); run "
                f"`workbench data fetch {info.name}` where the network is reachable, set {MIRROR_ENV_VAR} to a "
                f"mirror, or set WORKBENCH_DATA to a folder that holds it"
            ) from missing
        finally:
            close()
        return dataset_path(info, data_dir)
