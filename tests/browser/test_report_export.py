"""`workbench report` writes one offline HTML file whose plotly figures render and whose slider animates.

Reference: the "Export" section of ``shared/papers/README.md`` (static figures with ``layout.sliders``
over precomputed frames; plotly.js inlined once, no CDN) and ``workbench/report.py``. The page is opened
from ``file://`` with the browser offline and every non-file request aborted and recorded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser_helpers import (
    JS_PLOT_SIGNATURES,
    plot_signatures,
    plot_summaries,
    plotly_slider_geometry,
    report_autoplay_calls,
    report_network_references,
)
from fixture_notebook import smoke_parameters, write_fixture_notebook

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
MESH_ATTENTION = REPO_ROOT / "notebooks" / "llm" / "mesh_attention.ipynb"
PLOTLY_MARKER = "plotly.js v"  # license header of plotly.min.js: "/**\n* plotly.js v4.1.1\n* Copyright ..."

CASES = [pytest.param(None, id="fixture"), pytest.param(MESH_ATTENTION, id="mesh_attention")]


def export_report(notebook: Path, out: Path, params: dict) -> tuple[subprocess.CompletedProcess, float]:
    """``python -m workbench.cli report NOTEBOOK --out OUT -p NAME=VALUE ...`` from the repository root."""
    argv = [sys.executable, "-m", "workbench.cli", "report", str(notebook), "--out", str(out)]
    for name, value in params.items():
        argv += ["-p", f"{name}={value!r}"]
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_EXPORT"}
    start = time.monotonic()
    done = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    return done, time.monotonic() - start


@pytest.mark.parametrize("notebook", CASES)
def test_report_is_offline_and_its_slider_animates(browser, tmp_path, notebook):
    if notebook is None:
        notebook = write_fixture_notebook(tmp_path / "fixture" / "slider_fixture.ipynb")
    params = smoke_parameters(notebook)
    out = tmp_path / "report.html"

    done, export_s = export_report(
        notebook.relative_to(REPO_ROOT) if notebook.is_relative_to(REPO_ROOT) else notebook, out, params
    )
    assert done.returncode == 0, f"workbench report failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    text = out.read_text(encoding="utf-8")
    print(f"\n[{notebook.name}] workbench report -p {params}: {export_s:.1f} s, {len(text) / 1e6:.1f} MB")

    # -- the file: plotly.js inlined exactly once, nothing fetched from the network ---------------------
    from plotly.offline import get_plotlyjs

    bundle = get_plotlyjs()
    assert text.count(PLOTLY_MARKER) == 1, f"plotly.js header found {text.count(PLOTLY_MARKER)} times"
    assert text.count(bundle) == 1, "the bundled plotly.min.js is not inlined verbatim exactly once"
    assert report_network_references(text, bundle) == []
    assert report_autoplay_calls(text, bundle) == 0, (
        "figures auto-play their frames on load (plotly's to_html default): pass auto_play=False"
    )

    # -- the page, opened offline ---------------------------------------------------------------------------
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    blocked: list[str] = []

    def only_files(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    try:
        start = time.monotonic()
        page.goto(out.as_uri(), wait_until="load")
        page.wait_for_function(
            """() => { const divs = document.querySelectorAll('.plotly-graph-div');
                       return divs.length > 0 && [...divs].every((d) => d.classList.contains('js-plotly-plot')
                              && (d.data || []).length > 0 && d.querySelector('.main-svg')); }""",
            timeout=60_000,
        )
        render_s = time.monotonic() - start
        # at rest: what the notebook computed stays on screen (no animation running on its own)
        settled = plot_signatures(page)
        page.wait_for_timeout(1000)
        assert plot_signatures(page) == settled, "a figure changed by itself after loading"
        plots = plot_summaries(page)
        print(f"[{notebook.name}] {len(plots)} figures rendered offline in {render_s:.1f} s: {plots}")
        n_divs = page.locator(".plotly-graph-div").count()
        assert len(plots) == n_divs, f"{n_divs} plotly divs but {len(plots)} rendered plots"
        assert all(p["traces"] > 0 and p["svg"] for p in plots), plots

        with_slider = [i for i, p in enumerate(plots) if p["sliders"] > 0]
        assert with_slider, "no figure has a plotly slider (layout.sliders over frames)"
        index = with_slider[0]
        geometry = plotly_slider_geometry(page, index)
        assert geometry is not None, "layout.sliders is set but no .slider-container was drawn"
        assert geometry["steps"] >= 2, geometry

        # click the far end of the rail away from the active step: the slider jumps there and animates
        before = plot_signatures(page)[index]
        to_last = geometry["active"] < (geometry["steps"] - 1) / 2
        page.locator(".js-plotly-plot").nth(index).scroll_into_view_if_needed()
        geometry = plotly_slider_geometry(page, index)  # viewport coordinates, after scrolling
        x = geometry["x"] + (geometry["width"] - 3 if to_last else 3)
        y = geometry["y"] + geometry["height"] / 2
        start = time.monotonic()
        page.mouse.click(x, y)
        try:
            page.wait_for_function(f"(b) => ({JS_PLOT_SIGNATURES})()[{index}] !== b", arg=before, timeout=10_000)
            click_ms = (time.monotonic() - start) * 1000
        except Exception:  # diagnose: does animating to a frame change the data at all?
            page.evaluate(
                """(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i];
                            const steps = gd.layout.sliders[0].steps;
                            return Plotly.animate(gd, steps[steps.length - 1].args[0], steps[steps.length - 1].args[1]); }""",
                index,
            )
            by_animate = plot_signatures(page)[index] != before
            pytest.fail(
                f"clicking the plotly slider rail did not change the plot (Plotly.animate to the last "
                f"frame {'does' if by_animate else 'does not'} change it)"
            )
        active = plotly_slider_geometry(page, index)["active"]
        print(
            f"[{notebook.name}] plotly slider of figure {index}: step {geometry['active']} -> {active} "
            f"of {geometry['steps']}, plot updated {click_ms:.0f} ms after the click"
        )
        assert active != geometry["active"]

        page.wait_for_timeout(500)  # the slider grip glides to its step; let it land before the screenshot
        shot = tmp_path / f"{notebook.stem}_report.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"[{notebook.name}] screenshot: {shot}")
    finally:
        context.close()

    assert blocked == [], f"the report tried to reach the network: {blocked[:5]}"
    assert page_errors == [], f"JavaScript errors in the report: {page_errors[:5]}"
