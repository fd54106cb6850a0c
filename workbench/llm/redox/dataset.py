"""The dataset on disk: one file per record and the same records packed into chunk files, with an index.

Layout under ``root``::

    records/r00000000.rec ...   one file per record (what a PyTorch ``Dataset`` over files reads)
    chunks/c000000.chunk ...    the same records, in id order, packed greedily into chunks of <= chunk_bytes
    index.npz                   record -> (chunk, offset, length, label, CRC-32); chunk -> (size, CRC-32); metadata

Every record is a 16-byte header (magic ``RDX1``, record id, label, total length, little-endian uint32) and its
payload (seeded random bytes of a drawn size, or the bytes given: a packed folder's files, a learning set's
features). The header lets every reader check that what it got is the record the index says it is; the index's
CRC-32 of every record (header and payload) and of every chunk lets it check that the bytes are the ones written.

Crash consistency (``workbench/atomic.py``): the index is the commit record. Generating first removes an old
index, writes and ``fsync``-s every data file, and only then writes the index atomically; a crash at any point
leaves no index (the dataset is refused as incomplete) or a complete dataset. Readers check before they trust:
:class:`RedoxStore` refuses a missing index or chunk file, a chunk whose size differs from the index
(truncated), a chunk whose CRC-32 differs (damaged), a record whose header disagrees with the index and a record
whose CRC-32 differs (a record file, or a record read at its offset in a chunk file, damaged), each with an error
naming the file; nothing is served from such a file.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.atomic import TruncatedFileError, verify_zip, write_bytes
from workbench.llm.redox.sizes import MIN_RECORD, record_sizes

HEADER = struct.Struct("<4sIII")
MAGIC = b"RDX1"
INDEX_NAME = "index.npz"
LAYOUTS = ("shuffled", "class-sorted")
REMEDY = "generate the dataset again (workbench run redox --mode generate --root ROOT --generate)"
#: index format: 2 adds the per-record CRC-32 (``record_crc``); an index of version 1 is refused
FORMAT_VERSION = 2

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`generate` wrote."""

    root: Path
    records: int
    chunks: int
    total_bytes: int
    chunk_bytes: int
    mean_record_bytes: float
    max_record_bytes: int


def pack_chunks(lengths: np.ndarray, chunk_bytes: int) -> np.ndarray:
    """Chunk of every record when records (in id order) are packed greedily into chunks of <= chunk_bytes.

    Raises ValueError naming chunk_bytes when a record is larger than a chunk.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    big = int(lengths.max())
    if big > chunk_bytes:
        raise ValueError(
            f"chunk size {chunk_bytes} B is smaller than the largest record ({big} B): "
            f"chunk_kb must be >= {big / 1024:.2f} (a record never spans two chunks)"
        )
    chunk = np.empty(len(lengths), dtype=np.int64)
    c, used = 0, 0
    for i, n in enumerate(lengths.tolist()):
        if used + n > chunk_bytes:
            c, used = c + 1, 0
        chunk[i] = c
        used += n
    return chunk


def make_labels(n: int, classes: int, layout: str, seed: int) -> np.ndarray:
    """Balanced labels (``i % classes``) in a seeded random order (``shuffled``) or sorted (``class-sorted``)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} is not allowed: valid values are {', '.join(map(repr, LAYOUTS))}")
    labels = np.arange(n, dtype=np.int64) % classes
    if layout == "class-sorted":
        return np.sort(labels)
    return np.random.default_rng([seed, 0x1AB]).permutation(labels)


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_files(
    root: Path,
    starts: np.ndarray,
    lengths: np.ndarray,
    labels: np.ndarray,
    payloads: Sequence[bytes] | None,
    seed: int,
    progress: Progress | bool | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Write every record file and chunk file (each fsync-ed, then their folders); returns the CRC-32 of every
    chunk and of every record. ``starts``: the first record of each chunk."""
    records, n_chunks = len(lengths), len(starts)
    (root / "records").mkdir(exist_ok=True)
    (root / "chunks").mkdir(exist_ok=True)
    rng = np.random.default_rng([seed, 0xDA7A])
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(lengths.sum()), unit="B", unit_scale=True, desc=f"writing {root}")
    crc = np.zeros(n_chunks, dtype=np.int64)
    record_crc = np.zeros(records, dtype=np.int64)
    for c, (a, b) in enumerate(zip(starts, np.r_[starts[1:], records])):
        parts = []
        for i in range(a, b):
            n = int(lengths[i])
            body = payloads[i] if payloads is not None else rng.bytes(n - HEADER.size)
            rec = HEADER.pack(MAGIC, i, int(labels[i]), n) + bytes(body)
            record_crc[i] = zlib.crc32(rec)
            _fsync_write(root / "records" / f"r{i:08d}.rec", rec)
            parts.append(rec)
        data = b"".join(parts)
        crc[c] = zlib.crc32(data)
        _fsync_write(root / "chunks" / f"c{c:06d}.chunk", data)
        if bar is not None:
            bar.update(len(data))
        elif callable(progress):
            progress(c + 1, n_chunks)
    if bar is not None:
        bar.close()
    for folder in (root / "records", root / "chunks"):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return crc, record_crc


def generate(
    root: str | os.PathLike[str],
    *,
    records: int,
    record_bytes: float,
    chunk_bytes: int,
    sizes: str = "imagenet",
    classes: int = 10,
    layout: str = "shuffled",
    seed: int = 0,
    payloads: Sequence[bytes] | None = None,
    labels: Sequence[int] | None = None,
    progress: Progress | bool | None = None,
) -> DatasetInfo:
    """Write a dataset of ``records`` labelled records under ``root`` (see the module docstring).

    Sizes are drawn from ``sizes`` with mean ``record_bytes`` (header included) unless ``payloads`` are given
    (then their lengths + 16 count, and ``labels`` must come with them). ``progress``: a callback
    ``(done, total)``, or True for a tqdm bar (the CLI's), called per chunk.

    Raises:
        ValueError: records < 1, classes < 1, a chunk smaller than the largest record (naming chunk_kb).
        WriteError: the disk filled up (the old index was already removed: the folder is refused until
        generated again).
    """
    root = Path(root)
    if classes < 1:
        raise ValueError(f"classes={classes} is out of range: valid range is >= 1")
    if payloads is not None:
        lengths, label_arr = _given_records(payloads, labels)
        records = len(payloads)
    else:
        lengths = record_sizes(records, max(record_bytes, MIN_RECORD), sizes, seed=seed)
        label_arr = make_labels(records, classes, layout, seed)
    chunk_of, starts, offsets = _chunk_layout(lengths, chunk_bytes)
    n_chunks = int(chunk_of[-1]) + 1

    root.mkdir(parents=True, exist_ok=True)
    (root / INDEX_NAME).unlink(missing_ok=True)  # from here on the folder is incomplete until the index lands
    crc, record_crc = _write_files(root, starts, lengths, label_arr, payloads, seed, progress)
    meta = dict(
        version=FORMAT_VERSION,
        records=records,
        chunks=n_chunks,
        chunk_bytes=int(chunk_bytes),
        seed=seed,
        sizes=sizes,
        layout=layout,
        record_bytes=float(record_bytes),
        classes=int(classes) if payloads is None else int(label_arr.max()) + 1,
    )
    buf = io.BytesIO()
    np.savez(
        buf,
        chunk=chunk_of,
        offset=offsets,
        length=lengths,
        label=label_arr,
        chunk_size=np.bincount(chunk_of, weights=lengths, minlength=n_chunks).astype(np.int64),
        chunk_crc=crc,
        record_crc=record_crc,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
    )
    write_bytes(root / INDEX_NAME, buf.getvalue())  # the commit point
    return DatasetInfo(
        root=root,
        records=records,
        chunks=n_chunks,
        total_bytes=int(lengths.sum()),
        chunk_bytes=int(chunk_bytes),
        mean_record_bytes=float(lengths.mean()),
        max_record_bytes=int(lengths.max()),
    )


def _given_records(payloads: Sequence[bytes], labels: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray]:
    """Lengths (payload + 16-byte header, B) and labels of given payloads (ValueError if the labels do not match)."""
    if labels is None or len(labels) != len(payloads):
        raise ValueError("payloads need labels of the same length")
    sizes_of = getattr(payloads, "sizes", None)  # a lazy sequence (a packed folder) knows its sizes
    lengths = np.array(
        [n + HEADER.size for n in sizes_of] if sizes_of is not None else [len(p) + HEADER.size for p in payloads],
        dtype=np.int64,
    )
    return lengths, np.asarray(labels, dtype=np.int64)


def _chunk_layout(lengths: np.ndarray, chunk_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Records packed greedily into chunks (:func:`pack_chunks`): the chunk of every record, the first record of
    every chunk and every record's byte offset in its chunk."""
    records = len(lengths)
    chunk_of = pack_chunks(lengths, chunk_bytes)
    offsets = np.zeros(records, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, chunk_of[1:] != chunk_of[:-1]])
    for a, b in zip(starts, np.r_[starts[1:], records]):
        offsets[a:b] = np.r_[0, np.cumsum(lengths[a : b - 1])]
    return chunk_of, starts, offsets


def pack_folder(
    source: str | os.PathLike[str], root: str | os.PathLike[str], *, chunk_bytes: int, progress=None
) -> DatasetInfo:
    """Pack every file under ``source`` (sorted paths) as records; a file's label is its top folder's rank
    (``ImageFolder`` style; files directly in ``source`` get label 0).

    Raises ValueError (source is not a folder, holds no files) or as :func:`generate`.
    """
    source = Path(source)
    if not source.is_dir():
        raise ValueError(f"source={str(source)!r} is not a folder: give a folder of files to pack")
    files = sorted(p for p in source.rglob("*") if p.is_file())
    if not files:
        raise ValueError(f"source={str(source)!r} holds no files to pack")
    tops = sorted({p.relative_to(source).parts[0] for p in files if len(p.relative_to(source).parts) > 1})
    rank = {name: i for i, name in enumerate(tops)}
    labels = [rank.get(p.relative_to(source).parts[0], 0) if len(p.relative_to(source).parts) > 1 else 0 for p in files]
    payloads = _LazyFiles(files)
    return generate(
        root,
        records=len(files),
        record_bytes=0,
        chunk_bytes=chunk_bytes,
        payloads=payloads,
        labels=labels,
        sizes="folder",
        progress=progress,
    )


class _LazyFiles:
    """The files of a folder as a sequence of their bytes, read one at a time (memory: one file)."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.sizes = [p.stat().st_size for p in files]

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> bytes:
        data = self.files[i].read_bytes()
        if len(data) != self.sizes[i]:
            raise ValueError(f"source file {self.files[i]} changed size while being packed; pack it again")
        return data


class RedoxStore:
    """A generated dataset, checked on opening (index complete and consistent, every chunk file present with
    its indexed size) and on every read (chunk CRC-32, record headers).

    Raises on opening: FileNotFoundError (no index: never generated or generation did not finish; a chunk file
    missing), TruncatedFileError (index or chunk file cut short), ValueError (an index that disagrees with
    itself or the chunk files), each naming the file.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        index = self.root / INDEX_NAME
        if not index.is_file():
            raise FileNotFoundError(
                f"dataset index {index} is missing (never generated, or generation did not finish); {REMEDY}"
            )
        verify_zip(index, what="dataset index", remedy=REMEDY)
        with np.load(index) as z:
            self.chunk = z["chunk"].astype(np.int64)
            self.offset = z["offset"].astype(np.int64)
            self.length = z["length"].astype(np.int64)
            self.label = z["label"].astype(np.int64)
            self.chunk_size = z["chunk_size"].astype(np.int64)
            self.chunk_crc = z["chunk_crc"].astype(np.int64)
            self.meta = json.loads(bytes(z["meta"]).decode())
            if "record_crc" not in z.files:
                raise ValueError(
                    f"dataset index {index} is of format version {self.meta.get('version')} (no record CRC-32s): "
                    f"version {FORMAT_VERSION} is needed; {REMEDY}"
                )
            self.record_crc = z["record_crc"].astype(np.int64)
        self.n = len(self.chunk)
        self.n_chunks = len(self.chunk_size)
        self._check_index(index)
        order = np.argsort(self.chunk, kind="stable")
        bounds = np.searchsorted(self.chunk[order], np.arange(self.n_chunks + 1))
        self.chunk_records = [order[bounds[c] : bounds[c + 1]] for c in range(self.n_chunks)]
        for c in range(self.n_chunks):
            path = self.chunk_path(c)
            if not path.is_file():
                raise FileNotFoundError(f"chunk file {path} listed in {index} is missing; {REMEDY}")
            size = path.stat().st_size
            if size != self.chunk_size[c]:
                state = "truncated" if size < self.chunk_size[c] else "longer than the index says"
                raise TruncatedFileError(
                    f"chunk file {path} is {state}: {size} of {self.chunk_size[c]} bytes; {REMEDY}"
                )

    def _check_index(self, index: Path) -> None:
        n = self.n
        same = len(self.offset) == len(self.length) == len(self.label) == len(self.record_crc) == n
        if not same or n != self.meta.get("records"):
            raise ValueError(f"dataset index {index} disagrees with itself (array lengths differ); {REMEDY}")
        if n == 0 or self.chunk.min() < 0 or self.chunk.max() >= self.n_chunks:
            raise ValueError(f"dataset index {index} names chunks outside 0..{self.n_chunks - 1}; {REMEDY}")
        end = self.offset + self.length
        if (self.offset < 0).any() or (end > self.chunk_size[self.chunk]).any() or (self.length < HEADER.size).any():
            raise ValueError(
                f"dataset index {index} disagrees with its chunks (a record lies outside its chunk); {REMEDY}"
            )
        filled = np.bincount(self.chunk, weights=self.length, minlength=self.n_chunks).astype(np.int64)
        if (filled != self.chunk_size).any():
            c = int(np.flatnonzero(filled != self.chunk_size)[0])
            raise ValueError(
                f"dataset index {index} disagrees with chunk {self.chunk_path(c)}: its records cover {filled[c]} of "
                f"{self.chunk_size[c]} bytes; {REMEDY}"
            )

    # ---- paths and sizes ---------------------------------------------------------------------------------
    def chunk_path(self, c: int) -> Path:
        return self.root / "chunks" / f"c{c:06d}.chunk"

    def record_path(self, i: int) -> Path:
        return self.root / "records" / f"r{i:08d}.rec"

    def all_paths(self) -> list[Path]:
        return [self.chunk_path(c) for c in range(self.n_chunks)] + [self.record_path(i) for i in range(self.n)]

    @property
    def total_bytes(self) -> int:
        return int(self.length.sum())

    # ---- checked reads -------------------------------------------------------------------------------------
    def check_record(self, data, i: int, where: Path, *, crc: bool = True) -> memoryview:
        """The payload of record ``i`` from its bytes ``data``: the header checked against the index, and (``crc``)
        the record's CRC-32. ``crc=False`` only where the bytes come out of a chunk whose CRC-32 was checked.

        Raises TruncatedFileError (a record cut short or damaged: its CRC-32 differs), ValueError (a header that
        disagrees with the index), each naming ``where``.
        """
        view = memoryview(data)
        if len(view) != self.length[i]:
            state = "truncated" if len(view) < self.length[i] else "longer than the index says"
            raise TruncatedFileError(
                f"record {i} in {where} is {state}: {len(view)} of {self.length[i]} bytes; {REMEDY}"
            )
        magic, rid, label, n = HEADER.unpack_from(view, 0)
        if magic != MAGIC or rid != i or label != self.label[i] or n != self.length[i]:
            raise ValueError(
                f"index {self.root / INDEX_NAME} disagrees with {where} at record {i}: the header there says "
                f"record {rid}, label {label}, {n} bytes (magic {magic!r}); {REMEDY}"
            )
        if crc and zlib.crc32(view) != self.record_crc[i]:
            raise TruncatedFileError(f"record {i} in {where} is damaged: its CRC-32 does not match the index; {REMEDY}")
        return view[HEADER.size :]

    def read_chunk(self, c: int, reader) -> bytes:
        """Chunk ``c`` in one read, checked (size and CRC-32) before anything of it is served."""
        path = self.chunk_path(c)
        data = reader.read(path, 0, int(self.chunk_size[c]))
        if len(data) != self.chunk_size[c]:
            raise TruncatedFileError(
                f"chunk file {path} is truncated: {len(data)} of {self.chunk_size[c]} bytes; {REMEDY}"
            )
        if zlib.crc32(data) != self.chunk_crc[c]:
            raise TruncatedFileError(f"chunk file {path} is damaged: its CRC-32 does not match the index; {REMEDY}")
        return data

    def record_from_chunk(self, data: bytes, i: int) -> memoryview:
        """Record ``i``'s payload out of its chunk's bytes (as :meth:`read_chunk` returned them: the chunk's CRC-32,
        checked there, covers the record)."""
        o = int(self.offset[i])
        view = memoryview(data)[o : o + int(self.length[i])]
        return self.check_record(view, i, self.chunk_path(int(self.chunk[i])), crc=False)

    def read_record_file(self, i: int, reader) -> memoryview:
        """Record ``i`` from its own file (one read)."""
        path = self.record_path(i)
        return self.check_record(reader.read(path, 0, int(self.length[i]) + 1), i, path)

    def read_record_range(self, i: int, reader) -> memoryview:
        """Record ``i`` read from its chunk file at its offset (one small read)."""
        c = int(self.chunk[i])
        data = reader.read(self.chunk_path(c), int(self.offset[i]), int(self.length[i]))
        return self.check_record(data, i, self.chunk_path(c))
