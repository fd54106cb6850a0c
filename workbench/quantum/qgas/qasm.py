"""Parsing and validating a proposed ansatz: OpenQASM 3 text -> a checked qiskit circuit, never executed as code.

A proposal is text (from a language model, a log or the local proposer). :func:`extract_qasm` takes the QASM
out of a chat answer (a fenced block, or from ``OPENQASM`` on); :func:`parse_proposal` checks the raw text
(length, the only include allowed is ``stdgates.inc``, no register or type size above 64), parses it with ``qiskit.qasm3.loads`` (a parser: the
text is data, nothing in it runs) and validates the circuit against :class:`Rules`: qubit count equal to the
problem's, gates from the allowed set only (custom ``gate`` definitions, measurements, resets, classical
control and loops are refused), depth, gate count, CNOT-equivalent count and parameter count within the
budget, and every angle affine in the declared ``input float`` parameters. Every refusal is an
:class:`InvalidProposal` (a ValueError) whose message names the rule and the offending value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ALLOWED_GATES",
    "TWO_QUBIT_GATES",
    "Rules",
    "InvalidProposal",
    "Ansatz",
    "extract_qasm",
    "parse_proposal",
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
_INCLUDE = re.compile(r'include\s+"([^"]*)"')
#: a size designator such as ``qubit[4]``, ``bit[2]``, ``float[64]``: checked before parsing, because the parser
#: builds a declared register at once (``qubit[100000000] q;`` takes minutes and gigabytes)
_DESIGNATOR = re.compile(r"\[\s*(\d+)\s*\]")
MAX_DESIGNATOR = 64


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
    ``OPENQASM`` on; the text itself otherwise."""
    if not isinstance(text, str):
        raise InvalidProposal("type", f"proposal must be text, got {type(text).__name__}")
    fence = re.search(r"```[a-zA-Z0-9]*\s*\n(.*?)```", text, re.S)
    if fence:
        return fence.group(1).strip()
    start = text.find("OPENQASM")
    return text[start:].strip() if start >= 0 else text.strip()


def circuit_stats(circuit: Any) -> tuple[int, int, int]:
    """``(depth, gate count, CNOT-equivalent count)`` of a circuit (barriers not counted)."""
    ops = [inst for inst in circuit.data if inst.name != "barrier"]
    cnots = sum(TWO_QUBIT_GATES.get(inst.name, 0) for inst in ops)
    return int(circuit.depth(lambda inst: inst.name != "barrier")), len(ops), int(cnots)


def parse_proposal(text: str, rules: Rules) -> Ansatz:
    """Parse and validate one proposal (see the module docstring). Raises :class:`InvalidProposal`."""
    qasm = extract_qasm(text)
    if len(qasm) > MAX_TEXT:
        raise InvalidProposal("too_long", f"proposal has {len(qasm)} characters: valid range is 1..{MAX_TEXT}")
    if not qasm:
        raise InvalidProposal("empty", "proposal is empty: expected an OpenQASM 3 program")
    for name in _INCLUDE.findall(qasm):
        if name != "stdgates.inc":
            raise InvalidProposal(
                "include", f'include "{name}" is not allowed: the only valid include is "stdgates.inc"'
            )
    for match in _DESIGNATOR.finditer(qasm):
        size = int(match.group(1))
        if size > max(MAX_DESIGNATOR, rules.num_qubits):
            raise InvalidProposal(
                "size",
                f"size [{size}] is not allowed: valid sizes are 0..{max(MAX_DESIGNATOR, rules.num_qubits)} "
                f"(the problem has {rules.num_qubits} qubits)",
            )
    import qiskit.qasm3

    try:
        circuit = qiskit.qasm3.loads(qasm)
    except Exception as exc:  # the parser's errors vary by package (QASM3ImporterError, QASM3ParsingError, ...)
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidProposal("parse", f"not valid OpenQASM 3: {message[:300]}") from None
    if circuit.num_qubits != rules.num_qubits:
        raise InvalidProposal(
            "qubits", f"proposal uses {circuit.num_qubits} qubits: valid value is {rules.num_qubits} (the problem's)"
        )
    if circuit.num_clbits:
        raise InvalidProposal("classical", f"proposal declares {circuit.num_clbits} classical bits: none are allowed")
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
