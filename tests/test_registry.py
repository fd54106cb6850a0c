"""Technique registry: names, planned entries, clear errors (reference: the catalogue of eighteen papers)."""

import pytest

from workbench.registry import catalogue, get_technique, technique_names


PAPER_TECHNIQUES = {
    "mesh-attention", "greedysnake", "srt", "redox", "cfp", "dawnpiper", "quest", "napa", "robuststate", "qgas",
    "pulse-zne", "hybrid-qaoa", "topgen", "gnnpipe", "dwarvesgraph", "kudu", "fiited", "refloat",
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
    with pytest.raises(ValueError, match="technique='greedysnake' is planned but not implemented yet"):
        get_technique("greedysnake")
    assert "mesh-attention" in technique_names(ready_only=True)
