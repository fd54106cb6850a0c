"""A slider dragged across its range (50 changes in a row) on one panel per area: the last setting wins, no error.

Reference: a fresh panel built at the final setting: after the drag, the dragged panel's values, status line and
every figure (data and layout) equal the fresh panel's. (The browser version of this test drives JupyterLab.)
"""

from __future__ import annotations

import time
from typing import Any

import plotly.graph_objects as go
import pytest

from workbench.registry import get_technique

#: technique -> (control dragged, extra start values): one panel per area
DRAGS = {
    "mesh-attention": ("seq", {}),
    "devices": ("depth", {}),
    "kudu": ("chunk_size", {}),
    "refloat": ("f_m", {}),
}
CHANGES = 50

pytestmark = pytest.mark.slow


def drag_values(widget: Any, start: Any, n: int = CHANGES) -> list[Any]:
    """``n`` values as a drag would send them: back and forth across the range, never repeating the previous
    value, ending away from ``start``."""
    if hasattr(widget, "options") and widget.options:
        stops = [o[1] if isinstance(o, tuple) else o for o in widget.options]
    else:
        stops = list(range(widget.min, widget.max + 1))
    stops = stops[:: -(-len(stops) // 25)]  # at most 25 stops spread over the whole range
    ping_pong = stops + stops[-2:0:-1]
    values = [ping_pong[i % len(ping_pong)] for i in range(1, n + 1)]
    if values[-1] == start:
        values[-1] = next(v for v in stops if v not in (start, values[-2]))
    return values


def figure_state(panel: Any) -> list[dict]:
    out = []
    for fig in panel.figures:
        state = go.Figure(fig).to_dict()
        for trace in state["data"]:
            trace.pop("uid", None)
        out.append(state)
    return out


@pytest.mark.parametrize("name", list(DRAGS))
def test_fast_drag_last_setting_wins(name: str) -> None:
    control, start = DRAGS[name]
    panel_class = get_technique(name).panel_class()
    panel = panel_class(**start)
    widget = panel.controls[control]
    values = drag_values(widget, widget.value)
    assert len(values) == CHANGES and all(a != b for a, b in zip(values, values[1:]))
    began = time.perf_counter()
    for value in values:
        widget.value = value
        assert panel.error is None, f"{control}={value!r}: {panel.error}"
    seconds = time.perf_counter() - began
    fresh = panel_class(**start, **{control: values[-1]})
    assert panel.values() == fresh.values()
    assert panel.status.value == fresh.status.value
    assert figure_state(panel) == figure_state(fresh)
    print(
        f"{name}: {CHANGES} changes of {control} in {seconds:.2f} s; final {control}={values[-1]!r} matches a fresh panel"
    )
