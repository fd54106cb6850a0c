"""Git's clean filter for the stored notebooks: outputs, execution counts and widget state are left out.

``workbench lab`` registers it in the checkout (``git config filter.workbench-notebooks.clean``), and
``.gitattributes`` applies it to ``notebooks/**/*.ipynb``: the notebook a user ran keeps its outputs on disk,
while what git sees stays the clean stored copy, so an autosave never makes the clone dirty.
Reads a notebook on stdin, writes the clean one on stdout (``python -m workbench.notebook_filter``).
"""

from __future__ import annotations

import sys

import nbformat

__all__ = ["clean_notebook", "main"]


def clean_notebook(text: str) -> str:
    """The notebook ``text`` without outputs, execution counts or widget state (nbformat's layout)."""
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    return nbformat.writes(nb) + "\n"


def main() -> int:
    text = sys.stdin.read()
    try:
        sys.stdout.write(clean_notebook(text))
    except Exception:  # not a notebook git can parse: pass it through unchanged rather than lose it
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
