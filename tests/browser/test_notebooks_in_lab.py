"""Every technique's notebook in JupyterLab (headless Chromium): run all with its smoke parameters, then look.

Reference: ``shared/notes/browser-testing.md`` (the verified recipe) and ``tests/test_notebooks.py`` (the
same smoke parameters, injected after the ``parameters`` cell as ``workbench report -p`` does). The
notebooks come from the registry (each ready technique's ``notebook``), so a new technique is driven here
without editing this file. Per notebook it asserts: no error output, no browser console error or page
error, every plotly figure drawn (an SVG, height > 0) and not empty, no subplot drawn as an empty frame, no
text box (title, axis titles, legend, colourbars, annotations) outside its figure or on top of another, no
control label cut (at the panel's edge or by its own box), and a slider move (ArrowRight on a
``.noUi-handle``) changing some figure's data.

Latency: after that, the same slider moves ``$WORKBENCH_BROWSER_MOVES`` times (default 5), each timed in the page
from the keydown to the first and to the last figure drawn anew (``browser_helpers.time_slider_moves``); the
medians, the load average and the comm traffic are printed and appended as one JSON line per notebook to
``$WORKBENCH_BROWSER_TIMES`` (default: ``slider_latency.jsonl`` in the test's temporary folder). Nothing is
asserted on time. One JupyterLab serves the whole session; notebooks
open one after another and their kernels are shut down after each test.

A screenshot of each panel goes to the test's temporary folder; with ``$WORKBENCH_BROWSER_SHOTS`` (a folder)
set, the panel and every figure of every notebook go there (to look at them).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import nbformat
import pytest
from browser_helpers import (
    drive_notebook,
    figure_problems,
    label_problems,
    shut_down_kernels,
    time_slider_moves,
    unexpected_console,
)

from workbench.registry import catalogue, get_technique
from workbench.report import apply_overrides, parameter_names

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
SMOKE_DIR = "_smoke"  # under the server's root: the smoke-parameter copies the tests open
#: console messages that are not errors of ours: none so far (an entry needs a comment saying why)
IGNORED_CONSOLE = ()
MOVES = int(os.environ.get("WORKBENCH_BROWSER_MOVES", "5"))  # timed slider moves per notebook


def ready_notebooks() -> list[tuple[str, str]]:
    """(technique, notebook path relative to the repository) of every ready technique in the catalogue."""
    return [(e.name, get_technique(e.name).notebook) for e in catalogue() if e.status == "ready"]


def write_smoke_copy(lab_root: Path, notebook: str) -> str:
    """Write ``notebook`` with its ``workbench.smoke`` parameters injected (and ``DATA_DIR = ""``: the data
    folder from ``$WORKBENCH_DATA``, as a relative path would not hold in the copy) under ``lab_root``;
    returns its path relative to ``lab_root``."""
    nb = nbformat.read(REPO_ROOT / notebook, as_version=4)
    overrides = dict(nb.metadata.get("workbench", {}).get("smoke", {}))
    if "DATA_DIR" in parameter_names(nb):
        overrides["DATA_DIR"] = ""
    rel = Path(SMOKE_DIR) / Path(notebook).relative_to("notebooks")
    (lab_root / rel).parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(apply_overrides(nb, overrides), lab_root / rel)
    return rel.as_posix()


def panel_screenshot(page, path: Path) -> Path | None:
    """The (last) cell output holding a slider: the notebook's panel, controls and figures. The viewport is
    made tall enough for all of it (JupyterLab scrolls inside the notebook, which would crop it)."""
    outputs = page.locator(".jp-OutputArea-output:has(.widget-slider)")
    if outputs.count() == 0:
        return None
    viewport = page.viewport_size
    height = outputs.last.bounding_box()["height"]
    page.set_viewport_size({"width": viewport["width"], "height": int(min(height + 300, 8000))})
    try:
        page.wait_for_timeout(500)  # figures follow the new layout
        outputs.last.scroll_into_view_if_needed()
        outputs.last.screenshot(path=str(path))
    finally:
        page.set_viewport_size(viewport)
    return path


def record_latency(technique: str, moves: list[dict], path: Path) -> dict:
    """Medians (ms) of the timed slider moves, with the load average and the figure traffic, appended to ``path``
    (one JSON line); returns the record."""

    def median(key: str) -> float | None:
        values = [m[key] for m in moves if m.get(key) is not None]
        return round(statistics.median(values)) if values else None

    record = {
        "technique": technique,
        "moves": len(moves),
        "first_ms": median("first"),
        "last_ms": median("last"),
        "figure_msgs": median("outputsMsgs"),
        "figure_chars": median("outputsBytes"),
        "load1": round(os.getloadavg()[0], 1),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(json.dumps(record) + "\n")
    return record


@pytest.mark.parametrize(("technique", "notebook"), ready_notebooks(), ids=[t for t, _ in ready_notebooks()])
def test_notebook_runs_and_draws_in_lab(page, jupyter_lab, tmp_path, technique, notebook):
    rel = write_smoke_copy(jupyter_lab.root, notebook)
    start = time.monotonic()
    try:
        run = drive_notebook(page, jupyter_lab, rel, plot_timeout_s=400.0)
        shots = Path(os.environ.get("WORKBENCH_BROWSER_SHOTS", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        shot = panel_screenshot(page, shots / f"{technique}.png")
        if "WORKBENCH_BROWSER_SHOTS" in os.environ:
            plots = page.locator(".js-plotly-plot")
            for i in range(plots.count()):
                plots.nth(i).screenshot(path=str(shots / f"{technique}-fig{i}.png"))
        moves = [] if run.slider_index is None else time_slider_moves(page, rel, run.slider_index, MOVES)
    finally:
        shut_down_kernels(jupyter_lab, rel)
    console = [m for m in unexpected_console(run.console_errors) if not any(i in m for i in IGNORED_CONSOLE)]
    problems = [p for fig in run.figures for p in figure_problems(fig)] + label_problems(run.labels)
    latency = record_latency(
        technique, moves, Path(os.environ.get("WORKBENCH_BROWSER_TIMES", tmp_path / "slider_latency.jsonl"))
    )

    print(
        f"\n[{technique}] {len(run.figures)} figures, {sum(f['points'] for f in run.figures)} points; "
        f"console errors: {len(console)}; layout problems: {len(problems)}; slider "
        f"{run.slider and run.slider['label']!r} {run.key}: changed={run.changed} "
        f"({'n/a' if run.latency_ms is None else f'{run.latency_ms:.0f} ms'}); "
        f"{time.monotonic() - start:.0f} s ("
        + ", ".join(f"{k}={v:.0f}" for k, v in run.timings_s.items())
        + f"); screenshot {shot}"
    )
    print(f"[{technique}] slider latency (median of {latency['moves']} moves): {latency}")
    for line in problems:
        print(f"[{technique}]   {line}")

    assert not run.errors, "\n".join(run.errors)
    assert not console, "browser console errors:\n" + "\n".join(m[:500] for m in console)
    assert run.figures, "no plotly figure in the page"
    assert not problems, "\n".join(problems)
    assert run.changed, f"no figure's data changed after {run.key} on slider {run.slider}"
