"""Technique registry: names, planned entries, clear errors (reference: the catalogue of eighteen papers)."""

import re

import pytest

from workbench.registry import catalogue, get_technique, technique_names

PAPER_TECHNIQUES = {
    "mesh-attention",
    "greedysnake",
    "srt",
    "redox",
    "cfp",
    "dawnpiper",
    "quest",
    "napa",
    "robuststate",
    "qgas",
    "pulse-zne",
    "hybrid-qaoa",
    "topgen",
    "gnnpipe",
    "dwarvesgraph",
    "kudu",
    "fiited",
    "refloat",
}


def test_catalogue_has_the_eighteen_paper_techniques_with_unique_names():
    names = [e.name for e in catalogue()]
    assert PAPER_TECHNIQUES <= set(names) and len(names) == len(set(names))


def test_ready_technique_resolves_with_config_runner_and_panel():
    t = get_technique("mesh-attention")
    assert t.name == "mesh-attention"
    assert t.config.specs()
    assert callable(t.run)
    assert t.panel_class().__name__.endswith("Panel")


def test_unknown_and_planned_names_give_clear_errors():
    with pytest.raises(ValueError, match="technique='nope' is unknown: valid techniques are mesh-attention"):
        get_technique("nope")
    import workbench.registry as registry

    planned = registry.CatalogueEntry("not-yet", "llm", "a planned technique")  # no module: planned
    by_name = dict(registry._BY_NAME, **{"not-yet": planned})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(registry, "_BY_NAME", by_name)
        with pytest.raises(ValueError, match="technique='not-yet' is planned but not implemented yet"):
            get_technique("not-yet")
    assert "mesh-attention" in technique_names(ready_only=True)


def test_readme_and_index_hold_the_generated_technique_table():
    from pathlib import Path

    from workbench.registry import markdown_table

    root = Path(__file__).resolve().parents[1]
    assert markdown_table() in (root / "README.md").read_text(), (
        "README table differs: paste `workbench list --markdown`"
    )
    import nbformat

    index = nbformat.read(root / "notebooks" / "index.ipynb", as_version=4)
    assert markdown_table("notebooks/") in index.cells[0].source, (
        "index.ipynb table differs: `workbench list --markdown notebooks/`"
    )


def test_aliases_resolve_to_one_technique():
    assert get_technique("pattern-count") is get_technique("dwarvesgraph")
    assert [e.name for e in catalogue()].count("pattern-count") == 0


def test_a_technique_summary_is_declared_once_in_the_catalogue():
    import dataclasses

    from workbench.registry import Technique

    assert "summary" not in {f.name for f in dataclasses.fields(Technique)}
    for e in catalogue():
        if e.status == "ready":
            assert get_technique(e.name).summary == e.summary
            # a summary says what the technique does; results ("100x faster") are claims with verdicts
            assert not re.search(r"\d+\s*x\b|faster|reproduc", e.summary), e.summary
