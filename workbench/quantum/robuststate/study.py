"""Runs, sweeps, the panel's view and the figures behind the paper's claims of RobustState.

- :func:`train`: one configuration (problem built and pre-trained, machine, one method), memoised.
- :func:`run_study`: the default study: GHZ, W and random targets of 4 and 5 qubits on five device snapshots
  (the paper's machines where a fake backend exists: Geneva, Hanoi, Lagos, Nairobi, Perth), each with its own
  coherent-error draw; RobustState vs noise-unaware on every case, parameter shift, SPSA and Bayesian
  optimisation beside them on the 4-qubit cases (fidelity vs executions), the purely incoherent case
  (coherent strength 0) and the purely coherent one (incoherent noise off). Its result is a plain dict saved
  as JSON: :func:`default_study` reads the copy shipped with the package (``study_default.json``, made by
  ``python -m workbench.quantum.robuststate.study``) or the user's cache, so the panel and the notebook are fast.
- :func:`summary`: coherent-error reduction factors and fidelity gains; :func:`headline_gains`,
  :func:`coherent_reductions`, :func:`compare_gains`: the figures of the paper's claims
  (:mod:`workbench.quantum.robuststate.claims`, whose verdicts are computed by :mod:`workbench.claims`).
- :func:`panel_view`: what the panel draws (cheap: cached curves, the cost MODEL, the machine's error draw).

Caches live here only (:func:`clear_caches`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.quantum.robuststate import experiment, model
from workbench.quantum.robuststate.config import (
    STUDY_DEVICES,
    STUDY_SETTINGS,
    RobustStateConfig,
)

# the panel's runs go through the study (re-exported): a widget calls workbench only through study/config/claims
from workbench.quantum.robuststate.experiment import RunRecord, train
from workbench.quantum.robuststate.experiment import trained_run as trained_run

log = logging.getLogger(__name__)

#: arXiv:2311.16035 (RobustState, Wang et al.); its claims, with sources, are in :mod:`.claims`
PAPER_VERSION = "arXiv:2311.16035 (abstract, as on arXiv/ar5iv)"

STUDY_TARGETS = ("ghz", "w", "random")
STUDY_QUBITS = (4, 5)
STUDY_FILE = Path(__file__).with_name("study_default.json")
STUDY_VERSION = 1


def clear_caches() -> None:
    """Forget every memoised problem, run, baseline and loaded study."""
    experiment.clear_caches()
    default_study.cache_clear()
    default_arithmetic.cache_clear()
    panel_view.cache_clear()


# ---- the study -------------------------------------------------------------------------------------------
def _record_dict(r: RunRecord) -> dict[str, Any]:
    t = r.trace
    return {
        "fidelity_before": r.before.fidelity,
        "fidelity_after": r.after.fidelity,
        "coherent_before": r.before.coherent_error,
        "coherent_after": r.after.coherent_error,
        "incoherent_before": r.before.incoherent_error,
        "incoherent_after": r.after.incoherent_error,
        "executions": r.executions,
        "steps": r.steps,
        "curve": {"executions": list(t.executions), "fidelity": [round(x, 6) for x in t.fidelity]},
        "noiseless_fidelity": r.noiseless_fidelity,
        "layout": list(r.layout),
        "num_parameters": r.num_parameters,
    }


def study_cases(
    devices: Iterable[str] = STUDY_DEVICES,
    targets: Iterable[str] = STUDY_TARGETS,
    qubits: Iterable[int] = STUDY_QUBITS,
    settings: dict[str, Any] | None = None,
) -> list[tuple[str, RobustStateConfig]]:
    """(group, config) of every run of a study: group "headline" (robuststate, unaware), "compare"
    (all five methods at the compare budget), "incoherent-only" (strength 0), "coherent-only"."""
    s = {**STUDY_SETTINGS, **(settings or {})}
    out = []
    for device in devices:
        for target in targets:
            for n in qubits:
                base = dict(target=target, qubits=n, device=device, shots=s["shots"], bases=s["bases"], lr=s["lr"])
                base["coherent_strength"] = s["coherent_strength"]
                for method in ("unaware", "robuststate"):
                    out.append(("headline", RobustStateConfig(method=method, budget=s["headline_budget"], **base)))
                if n in s["compare_qubits"] and target in s["compare_targets"]:
                    for method in ("robuststate", "parameter-shift", "spsa", "bo"):
                        out.append(("compare", RobustStateConfig(method=method, budget=s["compare_budget"], **base)))
                if target == "random":
                    zero = {**base, "coherent_strength": 0.0}
                    for method in ("unaware", "robuststate"):
                        out.append(
                            ("incoherent-only", RobustStateConfig(method=method, budget=s["headline_budget"], **zero))
                        )
                        out.append(
                            (
                                "coherent-only",
                                RobustStateConfig(method=method, budget=s["headline_budget"], incoherent=False, **base),
                            )
                        )
    return out


#: parameters added after the shipped study was computed, at the value the study used: left out of its key
KEY_ADDED_DEFAULTS = {"readout": "props"}


def _key_dict(config: RobustStateConfig) -> dict[str, Any]:
    d = config.to_dict()
    for name, value in KEY_ADDED_DEFAULTS.items():
        if d.get(name) == value:
            d.pop(name)
    return d


def _key(cases: list[tuple[str, RobustStateConfig]]) -> str:
    text = json.dumps([[g, _key_dict(c)] for g, c in cases])
    return hashlib.sha256(f"v{STUDY_VERSION}:{text}".encode()).hexdigest()[:16]


def run_study(
    devices: Iterable[str] = STUDY_DEVICES,
    targets: Iterable[str] = STUDY_TARGETS,
    qubits: Iterable[int] = STUDY_QUBITS,
    settings: dict[str, Any] | None = None,
    *,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Run every case of :func:`study_cases`; returns ``{"key", "settings", "runs": [{"group", "config",
    ...record}]}`` (plain JSON)."""
    cases = study_cases(devices, targets, qubits, settings)
    runs = []
    for i, (group, config) in enumerate(cases):
        rec = train(config)
        runs.append({"group": group, "config": dataclasses.asdict(config), **_record_dict(rec)})
        log.info("study %d/%d %s %s", i + 1, len(cases), group, config)
        if progress is not None:
            progress((i + 1) / len(cases))
    return {
        "key": _key(cases),
        "version": STUDY_VERSION,
        "paper_version": PAPER_VERSION,
        "settings": {**STUDY_SETTINGS, **(settings or {})},
        "runs": runs,
    }


@functools.lru_cache(maxsize=1)
def default_study() -> dict[str, Any] | None:
    """The default study from the shipped ``study_default.json`` (or the user cache), None if neither exists or
    its key does not match the current study definition."""
    from workbench.data import cache_dir

    key = _key(study_cases())
    for path in (STUDY_FILE, cache_dir("robuststate") / "study_default.json"):
        if path.exists():
            data = json.loads(path.read_text())
            if data.get("key") == key:
                return data
            log.warning("%s is stale (key %s, expected %s): rebuild it", path, data.get("key"), key)
    return None


def save_study(data: dict[str, Any], path: Path) -> None:
    from workbench.atomic import atomic_write

    with atomic_write(path, "w") as f:
        f.write(json.dumps(data, indent=0) + "\n")


# ---- the paper's baseline: arithmetic decomposition on every headline case ------------------------------------
ARITHMETIC_FILE = Path(__file__).with_name("arithmetic_default.json")


def arithmetic_record(config: RobustStateConfig) -> dict[str, Any]:
    """The arithmetic-decomposition baseline on ``config``'s machine (see :func:`.experiment.arithmetic_baseline`)
    as plain JSON: true fidelity and its split, the transpiled ``cx`` count and depth."""
    b = experiment.arithmetic_baseline(
        config.target,
        config.qubits,
        config.resolved_device(),
        float(config.coherent_strength),
        bool(config.incoherent),
        int(config.seed),
        config.readout,
    )
    return {
        "device": config.device,
        "target": config.target,
        "qubits": config.qubits,
        "fidelity": b.evaluation.fidelity,
        "coherent": b.evaluation.coherent_error,
        "incoherent": b.evaluation.incoherent_error,
        "cx": b.cx,
        "depth": b.depth,
        "noiseless_fidelity": b.noiseless_fidelity,
    }


def run_arithmetic() -> dict[str, Any]:
    """The arithmetic baseline on every headline case of the default study (~10 s on 2 cores), keyed like it."""
    import qiskit

    cases = study_cases()
    runs = [arithmetic_record(c) for g, c in cases if g == "headline" and c.method == "robuststate"]
    return {"key": _key(cases), "qiskit": qiskit.__version__, "runs": runs}


@functools.lru_cache(maxsize=1)
def default_arithmetic() -> dict[str, Any]:
    """The shipped ``arithmetic_default.json`` when its key matches the study definition, else computed."""
    if ARITHMETIC_FILE.exists():
        data = json.loads(ARITHMETIC_FILE.read_text())
        if data.get("key") == _key(study_cases()):
            return data
        log.warning("%s is stale: recomputing the arithmetic baseline", ARITHMETIC_FILE)
    return run_arithmetic()


def arithmetic_gains(
    data: dict[str, Any], arithmetic: dict[str, Any], qubits: int, *, budget: int, definition: str
) -> list[tuple[float, str]]:
    """RobustState's fidelity (its curve at ``budget``) over the arithmetic-decomposition circuit on the same
    machine, on every headline case of ``qubits`` qubits, with the case's name (``definition`` as in
    :func:`headline_gains`)."""
    if definition not in GAIN_DEFINITIONS:
        raise ValueError(f"definition={definition!r} is unknown: valid values are {', '.join(GAIN_DEFINITIONS)}")
    base = {(a["device"], a["target"], a["qubits"]): a["fidelity"] for a in arithmetic["runs"]}
    out = []
    for r in _runs(data, "headline", "robuststate"):
        c = r["config"]
        if c["qubits"] != qubits:
            continue
        f0, f1 = base[(c["device"], c["target"], c["qubits"])], fidelity_at(r, budget)
        gain = (f1 - f0) / f0 if definition == "relative" else (f1 - f0) / max(1 - f0, 1e-12)
        out.append((gain, f"{c['device']}/{c['target']}/{c['qubits']}q"))
    if not out:
        raise ValueError(f"qubits={qubits} has no headline case in the study")
    return out


def baseline_table(data: dict[str, Any], arithmetic: dict[str, Any]) -> list[dict[str, Any]]:
    """Per headline case: arithmetic-decomposition fidelity (and cx count), the noise-unaware variational
    circuit's, and RobustState's after fine-tuning (the paper's slide-8 comparison, on our machine)."""
    base = {(a["device"], a["target"], a["qubits"]): a for a in arithmetic["runs"]}
    rows = []
    for r in _runs(data, "headline", "robuststate"):
        c = r["config"]
        a = base[(c["device"], c["target"], c["qubits"])]
        rows.append(
            {
                "case": f"{c['device']}/{c['target']}/{c['qubits']}q",
                "arithmetic": a["fidelity"],
                "arithmetic_cx": a["cx"],
                "unaware": r["fidelity_before"],
                "robuststate": r["fidelity_after"],
            }
        )
    return rows


# ---- summaries (the claims are in :mod:`workbench.quantum.robuststate.claims`) ----------------------------
#: how a "fidelity improvement" is computed: the paper does not say (see the claims)
GAIN_DEFINITIONS = ("relative", "infidelity removed")


def _runs(data: dict[str, Any], group: str, method: str | None = None) -> list[dict[str, Any]]:
    return [r for r in data["runs"] if r["group"] == group and (method is None or r["config"]["method"] == method)]


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """Per width: coherent-error reduction (before / after) and fidelity gain ((after - before) / before) of
    RobustState over the noise-unaware deployment, max and mean over targets and devices; the incoherent-only
    and coherent-only means; the per-method fidelity at the compare budget."""
    out: dict[str, Any] = {"by_qubits": {}}
    rs = _runs(data, "headline", "robuststate")
    for n in sorted({r["config"]["qubits"] for r in rs}):
        rows = [r for r in rs if r["config"]["qubits"] == n]
        red = [r["coherent_before"] / max(r["coherent_after"], 1e-9) for r in rows]
        gain = [(r["fidelity_after"] - r["fidelity_before"]) / r["fidelity_before"] for r in rows]
        infid = [(r["fidelity_after"] - r["fidelity_before"]) / max(1 - r["fidelity_before"], 1e-12) for r in rows]
        out["by_qubits"][n] = {
            "cases": len(rows),
            "coherent_reduction_max": max(red),
            "coherent_reduction_median": float(np.median(red)),
            "fidelity_gain_max": max(gain),
            "fidelity_gain_mean": float(np.mean(gain)),
            "infidelity_removed_mean": float(np.mean(infid)),
            "fidelity_before_mean": float(np.mean([r["fidelity_before"] for r in rows])),
            "fidelity_after_mean": float(np.mean([r["fidelity_after"] for r in rows])),
            "coherent_before_mean": float(np.mean([r["coherent_before"] for r in rows])),
            "coherent_after_mean": float(np.mean([r["coherent_after"] for r in rows])),
            "incoherent_mean": float(np.mean([r["incoherent_after"] for r in rows])),
        }
    for group in ("incoherent-only", "coherent-only"):
        rows = _runs(data, group, "robuststate")
        if rows:
            out[group] = {
                "cases": len(rows),
                "fidelity_before_mean": float(np.mean([r["fidelity_before"] for r in rows])),
                "fidelity_after_mean": float(np.mean([r["fidelity_after"] for r in rows])),
                "gain_mean": float(np.mean([r["fidelity_after"] - r["fidelity_before"] for r in rows])),
            }
    comp = {}
    for method in ("robuststate", "parameter-shift", "spsa", "bo"):
        rows = _runs(data, "compare", method)
        if rows:
            comp[method] = {
                "cases": len(rows),
                "fidelity_gain_mean": float(np.mean([r["fidelity_after"] - r["fidelity_before"] for r in rows])),
                "steps_mean": float(np.mean([r["steps"] for r in rows])),
                "executions_mean": float(np.mean([r["executions"] for r in rows])),
            }
    out["compare"] = comp
    return out


def fidelity_at(run: dict[str, Any], executions: int) -> float:
    """A study run's true fidelity after at most ``executions`` counted machine executions (its curve's last point
    within the budget; the curve starts at 0 executions with the noise-unaware deployment)."""
    ex, fi = run["curve"]["executions"], run["curve"]["fidelity"]
    within = [f for e, f in zip(ex, fi) if e <= executions]
    if not within:
        raise ValueError(f"executions={executions} is below the curve's first point ({ex[0]})")
    return float(within[-1])


def headline_gains(data: dict[str, Any], qubits: int, *, budget: int, definition: str) -> list[tuple[float, str]]:
    """RobustState's fidelity improvement over the noise-unaware deployment on every headline case of ``qubits``
    qubits, read from the curve at ``budget`` executions, with the case's name. ``definition``: "relative"
    ((F_after - F_before) / F_before) or "infidelity removed" ((F_after - F_before) / (1 - F_before))."""
    if definition not in GAIN_DEFINITIONS:
        raise ValueError(f"definition={definition!r} is unknown: valid values are {', '.join(GAIN_DEFINITIONS)}")
    out = []
    for r in _runs(data, "headline", "robuststate"):
        c = r["config"]
        if c["qubits"] != qubits:
            continue
        f0, f1 = r["fidelity_before"], fidelity_at(r, budget)
        gain = (f1 - f0) / f0 if definition == "relative" else (f1 - f0) / max(1 - f0, 1e-12)
        out.append((gain, f"{c['device']}/{c['target']}/{c['qubits']}q"))
    if not out:
        raise ValueError(f"qubits={qubits} has no headline case in the study")
    return out


def coherent_reductions(data: dict[str, Any]) -> list[tuple[float, str]]:
    """Coherent error before / after RobustState on every headline case, with the case's name."""
    return [
        (
            r["coherent_before"] / max(r["coherent_after"], 1e-9),
            f"{r['config']['device']}/{r['config']['target']}/{r['config']['qubits']}q",
        )
        for r in _runs(data, "headline", "robuststate")
    ]


def compare_gains(data: dict[str, Any], budget: int) -> dict[str, float]:
    """Mean fidelity gain (F - F_before) of each method of the compare group after ``budget`` executions."""
    return {
        m: float(np.mean([fidelity_at(r, budget) - r["fidelity_before"] for r in rows]))
        for m in model_methods()
        if (rows := _runs(data, "compare", m))
    }


# ---- the panel's view ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PanelView:
    """Curves (method -> (executions, fidelity)) of the cached study for one case, the cost MODEL per method,
    the machine's error draw, and an optional user run."""

    curves: dict[str, tuple[list[int], list[float]]]
    unaware: float | None
    cost: dict[str, int]
    steps: dict[str, int]
    over_rotation: list[float]
    detuning_khz: list[float]
    zz: list[float]
    zz_edges: list[str]
    cx_error: list[float]
    readout: list[float]
    layout: tuple[int, ...]


@functools.lru_cache(maxsize=256)
def panel_view(
    device: str, target: str, qubits: int, strength: float, shots: int, budget: int, bases: int
) -> PanelView:
    """What the panel draws; cheap (no training: curves come from :func:`default_study`)."""
    from workbench.quantum.common.variational import Ansatz, CoherentErrors, connected_layout, device_edges

    cfg = RobustStateConfig(device=device, target=target, qubits=qubits, coherent_strength=strength, shots=shots)
    dev = cfg.resolved_device()
    layout = connected_layout(dev.calibration, qubits)
    sub = dev.subset(layout)
    ansatz = Ansatz(num_qubits=qubits, edges=device_edges(sub), blocks=cfg.num_blocks)
    coherent = CoherentErrors.draw(qubits, ansatz.edges, strength=strength, seed=10_000 + cfg.seed)
    p = ansatz.num_parameters
    cost = {m: model.executions_per_step(m, parameters=p, bases=bases, shots=shots) for m in model_methods()}
    steps = {m: model.steps_within(m, budget, parameters=p, bases=bases, shots=shots) for m in model_methods()}
    curves: dict[str, tuple[list[int], list[float]]] = {}
    unaware = None
    data = default_study()
    if data is not None:
        for r in data["runs"]:
            c = r["config"]
            if (c["device"], c["target"], c["qubits"]) != (device, target, qubits) or r["group"] not in (
                "compare",
                "headline",
            ):
                continue
            if r["group"] == "headline" and c["method"] != "unaware" and c["method"] in curves:
                continue
            ex, fi = r["curve"]["executions"], r["curve"]["fidelity"]
            keep = [i for i, e in enumerate(ex) if e <= budget]
            curves[c["method"]] = ([ex[i] for i in keep], [fi[i] for i in keep])
            if c["method"] == "unaware":
                unaware = r["fidelity_before"]
    return PanelView(
        curves=curves,
        unaware=unaware,
        cost=cost,
        steps=steps,
        over_rotation=[100 * x for x in coherent.over_rotation],
        detuning_khz=[x / 1e3 for x in coherent.detuning],
        zz=[v for _, v in coherent.zz],
        zz_edges=[f"{a}-{b}" for (a, b), _ in coherent.zz],
        cx_error=[(sub.gate("cx", e).error if sub.gate("cx", e) else math.nan) for e in ansatz.edges],
        readout=[(a + b) / 2 for a, b in zip(sub.readout_p01, sub.readout_p10)],
        layout=layout,
    )


def model_methods() -> tuple[str, ...]:
    return ("robuststate", "parameter-shift", "spsa", "bo")


def run_study_part(devices: Iterable[str], out: Path | None = None) -> dict[str, Any]:
    """The default study's runs on ``devices`` only, each with its index in :func:`study_cases` (for
    :func:`merge_parts`: the study split over processes); written to ``out`` after every case when given."""
    cases = study_cases()
    runs = []
    for i, (group, config) in enumerate(cases):
        if config.device in devices:
            rec = train(config)
            runs.append({"index": i, "group": group, "config": dataclasses.asdict(config), **_record_dict(rec)})
            log.info("study %d/%d %s %s", i + 1, len(cases), group, config)
            if out is not None:
                save_study({"runs": runs}, out)
    return {"runs": runs}


def merge_parts(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The default study from parts that together cover every case (ValueError otherwise)."""
    cases = study_cases()
    runs = sorted((r for p in parts for r in p["runs"]), key=lambda r: r["index"])
    if [r["index"] for r in runs] != list(range(len(cases))):
        raise ValueError(f"parts cover {len(runs)} of {len(cases)} study cases: run the missing devices")
    for r in runs:
        r.pop("index")
    return {
        "key": _key(cases),
        "version": STUDY_VERSION,
        "paper_version": PAPER_VERSION,
        "settings": dict(STUDY_SETTINGS),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m workbench.quantum.robuststate.study [OUT]``: run the default study and write it (atomically)
    to OUT (default: the package's ``study_default.json``). ``--part DEV,DEV OUT``: only those devices;
    ``--merge OUT PART...``: join parts; ``--arithmetic [OUT]``: the arithmetic baseline of every headline case
    (default: the package's ``arithmetic_default.json``)."""
    logging.basicConfig(level=logging.INFO)
    argv = sys.argv[1:] if argv is None else argv
    torch.set_num_threads(1)
    if argv and argv[0] == "--part":
        run_study_part(argv[1].split(","), Path(argv[2]))
        return 0
    if argv and argv[0] == "--arithmetic":
        save_study(run_arithmetic(), Path(argv[1]) if len(argv) > 1 else ARITHMETIC_FILE)
        return 0
    if argv and argv[0] == "--merge":
        data = merge_parts(json.loads(Path(p).read_text()) for p in argv[2:])
        save_study(data, Path(argv[1]))
    else:
        data = run_study()
        save_study(data, Path(argv[0]) if argv else STUDY_FILE)
    print(json.dumps(summary(data), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
