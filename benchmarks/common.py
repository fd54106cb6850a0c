"""Shared pieces of the benchmarks: a section/table record, Markdown rendering, robust statistics, and
interleaved timing (so a peer and our code see the same machine load)."""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Table:
    """A Markdown table: ``headers`` and ``rows`` (cells already formatted as text), optional caption."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.headers):
                raise ValueError(
                    f"table row {row!r} has {len(row)} cells: expected {len(self.headers)} ({self.headers})"
                )

    def markdown(self) -> str:
        def cell(text: str) -> str:
            return str(text).replace("|", "\\|").replace("\n", " ")

        lines = []
        if self.caption:
            lines += [self.caption, ""]
        lines.append("| " + " | ".join(cell(h) for h in self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines)


@dataclass(frozen=True)
class Section:
    """One benchmark group's output: a ``## title``, a paragraph (what the peer is, what the ratio means),
    tables, optional notes; ``summary`` holds (label, value) pairs for the file's summary table and ``data``
    the raw numbers (for callers, not rendered)."""

    title: str
    intro: str
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    summary: tuple[tuple[str, str], ...] = ()
    data: dict[str, Any] = field(default_factory=dict)

    def markdown(self) -> str:
        parts = [f"## {self.title}", "", self.intro]
        for table in self.tables:
            parts += ["", table.markdown()]
        if self.notes:
            parts += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(parts)


def median(xs: Sequence[float]) -> float:
    """Median of a non-empty sequence."""
    if not xs:
        raise ValueError("median of an empty sequence")
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else 0.5 * (s[mid - 1] + s[mid])


def percentile(xs: Sequence[float], q: float) -> float:
    """q-th percentile (0..100), linear interpolation between order statistics (numpy's default)."""
    if not xs:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"q={q} is out of range: valid range is 0..100")
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def geomean(xs: Sequence[float]) -> float:
    """Geometric mean of positive numbers (the mean of ratios)."""
    if not xs:
        raise ValueError("geomean of an empty sequence")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def interleaved(fns: dict[str, Callable[[], Any]], *, rounds: int, warmup: int = 1) -> dict[str, list[float]]:
    """Seconds per call of each function, measured in alternating order.

    Each function runs ``warmup`` times untimed (first-touch allocation and kernel selection cost seconds on
    a fresh process), then ``rounds`` rounds; round i runs the functions in order, round i+1 in reverse, so
    neither side always runs first or always follows the other (the order effect cancels in pairs). The
    garbage collector is paused while timing, as in ``timeit``.

    Returns: name -> list of ``rounds`` wall times (seconds).
    """
    if rounds < 1:
        raise ValueError(f"rounds={rounds} is out of range: valid range is >= 1")
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(rounds):
            for name in names if i % 2 == 0 else reversed(names):
                start = time.perf_counter()
                fns[name]()
                times[name].append(time.perf_counter() - start)
    finally:
        if was_enabled:
            gc.enable()
    return times


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds, about 3 significant digits."""
    ms = seconds * 1e3
    if ms < 10:
        return f"{ms:.2f}"
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}"


def fmt_sci(x: float) -> str:
    return f"{x:.1e}"


def peer_table(peer: str, rows: Sequence[tuple[str, dict[str, float]]]) -> Table:
    """Ours against ``peer`` (e.g. ``qutip``), a row per ``(case, timing)``: ``timing`` holds ``ours_s``,
    ``<peer>_s`` (seconds), ``speedup`` (peer / ours) and ``max_abs_diff``."""
    return Table(
        headers=("case", "ours (ms)", f"{peer} (ms)", f"{peer} / ours", "max abs diff"),
        rows=tuple(
            (case, fmt_ms(t["ours_s"]), fmt_ms(t[f"{peer}_s"]), fmt_ratio(t["speedup"]), fmt_sci(t["max_abs_diff"]))
            for case, t in rows
        ),
    )
