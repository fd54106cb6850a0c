"""Dataset registry: the manifest ``data/registry.json``, the data directory, paths and checksums.

The manifest names each dataset, its licence and origin, and per file its path under the data
directory, a public download URL and the sha256 of the file as it lies in the shared data folder.
It is read in one place, :func:`load_manifest`.

The data directory is, in order (as scikit-learn's ``get_data_home``): an explicit argument, the
environment variable ``WORKBENCH_DATA``, a data folder beside the checkout (``../shared/data``), the
project's ``data/`` folder when it holds a dataset, else a per-user folder (``platformdirs``). Every
command, notebook and test resolves it here. Generated caches (datasets a technique generates,
compiled kernels) go to :func:`cache_dir`, never into a possibly read-only data folder.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import platformdirs

from workbench.data.convert import ConvertSpec

__all__ = [
    "CACHE_ENV_VAR",
    "DATA_ENV_VAR",
    "MANIFEST_PATH",
    "cache_dir",
    "DatasetInfo",
    "FileInfo",
    "data_dir",
    "dataset_path",
    "dataset_status",
    "file_status",
    "get_dataset",
    "list_datasets",
    "load_manifest",
    "resolve_data_dir",
    "sha256_file",
    "verify",
]

DATA_ENV_VAR = "WORKBENCH_DATA"
CACHE_ENV_VAR = "WORKBENCH_CACHE"
APP_NAME = "research-workbench"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
MANIFEST_PATH = PROJECT_ROOT / "data" / "registry.json"
#: a data folder beside the checkout (where this project's shared copy lies)
BESIDE_CHECKOUT = PROJECT_ROOT.parent / "shared" / "data"

FileStatus = Literal["ok", "mismatch", "missing", "unverified"]
DatasetStatus = Literal["present", "partial", "missing"]
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, kw_only=True)
class FileInfo:
    """One file of a dataset.

    Attributes:
        path: POSIX path relative to the data directory.
        url: public download URL (``https``, ``http`` or ``file``).
        sha256: hex digest of the file as it lies in the shared data folder (for files not in
            the shared folder: of the pinned upstream file); None when unknown (unverified).
        url_sha256: hex digest of the downloaded bytes where they differ from ``sha256``
            (converted or excerpted files); None when the download is ``sha256`` itself.
        convert: how the download becomes the file; None to keep it as downloaded.
        optional: the dataset is usable without this file.
    """

    path: str
    url: str
    sha256: str | None
    url_sha256: str | None = None
    convert: ConvertSpec | None = None
    optional: bool = False


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """One dataset of the manifest.

    Attributes:
        name: registry name, e.g. ``"planetoid-cora"``.
        description: one line.
        licence: licence of the files (and of the underlying data where it differs).
        origin: public page the files come from.
        files: the files, paths relative to the data directory.
        root: what :func:`dataset_path` returns, relative to the data directory (a folder or a file).
        notes: provenance and caveats, free text.
    """

    name: str
    description: str
    licence: str
    origin: str
    files: tuple[FileInfo, ...]
    root: str
    notes: str = ""


DatasetRef = str | DatasetInfo

_DATASET_KEYS = {"description", "licence", "origin", "root", "notes", "files"}
_FILE_KEYS = {"path", "url", "sha256", "url_sha256", "convert", "optional"}


def _check_keys(where: str, got: dict[str, Any], allowed: set[str], required: set[str]) -> None:
    unknown = sorted(set(got) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; valid keys: {sorted(allowed)}")
    missing = sorted(required - set(got))
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")


def _check_relpath(where: str, value: Any) -> str:
    p = PurePosixPath(str(value))
    if not isinstance(value, str) or not value or p.is_absolute() or ".." in p.parts or "\\" in value:
        raise ValueError(f"{where}: path={value!r} must be a relative POSIX path without '..'")
    return value


def _check_sha(where: str, value: Any) -> str | None:
    if value is not None and not (isinstance(value, str) and _SHA256.match(value)):
        raise ValueError(f"{where}: sha256={value!r} must be 64 lower-case hex digits or null")
    return value


def _parse_file(where: str, raw: dict[str, Any]) -> FileInfo:
    _check_keys(where, raw, _FILE_KEYS, {"path", "url", "sha256"})
    where = f"{where} ({raw['path']})"
    url = raw["url"]
    if not isinstance(url, str) or url.split(":", 1)[0] not in ("https", "http", "file"):
        raise ValueError(f"{where}: url={url!r} must use https, http or file")
    conv = raw.get("convert")
    if conv is not None:
        _check_keys(f"{where} convert", conv, {"kind", "index_base", "size_line"}, {"kind", "index_base", "size_line"})
        conv = ConvertSpec(**conv)
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        raise ValueError(f"{where}: optional={optional!r} must be true or false")
    return FileInfo(
        path=_check_relpath(where, raw["path"]),
        url=url,
        sha256=_check_sha(where, raw["sha256"]),
        url_sha256=_check_sha(where, raw.get("url_sha256")),
        convert=conv,
        optional=optional,
    )


def _parse_dataset(name: str, raw: dict[str, Any]) -> DatasetInfo:
    where = f"dataset {name!r}"
    _check_keys(where, raw, _DATASET_KEYS, _DATASET_KEYS - {"notes"})
    files = tuple(_parse_file(f"{where} file {k}", f) for k, f in enumerate(raw["files"]))
    if not files:
        raise ValueError(f"{where}: files must not be empty")
    return DatasetInfo(
        name=name,
        description=str(raw["description"]),
        licence=str(raw["licence"]),
        origin=str(raw["origin"]),
        files=files,
        root=_check_relpath(where, raw["root"]),
        notes=str(raw.get("notes", "")),
    )


@functools.lru_cache(maxsize=4)
def load_manifest(path: Path = MANIFEST_PATH) -> tuple[DatasetInfo, ...]:
    """Read and validate a manifest (cached per path); the single place the manifest is read.

    Raises:
        FileNotFoundError: no manifest at ``path``.
        ValueError: unknown or missing keys, bad paths, URLs or checksums.
    """
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    _check_keys(f"manifest {path}", raw, {"schema", "about", "datasets"}, {"schema", "datasets"})
    if raw["schema"] != 1:
        raise ValueError(f"manifest {path}: schema={raw['schema']!r} is unsupported; valid: 1")
    return tuple(_parse_dataset(name, entry) for name, entry in raw["datasets"].items())


def list_datasets() -> list[DatasetInfo]:
    """All datasets of the project manifest, in manifest order."""
    return list(load_manifest())


def get_dataset(name: DatasetRef) -> DatasetInfo:
    """The dataset called ``name`` (a :class:`DatasetInfo` passes through).

    Raises:
        ValueError: unknown name; the message lists the valid names.
    """
    if isinstance(name, DatasetInfo):
        return name
    for info in load_manifest():
        if info.name == name:
            return info
    valid = ", ".join(info.name for info in load_manifest())
    raise ValueError(f"dataset name={name!r} is unknown; valid names: {valid}")


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """The data directory (as :func:`data_dir`) and a phrase saying how it was chosen."""
    if explicit is not None and str(explicit) != "":
        return Path(os.path.abspath(Path(explicit).expanduser())), "given as argument"
    env = os.environ.get(DATA_ENV_VAR, "")
    if env:
        return Path(os.path.abspath(Path(env).expanduser())), f"from {DATA_ENV_VAR}"
    if BESIDE_CHECKOUT.is_dir():
        return BESIDE_CHECKOUT, "the data folder beside the checkout"
    project = PROJECT_ROOT / "data"
    if any((project / f.path).is_file() for info in load_manifest() for f in info.files):
        return project, "the project's data/ folder"
    return Path(platformdirs.user_data_dir(APP_NAME)) / "data", "the per-user data folder"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``explicit``, else ``$WORKBENCH_DATA``, else ``../shared/data`` beside the checkout,
    else the project's ``data/`` if it holds a dataset, else the per-user data folder.

    Example:
        >>> data_dir("/tmp/wb-data")
        PosixPath('/tmp/wb-data')
    """
    return resolve_data_dir(explicit)[0]


def cache_dir(*parts: str) -> Path:
    """A per-user cache folder for generated files (``$WORKBENCH_CACHE``, else platformdirs' user cache
    folder), created on first use: ``cache_dir("quest")``."""
    root = Path(os.environ.get(CACHE_ENV_VAR) or platformdirs.user_cache_dir(APP_NAME))
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_file(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks of ``chunk_size`` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def file_status(file: FileInfo, root: Path) -> FileStatus:
    """Check one file under the data directory ``root`` against its checksum.

    A file matches when its sha256 is ``file.sha256``, or, for a file kept as downloaded,
    ``file.url_sha256`` (the whole upstream file where the shared copy is an excerpt).
    """
    path = root / file.path
    if not path.is_file():
        return "missing"
    accepted = {file.sha256} | ({file.url_sha256} if file.convert is None else set())
    accepted.discard(None)
    if not accepted:
        return "unverified"
    return "ok" if sha256_file(path) in accepted else "mismatch"


def dataset_status(name: DatasetRef, data_dir: str | os.PathLike[str] | None = None) -> DatasetStatus:
    """``"present"`` (every file there), ``"partial"`` (only optional files missing) or ``"missing"``.

    Checks existence only; :func:`verify` checks contents.
    """
    info = get_dataset(name)
    root = resolve_data_dir(data_dir)[0]
    absent = [f for f in info.files if not (root / f.path).is_file()]
    if any(not f.optional for f in absent):
        return "missing"
    return "partial" if absent else "present"


class DatasetMissing(FileNotFoundError):
    """A dataset's file is not in the data directory (and was not, or could not be, downloaded)."""


def dataset_path(name: DatasetRef, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of the dataset's folder or file (``root`` in the manifest) under the data directory.

    Args:
        name: registry name, e.g. ``"karate"``, or a :class:`DatasetInfo`.
        data_dir: data directory; default as in :func:`data_dir`.

    Returns:
        The path; every required file of the dataset exists (optional files may not).

    Raises:
        ValueError: unknown name (the message lists the valid names).
        FileNotFoundError: a required file is missing; the message names it, the directory
            searched and how to get it.

    Example:
        >>> dataset_path("karate", "../shared/data")  # doctest: +SKIP
        PosixPath('.../shared/data/graphs/karate.mtx')
    """
    info = get_dataset(name)
    root, how = resolve_data_dir(data_dir)
    missing = [f.path for f in info.files if not f.optional and not (root / f.path).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise DatasetMissing(
            f"dataset {info.name!r}: file {missing[0]}{more} not found in data directory {root} ({how}). "
            f"Run `workbench data fetch {info.name} --data-dir {root}`, or set {DATA_ENV_VAR} to a folder "
            "that holds the data (a checkout's shared copy is ../shared/data)."
        )
    return root / info.root


def verify(name: DatasetRef, data_dir: str | os.PathLike[str] | None = None) -> dict[str, FileStatus]:
    """Check every file of a dataset against the manifest's sha256.

    Returns:
        ``{relative path: "ok" | "mismatch" | "missing" | "unverified"}``; ``"unverified"`` is a
        present file whose checksum the manifest does not know.

    Raises:
        ValueError: unknown name.
    """
    info = get_dataset(name)
    root = resolve_data_dir(data_dir)[0]
    return {f.path: file_status(f, root) for f in info.files}
