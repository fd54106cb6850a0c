"""Report parameters: -p parsing and injection after the `parameters` cell (reference: papermill's convention)."""

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
