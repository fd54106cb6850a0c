"""The contract every registered technique keeps (as scikit-learn's ``parametrize_with_checks`` for estimators).

A technique gets these tests by registering in ``workbench/registry.py``: its name and package agree with the
catalogue; its config builds at the defaults and refuses unknown keys and out-of-range values with the
standard message; ``workbench run NAME --help`` lists every parameter; its smoke run returns a typed result
whose JSON round-trips and whose table prints; its panel builds live and static, and every control changes
some figure; its notebook exists, is stored clean and is linked from the index and the README.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from widgets.live_figure import figure_bundle
from workbench.cli import _technique_parser
from workbench.config import ParamSpec
from workbench.registry import catalogue, get_technique
from workbench.results import Result

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = [e for e in catalogue() if e.status == "ready"]
IDS = [e.name for e in READY]


def _bad_value(spec: ParamSpec):
    """A value outside ``spec``'s range or choices (None when every value of its type is valid)."""
    if spec.choices is not None:
        return "no-such-choice" if spec.type is str else None
    if spec.type is int and spec.lo is not None:
        return int(math.floor(spec.lo)) - 1
    if spec.type is float and spec.lo is not None:
        return spec.lo - abs(spec.lo) - 1.0
    if spec.type in (int, float) and spec.hi is not None:
        return spec.hi + abs(spec.hi) + 1
    return None


@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_name_module_and_files_follow_the_technique_shape(entry):
    technique = get_technique(entry.name)
    assert technique.name == entry.name
    package = f"workbench.{entry.area}.{entry.package}."
    assert entry.module.startswith(package), f"{entry.module} is not in {package}"
    assert technique.panel.startswith(f"widgets.{entry.area}.{entry.package}:")
    assert technique.notebook == f"notebooks/{entry.area}/{entry.package}.ipynb"
    for path in (
        f"workbench/{entry.area}/{entry.package}/config.py",
        f"workbench/{entry.area}/{entry.package}/runner.py",
        f"workbench/{entry.area}/{entry.package}/study.py",
        f"widgets/{entry.area}/{entry.package}.py",
        technique.notebook,
    ):
        assert (REPO_ROOT / path).is_file(), f"{entry.name}: {path} is missing"
    assert (REPO_ROOT / "tests" / entry.area / entry.package).is_dir()
    for alias in entry.aliases:
        assert get_technique(alias) is technique


@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_config_defaults_build_and_bad_values_are_refused_in_the_standard_words(entry):
    config = get_technique(entry.name).config
    assert config() == config.from_dict({})
    with pytest.raises(ValueError, match=r"unknown parameter 'no_such_parameter': valid parameters are "):
        config.from_dict({"no_such_parameter": 1})
    checked = 0
    for spec in config.specs():
        bad = _bad_value(spec)
        if bad is None:
            continue
        words = "is not allowed: valid values are" if spec.choices is not None else "is out of range: valid range is"
        with pytest.raises(ValueError, match=rf"^{spec.name}=.* {words}"):
            config.from_dict({spec.name: bad})
        checked += 1
    assert checked, "no parameter has a range or choices to check"


@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_run_help_lists_every_parameter(entry):
    text = _technique_parser(entry.name).format_help()
    for spec in get_technique(entry.name).config.specs():
        assert spec.flag in text, f"{spec.flag} missing from `workbench run {entry.name} --help`"


@pytest.mark.slow
@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_smoke_run_gives_a_typed_result_whose_json_round_trips(entry):
    technique = get_technique(entry.name)
    assert technique.smoke, f"{entry.name}: TECHNIQUE.smoke is empty"
    result = technique.run(technique.config.from_dict(technique.smoke))
    assert isinstance(result, Result), f"{entry.name}: run() returned {type(result).__name__}, not a Result"
    data = result.to_json()
    text = json.dumps(data)
    assert json.dumps(json.loads(text)) == text, "the JSON does not round-trip"
    table = technique.format_table(data)
    assert isinstance(table, str) and table.strip()


def _figure_state(panel) -> str:
    states = []
    for fig in panel.figures:
        plain = fig.to_plotly_json()
        plain.get("layout", {}).pop("template", None)
        states.append(json.dumps(plain, sort_keys=True, default=str))
    return "\n".join(states)


def _assert_views_show_the_figures(panel) -> None:
    """What each live figure's view holds (the browser draws it) is the figure as Python holds it."""
    for i, fig in enumerate(panel.figures):
        (item,) = fig.output.outputs
        assert item["data"] == figure_bundle(fig), f"{type(panel).__name__}: figure {i}'s view is stale"


def _other_values(widget) -> list:
    """Values a control can move to, other than its current one (a few, from both ends)."""
    value = widget.value
    if hasattr(widget, "options") and widget.options:
        options = [o[1] if isinstance(o, tuple) else o for o in widget.options]
        return [o for o in (options[0], options[-1], *options[1:-1]) if o != value][:4]
    if isinstance(value, bool):
        return [not value]
    if hasattr(widget, "min") and hasattr(widget, "max"):
        span = widget.max - widget.min
        picks = [widget.min, widget.max, widget.min + span / 2]
        if isinstance(value, int):
            picks = [int(p) for p in picks] + [value + 1, value - 1]
        return [p for p in picks if p != value and widget.min <= p <= widget.max][:4]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_panel_builds_live_and_static_and_every_control_changes_a_figure(entry):
    cls = get_technique(entry.name).panel_class()
    static = cls(static=True)
    assert static.static_html().strip()
    panel = cls(static=False)
    assert panel.error is None, panel.error
    assert panel.figures
    dead, checked = [], 0
    for name, widget in panel.controls.items():
        candidates = _other_values(widget)  # none for free text; a hidden control is driven by other widgets
        if not candidates or widget.layout.display == "none":
            continue
        checked += 1
        start_value, start_state = widget.value, _figure_state(panel)
        changed = False
        for value in candidates:
            widget.value = value
            _assert_views_show_the_figures(panel)
            if panel.error is None and _figure_state(panel) != start_state:
                changed = True
                break
        if not changed:
            dead.append(name)
        widget.value = start_value
    assert checked and not dead, f"{entry.name}: moving these controls changes no figure: {dead}"


@pytest.mark.parametrize("entry", READY, ids=IDS)
def test_notebook_is_linked_from_the_index_and_the_readme(entry):
    notebook = get_technique(entry.name).notebook
    assert (REPO_ROOT / notebook).is_file()
    assert notebook.removeprefix("notebooks/") in (REPO_ROOT / "notebooks" / "index.ipynb").read_text()
    assert notebook in (REPO_ROOT / "README.md").read_text()


@pytest.mark.parametrize("entry", READY, ids=IDS)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_panel_starts_at_the_values_it_was_given(entry):
    """A panel built with no arguments shows its defaults, and one built with a value shows that value (a control
    whose options are narrowed while the panel is built must keep its value)."""
    cls = get_technique(entry.name).panel_class()
    panel = cls(static=False)
    defaults = {**{s.name: s.default for s in panel.specs.values()}, **panel.panel_defaults()}
    moved = {name: (value, defaults[name]) for name, value in panel.values().items() if value != defaults[name]}
    assert not moved, f"{entry.name}: controls start away from their defaults (shown, default): {moved}"
