"""`workbench report NOTEBOOK --out FILE.pdf` prints the offline report to PDF in headless Chromium.

Reference: poppler's ``pdftoppm`` renders the first pages to images, which must not be blank (a page of the
report has text and a drawn figure: many distinct grey levels); ``pdfinfo``-free page count from pdftoppm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_notebook import smoke_parameters, write_fixture_notebook

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]


def _pgm_pixels(path: Path) -> bytes:
    """The pixel bytes of a binary PGM (P5) file."""
    data = path.read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval
        while data[pos : pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    return data[pos + 1 :]


def test_pdf_report_has_pages_with_text_and_figures(chromium_path, tmp_path):
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm is missing: apt-get install -y poppler-utils")
    notebook = write_fixture_notebook(tmp_path / "fixture" / "slider_fixture.ipynb")
    out = tmp_path / "report.pdf"
    argv = [sys.executable, "-m", "workbench.cli", "report", str(notebook), "--out", str(out)]
    for name, value in smoke_parameters(notebook).items():
        argv += ["-p", f"{name}={value!r}"]
    done = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "WORKBENCH_CHROMIUM": str(chromium_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_bytes()[:5] == b"%PDF-"
    subprocess.run(
        ["pdftoppm", "-gray", "-r", "40", "-f", "1", "-l", "2", str(out), str(tmp_path / "page")],
        check=True,
        timeout=120,
    )
    pages = sorted(tmp_path.glob("page-*.pgm"))
    assert pages, "no page rendered"
    first = _pgm_pixels(pages[0])
    assert len(set(first)) > 16, "the first page is blank"
    assert sum(1 for b in first if b < 200) > len(first) // 200, "the first page has almost no ink"


def test_a_pdf_needs_a_browser_and_says_so_before_executing(tmp_path, monkeypatch):
    from workbench import report

    monkeypatch.setattr(report, "CHROMIUM_PATHS", ())
    monkeypatch.delenv("WORKBENCH_CHROMIUM", raising=False)
    with pytest.raises(FileNotFoundError, match="a PDF report needs a Chromium browser"):
        report.export_report(tmp_path / "missing.ipynb", tmp_path / "out.pdf")
    with pytest.raises(ValueError, match=r"out='.*out.docx' has suffix '.docx': valid reports are .html or .pdf"):
        report.export_report(tmp_path / "missing.ipynb", tmp_path / "out.docx")


def test_pdf_wraps_long_code_lines_instead_of_cutting_them(chromium_path, tmp_path, monkeypatch):
    """A code line and an output line far wider than A4 both reach the page in full (wrapped): their last
    words are in the PDF's text (pdftotext), which a cut line (overflow on a scroll box) would lose."""
    import nbformat

    from workbench.report import render_html

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext is missing: apt-get install -y poppler-utils")
    monkeypatch.setenv("WORKBENCH_CHROMIUM", str(chromium_path))
    code = "table = " + " + ".join(f"f'| {{row{i}:>8}} |'" for i in range(30)) + "  # CODE_TAIL"
    output = "OUTPUT_HEAD" + "x" * 300 + "OUTPUT_TAIL\n"
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Long lines"),
            nbformat.v4.new_code_cell(
                code, execution_count=1, outputs=[nbformat.v4.new_output("stream", name="stdout", text=output)]
            ),
        ]
    )
    pdf, page = tmp_path / "long.pdf", tmp_path / "long.html"
    page.write_text(render_html(nb, "long lines"))
    # in a process of its own, as the other PDF test: playwright's sync API refuses to start inside the event loop
    # another browser test of this worker may have left running
    script = (
        "import sys, pathlib; from workbench.report import html_to_pdf; "
        "pathlib.Path(sys.argv[2]).write_bytes(html_to_pdf(pathlib.Path(sys.argv[1]).read_text()))"
    )
    subprocess.run([sys.executable, "-c", script, str(page), str(pdf)], check=True, timeout=300, cwd=REPO_ROOT)
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True, timeout=120).stdout
    joined = text.replace("\n", "")  # a wrap may fall inside a word
    assert "CODE_TAIL" in joined and "OUTPUT_TAIL" in joined, text
