"""The shared layout of every figure (panels and notebooks): size, title, legend, log axes, byte units.

One place, used by :class:`widgets.base.Panel` (on the figures of ``make_figures`` and after every ``draw``)
and by :func:`widgets.base.show`, so a figure module only says what is particular to its figure.

- Size: no fixed width (``autosize``; plotly's renderer gives the figure the width of its output area); each
  figure keeps its own height.
- Title: left-aligned at the top, wrapped at :data:`TITLE_CHARS` characters per line (``<br>``), the top
  margin sized to its lines and to the subplot titles under it. Its position is computed in pixels and
  anchored at its middle: plotly.js places a multi-line title anchored at its top half a line too high,
  out of the figure.
- Legend: a horizontal legend goes to the bottom of the figure (container coordinates), under the x-axis
  title, with the bottom margin sized to its estimated rows; a vertical legend stays at the right.
- Log axes: labels at 1, 2, 5 per decade when the data span one to three decades, one per decade up to six,
  one every other decade beyond (plotly's default crowds the minor digits 2..9 on short axes); plotly's own
  ticks below a decade.
- Bytes: :func:`byte_unit` picks B/kB/MB/GB/TB for a set of byte counts; figures plot ``bytes / scale`` with
  the unit in the axis title (plotly's SI ticks would print 1e11 bytes as "100B").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

#: characters per title line (15 px font: about 8 px a character, so ~720 px, narrower than an output area)
TITLE_CHARS = 90
#: characters per subplot-title line for a figure of ``n`` columns: ``SUBPLOT_CHARS // n``
SUBPLOT_CHARS = 110
TITLE_SIZE = 15
LINE_PX = 20  # one line of 13-15 px text
LEGEND_CHAR_PX = 7.0  # width of a legend character at 12 px, for the row estimate
LEGEND_WIDTH_PX = 800.0  # the width the row estimate assumes (a 1400 px wide JupyterLab gives ~970 px)
AXIS_BOTTOM_PX = 60  # tick labels and the x-axis title under the plot area
HEIGHT = 420  # px, for a figure that does not set its own
TITLE_TOP_PX = 8  # free space above the title
LOG_DTICKS = (2, 1, "D2")  # log-axis ticks the layout sets: every other decade, every decade, 1-2-5
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")


def wrap(text: str | None, width: int = TITLE_CHARS) -> str:
    """``text`` broken at spaces into lines of at most ``width`` visible characters, joined by ``<br>``
    (existing ``<br>`` kept; HTML tags count for nothing). Example: ``wrap("a b c", 3) == "a b<br>c"``."""
    if not text:
        return text or ""
    lines = []
    for line in _BR.split(text):
        current = ""
        for word in line.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and len(_TAG.sub("", candidate)) > width:
                lines.append(current)
                current = word
            else:
                current = candidate
        lines.append(current)
    return "<br>".join(lines)


def _lines(text: str | None) -> int:
    return len(_BR.split(text)) if text else 0


def byte_unit(values: Iterable[float | None]) -> tuple[float, str]:
    """(scale, unit) for byte counts: the largest unit in which the largest value is at least 1.
    Example: ``byte_unit([3e8, 1.2e11]) == (1e9, "GB")``; plot ``bytes / scale`` and write the unit."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    top = max(finite, default=0.0)
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if top >= scale:
            return scale, unit
    return 1.0, "B"


def style(fig: Any) -> Any:
    """Apply the shared defaults to a new figure (``go.Figure`` or ``LiveFigure``) in place; returns it."""
    layout = fig.layout
    layout.autosize = True
    layout.width = None
    if layout.height is None:
        layout.height = HEIGHT
    layout.title.update(
        x=0, xanchor="left", xref="paper", yref="container", yanchor="middle", font=dict(size=TITLE_SIZE)
    )
    layout.hoverlabel.namelength = -1
    if layout.legend.orientation == "h":
        layout.legend.update(yref="container", y=0, yanchor="bottom", x=0, xanchor="left")
    fit(fig)
    return fig


def _pending(fig: Any, path: str, current: Any) -> Any:
    """The value at layout ``path`` ("title.text", "annotations.1.text") as it will be once the figure's
    ``batch_update()`` commits (plotly reads return the old value inside a batch)."""
    edits = getattr(fig, "_batch_layout_edits", None) if getattr(fig, "_in_batch_mode", False) else None
    if not edits:
        return current
    if path in edits:
        return edits[path]
    parent, _, leaf = path.rpartition(".")
    value = edits.get(parent)
    return value.get(leaf, current) if isinstance(value, dict) else current


def _pending_trace(fig: Any, index: int, prop: str) -> Any:
    edits = getattr(fig, "_batch_trace_edits", None) if getattr(fig, "_in_batch_mode", False) else None
    if edits and prop in edits.get(index, {}):
        return edits[index][prop]
    return getattr(fig.data[index], prop, None)


def _set_text(fig: Any, obj: Any, path: str, value: str) -> None:
    """``obj.text = value`` for layout ``path`` ("title.text"), also inside a ``batch_update()`` where ``value``
    equals the committed text: plotly drops an edit back to the committed value and would commit the pending
    (unwrapped) one instead, so that pending edit is removed."""
    edits = getattr(fig, "_batch_layout_edits", None) if getattr(fig, "_in_batch_mode", False) else None
    if edits is not None and path in edits and obj.text == value:
        del edits[path]
    elif _pending(fig, path, obj.text) != value:
        obj.text = value


def fit(fig: Any) -> None:
    """Re-fit the text of a drawn figure (after every draw, inside its ``batch_update()`` or not): wrap the
    title and subplot titles, size the top margin to them and the bottom margin to a horizontal legend, one
    label per decade on log axes."""
    layout = fig.layout
    title = _pending(fig, "title.text", layout.title.text)
    if title:
        wrapped = wrap(title, getattr(fig, "_title_chars", TITLE_CHARS))  # narrower in a row of figures
        _set_text(fig, layout.title, "title.text", wrapped)
        title = wrapped
    columns = max(1, sum(1 for name in layout if name.startswith("xaxis")))
    subplot_lines = 0
    for i, note in enumerate(layout.annotations or ()):
        text = _pending(fig, f"annotations.{i}.text", note.text)
        if note.yref == "paper" and note.y is not None and note.y >= 0.99 and text:
            wrapped = wrap(text, max(20, SUBPLOT_CHARS // columns))
            _set_text(fig, note, f"annotations.{i}.text", wrapped)
            subplot_lines = max(subplot_lines, _lines(wrapped))
    title_px = LINE_PX * _lines(title)
    title_y = round(1 - (TITLE_TOP_PX + title_px / 2) / (layout.height or HEIGHT), 4)
    if title and layout.title.y != title_y:
        layout.title.y = title_y
    top = TITLE_TOP_PX + title_px + 8 + (LINE_PX * subplot_lines + 6 if subplot_lines else 4)
    margin = {"t": max(top, 30)}
    if layout.legend.orientation == "h" and layout.showlegend is not False:
        margin["b"] = AXIS_BOTTOM_PX + LINE_PX * _legend_rows(fig) + 10
    for side, value in margin.items():
        if layout.margin[side] != value:
            layout.margin[side] = value
    _log_ticks(fig)


def _legend_rows(fig: Any) -> int:
    """Rows of a horizontal legend, from the trace names as they will be once a pending batch commits."""
    traces = [(_pending_trace(fig, i, "name"), _pending_trace(fig, i, "showlegend")) for i in range(len(fig.data))]
    names = [name for name, shown in traces if name and shown is not False]
    if not names:
        return 0
    widths = [40 + LEGEND_CHAR_PX * len(_TAG.sub("", str(n))) for n in names]
    rows, used = 1, 0.0
    for w in widths:
        if used and used + w > LEGEND_WIDTH_PX:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def _log_ticks(fig: Any) -> None:
    layout = fig.layout
    for name in layout:
        if not (name.startswith("xaxis") or name.startswith("yaxis")):
            continue
        axis = layout[name]
        if axis.type != "log" or axis.tickvals is not None or axis.dtick not in (None, *LOG_DTICKS):
            continue
        ref = name[0] + name[5:]  # "xaxis2" -> "x2"
        values = []
        for i, trace in enumerate(fig.data):
            if (getattr(trace, name[0] + "axis", None) or name[0]) == ref:
                data = _pending_trace(fig, i, name[0])
                if data is not None:
                    values.append(
                        np.asarray(
                            [
                                v
                                for v in np.ravel(np.asarray(data, dtype=object))
                                if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)
                            ],
                            dtype=float,
                        )
                    )
        positive = np.concatenate(values) if values else np.empty(0)
        span = np.log10(positive.max() / positive.min()) if positive.size else 0.0
        dtick = next((d for lo, d in zip((6.0, 3.0, 1.0), LOG_DTICKS) if span >= lo), None)
        if axis.dtick != dtick:
            axis.dtick = dtick
