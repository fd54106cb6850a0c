"""Group 5: the machine header (CPU, cores, memory, load, versions, date, git commit, command)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.common import Section, Table

REPO_ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (Linux), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> str:
    """Total memory in GiB from /proc/meminfo (Linux), else "unknown"."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f}"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def load_average() -> str:
    """1, 5 and 15 minute load averages, or "unknown"."""
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def git_commit() -> str:
    """Short HEAD commit, with "+ uncommitted changes" when the work tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + (" + uncommitted changes" if dirty else "")


def snapshot() -> dict[str, Any]:
    """What is known before the benchmarks start (load is read again at the end)."""
    import numpy
    import plotly
    import torch

    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "cpu": cpu_model(),
        "cores": str(os.cpu_count()),
        "torch_threads": str(torch.get_num_threads()),
        "memory_gib": memory_gib(),
        "load_start": load_average(),
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "plotly": plotly.__version__,
        "ipywidgets": version("ipywidgets"),
        "commit": git_commit(),
    }


def section(
    info: dict[str, Any], *, command: str, wall_s: float, quick: bool, group_seconds: dict[str, float] | None = None
) -> Section:
    """The machine header as a section (``info`` from :func:`snapshot`, completed at the end of the run)."""
    rows = (
        ("command", f"`{command}`"),
        ("mode", "quick (tiny sizes; for the test, not for reading)" if quick else "full"),
        ("date", info["date"]),
        ("wall time of the whole run", f"{wall_s:.1f} s"),
        ("wall time per group", ", ".join(f"{k}: {v:.1f} s" for k, v in (group_seconds or {}).items()) or "-"),
        ("CPU", info["cpu"]),
        ("logical cores / torch threads", f"{info['cores']} / {info['torch_threads']}"),
        ("memory", f"{info['memory_gib']} GiB"),
        ("load average 1/5/15 min, start", info["load_start"]),
        ("load average 1/5/15 min, end", load_average()),
        ("OS", info["os"]),
        ("Python", info["python"]),
        ("torch", info["torch"]),
        ("numpy", info["numpy"]),
        ("plotly", info["plotly"]),
        ("ipywidgets", info["ipywidgets"]),
        ("workbench commit", info["commit"]),
    )
    intro = (
        "Where and how these numbers were taken. Times are wall-clock on this machine and move with its load "
        "(the load averages below include other processes); ratios against a peer timed in the same run move "
        "much less, which is why every section reports one."
    )
    return Section(
        title="Machine", intro=intro, tables=(Table(headers=("item", "value"), rows=rows),), data={"info": info}
    )
