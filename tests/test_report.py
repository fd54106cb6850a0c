"""Report parameters: -p parsing and injection after the `parameters` cell (reference: papermill's convention)."""

import re

import nbformat
import pytest

from workbench.report import apply_overrides, parameter_names, parse_overrides, read_notebook


def notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# t"),
        nbformat.v4.new_code_cell("GPUS = 4\nNAME: str = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("print(GPUS)"),
    ]
    return nb


def test_parse_overrides_takes_literals_else_strings():
    assert parse_overrides(["GPUS=16", "CAUSAL=False", "NAME=ring", "X=[1, 2]"]) == {
        "GPUS": 16,
        "CAUSAL": False,
        "NAME": "ring",
        "X": [1, 2],
    }
    with pytest.raises(ValueError, match="-p 'GPUS' is malformed: expected NAME=VALUE"):
        parse_overrides(["GPUS"])


def test_overrides_are_injected_after_the_parameters_cell():
    nb = apply_overrides(notebook(), {"GPUS": 16})
    assert parameter_names(nb) == ["GPUS", "NAME"]
    assert nb.cells[2].source.endswith("GPUS = 16") and "injected-parameters" in nb.cells[2].metadata["tags"]
    assert len(notebook().cells) == 3  # the original is not changed


def test_unknown_parameter_names_the_valid_ones():
    with pytest.raises(ValueError, match="-p SEQ: the notebook has no such parameter; valid parameters are GPUS, NAME"):
        apply_overrides(notebook(), {"SEQ": 1})


def test_unreadable_notebook_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="is not a readable .ipynb file"):
        read_notebook(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_notebook(tmp_path / "missing.ipynb")


@pytest.mark.slow
def test_a_failing_notebook_gives_one_plain_line(tmp_path):
    """The error names the exception without the terminal colour codes of IPython's traceback."""
    import nbformat

    from workbench.report import export_report

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("X = 1", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("raise ValueError('bad thing')"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ValueError) as info:
        export_report(path, tmp_path / "out.html")
    assert str(info.value) == "the notebook failed while executing: ValueError: bad thing"


def executed_notebook():
    """A notebook as it is after execution: a story, a code cell with a long line, and its output."""
    nb = nbformat.v4.new_notebook()
    code = "rows = [f'| {i:>4} | {i * i:>8} |' for i in range(3)]  # SECRET_SOURCE\nprint(*rows, sep='\\n')"
    nb.cells = [
        nbformat.v4.new_markdown_cell("# The story\nWhat the figure shows."),
        nbformat.v4.new_code_cell(
            code,
            execution_count=1,
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="|    0 |        0 |\n")],
        ),
    ]
    return nb


def test_no_input_report_has_the_story_and_outputs_but_no_code():
    """As nbconvert's --no-input: no cell source, no prompts; the Markdown and the outputs stay."""
    from workbench.report import render_html

    full = render_html(executed_notebook(), "t")
    assert "SECRET_SOURCE" in full and "input_area" in full
    bare = render_html(executed_notebook(), "t", no_input=True)
    body = bare.split("</head>")[1]
    assert "SECRET_SOURCE" not in body and "print" not in body
    assert "input_area" not in body and "In&nbsp;[" not in body and "In [" not in body
    assert "The story" in bare and "What the figure shows." in bare and "|    0 |        0 |" in bare
    assert bare.count("plotly.js v") == 1  # still offline: plotly.js inlined once


def test_printed_code_wraps_instead_of_running_off_the_page():
    """In print (the A4 PDF) every <pre> (input code and text output) wraps, even inside a long word."""
    from workbench.report import render_html

    head = render_html(executed_notebook(), "t").split("</style>")[0]
    print_rules = head[head.index("@media print") :]
    pre_rule = re.search(r"(?<![\w.-])pre\s*\{([^}]*)\}", print_rules)
    assert pre_rule, print_rules
    assert "white-space: pre-wrap" in pre_rule.group(1) and "overflow-wrap: anywhere" in pre_rule.group(1)


@pytest.mark.slow
def test_cli_report_no_input_leaves_the_code_out(tmp_path, capsys):
    """`workbench report NB --out F.html --no-input` executes the notebook and writes outputs without sources."""
    from workbench.cli import main

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Fixture story"),
            nbformat.v4.new_code_cell("N = 3", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("print('total', sum(range(N)))  # SECRET_SOURCE"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "fixture.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--out", str(out), "-p", "N=5", "--no-input"]) == 0, capsys.readouterr().err
    body = out.read_text(encoding="utf-8").split("</head>")[1]
    assert "total 10" in body and "Fixture story" in body
    assert "SECRET_SOURCE" not in body and "N = 5" not in body and "input_area" not in body


def test_report_sized_before_a_kernel_starts(tmp_path, monkeypatch, capsys):
    """#29: `-p LAYERS=...` on a technique's notebook is estimated as `workbench run` estimates it; over the
    available memory the report is refused (exit 2, the CLI's one line) before any kernel starts."""
    from pathlib import Path

    import workbench.memory as memory
    import workbench.report as report
    from workbench.cli import main, run_sized
    from workbench.registry import get_technique

    notebook = Path(__file__).resolve().parents[1] / "notebooks" / "llm" / "greedysnake.ipynb"
    assert report.notebook_technique(notebook) == "greedysnake"
    config = report.notebook_config(read_notebook(notebook), "greedysnake", {"LAYERS": 2})
    assert config is not None and config.layers == 2

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel started")

    monkeypatch.setattr(report, "execute_notebook", no_kernel)
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(ValueError) as cli:
        run_sized("greedysnake", config)
    assert main(["report", str(notebook), "--out", str(tmp_path / "r.html"), "-p", "LAYERS=2"]) == 2
    err = capsys.readouterr().err.strip()
    assert str(cli.value) in err and len(err.splitlines()) == 1 and not (tmp_path / "r.html").exists()
    assert get_technique("greedysnake").config is type(config)


def test_report_sizing_skips_notebooks_it_cannot_map(monkeypatch):
    from pathlib import Path

    import workbench.memory as memory
    import workbench.report as report

    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    root = Path(__file__).resolve().parents[1] / "notebooks"
    mesh = root / "llm" / "mesh_attention.ipynb"
    nb = read_notebook(mesh)
    report.check_report_size(mesh, nb, {"CHECK_GPUS": 4})  # a view's parameter, not a config field: skipped
    assert report.notebook_technique(root / "index.ipynb") is None
    report.check_report_size(root / "index.ipynb", read_notebook(root / "index.ipynb"), {"X": 1})
    with pytest.raises(ValueError, match="is available"):
        report.check_report_size(mesh, nb, {"CAUSAL": True})
