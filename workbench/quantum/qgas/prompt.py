"""The prompt a proposer sees: task, qubits, gate set, coupling, budget, the human guideline, and a history
table of every previous proposal with its score (the feedback), as chat messages for an OpenAI-compatible
endpoint. The local proposers read the same :class:`Prompt` object (its structured ``history``), so every
proposer is driven by the same feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from workbench.quantum.qgas.problems import Problem
from workbench.quantum.qgas.qasm import ALLOWED_GATES, Rules

__all__ = ["Record", "Prompt", "build_prompt", "GUIDELINES"]

#: scripted human-in-the-loop guidelines (the paper's "fewer CNOTs", "hardware-efficient", "use symmetry")
GUIDELINES = {
    "none": "",
    "fewer-cnots": "Guideline: keep the error low with as few CNOTs as possible.",
    "hardware-efficient": "Guideline: use a hardware-efficient ansatz: single-qubit rotations and CNOTs between "
    "neighbouring qubits (q[i], q[i+1]) only.",
    "use-symmetry": "Guideline: use the problem's symmetry: start from the reference state and preserve the "
    "number of excitations where you can.",
}


@dataclass(frozen=True)
class Record:
    """One iteration of the loop, as logged: the raw answer, whether it parsed and validated (else ``reason``
    and ``error``), and for a valid one its QASM, structure counts, trained energy, energy error and (with a
    device) the noisy energy, its error and, when scored with shots, the machine executions it took."""

    iteration: int
    proposer: str
    raw: str
    valid: bool
    reason: str = ""
    error: str = ""
    qasm: str = ""
    depth: int | None = None
    gates: int | None = None
    cnots: int | None = None
    params: int | None = None
    energy: float | None = None
    energy_error: float | None = None
    approximation_ratio: float | None = None
    noisy_energy: float | None = None
    noisy_energy_error: float | None = None
    seconds: float = 0.0
    prompt: str = ""
    theta: tuple[float, ...] | None = None  # the trained parameters (circuit.parameters order)
    evaluations: int | None = None  # energy+gradient evaluations training took (each a batch of restarts)
    noisy_executions: int | None = None  # machine executions (settings x shots) of a sampled noisy score


@dataclass(frozen=True)
class Prompt:
    """What a proposer receives for iteration ``iteration``: chat ``messages`` and the structured context."""

    iteration: int
    problem: Problem
    rules: Rules
    guideline: str
    history: tuple[Record, ...]
    messages: tuple[dict[str, str], ...] = field(default=())

    @property
    def text(self) -> str:
        return "\n\n".join(m["content"] for m in self.messages)


def _history_table(history: tuple[Record, ...], unit: str, limit: int = 12) -> str:
    if not history:
        return "No proposals yet."
    rows = ["| it | valid | depth | CNOTs | params | energy error | note |", "|---|---|---|---|---|---|---|"]
    shown = sorted((r for r in history if r.valid), key=lambda r: cast(float, r.energy_error))[: limit // 2]
    shown += [r for r in history[-limit // 2 :] if r not in shown]
    for r in sorted(shown, key=lambda r: r.iteration):
        if r.valid:
            rows.append(f"| {r.iteration} | yes | {r.depth} | {r.cnots} | {r.params} | {r.energy_error:.3e} {unit} | |")
        else:
            rows.append(f"| {r.iteration} | no | | | | | {r.reason}: {r.error[:80]} |")
    best = min((r for r in history if r.valid), key=lambda r: cast(float, r.energy_error), default=None)
    text = "\n".join(rows)
    if best is not None:
        text += f"\n\nBest so far (iteration {best.iteration}, error {best.energy_error:.3e} {unit}):\n```qasm\n{best.qasm}```"
    return text


def build_prompt(iteration: int, problem: Problem, rules: Rules, guideline: str, history: tuple[Record, ...]) -> Prompt:
    """The chat messages for ``iteration`` (system: role and format; user: task, budget, feedback table)."""
    if guideline not in GUIDELINES:
        raise ValueError(f"guideline={guideline!r} is not allowed: valid values are {', '.join(GUIDELINES)}")
    system = (
        "You design parameterised quantum circuits (ansaetze) for variational algorithms. Answer with one "
        "OpenQASM 3 program in a ```qasm block: 'OPENQASM 3.0;', 'include \"stdgates.inc\";', one "
        "'input float[64] tK;' per trainable angle, 'qubit[N] q;', then gates. No measurements, no classical "
        "bits, no custom gate definitions."
    )
    hint = f" The reference (Hartree-Fock) state is |{problem.hint}> (qubit 0 rightmost)." if problem.hint else ""
    user = (
        f"Task: minimise <H> for {problem.description}.{hint}\n"
        f"Qubits: {rules.num_qubits}. Allowed gates: {', '.join(ALLOWED_GATES)}. Linear coupling "
        f"(q[i], q[i+1]).\nBudget: depth <= {rules.max_depth}, gates <= {rules.max_gates}, CNOT-equivalents <= "
        f"{rules.max_cnots}, parameters <= {rules.max_params}.\n{GUIDELINES[guideline]}\n\n"
        f"Previous proposals (the trained energy error is E - E_exact in {problem.unit}):\n"
        f"{_history_table(history, problem.unit)}\n\nPropose iteration {iteration}: an ansatz with a lower error."
    )
    messages = ({"role": "system", "content": system}, {"role": "user", "content": user})
    return Prompt(iteration, problem, rules, guideline, history, messages)


def as_dict(record: Record) -> dict[str, Any]:
    """A record as a plain dict (the transcript's JSON)."""
    from dataclasses import asdict

    return asdict(record)
