"""The benchmark runner (``python -m benchmarks.run --quick``): the Markdown it writes has every section, each
with a paragraph and its tables, and the model-vs-counted byte differences it reports are all 0.

Reference: the layout ``benchmarks/run.py`` promises (sections, table headers) and the registry's list of ready
techniques; the byte check restates ``tests/llm/mesh_attention/test_attention_volume.py`` through the runner. Only the
structure is asserted, never a wall time or a speed ratio (those depend on the machine).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.registry import catalogue

REPO_ROOT = Path(__file__).resolve().parents[1]
TITLES = (
    "Summary",
    "Machine",
    "1. Blockwise attention vs SDPA (one process)",
    "2. Per-rank bytes: Mesh vs Ring (real multi-process runs)",
    "3. Model vs counted bytes",
    "Panel redraw latency",
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("bench") / "BENCHMARKS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out.read_text()


def split_sections(text: str) -> dict[str, str]:
    """``## title`` -> the text up to the next ``## `` heading."""
    sections = {}
    for chunk in text.split("\n## ")[1:]:
        title, _, body = chunk.partition("\n")
        sections[title.strip()] = body
    return sections


def parse_tables(body: str) -> list[list[dict[str, str]]]:
    """Every Markdown table in ``body`` as a list of rows (header -> cell)."""
    tables, block = [], []
    for line in body.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split(" | ")])
            continue
        if block:
            header, rule, *rows = block
            assert set("".join(rule)) <= {"-", "|"}, f"second table line is not a rule: {rule}"
            assert all(len(r) == len(header) for r in rows), f"ragged table under {header}"
            tables.append([dict(zip(header, r)) for r in rows])
            block = []
    return tables


@pytest.fixture(scope="module")
def sections(report: str) -> dict[str, str]:
    return split_sections(report)


def test_sections_in_order(report: str, sections: dict[str, str]) -> None:
    assert report.startswith("# Benchmarks\n")
    names = list(sections)
    assert names[: len(TITLES) - 1] == list(TITLES[:-1])  # other techniques' groups follow in registry order
    assert names[-1] == TITLES[-1]  # the panel latency of every technique comes last


@pytest.mark.parametrize("title", TITLES)
def test_section_has_paragraph_and_table(sections: dict[str, str], title: str) -> None:
    body = sections[title]
    tables = parse_tables(body)
    assert tables and all(tables), f"section {title!r} has no table with rows"
    if title != "Summary":
        paragraph = body.strip().split("\n\n")[0]
        assert not paragraph.startswith("|") and len(paragraph.split()) >= 20, f"section {title!r} lacks its paragraph"


def test_machine_header(sections: dict[str, str]) -> None:
    (table,) = parse_tables(sections["Machine"])
    items = {row["item"]: row["value"] for row in table}
    for key in (
        "command",
        "date",
        "CPU",
        "logical cores / torch threads",
        "memory",
        "Python",
        "torch",
        "numpy",
        "plotly",
    ):
        assert items.get(key) not in (None, ""), f"machine header lacks {key!r}"
    assert "benchmarks.run" in items["command"] and "--quick" in items["command"]


def test_kernel_table_covers_the_grid(sections: dict[str, str]) -> None:
    (table,) = parse_tables(sections[TITLES[2]])
    cases = {(r["dtype"], r["causal"], r["pass"]) for r in table}
    assert cases == {(d, c, p) for d in ("float32", "float64") for c in ("no", "yes") for p in ("fwd", "fwd+bwd")}
    for row in table:
        for key in ("ours (ms)", "SDPA (ms)", "ours / SDPA", "max abs diff"):
            value = float(row[key])
            assert math.isfinite(value) and value >= 0, f"{key}={row[key]!r} in {row}"


def test_bytes_table_has_ratio_and_reference(sections: dict[str, str]) -> None:
    (table,) = parse_tables(sections[TITLES[3]])
    assert {r["causal"] for r in table} == {"no", "yes"}
    for row in table:
        p = int(row["P"])
        assert float(row["(sqrt(P)+1)/2"]) == pytest.approx((math.sqrt(p) + 1) / 2, abs=0.006)
        assert float(row["Ring / Mesh"]) == pytest.approx(float(row["Ring (MB)"]) / float(row["Mesh (MB)"]), rel=0.01)


def test_model_matches_counted_bytes_exactly(sections: dict[str, str]) -> None:
    (table,) = parse_tables(sections[TITLES[4]])
    assert {"ring", "mesh"} <= {r["method"] for r in table}
    diff_columns = [k for k in table[0] if k.startswith("max abs(model - counted)")]
    assert len(diff_columns) == 2
    for row in table:
        assert [row[k] for k in diff_columns] == ["0", "0"], row
        assert row["counted max bytes/rank"] == row["model max bytes/rank"], row


def test_every_ready_panel_measured(sections: dict[str, str]) -> None:
    per_panel, per_control = parse_tables(sections[TITLES[5]])
    ready = [e.name for e in catalogue() if e.status == "ready"]
    assert [r["technique"] for r in per_panel] == ready
    for row in per_panel:
        assert int(row["changes"]) >= 2 and row["median < target"] in ("yes", "no")
    assert set(ready) == {r["technique"] for r in per_control}


def test_every_ready_technique_has_a_benchmark_group():
    from benchmarks.run import groups

    modules = {module.__name__ for _, module in groups()}
    for e in catalogue():
        if e.status == "ready":
            assert f"benchmarks.{e.area}.{e.package}" in modules, f"benchmarks/{e.area}/{e.package}.py is missing"
