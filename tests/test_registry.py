"""Technique registry: names, planned entries, clear errors (reference: the catalogue of eighteen papers)."""

import pytest

from workbench.registry import catalogue, get_technique, technique_names


def test_catalogue_has_eighteen_techniques_with_unique_names():
    names = [e.name for e in catalogue()]
    assert len(names) == 18 and len(set(names)) == 18


def test_ready_technique_resolves_with_config_runner_and_panel():
    t = get_technique("mesh-attention")
    assert t.name == "mesh-attention"
    assert t.config.specs()
    assert callable(t.run)
    assert t.panel_class().__name__.endswith("Panel")


def test_unknown_and_planned_names_give_clear_errors():
    with pytest.raises(ValueError, match="technique='nope' is unknown: valid techniques are mesh-attention"):
        get_technique("nope")
    with pytest.raises(ValueError, match="technique='refloat' is planned but not implemented yet"):
        get_technique("refloat")
    assert "mesh-attention" in technique_names(ready_only=True)
