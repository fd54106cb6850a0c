"""The QGAS loop: prompt -> proposer -> parse and validate -> train -> score -> feedback, every step logged.

For each iteration: build the prompt from the history (:func:`~workbench.quantum.qgas.prompt.build_prompt`),
ask the proposer for raw text, parse and validate it as OpenQASM 3 (:func:`~workbench.quantum.qgas.qasm.parse_proposal`;
an :class:`~workbench.quantum.qgas.qasm.InvalidProposal` is logged with its reason and skipped), train it
(:func:`~workbench.quantum.qgas.vqe.train`), optionally score it under a device's noise (exactly, or from
``shots`` counted shots per measurement setting on the device machine), and append a
:class:`~workbench.quantum.qgas.prompt.Record`. The transcript (the config, the problem's provenance and every
record: prompt, raw answer, QASM, scores) is rewritten atomically after every iteration
(:func:`workbench.atomic.write_text`), so a killed run leaves a readable transcript of the iterations done.
Only the proposer's own errors (an unreachable endpoint, a replay that runs out) stop the loop.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.atomic import write_text
from workbench.quantum.qgas.config import QgasConfig
from workbench.quantum.qgas.problems import Problem, get_problem
from workbench.quantum.qgas.prompt import Record, as_dict, build_prompt
from workbench.quantum.qgas.proposers import (
    EndpointProposer,
    EvolutionaryProposer,
    LocalProposer,
    RandomProposer,
    ReplayProposer,
)
from workbench.quantum.qgas.qasm import InvalidProposal, Rules, parse_proposal
from workbench.quantum.qgas.transcript import check_writable, read_records, record_from_dict
from workbench.quantum.qgas.vqe import noisy_energy, train

__all__ = ["SearchRun", "make_proposer", "run_search", "transcript_path", "best_record", "load_records"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchRun:
    """A finished search: its ``records`` (one per iteration) and the transcript's path."""

    problem: Problem
    records: tuple[Record, ...]
    transcript: str

    @property
    def valid_fraction(self) -> float:
        return sum(r.valid for r in self.records) / len(self.records)

    @property
    def best(self) -> Record | None:
        return best_record(self.records)

    def best_error_curve(self) -> list[float | None]:
        """Best energy error found up to each iteration (None before the first valid proposal)."""
        out, best = [], None
        for r in self.records:
            if r.valid and (best is None or r.energy_error < best):
                best = r.energy_error
            out.append(best)
        return out


def best_record(records) -> Record | None:
    """The valid record of lowest energy error (ties: fewer CNOTs, then earlier)."""
    valid = [r for r in records if r.valid]
    return min(valid, key=lambda r: (round(r.energy_error, 9), r.cnots, r.iteration)) if valid else None


def make_proposer(config: QgasConfig):
    """The proposer ``config.proposer`` names."""
    if config.proposer == "local":
        return LocalProposer(config.seed)
    if config.proposer == "random":
        return RandomProposer(config.seed)
    if config.proposer == "evolutionary":
        return EvolutionaryProposer(config.seed)
    if config.proposer == "replay":
        return ReplayProposer.from_file(config.replay)
    return EndpointProposer(
        config.endpoint_url, config.endpoint_model, api_key_env=config.api_key_env, timeout_s=config.timeout_s
    )


def transcript_path(config: QgasConfig) -> Path:
    """``config.transcript`` or ``<qgas cache>/transcripts/<problem>-<proposer>-s<seed>-n<iterations>.json``."""
    if config.transcript:
        return Path(config.transcript)
    from workbench.data import cache_dir

    bond = f"-{config.bond_length:g}A" if config.bond_length else ""
    name = f"{config.problem}{bond}-{config.proposer}-s{config.seed}-n{config.iterations}-{config.guideline}.json"
    return cache_dir("qgas", "transcripts") / name


def load_records(path: str | Path) -> tuple[Record, ...]:
    """The records of a transcript written by :func:`run_search`, every field checked (ValueError in one line
    naming the file, the record and the field)."""
    records = read_records(path)
    return tuple(record_from_dict(r, f"transcript={str(path)!r} records[{i}]") for i, r in enumerate(records))


def _write(path: Path, config: QgasConfig, problem: Problem, records: list[Record]) -> None:
    payload = {
        "technique": "qgas",
        "config": config.to_dict(),
        "problem": {
            "name": problem.name,
            "description": problem.description,
            "num_qubits": problem.num_qubits,
            "exact": problem.exact,
            "unit": problem.unit,
            "terms": [[c, lbl] for c, lbl in problem.terms],
        },
        "records": [as_dict(r) for r in records],
    }
    try:
        write_text(path, json.dumps(payload, indent=1) + "\n")
    except OSError as exc:
        raise ValueError(f"transcript={str(path)!r} cannot be written: {exc.strerror or exc}") from None


def score(
    problem: Problem, text: str, rules: Rules, config: QgasConfig, iteration: int, proposer: str, prompt: str
) -> Record:
    """Parse, validate, train and score one raw proposal (an invalid one gives a record with its reason)."""
    start = time.perf_counter()
    try:
        ansatz = parse_proposal(text, rules)
    except InvalidProposal as exc:
        log.info("qgas iteration %d: invalid proposal (%s): %s", iteration, exc.reason, exc)
        return Record(
            iteration, proposer, text, False, exc.reason, str(exc), seconds=time.perf_counter() - start, prompt=prompt
        )
    try:
        trained = train(
            ansatz.circuit, problem.matrix(), steps=config.train_steps, restarts=config.restarts, seed=config.seed
        )
    except ValueError as exc:  # the simulator refused the circuit: logged and skipped like any invalid proposal
        log.info("qgas iteration %d: training failed: %s", iteration, exc)
        seconds = time.perf_counter() - start
        return Record(
            iteration, proposer, text, False, "train", str(exc), qasm=ansatz.qasm, seconds=seconds, prompt=prompt
        )
    noisy = noisy_error = executions = None
    if config.device != "none":
        shots = config.shots or None
        scored = noisy_energy(
            ansatz.circuit, trained.params, problem.terms, config.resolved_device(), seed=config.seed, shots=shots
        )
        noisy, noisy_error = scored.energy, scored.energy - problem.exact
        if shots is not None:
            executions = scored.executions
            log.info(
                "qgas iteration %d: noisy score from %d settings x %d shots = %d machine executions",
                iteration,
                scored.settings,
                shots,
                executions,
            )
    return Record(
        iteration,
        proposer,
        text,
        True,
        qasm=ansatz.qasm if ansatz.qasm.endswith("\n") else ansatz.qasm + "\n",
        depth=ansatz.depth,
        gates=ansatz.gates,
        cnots=ansatz.cnots,
        params=ansatz.params,
        energy=trained.energy,
        energy_error=trained.energy - problem.exact,
        approximation_ratio=problem.approximation_ratio(trained.energy),
        noisy_energy=noisy,
        noisy_energy_error=noisy_error,
        seconds=time.perf_counter() - start,
        prompt=prompt,
        theta=trained.params,
        evaluations=trained.evaluations,
        noisy_executions=executions,
    )


def run_search(
    config: QgasConfig, *, proposer: Any = None, on_step: Callable[[int, Record], None] | None = None
) -> SearchRun:
    """Run the loop ``config`` describes (``proposer`` overrides the one it names). ``on_step(i, record)``
    after each iteration (progress bars). Raises ValueError for the proposer's own failures."""
    problem = get_problem(config.problem, config.bond_length)
    rules = Rules(problem.num_qubits, config.max_depth, 10 * config.max_depth, config.max_cnots, config.max_params)
    proposer = make_proposer(config) if proposer is None else proposer
    path = transcript_path(config)
    check_writable(path)  # before the first (possibly long) iteration
    records: list[Record] = []
    for i in range(config.iterations):
        prompt = build_prompt(i, problem, rules, config.guideline, tuple(records))
        text = proposer.propose(prompt)
        records.append(score(problem, text, rules, config, i, proposer.name, prompt.text))
        _write(path, config, problem, records)
        if on_step is not None:
            on_step(i, records[-1])
    return SearchRun(problem, tuple(records), str(path))
