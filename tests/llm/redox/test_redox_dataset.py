"""The generated dataset: deterministic from a seed, sizes as drawn, crash-consistent, and every kind of bad
file detected with an error naming it, never served as data (issue 18's disk part).

References: the index's own arrays (sizes, offsets), byte-for-byte equality of the per-record files and the
chunk slices, ``zlib.crc32`` (of chunks and of records: a flipped byte is refused by every loader); the error
text names the file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from torch.utils.data import DataLoader

from workbench.atomic import TruncatedFileError
from workbench.llm.redox import dataset as ds_mod
from workbench.llm.redox.dataset import HEADER, INDEX_NAME, RedoxStore, generate, pack_folder
from workbench.llm.redox.io import ColdReader
from workbench.llm.redox.loaders import LOADERS, measure
from workbench.llm.redox.redox import RedoxDataset, RedoxSampler
from workbench.llm.redox.sizes import IMAGENET_SIGMA, TAIL_FACTOR, record_sizes


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def make(root: Path, **kw) -> RedoxStore:
    args = dict(records=53, record_bytes=1500, chunk_bytes=8192, seed=9)
    args.update(kw)
    generate(root, **args)
    return RedoxStore(root)


def test_deterministic_from_seed_and_files_agree(tmp_path: Path) -> None:
    a, b, c = make(tmp_path / "a"), make(tmp_path / "b"), make(tmp_path / "c", seed=10)
    assert _tree_digest(a.root) == _tree_digest(b.root) != _tree_digest(c.root)
    reader = ColdReader(cold=False)
    for i in range(a.n):
        own = bytes(a.read_record_file(i, reader))
        packed = bytes(a.record_from_chunk(a.read_chunk(int(a.chunk[i]), reader), i))
        assert own == packed == bytes(a.read_record_range(i, reader))
    assert a.total_bytes == sum(p.stat().st_size for p in (a.root / "records").iterdir())
    assert all(a.chunk_size <= 8192)


def test_imagenet_like_sizes() -> None:
    sizes = record_sizes(200_000, 110_000, "imagenet", seed=0)
    assert abs(sizes.mean() / 110_000 - 1) < 0.02  # mean kept (the clipped tail costs < 1 %)
    assert sizes.max() <= TAIL_FACTOR * 110_000
    logs = np.log(sizes[sizes < 4 * 110_000])
    assert abs(logs.std() - IMAGENET_SIGMA) < 0.05
    assert np.median(sizes) < sizes.mean()  # right-skewed
    assert set(record_sizes(10, 64, "fixed").tolist()) == {64}


def test_chunk_smaller_than_a_record_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"chunk size 1000 B is smaller than the largest record .* chunk_kb must be"):
        generate(tmp_path, records=10, record_bytes=900, chunk_bytes=1000, sizes="uniform")


def test_truncated_chunk_is_refused_at_open_and_at_read(tmp_path: Path) -> None:
    store = make(tmp_path)
    victim = store.chunk_path(2)
    data = victim.read_bytes()
    victim.write_bytes(data[:-5])
    with pytest.raises(TruncatedFileError, match=rf"chunk file {victim} is truncated: {len(data) - 5} of {len(data)}"):
        RedoxStore(tmp_path)
    # cut short after the store was opened: the read itself refuses it, nothing of it is served
    victim.write_bytes(data)
    opened = RedoxStore(tmp_path)
    victim.write_bytes(data[:100])
    sampler = RedoxSampler(opened, resident=2)
    loader = RedoxDataset(opened, sampler, cold=False)
    served = []
    with pytest.raises(TruncatedFileError, match=rf"chunk file {victim} is truncated"):
        for batch in DataLoader(loader, sampler=sampler, batch_size=1):
            served += batch[0].tolist()
    assert not set(served) & set(opened.chunk_records[2].tolist())
    loader.close()


def test_damaged_chunk_fails_its_crc(tmp_path: Path) -> None:
    store = make(tmp_path)
    victim = store.chunk_path(1)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(TruncatedFileError, match=rf"chunk file {victim} is damaged: its CRC-32"):
        RedoxStore(tmp_path).read_chunk(1, ColdReader(cold=False))


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", LOADERS)
def test_a_flipped_payload_byte_is_refused_by_every_loader(tmp_path: Path, name: str) -> None:
    """One payload bit of record 7 flipped in both its copies (its own file and its chunk): each loader reads one
    of them, and none serves it (the random-files baseline through the record's CRC-32, the range readers too, the
    chunk readers through the chunk's). Headers are intact, so only a checksum can see it."""
    store = make(tmp_path)
    i = 7
    middle = HEADER.size + (int(store.length[i]) - HEADER.size) // 2
    _flip(store.record_path(i), middle)
    _flip(store.chunk_path(int(store.chunk[i])), int(store.offset[i]) + middle)
    with pytest.raises(TruncatedFileError, match=r"is damaged: its CRC-32 does not match the index"):
        measure(store, name, resident=2, batch=4, seed=1)


def test_a_damaged_record_file_names_it(tmp_path: Path) -> None:
    store = make(tmp_path)
    _flip(store.record_path(3), HEADER.size + 1)
    reader = ColdReader(cold=False)
    with pytest.raises(TruncatedFileError, match=rf"record 3 in {store.record_path(3)} is damaged"):
        store.read_record_file(3, reader)
    assert bytes(store.read_record_range(3, reader))  # the chunk's copy is intact


def test_an_index_without_record_crcs_is_refused(tmp_path: Path) -> None:
    make(tmp_path)
    with np.load(tmp_path / INDEX_NAME) as z:
        arrays = {k: z[k] for k in z.files if k != "record_crc"}  # an index of format version 1
    np.savez(tmp_path / INDEX_NAME, **arrays)
    with pytest.raises(ValueError, match=r"is of format version .* \(no record CRC-32s\).*--generate"):
        RedoxStore(tmp_path)


def test_missing_chunk_and_missing_or_truncated_index(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.chunk_path(3).unlink()
    with pytest.raises(FileNotFoundError, match=rf"chunk file {store.chunk_path(3)} listed in .* is missing"):
        RedoxStore(tmp_path)
    index = tmp_path / INDEX_NAME
    index.write_bytes(index.read_bytes()[:-30])
    with pytest.raises(TruncatedFileError, match=rf"dataset index {index} is truncated"):
        RedoxStore(tmp_path)
    index.unlink()
    with pytest.raises(FileNotFoundError, match=rf"dataset index {index} is missing"):
        RedoxStore(tmp_path)


def test_index_that_disagrees_with_the_chunks(tmp_path: Path) -> None:
    store = make(tmp_path)
    with np.load(tmp_path / INDEX_NAME) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["label"] = (arrays["label"] + 1) % 10  # the headers in the chunks now disagree
    np.savez(tmp_path / INDEX_NAME, **arrays)
    bad = RedoxStore(tmp_path)
    with pytest.raises(ValueError, match=rf"index .*{INDEX_NAME} disagrees with .*c000000.chunk at record 0"):
        bad.record_from_chunk(bad.read_chunk(0, ColdReader(cold=False)), 0)
    arrays["length"] = arrays["length"].copy()
    arrays["length"][5] += 1  # records no longer cover their chunk
    np.savez(tmp_path / INDEX_NAME, **arrays)
    with pytest.raises(ValueError, match=rf"dataset index .*{INDEX_NAME} disagrees with "):
        RedoxStore(tmp_path)
    del store


def test_crash_while_generating_leaves_no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path)  # a good dataset first: regenerating must not leave its old index beside new files
    writes = []
    real = ds_mod._fsync_write

    def dying(path, data):
        writes.append(path)
        if len(writes) == 20:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(ds_mod, "_fsync_write", dying)
    with pytest.raises(OSError):
        generate(tmp_path, records=53, record_bytes=1500, chunk_bytes=8192, seed=11)
    with pytest.raises(FileNotFoundError, match="generation did not finish"):
        RedoxStore(tmp_path)


def test_pack_a_folder(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for cls in ("cat", "dog"):
        (src / cls).mkdir(parents=True)
        for k in range(3):
            (src / cls / f"{k}.bin").write_bytes(os.urandom(100 + 37 * k))
    info = pack_folder(src, tmp_path / "packed", chunk_bytes=400)
    store = RedoxStore(tmp_path / "packed")
    assert info.records == 6 and store.label.tolist() == [0, 0, 0, 1, 1, 1]
    files = sorted(p for p in src.rglob("*") if p.is_file())
    reader = ColdReader(cold=False)
    assert [bytes(store.read_record_file(i, reader)) for i in range(6)] == [p.read_bytes() for p in files]
    with pytest.raises(ValueError, match="is not a folder"):
        pack_folder(tmp_path / "nope", tmp_path / "x", chunk_bytes=400)


def test_progress_is_reported_per_chunk(tmp_path: Path) -> None:
    seen = []
    info = generate(
        tmp_path,
        records=40,
        record_bytes=1000,
        chunk_bytes=8000,
        seed=1,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(k, info.chunks) for k in range(1, info.chunks + 1)]
