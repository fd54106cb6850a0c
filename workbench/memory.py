"""Memory guards: estimate what a generator or loader will allocate and refuse what cannot fit.

``available_bytes()`` is the least of the kernel's ``MemAvailable``, the cgroup's limit minus its usage (a
container's memory limit) and the address-space limit (``RLIMIT_AS``) minus what the process already maps.
``require(nbytes, what=..., hint=...)`` raises ``ValueError`` (the CLI's exit 2) with the estimate and the
available memory, before anything large is allocated.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from workbench.results import fmt_bytes

__all__ = ["available_bytes", "require"]


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
