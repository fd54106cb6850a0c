"""Group 4: redraw latency of every ready technique's panel (found through the registry, so a new panel is
measured without touching this file).

Each panel is built live (``static=False``: ``LiveFigure``s) at its default sizes. Then every control
is moved, one at a time, through a few values spread over its range (selection options, slider positions on a
linear or log grid, the other choices of a dropdown, the other state of a checkbox) and back to its start
value, so the next control starts from the defaults. Each move is timed with ``Panel.timed_change``: seconds
from setting the control to the figures being updated (compute + figure updates and their mime bundles,
synchronous, in Python; the browser's plotly.js render is not part of it, as no browser runs here).

Panels may memoise model results, so a move is tagged *new* when the panel's full set of values was not seen
before in this run and *revisit* otherwise (e.g. the return to the start value).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

from benchmarks.common import Section, Table, fmt_ms, median, percentile
from workbench.registry import catalogue, get_technique

log = logging.getLogger(__name__)

TARGET_S = 0.100  # median redraw latency target per panel
FULL_BUDGET = 44  # changes per panel, about (picks + 1 return) per control
QUICK_PICKS = 1


def _plain(option: Any) -> Any:
    """An ipywidgets option: a value, or a (label, value) pair."""
    if isinstance(option, tuple) and len(option) == 2 and isinstance(option[0], str):
        return option[1]
    return option


def spread(values: Sequence[Any], k: int) -> list[Any]:
    """Up to ``k`` items of ``values`` evenly spread over it, first and last included (order kept)."""
    if k >= len(values):
        return list(values)
    if k == 1:
        return [values[len(values) // 2]]
    idx = sorted({round(i * (len(values) - 1) / (k - 1)) for i in range(k)})
    return [values[i] for i in idx]


def control_values(widget: Any, k: int) -> list[Any]:
    """Up to ``k`` values for ``widget`` other than its current one; [] for controls with no range (text)."""
    current = widget.value
    if hasattr(widget, "options"):
        others = [v for v in (_plain(o) for o in widget.options) if v != current]
        return spread(others, k)
    if isinstance(current, bool):
        return [not current]
    if hasattr(widget, "min") and hasattr(widget, "max"):
        lo, hi = widget.min, widget.max
        n = k + 1  # one grid point may be the current value
        if lo > 0 and hi / lo >= 16:  # wide positive range: log-spaced positions
            grid = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
        else:
            grid = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
        if isinstance(current, int):
            grid = [int(round(x)) for x in grid]
        out = []
        for x in grid:
            if x != current and x not in out:
                out.append(x)
        return out[:k]
    return []


def _state(panel: Any) -> str:
    return repr(sorted(panel.values().items()))


def measure_panel(panel_cls: type, *, picks: int | None) -> dict[str, Any]:
    """Build ``panel_cls`` live, move every control, and return build time and per-move samples.

    ``picks``: values per control before the return (None: spread ``FULL_BUDGET`` over the controls).
    """
    start = time.perf_counter()
    panel = panel_cls(static=False)
    build_s = time.perf_counter() - start
    controls = list(panel.controls)
    if picks is None:
        picks = max(1, FULL_BUDGET // max(1, len(controls)) - 1)
    seen = {_state(panel)}
    samples: list[dict[str, Any]] = []
    for name in controls:
        widget = panel.controls[name]
        initial = widget.value
        plan = control_values(widget, picks)
        if plan and plan[-1] != initial:
            plan.append(initial)
        for value in plan:
            if widget.value == value:  # no change event would fire
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                seconds = panel.timed_change(name, value)
            state = _state(panel)
            samples.append(
                {
                    "control": name,
                    "value": value,
                    "seconds": seconds,
                    "new": state not in seen,
                    "error": getattr(panel, "error", None),
                    "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
                }
            )
            seen.add(state)
    return {"panel": panel_cls.__name__, "build_s": build_s, "controls": controls, "samples": samples}


def _stats(xs: list[float]) -> tuple[str, str, str]:
    if not xs:
        return "-", "-", "-"
    return fmt_ms(median(xs)), fmt_ms(percentile(xs, 95)), fmt_ms(max(xs))


def run(*, quick: bool) -> Section:
    """Measure every ready technique's panel; ``data["panels"]`` holds the raw samples."""
    results = []
    for entry in catalogue():
        if entry.status != "ready":
            continue
        panel_cls = get_technique(entry.name).panel_class()
        log.info("panel latency: %s (%s)", entry.name, panel_cls.__name__)
        results.append({"technique": entry.name, **measure_panel(panel_cls, picks=QUICK_PICKS if quick else None)})

    panel_rows, control_rows, summary, notes = [], [], [], []
    for res in results:
        secs = [s["seconds"] for s in res["samples"]]
        new = [s["seconds"] for s in res["samples"] if s["new"]]
        old = [s["seconds"] for s in res["samples"] if not s["new"]]
        errors = sum(1 for s in res["samples"] if s["error"])
        med = median(secs) if secs else math.nan
        panel_rows.append(
            (
                res["technique"],
                res["panel"],
                fmt_ms(res["build_s"]),
                str(len(secs)),
                *_stats(secs)[:2],
                fmt_ms(median(new)) if new else "-",
                fmt_ms(median(old)) if old else "-",
                str(errors),
                fmt_ms(TARGET_S),
                "yes" if med < TARGET_S else "no",
            )
        )
        summary.append(
            (
                f"panel redraw {res['technique']}: median / p95 over {len(secs)} changes (ms)",
                f"{fmt_ms(med)} / {fmt_ms(percentile(secs, 95)) if secs else '-'} (target median < {fmt_ms(TARGET_S)})",
            )
        )
        for name in res["controls"]:
            mine = [s for s in res["samples"] if s["control"] == name]
            xs = [s["seconds"] for s in mine]
            values = ", ".join(str(s["value"]) for s in mine) or "not moved (no range)"
            control_rows.append(
                (res["technique"], name, str(len(xs)), *_stats(xs), str(sum(1 for s in mine if s["error"])), values)
            )
            notes += [
                f"{res['technique']}: setting {name} = {s['value']!r} raised {w}" for s in mine for w in s["warnings"]
            ]
    panel_table = Table(
        headers=(
            "technique",
            "panel",
            "build + first draw (ms)",
            "changes",
            "median (ms)",
            "p95 (ms)",
            "median new (ms)",
            "median revisit (ms)",
            "error redraws",
            "target median (ms)",
            "median < target",
        ),
        rows=tuple(panel_rows),
        caption="Per panel:",
    )
    control_table = Table(
        headers=(
            "technique",
            "control",
            "changes",
            "median (ms)",
            "p95 (ms)",
            "max (ms)",
            "error redraws",
            "values set, in order",
        ),
        rows=tuple(control_rows),
        caption="Per control (the last value of each is the return to the start value):",
    )
    intro = (
        "Every ready technique's panel (from `workbench.registry.catalogue()`), built live at its default sizes; "
        "each control moved through a few values spread over its range and back, one control at a time. "
        "Latency = `Panel.timed_change`: from setting the control to the figures being updated (synchronous, "
        "Python side: compute + figure updates; the browser render is not included). Peer: the target, a "
        f"median below {fmt_ms(TARGET_S)} ms per panel; `median < target` states whether it holds. `new` moves "
        "reach a set of values not seen before in this run, `revisit` moves one seen before (memoised results). "
        "`error redraws` counts moves whose values the panel rejected (message in its status line). p95 uses "
        "linear interpolation; with 2-5 moves per control it is close to the max. Python warnings raised "
        "during a move are listed under the tables."
    )
    return Section(
        title="Panel redraw latency",
        intro=intro,
        tables=(panel_table, control_table),
        notes=tuple(notes),
        summary=tuple(summary),
        data={"panels": results},
    )
