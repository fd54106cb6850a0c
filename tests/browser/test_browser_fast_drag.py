"""A slider dragged fast: 50 changes in about 2 seconds on one panel per area, in JupyterLab (headless Chromium).

Reference: issue 18's "Load" item (the last setting wins, no queue of stale redraws, no error) and
``shared/notes/browser-testing.md`` (ArrowRight / ArrowLeft on a focused ``.noUi-handle`` commits one step
and runs the Python observer). "The last setting wins" is checked by meaning: after the drag settles, one
step away and back redraws the figures at the final value again, and they must equal what the drag left.
The settle time (last key press to the figures' last change) is printed; it bounds how stale redraws queue.
"""

from __future__ import annotations

import time

import nbformat
import pytest
from browser_helpers import (
    _JS_KERNEL_STATE,
    _JS_SLIDERS,
    notebook_errors,
    open_notebook,
    plot_signatures,
    run_all_cells,
    shut_down_kernels,
    unexpected_console,
    wait_for_figures_drawn,
    wait_for_run_all_done,
)

pytestmark = pytest.mark.browser

CHANGES = 50
INTERVAL_MS = 40  # 50 key presses in about 2 s
QUIET_S = 2.0  # figures unchanged this long (and the kernel idle): the drag has settled
SETTLE_LIMIT_S = 60.0

#: one panel per area: (id, the cell that shows it, the label of the slider to drag)
CASES = [
    (
        "llm",
        "from widgets.llm.mesh_attention import MeshAttentionPanel\nMeshAttentionPanel(gpus=64, seq=65536)",
        "GPUs P",
    ),
    ("quantum", "from widgets.quantum.devices import DevicesPanel\nDevicesPanel()", "noise scale"),
    (
        "graphs",
        'from widgets.graphs.dwarvesgraph import DwarvesGraphPanel\nDwarvesGraphPanel(graph="rmat-9-8")',
        "motif size",
    ),
    (
        "solvers",
        'from widgets.solvers.refloat import RefloatPanel\nRefloatPanel(matrix="mesh1e1", max_iter=300)',
        "matrix exponent bits",
    ),
]


def _write(path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


#: presses ArrowRight / ArrowLeft on slider ``index``'s handle ``n`` times, ``ms`` apart, bouncing at the ends
#: (key events dispatched in the page: playwright's round trip per key press takes longer than 40 ms on 2 cores);
#: returns the handle's value after each press and the page time of the last one
_JS_DRAG = """
async ([index, n, ms]) => {
  const h = document.querySelectorAll('.widget-slider .noUi-handle')[index];
  h.focus();
  const num = (a) => Number(h.getAttribute(a));
  let key = 'ArrowRight';
  const values = [];
  for (let i = 0; i < n; i++) {
    const now = num('aria-valuenow');
    if ((key === 'ArrowRight' && now >= num('aria-valuemax')) || (key === 'ArrowLeft' && now <= num('aria-valuemin')))
      key = key === 'ArrowRight' ? 'ArrowLeft' : 'ArrowRight';
    h.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
    values.push(h.getAttribute('aria-valuenow'));
    if (i < n - 1) await new Promise((r) => setTimeout(r, ms));
  }
  return values;
}
"""


def _settle(page, rel: str, timeout_s: float) -> tuple[list[str], float]:
    """Wait until the figures stay unchanged for QUIET_S with the kernel idle; (signatures, seconds from the
    call to their last change)."""
    start = last_change = time.monotonic()
    last = plot_signatures(page)
    while time.monotonic() - start < timeout_s:
        page.wait_for_timeout(100)
        now = plot_signatures(page)
        if now != last:
            last, last_change = now, time.monotonic()
        idle = page.evaluate(_JS_KERNEL_STATE, rel).get("status") == "idle"
        if idle and time.monotonic() - last_change >= QUIET_S:
            return last, last_change - start
    raise TimeoutError(f"{rel}: figures still changing {timeout_s:.0f} s after the drag")


@pytest.mark.parametrize(("area", "source", "label"), CASES, ids=[c[0] for c in CASES])
def test_fast_drag_last_setting_wins(page, jupyter_lab, area, source, label):
    rel = f"_fast_drag/{area}.ipynb"
    _write(jupyter_lab.root / rel, source)
    console: list[str] = []

    def on_console(m) -> None:
        if m.type == "error":
            console.append(m.text)

    def on_error(e) -> None:
        console.append(f"pageerror: {e}")

    page.on("console", on_console)
    page.on("pageerror", on_error)
    try:
        open_notebook(page, jupyter_lab, rel, timeout_s=120)
        run_all_cells(page, rel)
        wait_for_run_all_done(page, rel, timeout_s=300)
        wait_for_figures_drawn(page)
        sliders = page.evaluate(_JS_SLIDERS)
        index = next(i for i, s in enumerate(sliders) if s["label"].startswith(label))
        handle = page.locator(".widget-slider .noUi-handle").nth(index)
        handle.scroll_into_view_if_needed()
        handle.click()
        page.wait_for_timeout(300)
        hi = float(sliders[index]["max"])
        start = time.monotonic()
        values = page.evaluate(_JS_DRAG, [index, CHANGES, INTERVAL_MS])  # across the range and back
        drag_s = time.monotonic() - start
        final_value = handle.get_attribute("aria-valuenow")
        settled, settle_s = _settle(page, rel, SETTLE_LIMIT_S)
        # one step away and back: a fresh redraw at the final value must give what the drag left
        away, back = ("ArrowLeft", "ArrowRight") if float(final_value) >= hi else ("ArrowRight", "ArrowLeft")
        handle.press(away)
        _settle(page, rel, SETTLE_LIMIT_S)
        handle.press(back)
        again, _ = _settle(page, rel, SETTLE_LIMIT_S)
        errors = notebook_errors(page, rel)
    finally:
        shut_down_kernels(jupyter_lab, rel)
        page.remove_listener("console", on_console)  # the page is shared by later tests
        page.remove_listener("pageerror", on_error)

    print(
        f"\n[{area}] {label!r}: {CHANGES} changes in {drag_s:.1f} s ({len(set(values))} distinct values, "
        f"final {final_value}); figures settled {settle_s:.1f} s after the last key; console errors: {len(console)}"
    )
    assert final_value == values[-1] and len(set(values)) > 2, values  # the keys moved the slider
    assert not errors, "\n".join(errors)
    console = unexpected_console(console)
    assert not console, "browser console errors:\n" + "\n".join(m[:500] for m in console)
    assert again == settled, "the figures the drag left are not those of the final setting"
