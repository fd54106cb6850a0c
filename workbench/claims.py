"""The claim layer: every paper claim the workbench tests, as data, with a verdict computed by one rule.

A :class:`Claim` says what the paper claims (its figure and where it is printed), what we compare it with (the
:class:`Baseline`, and whether that is the strongest fair one a practitioner would run today), which
:class:`Assumption` values our figure rests on (sourced from the paper, or inferred by us with a plausible
range), which test or benchmark produces our figure (``evidence``), and a ``measure``: a function of the
assumption values that returns our figure. The tolerance is not chosen per claim: it is declared once per kind
of claim in :data:`TOLERANCES`, before any comparison.

The verdict (:func:`verdict`) is computed, never typed:

- ``reproduced``: our figure meets the paper's within the kind's tolerance at the sourced settings *and* at
  every grid point of every inferred assumption's plausible range, against the strongest fair baseline, and
  every cut-off assumption (a sweep's last point) has reached saturation;
- ``depends on <assumption>``: it flips inside an inferred range (the value where it flips is named), or the
  sweep of a cut-off has not saturated at its end;
- ``not reproduced``: our figure misses the paper's everywhere, or it is measured against a weaker baseline than
  one the claim itself declares (whatever the assumptions: the comparison is not the fair one), or the plan
  behind it does not fit the modelled device;
- ``refuted``: the technique is not better than the baseline at all (a speed-up below 1, a gain below 0)
  everywhere in the range;
- ``not tested here``: the measure cannot run on this machine (:class:`NotTestedHere`: no GPU, no data set) or
  failed (``evidence failed: ...``); the scoreboard keeps going.

Each technique declares ``CLAIMS: tuple[Claim, ...]`` in ``workbench/<area>/<technique>/claims.py``;
:func:`claims_of` finds them through the registry. ``workbench claims`` prints the scoreboard,
``VERDICTS.md`` is generated from the same data (:func:`markdown`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.results import fmt, fmt_bytes

__all__ = [
    "Assumption",
    "Baseline",
    "Claim",
    "ClaimKind",
    "Evaluation",
    "Figure",
    "Fit",
    "NotTestedHere",
    "PlanDoesNotFit",
    "Point",
    "SATURATION_RTOL",
    "Status",
    "TOLERANCES",
    "Tolerance",
    "Verdict",
    "check_fits",
    "claims_of",
    "evaluate",
    "markdown",
    "passes",
    "recorded",
    "scoreboard",
    "verdict",
]

ClaimKind = Literal["speedup", "gain", "accuracy", "error", "better"]
Status = Literal["reproduced", "depends on", "not reproduced", "refuted", "not tested here"]


# ---- tolerances: one rule per kind of claim, declared before any comparison ----------------------------------
@dataclass(frozen=True)
class Tolerance:
    """How close our figure must come to the paper's for one kind of claim.

    higher_is_better: the direction of "meets"; rel: relative slack (ours >= paper * (1 - rel) when higher is
    better, ours <= paper * (1 + rel) when lower is); abs: absolute slack in the claim's unit (added to the
    relative one); parity: the figure at which the technique is no better than its baseline (1 for a ratio,
    0 for a gain), below which a claim is refuted; None where no such point exists (an accuracy).
    """

    higher_is_better: bool
    rel: float = 0.0
    abs: float = 0.0
    parity: float | None = None
    meaning: str = ""
    strict: bool = False


#: The declared tolerance of each kind of claim (the only place a tolerance is written).
TOLERANCES: Mapping[str, Tolerance] = {
    "speedup": Tolerance(
        True, rel=0.15, parity=1.0, meaning="a ratio (speed-up, memory or batch ratio): ours >= 0.85 x paper"
    ),
    "gain": Tolerance(
        True, rel=0.15, parity=0.0, meaning="a fraction gained or saved (0.54 = 54 %): ours >= 0.85 x paper"
    ),
    "accuracy": Tolerance(True, abs=0.01, meaning="an accuracy, fidelity or AUC in [0, 1]: ours >= paper - 0.01"),
    "error": Tolerance(False, rel=0.25, meaning="an error (RMSE, mHa): ours <= 1.25 x paper"),
    "better": Tolerance(
        True,
        parity=1.0,
        strict=True,
        meaning='a direction with no figure ("outperforms"): ours, a ratio to the baseline, > 1 (paper = 1)',
    ),
}

#: A cut-off assumption's sweep has saturated when its last two grid points differ by at most this (relative).
SATURATION_RTOL = 0.02


def passes(kind: str, ours: float, paper: float) -> bool:
    """Whether ``ours`` meets ``paper`` under the declared tolerance of ``kind`` (:data:`TOLERANCES`)."""
    tol = TOLERANCES[kind]
    if math.isnan(ours):
        return False
    if tol.strict:
        return ours > paper if tol.higher_is_better else ours < paper
    if tol.higher_is_better:
        return ours >= paper - abs(paper) * tol.rel - tol.abs
    return ours <= paper + abs(paper) * tol.rel + tol.abs


def _beats_parity(kind: str, ours: float) -> bool:
    tol = TOLERANCES[kind]
    if tol.parity is None or math.isnan(ours):
        return True
    return ours > tol.parity if tol.higher_is_better else ours < tol.parity


# ---- what a claim is made of ---------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Assumption:
    """One setting our figure rests on.

    name: an identifier (the measure's keyword); value: the value used at the sourced setting; lo, hi: its
    plausible range (numbers) or choices (categories); sourced: True when the paper states the value (then it is
    not varied), False when we inferred it; why: where the value and range come from; log: a geometric grid;
    integer: round grid points; cutoff: a sweep limit (e.g. the largest M swept): the verdict asks that the
    figure has saturated at ``hi``, or that ``hi`` is a physical limit (``limit``).
    """

    name: str
    value: Any
    sourced: bool
    why: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    choices: tuple[Any, ...] = ()
    log: bool = False
    integer: bool = False
    cutoff: bool = False
    limit: str = ""

    def __post_init__(self) -> None:
        if not self.sourced and not self.choices and (self.lo is None or self.hi is None):
            raise ValueError(f"inferred assumption {self.name!r} needs a plausible range (lo and hi, or choices)")
        if self.lo is not None and self.hi is not None and not self.lo <= self.hi:
            raise ValueError(f"assumption {self.name!r}: lo={self.lo} is above hi={self.hi}")
        if self.cutoff and self.sourced:
            raise ValueError(f"cut-off assumption {self.name!r} is ours, so it cannot be sourced")

    def grid(self, *, quick: bool) -> tuple[Any, ...]:
        """The values the sensitivity sweep tries: its ends and the sourced value (quick), or 7 points (full)."""
        if self.choices:
            return tuple(dict.fromkeys((self.value, *self.choices)))
        lo, hi = float(self.lo), float(self.hi)
        if quick:
            pts = [lo, float(self.value), hi]
        elif self.log and lo > 0:
            pts = [lo * (hi / lo) ** (i / 6) for i in range(7)] + [float(self.value)]
        else:
            pts = [lo + (hi - lo) * i / 6 for i in range(7)] + [float(self.value)]
        if self.integer:
            pts = [round(p) for p in pts]
        return tuple(sorted(set(pts)))

    def describe(self) -> str:
        rng = "/".join(map(str, self.choices)) if self.choices else f"{fmt(self.lo)}..{fmt(self.hi)}"
        kind = "sourced" if self.sourced else f"inferred, {rng}"
        return f"{self.name}={self.value}{(' ' + self.unit) if self.unit else ''} ({kind})"


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """What our figure is compared with. strongest: whether it is the strongest fair baseline (what a
    practitioner would run instead today, at its best); when it is not, ``stronger`` names the one that is, and
    the claim cannot be ``reproduced`` against this one."""

    name: str
    why: str
    strongest: bool = True
    stronger: str = ""

    def __post_init__(self) -> None:
        if not self.strongest and not self.stronger:
            raise ValueError(f"baseline {self.name!r} is declared weaker: name the stronger one (stronger=...)")


@dataclass(frozen=True)
class Fit:
    """A plan's memory at its peak: every tensor live there (name -> bytes) against the modelled device."""

    live: Mapping[str, float]
    device_bytes: float
    where: str = ""

    @property
    def required(self) -> float:
        return float(sum(self.live.values()))

    @property
    def fits(self) -> bool:
        return self.required <= self.device_bytes

    def describe(self) -> str:
        parts = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in self.live.items())
        at = f" on {self.where}" if self.where else ""
        sign = "<=" if self.fits else ">"
        return f"needs {fmt_bytes(self.required)}{at} ({parts}) {sign} {fmt_bytes(self.device_bytes)}"


class PlanDoesNotFit(ValueError):
    """A plan whose live tensors at the peak exceed the modelled device's memory."""


def check_fits(live: Mapping[str, float], device_bytes: float, *, where: str = "") -> Fit:
    """The :class:`Fit` of a plan; raises :class:`PlanDoesNotFit` naming the total, the parts and the device."""
    fit = Fit(dict(live), float(device_bytes), where)
    if not fit.fits:
        raise PlanDoesNotFit(f"plan does not fit: {fit.describe()}")
    return fit


@dataclass(frozen=True)
class Figure:
    """Our figure with what stands behind it: ``fit`` (the plan it rests on, checked against the device) and a
    ``note`` (where it occurs, e.g. "65B, 1 GPU, M = 64")."""

    value: float
    fit: Fit | None = None
    note: str = ""


class NotTestedHere(Exception):
    """Raised by a measure that cannot run here; the message says why (no GPU, no data set, ...)."""


#: Figures measured by ``python -m benchmarks.run`` (wall-clock ratios cannot be recomputed deterministically):
#: each benchmark Section's ``data["claims"]`` mapping, merged, with the command and date of the run.
RECORDED_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "recorded.json"


def recorded(key: str, path: Path | None = None) -> float:
    """A figure recorded by the benchmark run (``"quest.speedup_batched"``); :class:`NotTestedHere` when the
    benchmark that produces it has not been recorded (the message says which command records it)."""
    path = RECORDED_PATH if path is None else path
    try:
        values = json.loads(path.read_text())["values"]
    except FileNotFoundError:
        raise NotTestedHere(f"no recorded benchmarks ({path.name} is missing): run python -m benchmarks.run") from None
    if key not in values:
        group = key.split(".", 1)[0].replace("-", "_")
        raise NotTestedHere(f"{key} is not recorded: run python -m benchmarks.run --only {group}")
    return float(values[key]["value"])


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim of one paper, as data. ``measure(**settings)`` returns our figure (a float or a
    :class:`Figure`) at the given assumption values (every assumption's name is a keyword). ``paper_source``
    names the version and place ("arXiv 2505.11329 v1, abstract"); ``evidence`` the tests or benchmarks that
    produce our figure ("tests/llm/srt/test_srt_model.py::test_x", "benchmarks/llm/srt.py"); ``scale``
    says whether our figure is measured here or carried by a model to the paper's scale."""

    technique: str
    key: str
    text: str
    kind: ClaimKind
    paper: float
    paper_source: str
    unit: str
    baseline: Baseline
    assumptions: tuple[Assumption, ...]
    evidence: tuple[str, ...]
    measure: Callable[..., float | Figure] = field(compare=False, repr=False)
    scale: Literal["measured", "model"] = "measured"
    up_to: bool = False

    def __post_init__(self) -> None:
        if self.kind not in TOLERANCES:
            raise ValueError(f"claim {self.key!r}: kind={self.kind!r} is not one of {', '.join(TOLERANCES)}")
        if self.kind == "better" and self.paper != 1.0:
            raise ValueError(f"claim {self.key!r}: kind 'better' states a direction only: paper must be 1.0")
        if not self.evidence:
            raise ValueError(f"claim {self.key!r} names no evidence (a test or benchmark that produces our figure)")
        names = [a.name for a in self.assumptions]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.key!r}: assumption names repeat: {names}")

    @property
    def settings(self) -> dict[str, Any]:
        """Every assumption at its sourced (or default inferred) value."""
        return {a.name: a.value for a in self.assumptions}

    @property
    def inferred(self) -> tuple[Assumption, ...]:
        return tuple(a for a in self.assumptions if not a.sourced)

    @property
    def tolerance(self) -> Tolerance:
        return TOLERANCES[self.kind]


# ---- evaluation and the rule ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    """One evaluation: the assumption varied (None at the sourced setting), its value, our figure, and whether
    it meets the paper's under the tolerance (False when its plan does not fit)."""

    assumption: str | None
    value: Any
    ours: float
    meets: bool
    fit: Fit | None = None
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    status: Status
    detail: str = ""

    def __str__(self) -> str:
        if self.status == "depends on":
            return f"depends on {self.detail}"
        return f"{self.status} ({self.detail})" if self.detail else self.status


@dataclass(frozen=True)
class Evaluation:
    """A claim evaluated: the sourced point, the sensitivity sweep of each inferred assumption, the verdict."""

    claim: Claim
    at_source: Point | None
    sweeps: Mapping[str, tuple[Point, ...]]
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        c = self.claim
        return {
            "technique": c.technique,
            "key": c.key,
            "claim": c.text,
            "kind": c.kind,
            "up_to": c.up_to,
            "paper": c.paper,
            "paper_source": c.paper_source,
            "unit": c.unit,
            "ours": None if self.at_source is None else self.at_source.ours,
            "ours_note": "" if self.at_source is None else self.at_source.note,
            "scale": c.scale,
            "baseline": dataclasses.asdict(c.baseline),
            "assumptions": [
                {
                    "name": a.name,
                    "value": a.value,
                    "unit": a.unit,
                    "sourced": a.sourced,
                    "why": a.why,
                    "range": list(a.choices) if a.choices else [a.lo, a.hi],
                    "cutoff": a.cutoff,
                }  # fmt: skip
                for a in c.assumptions
            ],
            "tolerance": c.tolerance.meaning,
            "evidence": list(c.evidence),
            "sensitivity": {
                name: [{"value": p.value, "ours": p.ours, "meets": p.meets} for p in pts]
                for name, pts in self.sweeps.items()
            },
            "verdict": str(self.verdict),
            "status": self.verdict.status,
            "depends_on": self.verdict.detail.split(" ")[0] if self.verdict.status == "depends on" else None,
        }


def _point(claim: Claim, assumption: str | None, value: Any, settings: Mapping[str, Any]) -> Point:
    out = claim.measure(**settings)
    fig = out if isinstance(out, Figure) else Figure(float(out))
    ours = float(fig.value)
    fits = fig.fit is None or fig.fit.fits
    return Point(assumption, value, ours, fits and passes(claim.kind, ours, claim.paper), fig.fit, fig.note)


def _flip(pts: Sequence[Point], meets_at_source: bool) -> Any:
    """The first grid value (in grid order) whose outcome differs from the sourced one."""
    for p in pts:
        if p.meets != meets_at_source:
            return p.value
    return None


def verdict(claim: Claim, at_source: Point, sweeps: Mapping[str, Sequence[Point]]) -> Verdict:
    """The rule (see the module docstring). ``at_source``: the claim evaluated at its sourced settings;
    ``sweeps``: each inferred assumption's grid, the others at their values."""
    if at_source.fit is not None and not at_source.fit.fits:
        return Verdict("not reproduced", f"plan does not fit: {at_source.fit.describe()}")
    everything = [at_source, *(p for pts in sweeps.values() for p in pts)]
    refuted = all(not _beats_parity(claim.kind, p.ours) for p in everything)
    if not claim.baseline.strongest and any(p.meets for p in everything):
        # our figure meets the paper's somewhere, but against a baseline weaker than the fair one: no setting makes
        # the comparison fair, so it neither reproduces nor depends on an assumption
        return Verdict("not reproduced", f"against {claim.baseline.name}, weaker than {claim.baseline.stronger}")
    for a in claim.inferred:  # flips inside a plausible range
        pts = sweeps.get(a.name, ())
        flip = _flip(pts, at_source.meets)
        if flip is not None:
            return Verdict("depends on", f"{a.name} (flips at {a.name}={_show(flip)}{_unit(a)})")
    for a in claim.inferred:  # a cut-off whose sweep has not saturated
        if not a.cutoff or a.limit:
            continue
        pts = sorted(sweeps.get(a.name, ()), key=lambda p: p.value)
        if len(pts) >= 2 and not _saturated(pts[-2].ours, pts[-1].ours):
            return Verdict(
                "depends on",
                f"{a.name} (not saturated at {a.name}={_show(pts[-1].value)}: {fmt(pts[-2].ours, 3)} -> "
                f"{fmt(pts[-1].ours, 3)})",
            )
    if at_source.meets:
        return Verdict("reproduced")
    if refuted:
        return Verdict("refuted", f"no better than {claim.baseline.name}: ours {fmt(at_source.ours, 3)}")
    return Verdict("not reproduced", f"ours {fmt(at_source.ours, 3)} vs paper {fmt(claim.paper, 3)}")


def _saturated(a: float, b: float) -> bool:
    return abs(b - a) <= SATURATION_RTOL * max(abs(a), abs(b), 1e-300)


def _show(v: Any) -> str:
    return fmt(v, 3) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _unit(a: Assumption) -> str:
    return f" {a.unit}" if a.unit and not a.choices else ""


def evaluate(claim: Claim, *, quick: bool = True) -> Evaluation:
    """Evaluate ``claim`` at its sourced settings and over each inferred assumption's grid (quick: the ends and
    the value; full: 7 points), and compute its verdict. A measure that raises :class:`NotTestedHere` or fails
    gives ``not tested here`` with the reason, never an exception."""
    base = claim.settings
    try:
        at_source = _point(claim, None, None, base)
        sweeps = {
            a.name: tuple(_point(claim, a.name, v, {**base, a.name: v}) for v in a.grid(quick=quick))
            for a in claim.inferred
        }
    except NotTestedHere as e:
        return Evaluation(claim, None, {}, Verdict("not tested here", str(e)))
    except FileNotFoundError as e:  # a data set that is not here (the registry's message says how to get it)
        return Evaluation(claim, None, {}, Verdict("not tested here", f"data absent: {str(e).split(' and could')[0]}"))
    except Exception as e:  # noqa: BLE001 - the scoreboard reports a failing evidence and keeps going
        return Evaluation(claim, None, {}, Verdict("not tested here", f"evidence failed: {type(e).__name__}: {e}"))
    return Evaluation(claim, at_source, sweeps, verdict(claim, at_source, sweeps))


# ---- finding the claims --------------------------------------------------------------------------------------
def claims_of(technique: str) -> tuple[Claim, ...]:
    """The ``CLAIMS`` of a ready technique (its ``claims`` module beside the runner); ValueError for an unknown
    name, naming the valid ones."""
    from workbench.registry import entry

    e = entry(technique)
    if e.module is None:
        return ()
    module = importlib.import_module(e.module.rsplit(".", 1)[0] + ".claims")
    return tuple(module.CLAIMS)


@functools.cache
def _evaluated(name: str, quick: bool) -> tuple[Evaluation, ...]:
    """One technique's claims evaluated (memoised within the process)."""
    return tuple(evaluate(c, quick=quick) for c in claims_of(name))


def scoreboard(technique: str | None = None, *, quick: bool = True) -> tuple[Evaluation, ...]:
    """Every claim of every ready technique in catalogue order (or of one technique), evaluated."""
    from workbench.registry import catalogue, entry

    names = [entry(technique).name] if technique else [e.name for e in catalogue() if e.module]
    return tuple(ev for n in names for ev in _evaluated(n, quick))


# ---- rendering ----------------------------------------------------------------------------------------------
def _figure(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "unbounded" if x > 0 else str(x)
    return f"{fmt(x, 3)}{'x' if unit == 'x' else (' ' + unit if unit else '')}"


def rows(evaluations: Sequence[Evaluation | dict[str, Any]]) -> list[dict[str, str]]:
    """One row of text per claim (an evaluation or its JSON record): technique, claim, paper (with source), ours,
    baseline, verdict."""
    out = []
    for item in evaluations:
        r = item.to_json() if isinstance(item, Evaluation) else item
        b = r["baseline"]
        out.append({
            "technique": r["technique"],
            "claim": r["claim"] + (" (up to)" if r["up_to"] and "up to" not in r["claim"] else ""),
            "paper": f"{_figure(r['paper'], r['unit'])} ({r['paper_source']})",
            "ours": _figure(r["ours"], r["unit"]) + (" MODEL" if r["scale"] == "model" else ""),
            "baseline": b["name"] + ("" if b["strongest"] else f" (weaker than {b['stronger']})"),
            "verdict": r["verdict"],
        })  # fmt: skip
    return out


def markdown(evaluations: Sequence[Evaluation | dict[str, Any]]) -> str:
    """The scoreboard as a Markdown table (``VERDICTS.md``'s body)."""
    table = rows(evaluations)
    headers = ["technique", "claim", "paper", "ours", "baseline", "verdict"]

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(r[h]) for h in headers) + " |" for r in table]
    return "\n".join(lines)


def counts(evaluations: Sequence[Evaluation | dict[str, Any]]) -> dict[str, int]:
    """How many claims have each verdict status (evaluations or their JSON records)."""
    out: dict[str, int] = {}
    for ev in evaluations:
        status = ev.verdict.status if isinstance(ev, Evaluation) else ev["status"]
        out[status] = out.get(status, 0) + 1
    return out


def table(technique: str | None = None, *, live: bool = False, quick: bool = True) -> Any:
    """The scoreboard of one technique (or all) as a pandas DataFrame: what a notebook shows as its verdict
    table (no notebook or study writes a verdict of its own). By default the committed scoreboard
    (``VERDICTS.json``, computed by the same rule and tested to be current); ``live=True`` evaluates now."""
    import pandas as pd

    if live:
        return pd.DataFrame(rows(scoreboard(technique, quick=quick)))
    return pd.DataFrame(rows(committed(technique)))


# ---- the committed scoreboard: VERDICTS.md and VERDICTS.json ------------------------------------------------
REPO_ROOT = Path(__file__).resolve().parents[1]
VERDICTS_MD = REPO_ROOT / "VERDICTS.md"
VERDICTS_JSON = REPO_ROOT / "VERDICTS.json"
WRITE_COMMAND = "workbench claims --write"


def _rounded(value: Any) -> Any:
    """Floats to 6 significant digits (the committed files must not depend on the last bits of a BLAS)."""
    if isinstance(value, float):
        return float(f"{value:.6g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def records(evaluations: Sequence[Evaluation]) -> list[dict[str, Any]]:
    """The evaluations as JSON records (VERDICTS.json's content), floats rounded to 6 significant digits."""
    return [_rounded(ev.to_json()) for ev in evaluations]


def document(evaluations: Sequence[Evaluation | dict[str, Any]]) -> str:
    """VERDICTS.md: how verdicts are computed, the counts, and the scoreboard table."""
    n = counts(evaluations)
    tol = "\n".join(f"- **{kind}**: {t.meaning}" for kind, t in TOLERANCES.items())
    return "\n".join([
        "# Verdicts",
        "",
        f"Generated by `{WRITE_COMMAND}` from every technique's `claims.py`; do not edit by hand (a test checks it",
        "is current). Each verdict is computed by one rule (`workbench/claims.py`): *reproduced* only if our figure",
        "meets the paper's within the declared tolerance at the paper's settings and at both ends of every",
        "assumption we inferred, against the strongest fair baseline, with every sweep saturated; *depends on X*",
        "when it flips inside X's plausible range (or X is a sweep cut-off that has not saturated); *not",
        "reproduced*; *refuted* (no better than the baseline anywhere); *not tested here* (with the reason).",
        "`workbench claims --json` gives every claim's assumptions, evidence and sensitivity sweep.",
        "",
        "Tolerances, declared before any comparison:",
        "",
        tol,
        "",
        "Counts: " + ", ".join(f"{status} {k}" for status, k in n.items()) + f" (of {len(evaluations)} claims).",
        "",
        markdown(evaluations),
        "",
    ])  # fmt: skip


def write_verdicts(evaluations: Sequence[Evaluation], *, technique: str | None = None) -> tuple[Path, Path]:
    """Write VERDICTS.md and VERDICTS.json atomically; returns their paths. With ``technique``, the evaluations
    are that technique's and replace its records in the committed file (the others are kept as they are)."""
    from workbench.atomic import atomic_write
    from workbench.registry import catalogue

    new = records(evaluations)
    if technique is not None:
        order = {e.name: i for i, e in enumerate(catalogue())}
        kept = [r for r in load_verdicts() if r["technique"] not in {n["technique"] for n in new}]
        new = sorted(kept + new, key=lambda r: order.get(r["technique"], len(order)))  # stable: claim order kept
    with atomic_write(VERDICTS_MD, "w") as f:
        f.write(document(new))
    with atomic_write(VERDICTS_JSON, "w") as f:
        f.write(json.dumps(new, indent=1) + "\n")
    return VERDICTS_MD, VERDICTS_JSON


def load_verdicts(path: Path | None = None) -> list[dict[str, Any]]:
    """The committed scoreboard (VERDICTS.json): what the index notebook shows without recomputing."""
    path = VERDICTS_JSON if path is None else path
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run {WRITE_COMMAND}")
    return json.loads(path.read_text())


def committed(technique: str | None = None, path: Path | None = None) -> list[dict[str, Any]]:
    """The committed records of one technique (or all): :func:`load_verdicts` filtered by its CLI name."""
    from workbench.registry import entry

    name = entry(technique).name if technique else None
    return [r for r in load_verdicts(path) if name is None or r["technique"] == name]
