"""Execute a notebook with parameters and write one self-contained, offline HTML report.

The notebook's first code cell tagged ``parameters`` holds plain assignments (``GPUS = 256``). Overrides
(``-p GPUS=16``) must name one of them; they are injected as a new cell right after it, papermill-style,
and the notebook passes them on to the technique's config, which validates them.

The kernel runs with ``WORKBENCH_EXPORT=1``, so panels render static plotly figures (with slider frames)
as HTML without plotly.js. The report inlines plotly.js once in its head and uses nbconvert's ``basic``
template (no require.js, no MathJax, no CDN), so it renders with the network off. ``no_input`` (the CLI's
``--no-input``) leaves the code out. In print (the PDF, A4) code and text lines wrap instead of running off the page.

Sized before it starts (#29, :func:`check_report_size`): when the notebook is a technique's
(``notebooks/<area>/<technique>.ipynb`` in the registry) and an override names a parameter that is one of that
technique's config fields (``-p LAYERS=64`` -> ``layers``), the run those parameters describe is estimated
(:func:`workbench.registry.estimate`) and refused, as ``workbench run`` refuses it (ValueError: exit 2, one line
with the estimate and the available memory), before a kernel starts. Not possible, so skipped: a notebook of no
technique (the index, the scoreboard), overrides that name no config field (``CHECK_GPUS``, sweep lists such as
``SIZES``: the notebook's own prefixed parameters feed several views, not one run), and parameter values the
config rejects or that are not literals (the notebook then reports them itself).
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import nbformat

from workbench.atomic import write_bytes, write_text

log = logging.getLogger(__name__)

__all__ = ["parse_overrides", "parameter_names", "apply_overrides", "execute_notebook", "export_report"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.5; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 0.88em; }
.jp-InputArea pre, .input_area pre { background: #f6f8fa; padding: 0.6em; border-radius: 4px; overflow-x: auto; }
.jp-OutputArea-output pre, .output_subarea pre { padding: 0.4em 0.6em; overflow-x: auto; }
.jp-InputPrompt, .jp-OutputPrompt, .prompt { display: none; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: 2px 8px; }
@media print {
  /* paper cannot scroll: long code and text lines wrap (anywhere, even inside a word) instead of being cut */
  pre { white-space: pre-wrap; overflow-wrap: anywhere; }
  .jp-InputArea pre, .input_area pre, .jp-OutputArea-output pre, .output_subarea pre { overflow-x: visible; }
  td, th { overflow-wrap: anywhere; }
}
"""


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["GPUS=16", "CAUSAL=True"]`` -> ``{"GPUS": 16, "CAUSAL": True}`` (Python literals, else strings)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"-p {item!r} is malformed: expected NAME=VALUE with NAME a Python identifier")
        try:
            out[name] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            out[name] = text.strip()
    return out


def _parameters_cell(nb: nbformat.NotebookNode) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return i
    return None


def parameter_names(nb: nbformat.NotebookNode) -> list[str]:
    """Names assigned in the notebook's ``parameters`` cell."""
    index = _parameters_cell(nb)
    if index is None:
        return []
    names = []
    for node in ast.parse(nb.cells[index].source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def parameter_values(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """The literal values assigned in the notebook's ``parameters`` cell (name -> value; non-literals left out)."""
    index = _parameters_cell(nb)
    values: dict[str, Any] = {}
    for node in ast.parse(nb.cells[index].source).body if index is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return values


def apply_overrides(nb: nbformat.NotebookNode, overrides: dict[str, Any]) -> nbformat.NotebookNode:
    """A copy of ``nb`` with an injected cell assigning ``overrides`` after its parameters cell."""
    if not overrides:
        return nb
    index = _parameters_cell(nb)
    valid = parameter_names(nb)
    for name in overrides:
        if name not in valid:
            raise ValueError(
                f"-p {name}: the notebook has no such parameter; valid parameters are {', '.join(valid) or '(none)'}"
            )
    nb = nbformat.from_dict(nb)
    source = "# Parameters injected by `workbench report`\n" + "\n".join(f"{k} = {v!r}" for k, v in overrides.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(index + 1, cell)
    return nb


def notebook_technique(path: Path) -> str | None:
    """The registry name of the ready technique whose notebook ``path`` is (``notebooks/<area>/<package>.ipynb``
    under the repository), or None."""
    from workbench.registry import catalogue

    resolved = path.resolve()
    root = Path(__file__).resolve().parents[1] / "notebooks"
    for e in catalogue():
        if e.module and resolved == (root / e.area / f"{e.package}.ipynb").resolve():
            return e.name
    return None


def notebook_config(nb: nbformat.NotebookNode, name: str, overrides: dict[str, Any]) -> Any:
    """The config of technique ``name`` that the notebook's parameters (its ``parameters`` cell's literal values,
    then ``overrides``) describe, by lower-cased name onto the config's fields; None when no override names a
    field or the values do not make a config (see the module docstring)."""
    from workbench.registry import get_technique

    config_cls = get_technique(name).config
    fields = {s.name for s in config_cls.specs()}
    if not any(k.lower() in fields for k in overrides):
        return None
    values = {**parameter_values(nb), **overrides}
    mapped = {k.lower(): v for k, v in values.items() if k.lower() in fields}
    try:
        return config_cls.from_dict(mapped)
    except (ValueError, TypeError):
        return None


def check_report_size(notebook: Path, nb: nbformat.NotebookNode, overrides: dict[str, Any]) -> None:
    """Refuse (ValueError, ``workbench run``'s one line) a report whose technique run cannot fit in the available
    memory, before a kernel starts; a notebook whose parameters do not map onto its technique's config is
    skipped (module docstring)."""
    from workbench.registry import check_fits, entry, estimate

    name = notebook_technique(notebook) if overrides else None
    config = notebook_config(nb, name, overrides) if name and entry(name).sizes else None
    if config is not None:
        check_fits(name, estimate(name, config))


def read_notebook(path: Path) -> nbformat.NotebookNode:
    if not path.is_file():
        raise FileNotFoundError(f"notebook {str(path)!r} does not exist")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several types for unreadable JSON
        raise ValueError(f"notebook {str(path)!r} is not a readable .ipynb file: {exc}") from None


#: terminal colour and cursor codes (ESC [ ... letter) that IPython tracebacks carry
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


class KernelStopped(RuntimeError):
    """The kernel died or was shut down mid-run (nbclient does so itself on SIGTERM and SIGINT)."""

    one_line = True  # the CLI prints it as one line (exit 1): a fault of the run, not of the input


def execute_notebook(
    nb: nbformat.NotebookNode, *, cwd: Path, timeout_s: float = 1800.0, export: bool = True
) -> nbformat.NotebookNode:
    """Run every cell in a fresh ``python3`` kernel (in ``cwd``); with ``export`` panels render static."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    previous = os.environ.get("WORKBENCH_EXPORT")
    if export:
        os.environ["WORKBENCH_EXPORT"] = "1"
    try:
        client = NotebookClient(
            nb, timeout=timeout_s, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
        )
        client.execute(stderr=subprocess.DEVNULL)  # the kernel's own log (TCP warnings, its shutdown) is noise here
    except CellExecutionError as exc:
        last = ANSI_ESCAPE.sub("", str(exc)).strip().splitlines()[-1]  # tracebacks carry terminal colour codes
        raise ValueError(f"the notebook failed while executing: {last}") from None
    except (DeadKernelError, AssertionError) as exc:  # nbclient shuts the kernel down on SIGTERM/SIGINT itself
        logging.getLogger("asyncio").disabled = True  # nbclient's orphaned poll task would be logged at exit
        raise KernelStopped(
            "the notebook's kernel stopped before the end (SIGTERM or Ctrl-C, or out of memory); no report was written"
        ) from exc
    finally:
        if export:
            if previous is None:
                os.environ.pop("WORKBENCH_EXPORT", None)
            else:
                os.environ["WORKBENCH_EXPORT"] = previous
    return nb


def plotly_js() -> str:
    """The plotly.min.js the plotly package ships (read from its files: no network, and the library floor
    imports no UI package)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the plotly package is not installed: pip install plotly")
    return (Path(list(spec.submodule_search_locations)[0]) / "package_data" / "plotly.min.js").read_text(
        encoding="utf-8"
    )


def render_html(nb: nbformat.NotebookNode, title: str, *, no_input: bool = False) -> str:
    """One HTML page: nbconvert ``basic`` body, our CSS, plotly.js inlined once. ``no_input`` leaves out every
    code cell's source and the prompts (nbconvert's ``--no-input``): the Markdown story and the outputs only."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="basic",
        exclude_input=no_input,
        exclude_input_prompt=no_input,
        exclude_output_prompt=no_input,
    )
    body, _ = exporter.from_notebook_node(nb)
    # Anything in outputs that still points at a CDN (e.g. a stray plotly renderer) is a bug: refuse it.
    cdn = re.findall(r"<script[^>]+src=[\"']https?://[^\"']+", body)
    if cdn:
        raise ValueError(f"the report would load scripts from the network: {cdn[:3]}")
    from html import escape

    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style>"
        f'<script type="text/javascript">{plotly_js()}</script>'
        f"</head><body>\n{body}\n</body></html>\n"
    )


#: where a Chromium-family browser for PDF reports is looked for (``WORKBENCH_CHROMIUM`` first)
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)


def chromium_executable() -> str:
    """The browser that prints PDF reports: ``$WORKBENCH_CHROMIUM``, else the first of :data:`CHROMIUM_PATHS`."""
    for candidate in (os.environ.get("WORKBENCH_CHROMIUM", ""), *CHROMIUM_PATHS):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "a PDF report needs a Chromium browser: install Debian's chromium (apt-get install "
        "chromium) or set WORKBENCH_CHROMIUM to one"
    )


def html_to_pdf(html: str, *, timeout_s: float = 120.0) -> bytes:
    """Print the offline report ``html`` to PDF (A4) in headless Chromium, after every plotly figure has drawn.

    nbconvert's ``webpdf`` exporter launches playwright's own browser download; this prints the same kind of
    page with the system's Chromium instead, and prints *our* report (static figures, plotly.js inlined).
    """
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        raise FileNotFoundError(
            "a PDF report needs playwright: pip install playwright (no browser download: "
            "it drives the system's Chromium)"
        ) from None
    with tempfile.TemporaryDirectory(prefix="workbench-pdf-") as tmp:
        page_path = Path(tmp) / "report.html"
        page_path.write_text(html, encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS))
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 1400})
                page.route(
                    "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
                )  # offline, as the HTML report promises
                page.goto(page_path.as_uri(), wait_until="load", timeout=timeout_s * 1000)
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.plotly-graph-div')]"
                    ".every(d => d.querySelector('.main-svg'))",
                    timeout=timeout_s * 1000,
                )
                page.emulate_media(media="print")
                return page.pdf(
                    format="A4",
                    print_background=True,
                    margin={"top": "12mm", "bottom": "12mm", "left": "10mm", "right": "10mm"},
                )
            finally:
                browser.close()


def export_report(
    notebook: Path,
    out: Path,
    overrides: dict[str, Any] | None = None,
    *,
    timeout_s: float = 1800.0,
    no_input: bool = False,
) -> Path:
    """Execute ``notebook`` with ``overrides`` and write the offline report to ``out``: HTML, or a PDF of the same
    page when ``out`` ends in ``.pdf``; with ``no_input`` the page has no code, only the story and the outputs;
    returns ``out``."""
    if out.suffix.lower() not in (".html", ".htm", ".pdf"):
        raise ValueError(f"out={str(out)!r} has suffix {out.suffix!r}: valid reports are .html or .pdf")
    if out.suffix.lower() == ".pdf":
        chromium_executable()  # fail before minutes of execution, not after
    original = read_notebook(notebook)
    nb = apply_overrides(original, overrides or {})
    check_report_size(notebook, original, overrides or {})
    log.info("executing %s", notebook)
    nb = execute_notebook(nb, cwd=notebook.resolve().parent, timeout_s=timeout_s)
    text = render_html(nb, title=notebook.stem.replace("_", " "), no_input=no_input)
    if out.suffix.lower() == ".pdf":
        return write_bytes(out, html_to_pdf(text))
    return write_text(out, text)  # temp file, fsync, rename: a failed write keeps the previous report
