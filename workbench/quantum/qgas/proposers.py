"""Proposers: who writes the next ansatz. All take a :class:`~workbench.quantum.qgas.prompt.Prompt` and return
raw text (what a chat model would answer); the loop parses and validates it.

- :class:`LocalProposer` (the default; deterministic): grammar-based mutations of the best valid proposal so
  far, chosen from the feedback: grow (a rotation, an entangler on neighbouring qubits, a layer, an axis
  change) while the error is above the target, prune (drop an entangler or a rotation) once it is below or
  after a budget refusal. Starts from the reference state (X gates on the hint's 1 bits) plus one ry layer
  and a cx chain. Seeded by (seed, iteration). Under the "fewer-cnots" guideline it mutates the cheapest
  proposal below the target error instead of the most accurate one (the scripted human guideline).
- :class:`RandomProposer` (baseline): independent random genomes from the same grammar.
- :class:`EvolutionaryProposer` (baseline, a stand-in for QuantumNAS-style search): a population of the best
  valid proposals, tournament selection, one uniformly random mutation, no feedback rules.
- :class:`ReplayProposer`: the raw answers of a logged transcript, in order (re-runs it exactly).
- :class:`EndpointProposer`: an OpenAI-compatible ``POST {url}/chat/completions`` (model, key from an
  environment variable the user names); never called in tests except against a local replay server.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.quantum.qasm import Limits, parse_qasm
from workbench.quantum.qgas.ansatze import ENTANGLERS, ROTATIONS, Gate, Genome, genome_of, render_qasm
from workbench.quantum.qgas.prompt import Prompt, Record
from workbench.quantum.qgas.transcript import read_records

__all__ = [
    "EndpointError",
    "LocalProposer",
    "RandomProposer",
    "EvolutionaryProposer",
    "ReplayProposer",
    "EndpointProposer",
    "target_error",
]


class EndpointError(ValueError):
    """The chat endpoint could not be used (unreachable, HTTP error, malformed reply): names the URL."""


def target_error(prompt: Prompt) -> float:
    """Error below which the local proposer prunes instead of growing: chemical accuracy (1.6 mHa) for
    chemistry, 1e-3 cost units otherwise."""
    return 1.6e-3 if prompt.problem.kind == "vqe" else 1e-3


def _answer(genome: Genome, n: int, note: str) -> str:
    return f"Proposal ({note}):\n```qasm\n{render_qasm(genome, n)}```\n"


def _seed_genome(prompt: Prompt) -> Genome:
    n = prompt.rules.num_qubits
    hint = prompt.problem.hint
    init = [Gate("x", (q,)) for q in range(n) if hint and hint[n - 1 - q] == "1"]
    if not hint:  # combinatorial problems: start in the uniform superposition
        init = [Gate("h", (q,)) for q in range(n)]
    layer = [Gate("ry", (q,)) for q in range(n)] + [Gate("cx", (q, q + 1)) for q in range(n - 1)]
    return tuple(init + layer)


def _best(history: Sequence[Record], target: float | None = None) -> Record | None:
    """The record to mutate: lowest error (ties: fewer CNOTs); with ``target`` (the "fewer-cnots" guideline)
    the cheapest record below the target error when there is one."""
    valid = [r for r in history if r.valid]
    if not valid:
        return None
    if target is not None:
        good = [r for r in valid if r.energy_error < target]
        if good:
            return min(good, key=lambda r: (r.cnots, round(r.energy_error, 9), r.iteration))
    return min(valid, key=lambda r: (round(r.energy_error, 9), r.cnots, r.iteration))


def _parse(record: Record) -> Genome:
    limits = Limits(max_clbits=0, measurements=False, version=3)
    return genome_of(parse_qasm(record.qasm, what=f"proposal {record.iteration}", limits=limits))


def _grow(genome: Genome, n: int, rng: np.random.Generator) -> tuple[Genome, str]:
    g = list(genome)
    move = rng.choice(["rotation", "entangler", "layer", "axis"], p=[0.35, 0.25, 0.25, 0.15])
    if move == "rotation":
        g.insert(int(rng.integers(0, len(g) + 1)), Gate(str(rng.choice(ROTATIONS)), (int(rng.integers(n)),)))
    elif move == "entangler":
        q = int(rng.integers(n - 1))
        g.insert(int(rng.integers(0, len(g) + 1)), Gate(str(rng.choice(ENTANGLERS)), (q, q + 1)))
    elif move == "layer":
        axis = str(rng.choice(ROTATIONS[1:]))
        g += [Gate(axis, (q,)) for q in range(n)] + [Gate("cx", (q, q + 1)) for q in range(n - 1)]
    else:
        idx = [i for i, x in enumerate(g) if x.name in ROTATIONS]
        if not idx:
            return _grow(genome, n, rng)
        i = int(rng.choice(idx))
        g[i] = Gate(str(rng.choice([a for a in ROTATIONS if a != g[i].name])), g[i].qubits)
    return tuple(g), f"grow: {move}"


def _prune(genome: Genome, rng: np.random.Generator) -> tuple[Genome, str]:
    g = list(genome)
    two = [i for i, x in enumerate(g) if len(x.qubits) == 2]
    rot = [i for i, x in enumerate(g) if x.name in ROTATIONS]
    pool, what = (two, "entangler") if two and (rng.random() < 0.6 or len(rot) <= 1) else (rot, "rotation")
    if len(pool) == 0 or len(g) <= 1:
        return genome, "prune: nothing to drop"
    del g[int(rng.choice(pool))]
    return tuple(g), f"prune: drop {what}"


class LocalProposer:
    """Deterministic grammar-based mutation proposer driven by the feedback (see module docstring)."""

    name = "local"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def propose(self, prompt: Prompt) -> str:
        n = prompt.rules.num_qubits
        rng = np.random.default_rng([self.seed, prompt.iteration])
        cheap = prompt.guideline == "fewer-cnots"
        best = _best(prompt.history, target_error(prompt) if cheap else None)
        if best is None:
            return _answer(_seed_genome(prompt), n, "seed: reference state, ry layer, cx chain")
        genome = _parse(best)
        last = prompt.history[-1]
        over_budget = not last.valid and last.reason in ("depth", "gates", "cnots", "params")
        if over_budget or best.energy_error < target_error(prompt):
            genome, note = _prune(genome, rng)
        else:
            genome, note = _grow(genome, n, rng)
            if rng.random() < 0.3:
                genome, extra = _grow(genome, n, rng)
                note += f", {extra.split(': ')[1]}"
        return _answer(genome, n, f"{note} of iteration {best.iteration}")


def random_genome(n: int, rng: np.random.Generator, hint: str = "") -> Genome:
    """A random genome from the grammar: reference-state prefix, 1-4 layers of random-axis rotations on
    random qubits and random entanglers on any pair."""
    g: list[Gate] = [Gate("x", (q,)) for q in range(n) if hint and hint[n - 1 - q] == "1"]
    if not hint:
        g += [Gate("h", (q,)) for q in range(n)]
    for _ in range(int(rng.integers(1, 5))):
        for q in range(n):
            if rng.random() < 0.8:
                g.append(Gate(str(rng.choice(ROTATIONS)), (q,)))
        for _ in range(int(rng.integers(1, n + 1))):
            a, b = (int(x) for x in rng.choice(n, size=2, replace=False))
            g.append(Gate(str(rng.choice(ENTANGLERS)), (a, b)))
    return tuple(g)


class RandomProposer:
    """Random search baseline: an independent random genome each iteration (seeded by (seed, iteration))."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def propose(self, prompt: Prompt) -> str:
        rng = np.random.default_rng([self.seed, prompt.iteration, 1])
        n = prompt.rules.num_qubits
        return _answer(random_genome(n, rng, prompt.problem.hint), n, "random")


class EvolutionaryProposer:
    """Evolutionary baseline: the first ``population`` iterations are random genomes; then a tournament of two
    among the ``population`` best valid proposals picks a parent, which gets one uniformly random mutation
    (grow or prune, any move). No feedback rules (the error only ranks)."""

    name = "evolutionary"

    def __init__(self, seed: int = 0, population: int = 4) -> None:
        self.seed, self.population = seed, population

    def propose(self, prompt: Prompt) -> str:
        rng = np.random.default_rng([self.seed, prompt.iteration, 2])
        n = prompt.rules.num_qubits
        valid = sorted((r for r in prompt.history if r.valid), key=lambda r: (r.energy_error, r.iteration))
        if prompt.iteration < self.population or not valid:
            return _answer(random_genome(n, rng, prompt.problem.hint), n, "initial population")
        pool = valid[: self.population]
        a, b = (int(i) for i in rng.choice(len(pool), size=2, replace=len(pool) < 2))
        parent = pool[min(a, b)]  # pool is sorted: the lower index is the fitter one
        genome = _parse(parent)
        genome, note = _grow(genome, n, rng) if rng.random() < 0.6 else _prune(genome, rng)
        return _answer(genome, n, f"{note} of iteration {parent.iteration}")


class ReplayProposer:
    """The raw answers of a logged transcript (``records[i]['raw']`` for iteration i), for an exact re-run."""

    name = "replay"

    def __init__(self, records: Sequence[dict[str, Any]], source: str = "") -> None:
        self.raw = [r["raw"] for r in records]
        self.source = source

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ReplayProposer:
        """Load a transcript written by the loop (only ``records[i]['raw']`` is needed, and must be text);
        ValueError in one line naming the file when it is missing or malformed."""
        records = read_records(path, flag="replay")
        for i, record in enumerate(records):
            if not isinstance(record.get("raw"), str):
                found = "no 'raw' field" if "raw" not in record else f"'raw' of type {type(record['raw']).__name__}"
                raise ValueError(
                    f"replay={str(path)!r} is not a QGAS transcript: records[{i}] has {found}: valid is the answer text"
                )
        return cls(records, str(path))

    def propose(self, prompt: Prompt) -> str:
        if prompt.iteration >= len(self.raw):
            raise ValueError(
                f"iterations={prompt.iteration + 1} is out of range for the replayed transcript "
                f"{self.source or ''}: valid range is 1..{len(self.raw)}"
            )
        return self.raw[prompt.iteration]


class EndpointProposer:
    """An OpenAI-compatible chat endpoint: ``POST {url}/chat/completions`` with ``{"model", "messages",
    "temperature"}`` and ``Authorization: Bearer $<api_key_env>`` when that variable is set; the answer is
    ``choices[0].message.content``. Errors raise :class:`EndpointError` naming the URL."""

    name = "endpoint"

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        temperature: float = 0.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"endpoint_url={url!r} is not allowed: valid values start with http:// or https://")
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.api_key_env, self.timeout_s, self.temperature = model, api_key_env, timeout_s, temperature

    def propose(self, prompt: Prompt) -> str:
        body = json.dumps(
            {"model": self.model, "messages": list(prompt.messages), "temperature": self.temperature}
        ).encode()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310 (user's URL)
                payload = response.read(2_000_000)
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"endpoint {self.url} answered HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EndpointError(
                f"endpoint {self.url} is unreachable: {reason}; check --endpoint-url or use --proposer local"
            ) from None
        try:
            return str(json.loads(payload)["choices"][0]["message"]["content"])
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise EndpointError(
                f"endpoint {self.url} sent a reply that is not an OpenAI chat completion: {payload[:200]!r}"
            ) from None
