"""What the notebook and the panel show of QGAS: searches by every proposer beside fixed reference ansaetze,
noiseless and under a device's noise, the panel's view and the figures behind the paper's claims.

- :func:`search` runs (or loads) one search through the loop; its transcript in the qgas cache folder *is*
  the disk cache (a transcript is reused only when its stored config equals the requested one).
- :func:`references` trains the fixed ansaetze: hardware-efficient (ry + linear cx, 1-3 layers), UCCSD
  (chemistry) or QAOA with 1-3 layers (combinatorial).
- :func:`noisy_errors` scores trained circuits under a device snapshot's calibrated noise
  (:func:`~workbench.quantum.qgas.vqe.noisy_energy`).
- :func:`compare` puts them together for one problem (what the notebook's figures and the panel draw);
  :func:`qgas_view` is the panel's view (cached comparisons only: a missing one is computed behind the panel's
  button); :func:`claim_summary` keeps what the paper's claims need (shipped as ``study_default.json``; the
  claims and their computed verdicts: :mod:`workbench.quantum.qgas.claims`).

Every memo lives here; :func:`clear_caches` empties the in-memory ones. On disk (the qgas cache folder) stay the
transcripts (they are logs, and the searches' cache), the trained references and the noisy scores, each file
holding the key it was computed for.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.atomic import write_text
from workbench.quantum.device import Device
from workbench.quantum.qasm import Limits, parse_qasm
from workbench.quantum.qgas.ansatze import hardware_efficient, qaoa, uccsd
from workbench.quantum.qgas.config import SEARCHERS, STUDY, QgasConfig, QgasViewConfig, scored_device
from workbench.quantum.qgas.problems import Problem, get_problem
from workbench.quantum.qgas.prompt import Record
from workbench.quantum.qgas.qasm import circuit_stats
from workbench.quantum.qgas.search import SearchRun, best_record, load_records, run_search
from workbench.quantum.qgas.vqe import noisy_energy, train

__all__ = [
    "PAPER",
    "STUDY",
    "SEARCHERS",
    "Reference",
    "Comparison",
    "QgasViewConfig",
    "QgasView",
    "search",
    "references",
    "noisy_errors",
    "compare",
    "is_computed",
    "qgas_view",
    "claim_summary",
    "default_summary",
    "excess_over_baselines",
    "clear_caches",
]

log = logging.getLogger(__name__)

PAPER = "Liang et al., 'Unleashing the Potential of LLMs for Quantum Computing: A Study in Quantum Architecture Design', arXiv 2307.08191v1 (2023-07-17)"
CHEMICAL_ACCURACY = 1.6e-3  # Ha


@dataclass(frozen=True)
class Reference:
    """A fixed ansatz trained on the problem: structure, noiseless error and (with a device) noisy error."""

    name: str
    depth: int
    cnots: int
    params: int
    error: float
    noisy_error: float | None


@dataclass(frozen=True)
class Comparison:
    """One problem: every searcher's run (``searches[name]``), the references, the noisy errors of every valid
    proposal (``noisy[name][iteration]``), the device and the exact minimum."""

    problem: Problem
    bond_length: float
    searches: dict[str, SearchRun]
    references: tuple[Reference, ...]
    noisy: dict[str, dict[int, float]]
    device: str

    def best(self, name: str) -> Record | None:
        return self.searches[name].best


def _config(problem: str, proposer: str, seed: int, iterations: int, bond_length: float, **kw: Any) -> QgasConfig:
    settings = {**STUDY, "iterations": iterations, **kw}
    settings.pop("device")  # searches are scored noiseless; noise is scored afterwards (noisy_errors)
    base = QgasConfig(problem=problem, proposer=proposer, seed=seed, bond_length=bond_length, **settings)
    digest = hashlib.sha256(json.dumps(base.to_dict(), sort_keys=True).encode()).hexdigest()[:12]
    from workbench.data import cache_dir

    path = cache_dir("qgas", "study") / f"{problem}-{proposer}-s{seed}-{digest}.json"
    return base.replace(transcript=str(path))


_SEARCHES: dict[QgasConfig, SearchRun] = {}


def _load(config: QgasConfig) -> SearchRun | None:
    path = Path(config.transcript)
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
        if stored.get("config") == config.to_dict() and len(stored["records"]) == config.iterations:
            problem = get_problem(config.problem, config.bond_length)
            return SearchRun(problem, load_records(path), str(path))
    except (ValueError, KeyError):
        log.warning("qgas: ignoring unreadable cached transcript %s", path)
    return None


def search(
    problem: str,
    proposer: str = "local",
    *,
    seed: int = 0,
    iterations: int = STUDY["iterations"],
    bond_length: float = 0.0,
    on_step: Callable[[int, Record], None] | None = None,
    **settings: Any,
) -> SearchRun:
    """One search (memoised in memory and on disk through its transcript); ``on_step(i, record)`` per
    iteration (also when the run comes from a cache)."""
    config = _config(problem, proposer, seed, iterations, bond_length, **settings)
    run = _SEARCHES.get(config) or _load(config)
    if run is None:
        run = run_search(config, on_step=on_step)
    elif on_step is not None:
        for r in run.records:
            on_step(r.iteration, r)
    _SEARCHES[config] = run
    return run


def _reference_circuits(p: Problem) -> list[tuple[str, Any]]:
    out = [(f"HEA ({r} layer{'s' if r > 1 else ''})", hardware_efficient(p.num_qubits, reps=r)) for r in (1, 2, 3)]
    if p.kind == "vqe":
        out.append(("UCCSD", uccsd(p.num_qubits, p.hint)))
    else:
        out += [(f"QAOA (p={k})", qaoa(p.terms, p.num_qubits, layers=k)) for k in (1, 2, 3)]
    return out


def _disk_memo(kind: str, key: dict[str, Any], compute: Callable[[], Any]) -> Any:
    """``compute()``'s JSON value, stored in the qgas cache folder under ``kind`` and a digest of ``key`` (the
    file holds the key too, and is used only when it matches); written atomically."""
    from workbench.data import cache_dir

    text = json.dumps(key, sort_keys=True)
    path = cache_dir("qgas", "study") / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
            if json.dumps(stored["key"], sort_keys=True) == text:
                return stored["value"]
        except (ValueError, KeyError):
            log.warning("qgas: ignoring unreadable cache file %s", path)
    value = compute()
    write_text(path, json.dumps({"key": key, "value": value}) + "\n")
    return value


@functools.lru_cache(maxsize=32)
def _references(
    problem: str, bond_length: float, device: Device | None, steps: int, restarts: int
) -> tuple[Reference, ...]:
    name = device.name if device is not None else "none"
    key = {"problem": problem, "bond_length": bond_length, "device": name, "steps": steps, "restarts": restarts}
    rows = _disk_memo(
        "references",
        key,
        lambda: [r.__dict__ for r in _train_references(problem, bond_length, device, steps, restarts)],
    )
    return tuple(Reference(**r) for r in rows)


def _train_references(
    problem: str, bond_length: float, device: Device | None, steps: int, restarts: int
) -> list[Reference]:
    p = get_problem(problem, bond_length)
    out = []
    for name, circuit in _reference_circuits(p):
        trained = train(circuit, p.matrix(), steps=steps, restarts=restarts)
        depth, _, cnots = circuit_stats(circuit)
        if any(inst.name == "rzz" for inst in circuit.data):  # QAOA's rzz = 2 CNOTs
            cnots += 2 * sum(inst.name == "rzz" for inst in circuit.data)
        noisy = None
        if device is not None:
            noisy = noisy_energy(circuit, trained.params, p.terms, device).energy - p.exact
        out.append(Reference(name, depth, cnots, circuit.num_parameters, trained.energy - p.exact, noisy))
    return out


def references(problem: str, *, bond_length: float = 0.0, device: str = STUDY["device"]) -> tuple[Reference, ...]:
    """The fixed reference ansaetze trained on ``problem`` (memoised); ``device``: a snapshot's name or 'none'."""
    return _references(problem, bond_length, scored_device(device), STUDY["train_steps"], STUDY["restarts"])


@functools.lru_cache(maxsize=128)
def _noisy(transcript: str, problem: str, bond_length: float, device: Device) -> dict[int, float]:
    from workbench.atomic import sha256_of

    key = {
        "transcript_sha256": sha256_of(transcript),
        "problem": problem,
        "bond_length": bond_length,
        "device": device.name,
    }
    value = _disk_memo(
        "noisy", key, lambda: {str(k): v for k, v in _score_noisy(transcript, problem, bond_length, device).items()}
    )
    return {int(k): v for k, v in value.items()}


def _score_noisy(transcript: str, problem: str, bond_length: float, device: Device) -> dict[int, float]:
    p = get_problem(problem, bond_length)
    limits = Limits(max_qubits=max(64, p.num_qubits), max_clbits=0, measurements=False, version=3)
    out = {}
    for r in load_records(transcript):
        if r.valid and r.theta is not None:
            circuit = parse_qasm(r.qasm, what=f"transcript={transcript!r} record {r.iteration}", limits=limits)
            out[r.iteration] = noisy_energy(circuit, r.theta, p.terms, device).energy - p.exact
    return out


def noisy_errors(run: SearchRun, device: str, bond_length: float = 0.0) -> dict[int, float]:
    """Energy error of every valid proposal of ``run`` under ``device`` noise (its noiselessly trained
    parameters), by iteration (memoised); ``device``: a snapshot's name or 'none' (no noisy score)."""
    dev = scored_device(device)
    if dev is None:
        return {}
    return _noisy(run.transcript, run.problem.name, bond_length, dev)


_DONE: set[tuple] = set()


def compare(
    problem: str,
    *,
    seed: int = 0,
    iterations: int = STUDY["iterations"],
    bond_length: float = 0.0,
    device: str = STUDY["device"],
    on_step: Callable[[int, int], None] | None = None,
) -> Comparison:
    """Every searcher of :data:`SEARCHERS` on ``problem`` plus the references, noiseless and under ``device``.
    ``on_step(done, total)`` reports progress (searches' iterations, then the noise scoring)."""
    total = len(SEARCHERS) * iterations + len(SEARCHERS) + 1
    done = 0

    def tick(*_):
        nonlocal done
        done += 1
        if on_step is not None:
            on_step(done, total)

    searches = {}
    for name in SEARCHERS:
        searches[name] = search(problem, name, seed=seed, iterations=iterations, bond_length=bond_length, on_step=tick)
    refs = references(problem, bond_length=bond_length, device=device)
    tick()
    noisy = {}
    for name in SEARCHERS:
        noisy[name] = noisy_errors(searches[name], device, bond_length)
        tick()
    _DONE.add((problem, seed, iterations, bond_length, device))
    return Comparison(get_problem(problem, bond_length), bond_length, searches, refs, noisy, device)


def is_computed(
    problem: str,
    *,
    seed: int = 0,
    iterations: int = STUDY["iterations"],
    bond_length: float = 0.0,
    device: str = STUDY["device"],
) -> bool:
    """True when :func:`compare` has run for these settings in this process, or its transcripts are on disk."""
    if (problem, seed, iterations, bond_length, device) in _DONE:
        return True
    return all(Path(_config(problem, s, seed, iterations, bond_length).transcript).is_file() for s in SEARCHERS)


def cheapest_below_target(run: SearchRun) -> Record | None:
    """The valid proposal with the fewest CNOTs whose error is below the target (1.6 mHa chemistry, 1e-3
    otherwise); None when no proposal reached it."""
    target = _target(run.problem)
    good = [r for r in run.records if r.valid and r.energy_error < target]
    return min(good, key=lambda r: (r.cnots, r.energy_error, r.iteration)) if good else None


def guideline_table(
    problem: str, *, iterations: int = STUDY["iterations"], device: str = STUDY["device"]
) -> list[dict[str, Any]]:
    """The local proposer without a guideline and with "fewer-cnots": the most accurate proposal, the cheapest
    one below the target, and that one's error under ``device`` noise."""
    rows = []
    for guideline in ("none", "fewer-cnots"):
        run = search(problem, "local", iterations=iterations, guideline=guideline)
        best, cheap = run.best, cheapest_below_target(run)
        noisy = noisy_errors(run, device) if device != "none" else {}
        rows.append(
            {
                "problem": problem,
                "guideline": guideline,
                "most accurate: error": best.energy_error if best else None,
                "most accurate: CNOTs": best.cnots if best else None,
                "cheapest below target: CNOTs": cheap.cnots if cheap else None,
                "cheapest below target: error": cheap.energy_error if cheap else None,
                f"cheapest below target: error on {device}": noisy.get(cheap.iteration) if cheap else None,
                "valid": f"{run.valid_fraction:.0%}",
            }
        )
    return rows


def seed_table(problem: str, seeds: Sequence[int], *, iterations: int = STUDY["iterations"]) -> list[dict[str, Any]]:
    """Each searcher over several seeds: median best error, median CNOTs of the best, and in how many seeds
    (and after how many proposals, median) the target error was reached."""
    rows = []
    for name in SEARCHERS:
        runs = [search(problem, name, seed=s, iterations=iterations) for s in seeds]
        errors = [r.best.energy_error for r in runs if r.best]
        cnots = [r.best.cnots for r in runs if r.best]
        target = _target(runs[0].problem)
        reached = []
        for r in runs:
            curve = r.best_error_curve()
            hit = next((i + 1 for i, e in enumerate(curve) if e is not None and e < target), None)
            if hit is not None:
                reached.append(hit)
        rows.append(
            {
                "problem": problem,
                "searcher": name,
                "seeds": len(seeds),
                "median best error": float(np.median(errors)) if errors else None,
                "median CNOTs of best": float(np.median(cnots)) if cnots else None,
                "seeds reaching target": f"{len(reached)}/{len(seeds)}",
                "median proposals to target": float(np.median(reached)) if reached else None,
                "validity": f"{np.mean([r.valid_fraction for r in runs]):.0%}",
            }
        )
    return rows


# ---- the panel's view ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QgasView:
    """What the panel draws: the comparison (None until computed) and the selected search's state."""

    config: QgasViewConfig
    problem: Problem
    comparison: Comparison | None
    references: tuple[Reference, ...]
    record: Record | None  # the proposal made at the selected iteration
    best: Record | None  # the best proposal up to the selected iteration


def qgas_view(config: QgasViewConfig, *, compute: bool = False) -> QgasView:
    """The view at ``config``. The comparison is taken from the caches; with ``compute`` it is computed when
    missing (10-60 s on 2 cores: the panel does it behind its button). Without a comparison the view has no
    searches and no references (``comparison`` None)."""
    p = get_problem(config.problem)
    n = config.iterations
    comparison = compare(config.problem, iterations=n) if compute or is_computed(config.problem, iterations=n) else None
    refs = comparison.references if comparison is not None else ()
    record = best = None
    if comparison is not None:
        records = comparison.searches[config.proposer].records[: config.iteration]
        record, best = records[-1], best_record(records)
    return QgasView(config, p, comparison, refs, record, best)


# ---- the figures behind the paper's claims (the claims: workbench.quantum.qgas.claims) -----------------------


def _target(p: Problem) -> float:
    return CHEMICAL_ACCURACY if p.kind == "vqe" else 1e-3


#: the claims' figures from the study's comparisons (every problem, seed 0, the study's settings); made by
#: ``python -m workbench.quantum.qgas.study`` (about a minute on 2 cores)
SUMMARY_FILE = Path(__file__).with_name("study_default.json")


def claim_summary(comparisons: Sequence[Comparison]) -> dict[str, Any]:
    """Per problem: the target error, each searcher's best-error curve (best error after k proposals), and the
    local proposer's best proposal noiseless and under the device's noise; plus each searcher's validity."""
    out: dict[str, Any] = {"settings": {**STUDY, "seed": 0}, "problems": {}}
    for c in comparisons:
        b = c.best("local")
        noisy = c.noisy["local"].get(b.iteration) if b is not None else None
        out["problems"][c.problem.name] = {
            "target": _target(c.problem),
            "unit": c.problem.unit,
            "curves": {n: run.best_error_curve() for n, run in c.searches.items()},
            "valid": {n: run.valid_fraction for n, run in c.searches.items()},
            "local_best": None if b is None else {"error": b.energy_error, "noisy_error": noisy, "cnots": b.cnots},
            "device": c.device,
        }
    return out


@functools.lru_cache(maxsize=1)
def default_summary() -> dict[str, Any]:
    """The shipped :func:`claim_summary` of every problem (``study_default.json``)."""
    return json.loads(SUMMARY_FILE.read_text())


def best_error_after(curve: Sequence[float | None], proposals: int) -> float:
    """The best error after ``proposals`` proposals (inf when none was valid yet)."""
    if not 1 <= proposals <= len(curve):
        raise ValueError(f"proposals={proposals} is out of range: valid range is 1..{len(curve)} (the search length)")
    e = curve[proposals - 1]
    return float("inf") if e is None else float(e)


def excess_over_baselines(summary: dict[str, Any], proposals: int) -> tuple[float, str]:
    """The largest, over problems, of the local proposer's best error above the better of random and evolutionary
    search after ``proposals`` proposals, in units of the problem's target (0 when it is not above), and where."""
    worst = (-1.0, "")
    for name, p in summary["problems"].items():
        local = best_error_after(p["curves"]["local"], proposals)
        other = min(best_error_after(p["curves"][n], proposals) for n in ("random", "evolutionary"))
        excess = max(0.0, local - other) / p["target"]
        if excess > worst[0]:
            worst = (excess, name)
    return worst


def markdown_rows(rows: Sequence[dict[str, Any]]) -> str:
    """Rows of dicts (same keys) as a markdown table; floats with 4 significant digits."""

    def cell(v: Any) -> str:
        if v is None:
            return "-"
        return f"{v:.4g}" if isinstance(v, float) else str(v).replace("|", "/")

    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    out += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out)


def hamiltonian_table() -> list[dict[str, Any]]:
    """Provenance of the shipped Hamiltonians (one row per molecule, at its default bond length)."""
    from workbench.quantum.molecules import MOLECULES, load_molecule

    rows = []
    for name in MOLECULES:
        h = load_molecule(name)
        i = h.info
        rows.append(
            {
                "molecule": name,
                "bond (A)": h.bond_length,
                "basis": i["basis"],
                "active space": i["active_space_note"],
                "mapping": i["mapping"].split(",")[0],
                "qubits": h.num_qubits,
                "terms": len(h.terms),
                "HF (Ha)": round(i["hf_energy"], 6),
                "exact, diagonalised (Ha)": round(h.exact_energy, 6),
                "full-space FCI, pyscf (Ha)": round(i["fci_energy_full_space"], 6),
            }
        )
    return rows


@functools.lru_cache(maxsize=1)
def calibration():
    """The simulation-cost model's constants, measured on this machine (memoised; about 2 s)."""
    from workbench.quantum.qgas.model import calibrate

    return calibrate()


def paper_scale(
    comparisons: Sequence[Comparison], *, iterations: int = 20, qubits=(4, 5, 8, 10, 12, 14)
) -> dict[str, Any]:
    """MODEL: a search's simulation time and prompt size at paper scale, plus the model's check against our
    measured proposals. Returns ``{"rows": [...], "check": {...}, "formula": str, "label": "MODEL"}``."""
    from workbench.quantum.qgas.model import (
        FORMULA,
        dense_hamiltonian_bytes,
        evaluation_seconds,
        prompt_tokens,
        proposal_seconds,
    )

    cal = calibration()
    records = [r for c in comparisons for run in c.searches.values() for r in run.records if r.valid and r.evaluations]
    restarts = STUDY["restarts"]
    evals = float(np.median([r.evaluations for r in records])) if records else 30.0
    ratios = []
    for c in comparisons:
        for run in c.searches.values():
            for r in run.records[1:]:  # the first proposal also pays the QASM parser's warm-up
                if r.valid and r.evaluations:
                    model = proposal_seconds(cal, c.problem.num_qubits, r.gates, restarts, r.evaluations)
                    ratios.append(r.seconds / model)
    chars = [len(r.prompt) for c in comparisons for run in c.searches.values() for r in run.records[3:]]
    tokens = prompt_tokens(float(np.median(chars))) if chars else None
    rows = []
    for n in qubits:
        gates = 3 * n + 2 * (n - 1)  # n_local(ry, cx, linear, reps=2)
        t = evaluation_seconds(cal, n, gates, restarts)
        rows.append(
            {
                "qubits": n,
                "gates (HEA, 2 layers)": gates,
                "MODEL eval (ms)": 1e3 * t,
                "MODEL proposal (s)": evals * (t + cal.o),
                f"MODEL search of {iterations} (s)": iterations * evals * (t + cal.o),
                "dense H (GiB)": dense_hamiltonian_bytes(n) / 2**30,
            }
        )
    return {
        "label": "MODEL",
        "formula": FORMULA,
        "constants": {"a": cal.a, "b": cal.b, "c": cal.c, "d": cal.d, "o": cal.o},
        "evaluations_per_proposal": evals,
        "prompt_tokens": tokens,
        "rows": rows,
        "check": {
            "proposals": len(ratios),
            "median_measured_over_model": float(np.median(ratios)) if ratios else None,
            "p10": float(np.percentile(ratios, 10)) if ratios else None,
            "p90": float(np.percentile(ratios, 90)) if ratios else None,
        },
    }


def clear_caches() -> None:
    """Empty every memo of this technique (transcripts on disk stay)."""
    calibration.cache_clear()
    _SEARCHES.clear()
    _references.cache_clear()
    _noisy.cache_clear()
    _DONE.clear()


def save_summary(comparisons: Sequence[Comparison], path: str | Path) -> Path:
    """Write a JSON summary (best errors, structure, validity, noisy errors) atomically."""
    out = []
    for c in comparisons:
        out.append(
            {
                "problem": c.problem.name,
                "device": c.device,
                "searches": {
                    n: {
                        "valid_fraction": run.valid_fraction,
                        "best_error_curve": run.best_error_curve(),
                        "best_cnots": run.best.cnots if run.best else None,
                    }
                    for n, run in c.searches.items()
                },
                "references": [r.__dict__ for r in c.references],
            }
        )
    return write_text(path, json.dumps(out, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m workbench.quantum.qgas.study [OUT]``: compare every problem at the study's settings (seed 0) and
    write :func:`claim_summary` (default: the package's ``study_default.json``)."""
    import sys

    from workbench.quantum.qgas.problems import PROBLEMS

    argv = sys.argv[1:] if argv is None else argv
    summary = claim_summary([compare(p) for p in PROBLEMS])
    write_text(Path(argv[0]) if argv else SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
