"""The claim contract over the registry: every technique states its claims as data, and every verdict is computed.

Reference: issue #24's contract (every technique has a claim, every claim every field, every inferred assumption a
range and a sweep, evidence that exists, no verdict typed in a study or a notebook) and the committed scoreboard
(VERDICTS.md / VERDICTS.json) regenerated here.
"""

import json
import re
import time
import typing
from pathlib import Path

import nbformat
import pytest

from workbench import claims
from workbench.registry import catalogue

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = [e.name for e in catalogue() if e.status == "ready"]
STATUSES = set(typing.get_args(claims.Status))

#: a verdict typed as a string literal: what only the claim rule may produce
TYPED_VERDICT = re.compile(
    r"""["'](reproduced|not reproduced|refuted|only under stated conditions|only the direction|partly)\b""",
    re.IGNORECASE,
)


@pytest.mark.parametrize("name", READY)
def test_every_technique_has_claims_with_every_field(name):
    found = claims.claims_of(name)
    assert found, f"{name} has no claims (workbench/<area>/{name.replace('-', '_')}/claims.py: CLAIMS)"
    keys = [c.key for c in found]
    assert len(set(keys)) == len(keys), f"{name}: claim keys repeat: {keys}"
    for c in found:
        assert c.technique == name, f"{c.key}: technique={c.technique!r}, expected {name!r}"
        assert c.text and c.paper_source and c.baseline.name and c.baseline.why, c.key
        assert callable(c.measure)
        for a in c.assumptions:
            assert a.why, f"{name}.{c.key}: assumption {a.name} says nowhere where its value comes from"


@pytest.mark.parametrize("name", READY)
def test_evidence_exists(name):
    for c in claims.claims_of(name):
        for ev in c.evidence:
            path, _, test = ev.partition("::")
            file = REPO_ROOT / path
            assert file.is_file(), f"{name}.{c.key}: evidence {path} does not exist"
            if test:
                func = test.split("[")[0].split("::")[-1]
                assert re.search(rf"def {re.escape(func)}\b", file.read_text()), (
                    f"{name}.{c.key}: evidence {ev}: no function {func} in {path}"
                )


def _studies() -> list[Path]:
    return sorted((REPO_ROOT / "workbench").rglob("study.py"))


@pytest.mark.parametrize("path", _studies(), ids=lambda p: str(p.relative_to(REPO_ROOT / "workbench")))
def test_no_study_types_a_verdict(path):
    text = path.read_text()
    assert "PAPER_CLAIMS" not in text, f"{path}: the paper's claims live in claims.py"
    hits = TYPED_VERDICT.findall(text)
    assert not hits, f"{path} types verdicts {hits}: verdicts come from workbench.claims"


NOTEBOOKS = sorted(p for p in (REPO_ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO_ROOT / "notebooks")))
def test_no_notebook_types_a_verdict(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    hits = TYPED_VERDICT.findall(code)
    assert not hits, f"{path.name} types verdicts {hits} in code: use workbench.claims.table"


# ---- the quick grid in the fast lane, for the techniques whose claims read a model or a recorded figure -------
#: cold quick-grid evaluation measured under 3 s each (workbench.claims.scoreboard, one process per technique);
#: the others (GreedySnake's DES ~60 s, CFP's ILPs ~100 s, DawnPiper's max-batch searches ~150 s, and SRT,
#: Redox, pulse-sim, GNNPipe and ReFloat at 5-9 s) are evaluated in the slow lane below
LIGHT = ("mesh-attention", "devices", "quest", "napa", "robuststate", "qgas", "pulse-zne", "hybrid-qaoa", "topgen",
         "dwarvesgraph", "kudu", "fiited")  # fmt: skip


@pytest.mark.parametrize("name", LIGHT)
def test_quick_grid_of_a_light_technique(name):
    for ev in claims.scoreboard(name):
        assert ev.verdict.status in STATUSES
        assert "evidence failed" not in ev.verdict.detail, f"{name}.{ev.claim.key}: {ev.verdict}"
        if ev.at_source is not None:
            assert set(ev.sweeps) == {a.name for a in ev.claim.inferred}


# ---- evaluation (slow lane): the whole scoreboard once ------------------------------------------------------
@pytest.fixture(scope="module")
def evaluated():
    times = {}
    out = []
    for name in READY:
        t = time.perf_counter()
        out += claims.scoreboard(name)
        times[name] = time.perf_counter() - t
    print("quick scoreboard seconds per technique:", {k: round(v, 1) for k, v in times.items()})
    return tuple(out)


@pytest.mark.slow
def test_every_claim_evaluates_with_a_computed_verdict(evaluated):
    for ev in evaluated:
        assert ev.verdict.status in STATUSES
        assert "evidence failed" not in ev.verdict.detail, f"{ev.claim.technique}.{ev.claim.key}: {ev.verdict}"
        if ev.at_source is not None:
            assert set(ev.sweeps) == {a.name for a in ev.claim.inferred}


@pytest.mark.slow
def test_committed_scoreboard_is_current(evaluated):
    assert (REPO_ROOT / "VERDICTS.md").read_text() == claims.document(evaluated), (
        "VERDICTS.md is stale: run workbench claims --write"
    )
    committed = json.loads((REPO_ROOT / "VERDICTS.json").read_text())
    assert committed == claims.records(evaluated), "VERDICTS.json is stale: run workbench claims --write"
