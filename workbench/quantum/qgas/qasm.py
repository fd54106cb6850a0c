"""Parsing and validating a proposed ansatz: OpenQASM 3 text -> a checked qiskit circuit, never executed as code.

A proposal is text (from a language model, a log or the local proposer). :func:`extract_qasm` takes the QASM
out of a chat answer (a fenced block, or from ``OPENQASM`` on); :func:`parse_proposal` reads it with the quantum
area's guarded reader (:func:`workbench.quantum.qasm.parse_qasm`, :func:`proposal_limits`: OpenQASM 3 only,
length, the only include ``stdgates.inc``, every size evaluated and at most 64, nesting, gate expansion, a parse
budget; classical bits, resets and classical control refused; a parser: the text is data, nothing in it runs) and
validates the circuit against :class:`Rules`: qubit count equal to the problem's, gates from the allowed set only
(custom ``gate`` definitions are refused), depth, gate count, CNOT-equivalent count and parameter count within the
budget, and every angle affine in the declared ``input float`` parameters. Every refusal is an
:class:`InvalidProposal` (a ValueError) whose message names the rule and the offending value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.quantum.qasm import Limits, QasmError, parse_qasm

__all__ = [
    "ALLOWED_GATES",
    "TWO_QUBIT_GATES",
    "Rules",
    "InvalidProposal",
    "Ansatz",
    "extract_qasm",
    "parse_proposal",
    "proposal_limits",
    "circuit_stats",
    "to_qasm",
]

#: gates a proposal may use (all in OpenQASM 3's stdgates.inc and in our simulator)
ALLOWED_GATES = (
    "h", "x", "y", "z", "s", "sdg", "t", "tdg", "sx",
    "rx", "ry", "rz", "p", "u",
    "cx", "cy", "cz", "ch", "swap", "crx", "cry", "crz", "cp",
)  # fmt: skip
#: two-qubit gates and their CNOT cost (what a transpiler needs at least; swap = 3, controlled rotations = 2)
TWO_QUBIT_GATES = {"cx": 1, "cy": 1, "cz": 1, "ch": 1, "swap": 3, "crx": 2, "cry": 2, "crz": 2, "cp": 2}
#: longest proposal text accepted (characters): a guard against huge answers before the parser sees them
MAX_TEXT = 20_000
#: largest size or index between brackets (``float[64]``), or the problem's qubit count when larger: checked on
#: the parsed value before parsing, because the parser builds a declared register at once
MAX_DESIGNATOR = 64
#: longest chat answer the QASM is taken out of (characters)
MAX_ANSWER = 200_000
_FENCE = re.compile(r"```[a-zA-Z0-9]*[ \t\r]*\n")
#: wall-clock budget of one proposal's parse (s)
PARSE_BUDGET_S = 10.0


class InvalidProposal(ValueError):
    """A proposal that was refused; ``reason`` is a short machine-readable rule name."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Rules:
    """What a valid proposal must satisfy (the prompt states the same budget)."""

    num_qubits: int
    max_depth: int = 40
    max_gates: int = 120
    max_cnots: int = 24
    max_params: int = 32


@dataclass(frozen=True, eq=False)
class Ansatz:
    """A parsed, validated proposal: the qiskit ``circuit`` (free parameters in ``circuit.parameters`` order),
    the QASM text it came from, and its structure counts."""

    circuit: Any
    qasm: str
    depth: int
    gates: int
    cnots: int
    params: int


def extract_qasm(text: str) -> str:
    """The QASM program inside a chat answer: the first fenced code block if any, else from the first
    ``OPENQASM`` on; the text itself otherwise. Linear in the answer's length (at most :data:`MAX_ANSWER`)."""
    if not isinstance(text, str):
        raise InvalidProposal("type", f"proposal must be text, got {type(text).__name__}")
    if len(text) > MAX_ANSWER:
        raise InvalidProposal("too_long", f"answer has {len(text)} characters: valid range is 1..{MAX_ANSWER}")
    fence = _FENCE.search(text)
    if fence:
        end = text.find("```", fence.end())
        if end >= 0:
            return text[fence.end() : end].strip()
    start = text.find("OPENQASM")
    return text[start:].strip() if start >= 0 else text.strip()


def circuit_stats(circuit: Any) -> tuple[int, int, int]:
    """``(depth, gate count, CNOT-equivalent count)`` of a circuit (barriers not counted)."""
    ops = [inst for inst in circuit.data if inst.name != "barrier"]
    cnots = sum(TWO_QUBIT_GATES.get(inst.name, 0) for inst in ops)
    return int(circuit.depth(lambda inst: inst.name != "barrier")), len(ops), int(cnots)


def proposal_limits(rules: Rules) -> Limits:
    """The reader's limits for a proposal: OpenQASM 3 only, at most :data:`MAX_TEXT` characters, sizes up to
    ``max(64, qubits)``, no classical bits; the gate expansion bounded by ten times the gate budget (at most the
    reader's default)."""
    size = max(MAX_DESIGNATOR, rules.num_qubits)
    return Limits(
        max_chars=MAX_TEXT,
        max_qubits=size,
        max_clbits=0,
        max_size=size,
        max_ops=min(max(10 * rules.max_gates, 1000), Limits.max_ops),
        budget_s=PARSE_BUDGET_S,
        measurements=False,
        version=3,
    )


def parse_proposal(text: str, rules: Rules) -> Ansatz:
    """Parse and validate one proposal (see the module docstring). Raises :class:`InvalidProposal`."""
    qasm = extract_qasm(text)
    try:
        circuit = parse_qasm(qasm, what="proposal", limits=proposal_limits(rules))
    except QasmError as exc:
        raise InvalidProposal(exc.reason, str(exc)) from None
    if circuit.num_qubits != rules.num_qubits:
        raise InvalidProposal(
            "qubits", f"proposal uses {circuit.num_qubits} qubits: valid value is {rules.num_qubits} (the problem's)"
        )
    for position, inst in enumerate(circuit.data):
        if inst.name == "barrier":
            continue
        if inst.name not in ALLOWED_GATES:
            raise InvalidProposal(
                "gate",
                f"instruction {position}: gate {inst.name!r} is not allowed: valid gates are {', '.join(ALLOWED_GATES)}",
            )
        for value in inst.params:
            params = getattr(value, "parameters", None)
            if params:
                for p in params:
                    if getattr(value.gradient(p), "parameters", None):
                        raise InvalidProposal(
                            "angle", f"instruction {position}: angle {value} is not affine in its parameters"
                        )
    depth, gates, cnots = circuit_stats(circuit)
    count = circuit.num_parameters
    for rule, value, limit in (
        ("depth", depth, rules.max_depth),
        ("gates", gates, rules.max_gates),
        ("cnots", cnots, rules.max_cnots),
        ("params", count, rules.max_params),
    ):
        if value > limit:
            raise InvalidProposal(rule, f"proposal has {rule}={value}: valid range is 0..{limit}")
    if count == 0:
        raise InvalidProposal("params", "proposal has no free parameters (input float): valid range is 1..")
    return Ansatz(circuit, qasm, depth, gates, cnots, count)


def to_qasm(circuit: Any) -> str:
    """OpenQASM 3 text of a circuit (free parameters as ``input float[64]``), what proposers emit."""
    import qiskit.qasm3

    return qiskit.qasm3.dumps(circuit)
