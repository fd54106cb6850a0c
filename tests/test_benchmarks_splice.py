"""``python -m benchmarks.run --only GROUP`` replaces that group's sections of BENCHMARKS.md in place.

Reference: a hand-written three-section file; the splice must replace exactly the block of the same title (and its
summary row), mark it as re-run alone, append an unknown section, and leave every other byte of the file as it was.
"""

from __future__ import annotations

from benchmarks.common import Section, Table
from benchmarks.run import splice

FILE = """# Benchmarks

Preamble.

## Summary

| headline | value |
|---|---|
| A speed | 1.0x |
| B speed | 2.0x |

## Machine

cores 2

## A

old A text

| x |
|---|
| 1 |

## B

old B text
"""


def test_only_the_named_section_and_its_summary_row_change() -> None:
    fresh = Section(title="A", intro="new A text", tables=(Table(headers=("x",), rows=(("9",),)),),
                    summary=(("A speed", "3.5x"),))  # fmt: skip
    out = splice(FILE, [fresh], note="re-run alone")
    assert "old A text" not in out and "new A text" in out and "| 9 |" in out
    assert "_re-run alone_" in out.split("## A")[1]
    assert "| A speed | 3.5x |" in out and "| B speed | 2.0x |" in out and "| A speed | 1.0x |" not in out
    # everything else is byte for byte the same
    assert out.split("## A")[0].replace("3.5x", "1.0x") == FILE.split("## A")[0]
    assert out.split("## B")[1] == FILE.split("## B")[1]


def test_an_unknown_section_is_appended_with_its_summary_row() -> None:
    out = splice(FILE, [Section(title="C", intro="c", summary=(("C speed", "4x"),))], note="n")
    assert out.rstrip().endswith("c") and out.index("## C") > out.index("## B")
    assert "| C speed | 4x |" in out.split("## Machine")[0]
