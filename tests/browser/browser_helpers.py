"""Page drivers for the browser tests: a notebook's live panel in JupyterLab, and an offline report.

Reference: the verified recipe in ``shared/notes/browser-testing.md`` (JupyterLab 4.6 + ipywidgets 8.1 +
plotly 7.1/anywidget in Debian's Chromium, driven by playwright-python) and the "Export" section of
``shared/papers/README.md`` (static plotly figures with ``layout.sliders`` over frames, plotly.js inlined once).

``drive_notebook(page, lab, "llm/mesh_attention.ipynb")`` opens a notebook in a running JupyterLab
(``lab``: the ``jupyter_lab`` fixture, a :class:`lab_server.LabServer`), runs all cells, waits for plots,
moves one slider and returns a :class:`LabRun` with what happened (plot data before/after,
slider-to-redraw latency, errors).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from lab_server import LabServer

WIDGET_ERROR_TEXTS = ("Error displaying widget", "Failed to load view class")

#: page errors that are not failures of ours. anywidget rejects a model's start-up promise when its script has
#: not loaded within a fixed 2 s (``AbortSignal.timeout(2000)`` in its runtime), which happens on a machine loaded
#: 10x over when a LiveFigure's PlotlyReact is made while the page redraws several figures; such a model never
#: passes LiveFigure's probe/answer handshake, its figure keeps the Output path, and the tests still check that
#: the figures change (and, in the fast drag, that the last setting wins).
KNOWN_PAGE_ERRORS = ("[anywidget] Failed to initialize model.",)


def unexpected_console(messages: list[str]) -> list[str]:
    """``messages`` without the :data:`KNOWN_PAGE_ERRORS`."""
    return [m for m in messages if not any(known in m for known in KNOWN_PAGE_ERRORS)]


# ---- JavaScript run in the page ----------------------------------------------------------------------

# A compact signature of every plot's data: numeric arrays (and typed arrays) become length + checksum,
# so comparing signatures every animation frame stays cheap even for large traces.
JS_PLOT_SIGNATURES = """
() => {
  const digest = (arr) => {
    let h = 0;
    for (let i = 0; i < arr.length; i++) {
      const v = Number(arr[i]);
      h = (h * 31 + (Number.isFinite(v) ? Math.round(v * 1e6) : 7)) % 2147483647;
    }
    return `arr:${arr.length}:${h}`;
  };
  const enc = (k, v) => {
    if (ArrayBuffer.isView(v)) return digest(v);
    if (Array.isArray(v) && v.length > 16 && v.every((e) => typeof e === 'number')) return digest(v);
    return v;
  };
  return [...document.querySelectorAll('.js-plotly-plot')].map((gd) => JSON.stringify(gd.data || [], enc));
}
"""

JS_PLOT_SUMMARIES = """
() => [...document.querySelectorAll('.js-plotly-plot')].map((gd) => ({
  traces: (gd.data || []).length,
  types: (gd.data || []).map((t) => t.type || 'scatter'),
  svg: !!gd.querySelector('.main-svg'),
  sliders: ((gd.layout || {}).sliders || []).length,
  frames: (gd._transitionData && gd._transitionData._frames) ? gd._transitionData._frames.length : 0,
  title: (((gd.layout || {}).title || {}).text) || '',
}))
"""

# Installs a watcher: t0 at the next keydown (capture phase), t1 at the first animation frame on which some
# plot's data signature differs from the baseline taken now.
_JS_WATCH = """
([timeoutMs, sigSrc]) => {
  const sigs = eval(sigSrc);
  const w = { t0: null, t1: null, timedOut: false, base: sigs(), changed: [] };
  window.__wbWatch = w;
  document.addEventListener('keydown', () => { if (w.t0 === null) w.t0 = performance.now(); },
                            { capture: true, once: true });
  const start = performance.now();
  const tick = () => {
    const now = sigs();
    const changed = now.map((s, i) => s !== w.base[i]);
    if (now.length !== w.base.length || changed.some(Boolean)) {
      w.t1 = performance.now(); w.changed = changed; return;
    }
    if (performance.now() - start > timeoutMs) { w.timedOut = true; return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return w.base.length;
}
"""

_JS_FIND_PANEL = """
(rel) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return null;
  const panel = Array.from(app.shell.widgets('main')).find((w) => w.context && w.context.path === rel);
  if (!panel || !panel.sessionContext) return null;
  return panel;
}
"""

_JS_KERNEL_STATE = """
(rel) => {
  const find = %s;
  const panel = find(rel);
  if (!panel) return { ready: false, status: 'no panel' };
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content ? panel.content.widgets : [];
  const pending = cells.filter((c) => c.model.type === 'code'
      && c.model.sharedModel.getSource().trim() !== ''
      && (c.model.executionCount === null || c.model.executionCount === undefined)).length;
  return { ready: !!kernel && kernel.connectionStatus === 'connected',
           status: kernel ? kernel.status : 'no kernel', id: panel.id, pending,
           dialog: !!document.querySelector('.jp-Dialog') };
}
""" % _JS_FIND_PANEL.strip()

# Errors visible in the notebook: error outputs in the model, stderr tracebacks and widget-view failures
# in the DOM.
_JS_ERRORS = """
(rel) => {
  const find = %s;
  const errors = [];
  const panel = find(rel);
  if (panel && panel.content) {
    panel.content.widgets.forEach((cell, i) => {
      if (cell.model.type !== 'code') return;
      for (const out of cell.model.outputs.toJSON()) {
        if (out.output_type === 'error') errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
      }
    });
  }
  for (const el of document.querySelectorAll('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')) {
    const text = el.innerText || '';
    if (text.includes('Traceback')) errors.push('stderr: ' + text.slice(0, 2000));
  }
  const body = document.body.innerText || '';
  for (const needle of %s) if (body.includes(needle)) errors.push('page shows: ' + needle);
  return errors;
}
""" % (_JS_FIND_PANEL.strip(), json.dumps(list(WIDGET_ERROR_TEXTS)))

_JS_PLOTS_READY = """
() => [...document.querySelectorAll('.js-plotly-plot')]
        .some((gd) => (gd.data || []).length > 0 && !!gd.querySelector('.main-svg'))
"""

_JS_SLIDERS = """
() => [...document.querySelectorAll('.widget-slider')].map((s) => {
  const h = s.querySelector('.noUi-handle');
  const label = s.querySelector('.widget-label');
  const readout = s.querySelector('.widget-readout');
  return { label: label ? label.innerText.trim() : '', readout: readout ? (readout.innerText || readout.value || '').trim() : '',
           now: h ? h.getAttribute('aria-valuenow') : null, min: h ? h.getAttribute('aria-valuemin') : null,
           max: h ? h.getAttribute('aria-valuemax') : null,
           disabled: !!s.querySelector('[disabled]') || s.offsetParent === null };  // hidden: not movable either
})
"""


# Per figure: its box (its SVG's), traces and data points, whether plotly drew it (an SVG and a full layout), and the
# boxes of its text furniture (page coordinates): title, axis titles, legend, colourbars, annotations
# (subplot titles are annotations). Used for "drawn and not empty" and for the layout check.
JS_FIGURE_REPORT = """
() => [...document.querySelectorAll('.js-plotly-plot')].map((gd, index) => {
  const box = (el) => { const r = el.getBoundingClientRect(); return { x0: r.left, y0: r.top, x1: r.right, y1: r.bottom }; };
  const size = (v) => (v && typeof v.length === 'number' && typeof v !== 'string') ? v.length : 0;
  // _fullData: plotly's decoded traces (a figure shown by plotly's mime type carries numpy arrays as base64)
  const drawn = (gd._fullData && gd._fullData.length) ? gd._fullData : (gd.data || []);
  const points = drawn.reduce((n, t) => n + Math.max(size(t.x), size(t.y), size(t.z), size(t.values)), 0);
  const parts = [];
  const add = (kind, el) => {
    const b = box(el);
    if (b.x1 - b.x0 > 0.5 && b.y1 - b.y0 > 0.5) parts.push({ kind, text: (el.textContent || '').trim().slice(0, 60), ...b });
  };
  gd.querySelectorAll('.infolayer .g-gtitle .gtitle').forEach((el) => add('title', el));
  gd.querySelectorAll('.infolayer [class^="g-x"][class$="title"] text, .infolayer [class^="g-y"][class$="title"] text')
    .forEach((el) => add('axis title', el));
  gd.querySelectorAll('.infolayer .legend').forEach((el) => add('legend', el));
  gd.querySelectorAll('.infolayer .colorbar').forEach((el) => add('colorbar', el));
  gd.querySelectorAll('.infolayer .annotation').forEach((el) => add('annotation', el));
  const title = ((gd.layout || {}).title || {}).text || '';
  const svg = gd.querySelector('.main-svg');  // the drawn figure (the div around it may be wider)
  // cartesian subplots (of two or more) that plotly draws (a background box) with no data point in them
  const subplots = ((gd._fullLayout || {})._subplots || {}).cartesian || [];
  const filled = new Set(drawn.filter((t) => t.visible === true && Math.max(size(t.x), size(t.y), size(t.z), size(t.values)) > 0)
                              .map((t) => (t.xaxis || 'x') + (t.yaxis || 'y')));
  const emptySubplots = subplots.length > 1 ? subplots.filter((id) => !filled.has(id)) : [];
  return { index, title: String(title).slice(0, 80), ...box(svg || gd), traces: (gd.data || []).length, points,
           svg: !!gd.querySelector('.main-svg'), laidOut: !!gd._fullLayout, parts, emptySubplots };
})
"""

#: text boxes may poke this many pixels past the figure, or into each other (antialiasing, glyph overhang)
LAYOUT_TOLERANCE_PX = 2.0


def figure_reports(page) -> list[dict]:
    """Per ``.js-plotly-plot`` (page order): box, traces, data points, drawn or not, text boxes (see ``JS_FIGURE_REPORT``)."""
    return page.evaluate(JS_FIGURE_REPORT)


def figure_problems(fig: dict) -> list[str]:
    """What is wrong with one figure of :func:`figure_reports`: not drawn, empty, a text box outside the
    figure, or two text boxes (title, axis titles, legend, colourbars, annotations) on top of each other."""
    name = f"figure {fig['index']} {fig['title']!r}"
    problems = []
    if not (fig["svg"] and fig["laidOut"] and fig["y1"] - fig["y0"] > 0 and fig["x1"] - fig["x0"] > 0):
        return [f"{name}: not drawn (height {fig['y1'] - fig['y0']:.0f} px, svg {fig['svg']})"]
    if fig["traces"] == 0 or fig["points"] == 0:
        problems.append(f"{name}: empty ({fig['traces']} traces, {fig['points']} points)")
    for subplot in fig.get("emptySubplots", ()):
        problems.append(f"{name}: subplot {subplot} is an empty frame (drawn, with no data point)")
    tol = LAYOUT_TOLERANCE_PX
    for part in fig["parts"]:
        if (
            part["x0"] < fig["x0"] - tol
            or part["x1"] > fig["x1"] + tol
            or part["y0"] < fig["y0"] - tol
            or part["y1"] > fig["y1"] + tol
        ):
            problems.append(
                f"{name}: {part['kind']} {part['text']!r} overflows the figure ({_fmt(part)} outside {_fmt(fig)})"
            )
    parts = fig["parts"]
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            w = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            h = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if w > tol and h > tol:
                problems.append(
                    f"{name}: {a['kind']} {a['text']!r} overlaps {b['kind']} {b['text']!r} by {w:.0f} x {h:.0f} px"
                )
    return problems


#: control labels (ipywidgets' description labels) in the notebook's outputs: where their text lies, and the
#: boxes of the ancestors that clip it (overflow other than visible), up to the output area
_JS_LABELS = """
() => {
  const found = [];
  const selector = '.jp-OutputArea-output .widget-label, .jp-OutputArea-output .widget-label-basic, '
                 + '.jp-OutputArea-output .widget-inline-hbox > label';
  for (const el of document.querySelectorAll(selector)) {
    const text = (el.textContent || '').trim();
    if (!text || el.offsetParent === null) continue;
    const range = document.createRange();
    range.selectNodeContents(el);
    const t = range.getBoundingClientRect();
    if (t.width < 0.5) continue;
    const clips = [];
    const top = el.closest('.jp-OutputArea-output');
    for (let node = el.parentElement; node; node = node.parentElement) {
      const cs = getComputedStyle(node);
      if (cs.overflowX !== 'visible') {
        const r = node.getBoundingClientRect();
        clips.push({ cls: String(node.className).slice(0, 40), x0: r.left, x1: r.right });
      }
      if (node === top) break;
    }
    found.push({ text: text.slice(0, 60), x0: t.left, x1: t.right, scroll: el.scrollWidth, client: el.clientWidth,
                 clips });
  }
  return found;
}
"""

#: a label's text must start at least this far inside every box that clips it (its glyphs' overhang)
LABEL_GAP_PX = 1.0


def control_labels(page) -> list[dict]:
    """Every visible control label in the notebook's outputs (see ``_JS_LABELS``)."""
    return page.evaluate(_JS_LABELS)


def label_problems(labels: list[dict]) -> list[str]:
    """Labels whose text is cut: wider than their own box (an ellipsis, or a right-aligned label losing its
    first letters), or starting or ending at (or past) the edge of a box that clips it."""
    problems = []
    for label in labels:
        if label["scroll"] > label["client"] + 1:
            problems.append(
                f"label {label['text']!r} is cut: {label['scroll']} px of text in a {label['client']} px box"
            )
            continue
        for clip in label["clips"]:
            if label["x0"] < clip["x0"] + LABEL_GAP_PX or label["x1"] > clip["x1"] - LABEL_GAP_PX:
                problems.append(
                    f"label {label['text']!r} touches the edge of {clip['cls']!r}: text [{label['x0']:.1f}, "
                    f"{label['x1']:.1f}] px in [{clip['x0']:.1f}, {clip['x1']:.1f}] px"
                )
                break
    return problems


def _fmt(box: dict) -> str:
    return f"[{box['x0']:.0f}, {box['x1']:.0f}] x [{box['y0']:.0f}, {box['y1']:.0f}]"


# ---- JupyterLab driver -------------------------------------------------------------------------------


@dataclass
class LabRun:
    """What :func:`drive_notebook` saw."""

    notebook: str
    plots_before: list[dict] = field(default_factory=list)
    data_before: list[str] = field(default_factory=list)
    data_after: list[str] = field(default_factory=list)
    slider: dict | None = None
    key: str = ""
    changed: bool = False
    latency_ms: float | None = None
    errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)
    figures: list[dict] = field(default_factory=list)  # figure_reports() after all cells ran, before the slider
    slider_index: int | None = None  # the slider (page order) whose move changed a figure
    labels: list[dict] = field(default_factory=list)  # control_labels() after all cells ran


class NotebookFailed(AssertionError):
    """The notebook showed an error output, a traceback or a widget that failed to render."""


def notebook_errors(page, notebook_rel_path: str) -> list[str]:
    """Errors visible in the open notebook (see ``_JS_ERRORS``)."""
    return page.evaluate(_JS_ERRORS, notebook_rel_path)


def _poll(page, what: str, check, timeout_s: float, rel: str, interval_s: float = 0.25):
    """Call ``check()`` until it returns something truthy; fail early when the notebook shows an error."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        errors = notebook_errors(page, rel)
        if errors:
            raise NotebookFailed(f"{rel}: error while waiting for {what}:\n" + "\n".join(errors))
        if time.monotonic() > deadline:
            raise TimeoutError(f"{rel}: {what} did not happen within {timeout_s:.0f} s")
        page.wait_for_timeout(interval_s * 1000)


#: JupyterLab already loaded in the page, no dialog open: the next notebook can open inside it
_JS_LAB_READY = """
() => !!(window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.commands)
      && !document.querySelector('.jp-Dialog')
"""

#: close every document of the main area without the "save your work?" dialog (the tests' notebooks are
#: throwaway copies whose kernels the tests shut down), then open one notebook
_JS_OPEN_IN_LAB = """
async (rel) => {
  const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w.context && w.context.model) w.context.model.dirty = false;
    w.dispose();
  }
  await app.commands.execute('docmanager:open', { path: rel });
}
"""


def open_notebook(page, lab: LabServer, notebook_rel_path: str, *, timeout_s: float = 60.0) -> dict:
    """Open ``notebook_rel_path`` (relative to the server root) and wait for its kernel to be idle.

    When the page already shows this JupyterLab (the browser tests share one page per worker), the notebook
    opens inside it after every open document is closed (loading JupyterLab again costs several seconds per
    notebook on 2 cores); otherwise, or if that does not get a kernel within 30 s, the page loads
    ``lab/tree/<notebook>`` with ``reset``: a fresh workspace, so that JupyterLab does not reopen the notebooks
    of earlier tests (and restore their kernels' widgets into this page)."""
    in_lab = page.url.startswith(lab.base_url) and page.evaluate(_JS_LAB_READY)
    if in_lab:
        page.evaluate(_JS_OPEN_IN_LAB, notebook_rel_path)
        try:
            return _wait_for_idle_kernel(page, notebook_rel_path, min(timeout_s, 30.0))
        except TimeoutError:
            pass  # load the page afresh below
    url = lab.url(f"lab/tree/{quote(notebook_rel_path)}") + "&reset"
    page.goto(url, wait_until="domcontentloaded")
    return _wait_for_idle_kernel(page, notebook_rel_path, timeout_s)


def _wait_for_idle_kernel(page, notebook_rel_path: str, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    state: dict = {}
    while time.monotonic() < deadline:
        state = page.evaluate(_JS_KERNEL_STATE, notebook_rel_path)
        if state.get("dialog"):
            text = page.locator(".jp-Dialog").inner_text()
            raise AssertionError(f"{notebook_rel_path}: JupyterLab opened a dialog (kernelspec missing?): {text}")
        if state.get("ready") and state.get("status") == "idle":
            page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", state["id"])
            return state
        page.wait_for_timeout(250)
    raise TimeoutError(f"{notebook_rel_path}: kernel not idle after {timeout_s:.0f} s (last state {state})")


def shut_down_kernels(lab: LabServer, notebook_rel_path: str) -> None:
    """Delete the sessions (and kernels) of a notebook: the next test gets the CPUs and a clean page."""
    for session in lab.api("api/sessions"):
        if session.get("path") == notebook_rel_path:
            lab.api(f"api/sessions/{session['id']}", method="DELETE", timeout_s=30.0)


def run_all_cells(page, notebook_rel_path: str) -> None:
    """Run every cell of the (active) notebook through JupyterLab's command registry."""
    page.evaluate(
        """(rel) => {
             const app = window.jupyterapp;
             const panel = Array.from(app.shell.widgets('main')).find((w) => w.context && w.context.path === rel);
             app.shell.activateById(panel.id);
             app.commands.execute('notebook:run-all-cells');
           }""",
        notebook_rel_path,
    )


def wait_for_plots(page, notebook_rel_path: str, *, timeout_s: float) -> list[dict]:
    """Wait until a ``.js-plotly-plot`` with at least one trace and an SVG is in the page."""
    _poll(page, "a plotly plot with trace data", lambda: page.evaluate(_JS_PLOTS_READY), timeout_s, notebook_rel_path)
    return page.evaluate(JS_PLOT_SUMMARIES)


def wait_for_run_all_done(page, notebook_rel_path: str, *, timeout_s: float) -> None:
    """Wait until every non-empty code cell has an execution count and the kernel is idle."""

    def done():
        state = page.evaluate(_JS_KERNEL_STATE, notebook_rel_path)
        return state.get("pending") == 0 and state.get("status") == "idle"

    _poll(page, "all cells to finish", done, timeout_s, notebook_rel_path)


def wait_for_figures_drawn(page, *, timeout_s: float = 15.0) -> list[dict]:
    """:func:`figure_reports` once every plot has an SVG, a full layout and data (or after ``timeout_s``: the
    report then shows which one was not drawn or stayed empty). An empty figure counts as not drawn yet until
    the deadline: plotly's renderer draws asynchronously, seconds later on a loaded machine."""
    deadline = time.monotonic() + timeout_s
    while True:
        figures = figure_reports(page)
        drawn = all(f["svg"] and f["laidOut"] and f["traces"] > 0 and f["points"] > 0 for f in figures)
        if drawn or time.monotonic() > deadline:
            return figures
        page.wait_for_timeout(250)


def plot_signatures(page) -> list[str]:
    """One compact string per ``.js-plotly-plot`` (page order) that changes when its ``gd.data`` changes."""
    return page.evaluate(JS_PLOT_SIGNATURES)


def plot_summaries(page) -> list[dict]:
    """Per plot: trace count and types, whether its SVG exists, its plotly slider and frame counts, title."""
    return page.evaluate(JS_PLOT_SUMMARIES)


def move_slider(page, index: int, *, timeout_s: float) -> tuple[dict, str, bool, float | None, list[str], list[str]]:
    """Click slider ``index``'s handle, press ArrowRight (ArrowLeft at its maximum) and watch the plots.

    Returns (slider info, key, changed, latency in ms from keydown to the first animation frame showing new
    plot data, signatures before, signatures after)."""
    handle = page.locator(".widget-slider .noUi-handle").nth(index)
    handle.scroll_into_view_if_needed()
    handle.click()
    page.wait_for_timeout(300)  # a click on the handle may commit a (same) value; let it settle
    info = page.evaluate(_JS_SLIDERS)[index]
    at_max = info["now"] is not None and info["max"] is not None and float(info["now"]) >= float(info["max"])
    key = "ArrowLeft" if at_max else "ArrowRight"
    before = plot_signatures(page)
    page.evaluate(_JS_WATCH, [timeout_s * 1000, JS_PLOT_SIGNATURES])
    handle.press(key)
    page.wait_for_function(
        "() => window.__wbWatch.t1 !== null || window.__wbWatch.timedOut", timeout=(timeout_s + 5) * 1000
    )
    watch = page.evaluate("() => ({t0: window.__wbWatch.t0, t1: window.__wbWatch.t1})")
    after = plot_signatures(page)
    info_after = page.evaluate(_JS_SLIDERS)[index]
    changed = watch["t1"] is not None
    latency = (watch["t1"] - watch["t0"]) if changed and watch["t0"] is not None else None
    return {**info, "after": info_after}, key, changed, latency, before, after


# One slider move, timed in the page: t0 at the keydown; then, relative to it (ms), the first comm message sent, the
# first received, the first and last received figure update (an Output's ``outputs`` or a PlotlyReact's ``figure``:
# count and JSON characters), the kernel's idle status, the first and the last animation frame on which some plot's
# data differs from the frame before (``first``/``last``; done after ``quietMs`` without change), and the page's
# long tasks ([start, duration] ms: script and rendering that held the main thread over 50 ms).
_JS_MOVE_WATCH = """
([rel, timeoutMs, quietMs, sigSrc]) => {
  const sigs = eval(sigSrc);
  const app = window.jupyterapp;
  const panel = Array.from(app.shell.widgets('main')).find((w) => w.context && w.context.path === rel);
  const kernel = panel.sessionContext.session.kernel;
  const w = { t0: null, sent: null, firstRecv: null, firstOutputs: null, lastOutputs: null, outputsBytes: 0,
              outputsMsgs: 0, idle: null, first: null, last: null, timedOut: false, done: false,
              base: sigs(), longtasks: [], msgs: [] };
  window.__wbMove = w;
  const onMsg = (_, args) => {
    if (w.t0 === null) return;
    const m = args.msg, now = performance.now() - w.t0;
    if (m.header.msg_type === 'comm_msg') {
      const data = m.content.data || {}, keys = Object.keys(data.state || {});
      const size = JSON.stringify(m.content).length;
      w.msgs.push([Math.round(now), args.direction, data.method, keys.join(','), size]);
      if (args.direction === 'send' && w.sent === null) w.sent = now;
      if (args.direction === 'recv' && w.firstRecv === null) w.firstRecv = now;
      if (args.direction === 'recv' && (keys.includes('outputs') || keys.includes('figure'))) {
        if (w.firstOutputs === null) w.firstOutputs = now;
        w.lastOutputs = now; w.outputsBytes += size; w.outputsMsgs += 1;
      }
    } else if (m.header.msg_type === 'status' && args.direction === 'recv') {
      if (m.content.execution_state === 'idle') w.idle = now;
    }
  };
  kernel.anyMessage.connect(onMsg);
  let obs = null;
  try {
    obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) if (w.t0 !== null) w.longtasks.push([Math.round(e.startTime - w.t0), Math.round(e.duration)]); });
    obs.observe({ type: 'longtask', buffered: false });
  } catch (e) {}
  document.addEventListener('keydown', () => { if (w.t0 === null) w.t0 = performance.now(); }, { capture: true, once: true });
  const start = performance.now();
  let prev = w.base;
  const tick = () => {
    const now = sigs(), t = performance.now();
    const differs = now.length !== prev.length || now.some((s, i) => s !== prev[i]);
    if (w.t0 !== null && differs) { const dt = t - w.t0; if (w.first === null) w.first = dt; w.last = dt; prev = now; }
    const quietFor = w.last === null ? 0 : (t - w.t0) - w.last;
    if (w.last !== null && quietFor > quietMs) { w.done = true; }
    else if (t - start > timeoutMs) { w.timedOut = true; w.done = true; }
    if (w.done) { kernel.anyMessage.disconnect(onMsg); if (obs) obs.disconnect(); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return w.base.length;
}
"""


def time_slider_moves(
    page, notebook_rel_path: str, index: int, moves: int, *, quiet_ms: float = 700.0, timeout_s: float = 15.0
) -> list[dict]:
    """Press ArrowLeft, ArrowRight, ... ``moves`` times on slider ``index`` (each after the figures settled) and
    return each move's timings (see ``_JS_MOVE_WATCH``; ``first``: keydown to the first figure drawn anew,
    ``last``: to the last one)."""
    handle = page.locator(".widget-slider .noUi-handle").nth(index)
    handle.scroll_into_view_if_needed()
    timings = []
    for k in range(moves):
        page.wait_for_timeout(300)
        page.evaluate(_JS_MOVE_WATCH, [notebook_rel_path, timeout_s * 1000, quiet_ms, JS_PLOT_SIGNATURES])
        handle.press("ArrowLeft" if k % 2 == 0 else "ArrowRight")
        page.wait_for_function("() => window.__wbMove.done", timeout=(timeout_s + 5) * 1000)
        timings.append(page.evaluate("() => { const w = window.__wbMove; delete w.base; return w; }"))
    return timings


def drive_notebook(
    page,
    lab: LabServer,
    notebook_rel_path: str,
    *,
    plot_timeout_s: float = 240.0,
    change_timeout_s: float = 20.0,
    max_sliders: int = 3,
) -> LabRun:
    """Open a notebook in JupyterLab, run all cells, wait for plots and move a slider.

    Tries up to ``max_sliders`` sliders in page order (the first whose key press changes some plot's data
    wins: a slider may legitimately leave the plots alone, e.g. when its new value is rejected in the
    panel's status line). Raises :class:`NotebookFailed` as soon as the notebook shows an error.
    """
    run = LabRun(notebook=notebook_rel_path)

    def on_console(m) -> None:
        if m.type == "error":
            run.console_errors.append(m.text)

    def on_error(e) -> None:
        run.console_errors.append(f"pageerror: {e}")

    page.on("console", on_console)
    page.on("pageerror", on_error)
    try:
        return _drive(page, lab, notebook_rel_path, run, plot_timeout_s, change_timeout_s, max_sliders)
    finally:  # the page is shared by later tests
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_error)


def _drive(page, lab, notebook_rel_path, run, plot_timeout_s, change_timeout_s, max_sliders) -> LabRun:
    t = time.monotonic()
    open_notebook(page, lab, notebook_rel_path)
    run.timings_s["open_to_idle"] = time.monotonic() - t
    t = time.monotonic()
    run_all_cells(page, notebook_rel_path)
    run.plots_before = wait_for_plots(page, notebook_rel_path, timeout_s=plot_timeout_s)
    run.timings_s["run_to_plot"] = time.monotonic() - t
    wait_for_run_all_done(page, notebook_rel_path, timeout_s=plot_timeout_s)
    run.timings_s["run_to_done"] = time.monotonic() - t
    page.wait_for_timeout(500)  # let late widget views attach
    run.errors = notebook_errors(page, notebook_rel_path)
    if run.errors:
        raise NotebookFailed(f"{notebook_rel_path}: errors after running all cells:\n" + "\n".join(run.errors))
    run.figures = wait_for_figures_drawn(page)
    run.labels = control_labels(page)
    sliders = page.evaluate(_JS_SLIDERS)
    if not sliders:
        raise AssertionError(f"{notebook_rel_path}: no ipywidgets slider (.widget-slider) in the page")
    run.data_before = plot_signatures(page)
    t = time.monotonic()
    for index in range(min(max_sliders, len(sliders))):
        if sliders[index]["disabled"]:
            continue
        run.slider, run.key, run.changed, run.latency_ms, before, run.data_after = move_slider(
            page, index, timeout_s=change_timeout_s
        )
        if run.changed:
            run.slider_index = index
            break
    run.timings_s["slider_phase"] = time.monotonic() - t
    run.errors = notebook_errors(page, notebook_rel_path)
    return run


def screenshot(page, path: Path) -> Path:
    """Full-page screenshot, with the first plot scrolled into view (JupyterLab scrolls inside the notebook)."""
    page.evaluate(
        "() => { const gd = document.querySelector('.js-plotly-plot'); if (gd) gd.scrollIntoView({block: 'center'}); }"
    )
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)
    return path


# ---- report checks -----------------------------------------------------------------------------------

_NETWORK_SCRIPT = re.compile(r"<script[^>]*\bsrc=[\"']?(?:https?:)?//", re.IGNORECASE)
_NETWORK_LINK = re.compile(r"<link[^>]*\bhref=[\"']?(?:https?:)?//", re.IGNORECASE)


def report_network_references(text: str, plotly_bundle: str) -> list[str]:
    """Network references in a report, ignoring URL *strings* inside the inlined plotly.js bundle itself
    (plotly.min.js contains ``https://cdn.plot.ly/un/`` as the default topojson URL and a jsDelivr icon
    URL for map traces; neither is loaded by cartesian plots)."""
    outside = text.replace(plotly_bundle, "", 1)
    found = [m.group(0) for m in _NETWORK_SCRIPT.finditer(text)]
    found += [m.group(0) for m in _NETWORK_LINK.finditer(text)]
    found += [outside[max(0, i - 60) : i + 60] for i in (m.start() for m in re.finditer(r"https://cdn", outside))]
    return found


def report_autoplay_calls(text: str, plotly_bundle: str) -> int:
    """``Plotly.animate(`` calls in a report outside plotly.js: ``fig.to_html()`` adds one per figure with
    frames unless ``auto_play=False``, and the figure then plays every frame on load and stops on the last
    one, not on the notebook's parameters."""
    return text.replace(plotly_bundle, "", 1).count("Plotly.animate(")


def plotly_slider_geometry(page, plot_index: int) -> dict | None:
    """Rail box (page coordinates), step count and active step of the first plotly slider of a plot."""
    return page.evaluate(
        """(i) => {
             const gd = document.querySelectorAll('.js-plotly-plot')[i];
             const rail = gd.querySelector('.slider-container .slider-rail-rect');
             const sliders = (gd.layout || {}).sliders || [];
             if (!rail || !sliders.length) return null;
             const r = rail.getBoundingClientRect();
             return { x: r.x, y: r.y, width: r.width, height: r.height,
                      steps: sliders[0].steps.length, active: sliders[0].active || 0 };
           }""",
        plot_index,
    )
