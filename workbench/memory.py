"""Resource guards: estimate what a run will allocate and how long it takes, refuse what cannot fit, bound
what may run too long.

``available_bytes()`` is the least of the kernel's ``MemAvailable``, the cgroup's limit minus its usage (a
container's memory limit) and the address-space limit (``RLIMIT_AS``) minus what the process already maps.
``require(nbytes, what=..., hint=...)`` raises ``ValueError`` (the CLI's exit 2) with the estimate and the
available memory, before anything large is allocated.

Every technique declares ``estimate(config) -> Estimate`` in its ``sizes.py`` (closed forms: the peak host
memory of the run and its wall-clock order of magnitude); ``workbench run`` refuses with :func:`check_estimate`
what cannot fit, shows :func:`progress` for a run estimated over :data:`PROGRESS_AFTER_S`, and bounds a run whose
config has ``timeout_s`` with :func:`deadline` (:class:`RunTimeout`, exit 2).
"""

from __future__ import annotations

import math
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from workbench.results import fmt_bytes

__all__ = [
    "MB",
    "PROCESS_BYTES",
    "PROGRESS_AFTER_S",
    "Estimate",
    "RunTimeout",
    "available_bytes",
    "check_estimate",
    "deadline",
    "progress",
    "require",
]

MB = 1 << 20
#: host memory of one spawned worker process before its work (an interpreter with torch imported; measured about
#: 215 MB RSS per gloo rank of the mesh-attention check)
PROCESS_BYTES = 220 * MB
#: a run estimated to take longer than this (seconds) shows its progress on stderr
PROGRESS_AFTER_S = 2.0


def _read_int(path: str | Path) -> int | None:
    try:
        text = Path(path).read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(text) if text.isdigit() else None


def _meminfo(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes() -> int:
    """Bytes this process can still allocate (see module docstring); a large number where nothing is known."""
    limits = []
    avail = _meminfo("MemAvailable")
    if avail is not None:
        limits.append(avail)
    limit, usage = _read_int("/sys/fs/cgroup/memory.max"), _read_int("/sys/fs/cgroup/memory.current")
    if limit is not None and usage is not None:
        limits.append(max(limit - usage, 0))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        mapped = _meminfo_self("VmSize") or 0
        limits.append(max(soft - mapped, 0))
    return min(limits) if limits else 1 << 62


def _meminfo_self(key: str) -> int | None:
    try:
        for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def require(nbytes: float, *, what: str, hint: str) -> None:
    """Raise ValueError when ``nbytes`` (an estimate of peak memory) exceeds :func:`available_bytes`."""
    avail = available_bytes()
    if nbytes > avail:
        raise ValueError(
            f"{what} needs about {fmt_bytes(nbytes)} of memory but {fmt_bytes(avail)} is available "
            f"on this machine: {hint}"
        )


@dataclass(frozen=True)
class Estimate:
    """What a run will take, from closed forms, before it starts.

    bytes: peak host memory of the run (every process it starts) above an interpreter that has imported the
    technique, in bytes; seconds: wall clock on a laptop-class CPU, an order of magnitude (shown, never
    asserted on); own_progress: the runner draws its own progress bar on stderr (the CLI then adds none).
    """

    bytes: float
    seconds: float
    own_progress: bool = False

    def __post_init__(self) -> None:
        for name in ("bytes", "seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"Estimate.{name}={value!r} is not a positive finite number")


def check_estimate(estimate: Estimate, *, what: str, hint: str) -> None:
    """Raise ValueError (one line: the estimate and the available memory) when ``estimate`` cannot fit."""
    require(estimate.bytes, what=what, hint=hint)


class RunTimeout(BaseException):
    """A run outlived its ``timeout_s``: raised in the main thread wherever the run is, so it unwinds as after
    SIGTERM (workers killed, temporary files removed). Not an ``Exception``: code that catches ``Exception``
    cannot swallow it. ``one_line``: the message is complete; ``exit_code``: the CLI's status (a limit the user
    set ran out)."""

    one_line = True
    exit_code = 2


#: the signal the watchdog of :func:`deadline` sends to the main thread (SIGALRM stays free for the code that
#: runs, e.g. the OpenQASM parser's own budget)
_DEADLINE_SIGNAL = signal.SIGUSR2


@contextmanager
def deadline(seconds: float | None, *, what: str) -> Iterator[None]:
    """Raise :class:`RunTimeout` in the main thread once ``seconds`` of wall clock have passed inside the block.

    A watchdog thread sends a signal to the main thread, so a blocking wait (a worker's join, a sleep) is
    interrupted too. ``what`` names the limit in the message (``--timeout-s=5``). No-op for ``seconds`` None or
    outside the main thread.
    """
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = threading.Event()
    done = threading.Event()

    def expire(signum: int, frame: object) -> None:
        if fired.is_set() and not done.is_set():
            done.set()
            raise RunTimeout(
                f"the run did not finish within {what} ({seconds:g} s of wall clock, its in-process parts "
                "included); it was stopped and cleaned up: raise the limit if the work needs longer"
            )

    main_id = threading.main_thread().ident
    previous = signal.signal(_DEADLINE_SIGNAL, expire)

    def watch() -> None:
        if not done.wait(seconds):
            fired.set()
            while not done.is_set():  # again until the main thread has seen it (it may be in native code)
                signal.pthread_kill(main_id, _DEADLINE_SIGNAL)
                done.wait(0.5)

    watchdog = threading.Thread(target=watch, name="workbench-deadline", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
        signal.signal(_DEADLINE_SIGNAL, previous)


@contextmanager
def progress(estimate: Estimate, *, what: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show ``progress: <what> 12 s elapsed of about 40 s (estimate)`` on stderr, refreshed in place every
    second from a background thread, for a run estimated over :data:`PROGRESS_AFTER_S` whose runner draws no
    bar of its own; the line is cleared at the end."""
    if estimate.seconds <= PROGRESS_AFTER_S or estimate.own_progress:
        yield
        return
    out = stream if stream is not None else sys.stderr
    stop = threading.Event()
    start = time.monotonic()
    shown = [0]

    def draw() -> None:
        while not stop.wait(1.0):
            line = (
                f"progress: {what}: {time.monotonic() - start:.0f} s elapsed of about {estimate.seconds:.0f} s "
                "(estimate)"
            )
            try:
                out.write("\r" + line.ljust(shown[0]))
                out.flush()
            except (OSError, ValueError):  # stderr closed: nothing to show
                return
            shown[0] = len(line)

    drawer = threading.Thread(target=draw, name="workbench-progress", daemon=True)
    drawer.start()
    try:
        yield
    finally:
        stop.set()
        drawer.join()
        if shown[0]:
            try:
                out.write("\r" + " " * shown[0] + "\r")
                out.flush()
            except (OSError, ValueError):
                pass
