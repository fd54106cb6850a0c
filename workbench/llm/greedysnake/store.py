"""The offloaded state on disk: per-unit files read and written with ``os.pread``/``os.pwrite``, every byte counted.

Layout (one folder per run): for unit ``u``, part ``p`` (``a`` = the deferred fraction alpha of its parameters,
``b`` = the rest) and slot ``s`` (0/1, double buffering):

- ``u{u}.{p}.{s}.weights``: the compute copy of the parameters (what forward and backward read; fp32/fp64, or
  bf16/fp16 under mixed precision); absent for a part kept resident on the device (FlexTrain's embedding, head),
- ``u{u}.{p}.{s}.optim``: fp32/fp64 master weights, Adam ``m`` and ``v`` back to back,
- ``u{u}.a.{s}.grad``: the accumulated (master-dtype) gradient of the deferred part, waiting for the next iteration,
- ``u{u}.gradacc``: scratch for gradients accumulated across micro-batches (horizontal schedule),
- ``checkpoints``: scratch for inter-layer tensors (layer inputs and activation gradients, compute dtype) on SSD,
- ``commit.json``: the commit record (step, the live version of each part), written with
  :func:`workbench.atomic.write_text` after every file of the step is ``fdatasync``-ed.

A part at version ``v`` lives in slot ``v % 2``; an update reads slot ``v % 2`` and writes slot ``(v+1) % 2``,
so the state named by the last commit record is never overwritten before the next record replaces it: a kill
at any point leaves a complete state (the commit record) and a full disk stops with
:class:`~workbench.atomic.WriteError` naming the file, leaving it intact.

After every write (``fdatasync``) and every read the file's pages are dropped from the page cache with
``posix_fadvise(POSIX_FADV_DONTNEED)``, so the bytes really move between the device and the disk.

Byte counters are per tier (``ssd``, ``host``), class (``weights``, ``gradients``, ``optimizer``,
``checkpoints``) and direction (``read``, ``written``).
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.atomic import WriteError, write_text

__all__ = ["CLASSES", "TIERS", "ByteCounter", "StateStore"]

CLASSES = ("weights", "gradients", "optimizer", "checkpoints")
TIERS = ("ssd", "host")
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
#: numpy dtype a tensor's bytes travel as (16-bit floats as int16: numpy has no bfloat16)
_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.bfloat16: np.int16, torch.float16: np.int16}
_VIEW = {torch.bfloat16: torch.int16, torch.float16: torch.int16}


class ByteCounter:
    """Thread-safe byte counts keyed by (tier, class, direction)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seconds = {"read": 0.0, "written": 0.0}  # wall seconds inside SSD reads / writes (+ syncs)
        self.counts: dict[tuple[str, str, str], int] = {
            (t, c, d): 0 for t in TIERS for c in CLASSES for d in ("read", "written")
        }

    def add(self, tier: str, cls: str, direction: str, nbytes: int) -> None:
        with self._lock:
            self.counts[(tier, cls, direction)] += int(nbytes)

    def total(self, tier: str, direction: str) -> int:
        return sum(v for (t, _, d), v in self.counts.items() if t == tier and d == direction)

    def by_class(self, tier: str, direction: str) -> dict[str, int]:
        return {c: self.counts[(tier, c, direction)] for c in CLASSES}

    def snapshot(self) -> dict[tuple[str, str, str], int]:
        with self._lock:
            return dict(self.counts)


def _drop_cache(fd: int) -> None:
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


class StateStore:
    """Files of one offloaded run (see the module docstring).

    Parameters:
        root: the run's folder (created).
        dtype: the default dtype of :meth:`read` (float32 or float64); a write keeps its tensor's dtype.
        counter: where bytes are counted.
        on_write: called as ``on_write(path, nbytes)`` before every write (tests inject kills here).
        sync_every_write: fdatasync and drop the pages after every write (else once per :meth:`sync`).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        dtype: torch.dtype,
        counter: ByteCounter,
        *,
        on_write: Callable[[Path, int], None] | None = None,
        sync_every_write: bool = True,
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.dtype = dtype
        self.itemsize = torch.empty((), dtype=dtype).element_size()
        self.counter = counter
        self.on_write = on_write
        self.sync_every_write = sync_every_write
        self._dirty: set[int] = set()
        self._fds: dict[Path, int] = {}
        self._lock = threading.Lock()

    # ---- raw I/O ----------------------------------------------------------------------------------------
    def _fd(self, path: Path) -> int:
        with self._lock:
            fd = self._fds.get(path)
            if fd is None:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                self._fds[path] = fd
            return fd

    def path(self, unit: int, part: str, slot: int, kind: str) -> Path:
        return self.root / f"u{unit}.{part}.{slot}.{kind}"

    def write(self, path: Path, tensor: torch.Tensor, *, offset: int = 0, tier_class: tuple[str, str]) -> None:
        """Write ``tensor`` (in its own dtype) at element ``offset`` of ``path``; fdatasync; drop the pages."""
        t = tensor.detach().to("cpu").contiguous()
        if t.dtype in _VIEW:
            t = t.view(_VIEW[t.dtype])
        arr = np.ascontiguousarray(t.numpy())
        data = memoryview(arr).cast("B")
        if self.on_write is not None:
            self.on_write(path, len(data))
        fd = self._fd(path)
        pos, done = offset * arr.itemsize, 0
        t0 = time.perf_counter()
        try:
            while done < len(data):
                n = os.pwrite(fd, data[done:], pos + done)
                if n == 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
            if self.sync_every_write:
                os.fdatasync(fd)
        except OSError as exc:
            if exc.errno in _NO_SPACE:
                raise WriteError(
                    exc.errno,
                    f"could not write {path}: no space left ({os.strerror(exc.errno)}) after {done} of "
                    f"{len(data)} bytes; {self._committed_state()}",
                ) from exc
            raise
        if self.sync_every_write:
            _drop_cache(fd)
        else:
            with self._lock:
                self._dirty.add(fd)
        self.counter.seconds["written"] += time.perf_counter() - t0
        self.counter.add(*tier_class, "written", len(data))

    def read(self, path: Path, count: int, *, offset: int = 0, tier_class: tuple[str, str],
             dtype: torch.dtype | None = None) -> torch.Tensor:  # fmt: skip
        """Read ``count`` elements of ``dtype`` (default: the store's) from element ``offset`` of ``path`` into a
        new tensor; drop the pages."""
        dtype = dtype or self.dtype
        arr = np.empty(count, dtype=_NP[dtype])
        view = memoryview(arr).cast("B")
        fd = self._fd(path)
        pos, done = offset * arr.itemsize, 0
        t0 = time.perf_counter()
        while done < len(view):
            n = os.preadv(fd, [view[done:]], pos + done)
            if n == 0:
                raise ValueError(
                    f"state file {path} is truncated: {pos + done} bytes, {len(view) - done} more expected; "
                    "delete the run folder and train again"
                )
            done += n
        _drop_cache(fd)
        self.counter.seconds["read"] += time.perf_counter() - t0
        self.counter.add(*tier_class, "read", len(view))
        out = torch.from_numpy(arr)
        return out.view(dtype) if dtype in _VIEW else out

    def sync(self) -> None:
        """fdatasync every file written since the last sync and drop its pages (before a commit record)."""
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        t0 = time.perf_counter()
        for fd in dirty:
            os.fdatasync(fd)
            _drop_cache(fd)
        self.counter.seconds["written"] += time.perf_counter() - t0

    def _committed_state(self) -> str:
        """What a failed write leaves: the last commit (intact), or none yet (the folder holds no usable run)."""
        if self.commit_path.exists():
            return f"the last committed state (commit.json in {self.root}) is intact"
        return (
            f"no state was committed yet (no commit.json in {self.root}): free space, delete the folder and start again"
        )

    # ---- commit record ----------------------------------------------------------------------------------
    @property
    def commit_path(self) -> Path:
        return self.root / "commit.json"

    def read_commit(self) -> dict[str, Any] | None:
        """The last commit record, or None when the run has none yet."""
        try:
            return json.loads(self.commit_path.read_text())
        except FileNotFoundError:
            return None

    def write_commit(self, record: dict[str, Any]) -> None:
        """Make the state ``record`` names the committed one (atomic rename after fsync)."""
        write_text(self.commit_path, json.dumps(record, sort_keys=True))

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()
