"""Every notebook: stored clean, and executes top to bottom with its small (smoke) parameters.

Reference: nbformat's schema and nbclient execution in a fresh python3 kernel. A notebook's smoke
parameters live in its metadata (``workbench.smoke``) and are injected after its ``parameters`` cell,
exactly as ``workbench report -p`` does.

Where the browser tests can run (Debian's Chromium and playwright present, as in CI), a ready technique's
notebook is executed there instead, in JupyterLab with the same smoke parameters and the same check that no
cell fails (``tests/browser/test_notebooks_in_lab.py``), so that CI does not run it twice; a notebook with a
``DATA_DIR`` parameter (the lab copy overrides it) and every other notebook still run here.
"""

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

from workbench.registry import catalogue, get_technique
from workbench.report import apply_overrides, execute_notebook, parameter_names

REPO_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").rglob("*.ipynb"))
NOTEBOOKS = [p for p in NOTEBOOKS if ".ipynb_checkpoints" not in p.parts]


def _run_in_lab(path: Path, nb) -> bool:
    """Whether ``tests/browser/test_notebooks_in_lab.py`` executes this notebook with the same parameters."""
    ready = {get_technique(e.name).notebook for e in catalogue() if e.status == "ready"}
    browser = Path("/usr/bin/chromium").is_file() and importlib.util.find_spec("playwright") is not None
    relative = str(path.relative_to(REPO_ROOT))
    return browser and relative in ready and "DATA_DIR" not in parameter_names(nb)


def _id(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT / "notebooks"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_notebook_is_stored_without_outputs_or_widget_state(path):
    raw = json.loads(path.read_text())
    assert "widgets" not in raw["metadata"], "widget state must not be committed"
    assert raw["metadata"].get("kernelspec", {}).get("name") == "python3", "kernelspec python3 avoids a kernel dialog"
    for cell in raw["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"outputs stored in {path.name}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_notebook_runs_top_to_bottom_with_small_parameters(path):
    nb = nbformat.read(path, as_version=4)
    smoke = nb.metadata.get("workbench", {}).get("smoke", {})
    assert set(smoke) <= set(parameter_names(nb)), "smoke parameters must be names of the parameters cell"
    if _run_in_lab(path, nb):
        pytest.skip("executed in JupyterLab by tests/browser/test_notebooks_in_lab.py (same smoke parameters)")
    nb = apply_overrides(nb, smoke)
    executed = execute_notebook(nb, cwd=path.parent, timeout_s=600, export=False)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_index_links_every_ready_technique_notebook():
    index = (REPO_ROOT / "notebooks" / "index.ipynb").read_text()
    for entry in catalogue():
        if entry.status == "ready":
            notebook = get_technique(entry.name).notebook
            assert (REPO_ROOT / notebook).is_file(), notebook
            assert notebook.removeprefix("notebooks/") in index, f"index.ipynb does not link {notebook}"
