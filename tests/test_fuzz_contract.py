"""Every parameter of every technique, fuzzed through the CLI entry (issue #29's contract).

A bad value (outside the range, at no choice, of the wrong type, NaN, +-inf, 1e400, huge integers, empty
strings, unicode, list separators, paths that are files, missing, unwritable or in /proc) must end the command
with exit 2 and one line that names the parameter: no traceback, no exit 1 (1 is for bugs), no run started.
Free-text parameters (paths, lists, graphs, circuits) are parsed by the technique itself: a run with such a
value may succeed (exit 0) or be refused (exit 2), never anything else.

Hypothesis draws the cases, derandomised (the same cases on every run) and bounded: a fast-lane sample of
every numeric, boolean and choice parameter, and in the slow lane more examples plus the free-text parameters
run for real at the technique's smoke settings. Every failure found is among the fixed texts (``SPECIAL``,
``TEXTS``), so it is tried on every run.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import cli
from workbench.config import ParamSpec
from workbench.registry import catalogue, get_technique

READY = [e.name for e in catalogue() if e.status == "ready"]

#: texts no parameter of any type accepts as a number
SPECIAL = ["nan", "NaN", "inf", "-inf", "+inf", "1e400", "-1e400", "", " ", "abc", "1,,3", "1;3", "é∂✓", "0x", "--"]
#: free-text values every path, list or name parameter must survive (exit 0 or 2)
TEXTS = [
    " ",
    "1,,3",
    "1;3",
    "nan",
    "inf",
    "1e400",
    "-0.0",
    "é∂✓",
    "\u202e",
    "a" * 300,
    "/etc/passwd",
    "/proc/nope",
    "/proc/nope/x.json",
    "/",
    "..",
]


def _flag_args(technique, values: dict) -> list[str]:
    specs = {s.name: s for s in technique.config.specs()}
    argv: list[str] = []
    for name, value in values.items():
        spec = specs[name]
        if spec.type is bool:
            argv.append(spec.flag if value else "--no-" + spec.flag[2:])
        else:
            argv += [spec.flag + "=" + str(value)]
    return argv


def run_cli(name: str, spec: ParamSpec, value: str, *, with_smoke: bool, timeout_s: int) -> tuple[int, str]:
    """``workbench run NAME [smoke flags] --PARAM=VALUE --json`` in this process: (exit code, stderr)."""
    technique = get_technique(name)
    smoke = {k: v for k, v in technique.smoke.items() if k != spec.name} if with_smoke else {}
    argv = ["run", name, *_flag_args(technique, smoke), f"{spec.flag}={value}", "--json"]
    err, out = io.StringIO(), io.StringIO()

    def expire(signum, frame):
        raise TimeoutError(f"workbench {' '.join(argv)} ran over {timeout_s} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(timeout_s)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = cli.main(argv)
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, err.getvalue()


def refused(spec: ParamSpec, value: str) -> bool:
    """Whether the declared parameter refuses ``value`` (the cases the CLI must refuse before any work)."""
    try:
        spec.check(value)
    except ValueError:
        return True
    return False


def bad_texts(spec: ParamSpec) -> st.SearchStrategy[str]:
    """Texts for one typed parameter: specials, out-of-range and huge numbers, random text."""
    numbers = st.one_of(
        st.integers(min_value=-(10**40), max_value=10**40).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from([spec.lo, spec.hi]).filter(lambda x: x is not None).map(lambda x: repr(x * 10 + 1)),
    )
    return st.one_of(st.sampled_from(SPECIAL), numbers, st.text(max_size=12))


def _checked_specs(name: str) -> list[ParamSpec]:
    return [s for s in get_technique(name).config.specs() if s.type is not str or s.choices is not None]


def _assert_refused_in_one_line(name: str, spec: ParamSpec, value: str, code: int, err: str) -> None:
    case = f"workbench run {name} {spec.flag}={value!r}"
    assert code == 2, f"{case}: exit {code}, not 2: {err[-500:]}"
    assert "Traceback" not in err, f"{case}: printed a traceback: {err[-800:]}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"{case}: {len(lines)} lines on stderr, not one: {err[-800:]}"
    assert spec.name in lines[0] or spec.flag in lines[0], f"{case}: the message does not name the parameter: {err}"


def _fuzz_typed(name: str, max_examples: int) -> None:
    specs = _checked_specs(name)
    if not specs:
        pytest.skip(f"{name} has no typed parameter")

    @settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def check(data):
        spec = data.draw(st.sampled_from(specs), label="parameter")
        value = data.draw(bad_texts(spec).filter(lambda v: refused(spec, v)), label="value")
        code, err = run_cli(name, spec, value, with_smoke=False, timeout_s=30)
        _assert_refused_in_one_line(name, spec, value, code, err)

    check()


@pytest.mark.parametrize("name", READY)
def test_typed_parameters_refuse_bad_values_in_one_line(name):
    """Fast lane: 25 drawn cases per technique, each refused before any work."""
    _fuzz_typed(name, max_examples=25)


@pytest.mark.slow
@pytest.mark.parametrize("name", READY)
def test_typed_parameters_refuse_bad_values_in_one_line_many(name):
    """Slow lane: 200 drawn cases per technique."""
    _fuzz_typed(name, max_examples=200)


@pytest.mark.slow
@pytest.mark.parametrize("name", READY)
def test_every_special_number_is_refused_by_every_numeric_parameter(name):
    """Each special text against each numeric parameter, exhaustively (they are cheap: refused up front)."""
    for spec in _checked_specs(name):
        if spec.type not in (int, float):
            continue
        for value in ("nan", "inf", "-inf", "1e400", "", "1,,3", "9" * 400):
            assert refused(spec, value), f"{name}: {spec.name} accepts {value!r}"
            _assert_refused_in_one_line(name, spec, value, *run_cli(name, spec, value, with_smoke=False, timeout_s=30))


def _free_text_cases() -> list[tuple[str, str]]:
    return [
        (name, s.name)
        for name in READY
        for s in get_technique(name).config.specs()
        if s.type is str and s.choices is None
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "param"), _free_text_cases())
def test_free_text_parameters_run_or_refuse_never_crash(name, param, tmp_path):
    """Paths, lists, graphs and circuits given odd text, a file where a folder is due, a folder where a file is
    due, an unwritable place: exit 0 or 2, no traceback, within a minute at the smoke settings."""
    spec = next(s for s in get_technique(name).config.specs() if s.name == param)
    a_file = tmp_path / "a_file.txt"
    a_file.write_text("not what was asked for\n")
    failures = []
    for value in [*TEXTS, str(a_file), str(tmp_path)]:
        cwd = os.getcwd()
        os.chdir(tmp_path)  # a run that writes relative paths writes here
        try:
            code, err = run_cli(name, spec, value, with_smoke=True, timeout_s=120)
        except Exception as exc:  # noqa: BLE001 - escaped the CLI: a traceback for the user
            code, err = -1, f"Traceback: {type(exc).__name__}: {exc}"
        finally:
            os.chdir(cwd)
        lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
        if code not in (0, 2) or "Traceback" in err or (code == 2 and len(lines) != 1):
            failures.append(f"{spec.flag}={value[:40]!r}: exit {code}: {err.strip()[-300:]}")
    assert not failures, f"workbench run {name}:\n" + "\n".join(failures)


def test_the_contract_sees_every_kind_of_parameter():
    """The fuzz covers ints, floats, bools, choices and free text somewhere in the registry."""
    kinds = set()
    for name in READY:
        for s in get_technique(name).config.specs():
            kinds.add("choice" if s.choices is not None else s.type.__name__)
    assert kinds >= {"int", "float", "bool", "choice", "str"}
    assert math.isinf(float("1e400"))  # why 1e400 is among the specials
    assert Path("/proc/nope").exists() is False
