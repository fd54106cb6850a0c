"""Cold reads and byte accounting: every loader reads through a :class:`ColdReader`.

Cold reads for real: with ``cold=True`` each range read is followed by ``posix_fadvise(POSIX_FADV_DONTNEED)``
on that range, and :func:`drop_cache` drops whole files before an epoch, so the next read of those bytes goes to
the device (the data was ``fsync``-ed when generated; dirty pages would not be dropped). Bytes read from the
device come from ``/proc/self/io`` (``read_bytes``, the whole process: the prefetch thread included);
:class:`IOMeter` also keeps the bytes the loader asked for (``counted``), the fallback where ``/proc/self/io``
does not move (then the figure is labelled ``counted``).

A memory budget smaller than the dataset is emulated by :class:`BudgetCache`: an LRU of byte ranges with a
capacity in bytes (the loaders that read records at random keep what they read there, as a page cache would).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

_PROC_IO = Path("/proc/self/io")
#: the page size: what the page cache holds and drops
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def proc_read_bytes() -> int | None:
    """``read_bytes`` of ``/proc/self/io`` (bytes this process caused to be fetched from storage), or None."""
    try:
        for line in _PROC_IO.read_text().splitlines():
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def drop_cache(paths) -> None:
    """Drop the page cache of every file in ``paths`` (``POSIX_FADV_DONTNEED`` on the whole file)."""
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class ColdReader:
    """Reads byte ranges of files with ``pread``; counts requests and bytes; optionally drops each range after
    (``cold``) and turns the kernel's readahead off for every file it opens (``readahead=False``:
    ``POSIX_FADV_RANDOM``, so a read fetches only the pages it asks for).

    One reader may serve a loader and its prefetch thread (the counters are updated under the GIL).
    """

    #: open files kept at most (least recently used closed first): one file per record must not exhaust the
    #: process's descriptors (20,000 records did, at the benchmark's full size)
    MAX_OPEN = 256

    def __init__(self, *, cold: bool = True, readahead: bool = True) -> None:
        self.cold = cold
        self.readahead = readahead
        self.bytes = 0
        self.ios = 0
        self._fds: OrderedDict[str, int] = OrderedDict()

    def read(self, path: str | Path, offset: int = 0, length: int | None = None) -> bytes:
        """``length`` bytes of ``path`` from ``offset`` (the whole file when None) in one ``pread``."""
        key = str(path)
        fd = self._fds.get(key)
        if fd is None:
            fd = os.open(key, os.O_RDONLY)  # FileNotFoundError names the file
            if not self.readahead:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            self._fds[key] = fd
            while len(self._fds) > self.MAX_OPEN:
                os.close(self._fds.popitem(last=False)[1])
        else:
            self._fds.move_to_end(key)
        if length is None:
            length = os.fstat(fd).st_size - offset
        data = os.pread(fd, length, offset)
        if self.cold:  # the whole pages the range touches: DONTNEED keeps a partly covered page otherwise
            start = offset - offset % PAGE
            os.posix_fadvise(fd, start, offset + length - start + PAGE - 1, os.POSIX_FADV_DONTNEED)
        self.bytes += len(data)
        self.ios += 1
        return data

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> ColdReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class IOFigures:
    """What one measured epoch read: device bytes (``/proc/self/io``, or counted when that does not move)."""

    device_bytes: int
    counted_bytes: int
    source: str  # "/proc/self/io" or "counted"
    ios: int
    seconds: float


class IOMeter:
    """``with IOMeter(reader) as m: ...`` -> ``m.figures``: device bytes read during the block."""

    def __init__(self, reader: ColdReader) -> None:
        self.reader = reader
        self.figures: IOFigures | None = None

    def __enter__(self) -> IOMeter:
        self._proc = proc_read_bytes()
        self._bytes, self._ios = self.reader.bytes, self.reader.ios
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        seconds = time.perf_counter() - self._start
        counted = self.reader.bytes - self._bytes
        end = proc_read_bytes()
        device = None if self._proc is None or end is None else end - self._proc
        # a container that does not account block I/O leaves /proc/self/io still even for cold reads: then the
        # bytes the loader asked for stand in, labelled "counted" (warm reads may legitimately read nothing)
        unusable = device is None or (self.reader.cold and device == 0 and counted > 0)
        source = "counted" if unusable else "/proc/self/io"
        self.figures = IOFigures(
            device_bytes=int(device if source == "/proc/self/io" else counted),
            counted_bytes=int(counted),
            source=source,
            ios=self.reader.ios - self._ios,
            seconds=seconds,
        )


class BudgetCache:
    """An LRU of byte blocks with a capacity in bytes: the emulated page cache of a memory budget."""

    def __init__(self, capacity_bytes: int) -> None:
        if capacity_bytes < 1:
            raise ValueError(f"capacity_bytes={capacity_bytes} is out of range: valid range is >= 1 (bytes)")
        self.capacity = int(capacity_bytes)
        self.used = 0
        self._items: OrderedDict = OrderedDict()
        self.hits = self.misses = 0

    def get(self, key):
        value = self._items.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return value

    def put(self, key, value: bytes) -> None:
        if key in self._items:
            return
        self._items[key] = value
        self.used += len(value)
        while self.used > self.capacity and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self.used -= len(old)
