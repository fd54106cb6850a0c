"""Fixtures of the browser tests: Debian's Chromium driven by playwright-python, and a throwaway JupyterLab.

Reference: ``shared/notes/browser-testing.md`` (verified recipe) and the "Browser tests with Playwright and
the system Chromium" section of ``shared/papers/README.md``. ``playwright install`` is never run: the
browser is ``/usr/bin/chromium``. Without it (or without playwright) the tests skip, except under
``CI=true``, where they fail: CI must run them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from lab_server import start_jupyter_lab, stop_jupyter_lab

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def unavailable(reason: str) -> None:
    """Skip locally; fail under CI=true (the browser tests must run there)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: browser tests must run in CI)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        unavailable(f"{CHROMIUM} is missing: apt-get install -y chromium (never `playwright install`)")
    return CHROMIUM


@pytest.fixture(scope="session")
def playwright_api(chromium_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright-python is not installed (pip install -e '.[test]')")
    with sync_playwright() as api:
        yield api


@pytest.fixture(scope="session")
def browser(playwright_api, chromium_path):
    """Headless system Chromium. ``launch`` gives every browser a fresh temporary user-data directory
    (playwright refuses ``--user-data-dir`` in ``args``; a persistent profile needs launch_persistent_context)."""
    browser = playwright_api.chromium.launch(executable_path=str(chromium_path), headless=True, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def page(browser):
    """One page per test process, large enough for a panel and its plots, shared by the tests: JupyterLab loads
    once and each notebook opens inside it (``browser_helpers.open_notebook``; loading JupyterLab costs 4-7 s
    per test on 2 cores). Tests that listen to the page's events remove their listeners."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    """JupyterLab on a temporary copy of ``notebooks/`` (edits and checkpoints never touch the repository).

    Yields a :class:`browser_helpers.LabServer` (``base_url``, ``token``, ``root``, ``url(path)``); the server
    and its kernels are shut down at the end of the session (one server for every browser test).
    """
    work = tmp_path_factory.mktemp("lab")
    root = work / "notebooks"
    shutil.copytree(REPO_ROOT / "notebooks", root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    server = start_jupyter_lab(root, work / "state")
    try:
        yield server
    finally:
        stop_jupyter_lab(server)
