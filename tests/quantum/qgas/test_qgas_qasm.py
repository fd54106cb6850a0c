"""Proposal parsing and validation: valid OpenQASM 3 accepted with the right structure counts; every kind of
invalid or malicious text refused with an InvalidProposal naming the rule (never executed, never crashing).

Reference: qiskit's own ``QuantumCircuit.depth`` / ``count_ops`` on the same circuit built directly.
"""

from __future__ import annotations

import pytest
from qiskit import QuantumCircuit
from qiskit.circuit import Parameter

from workbench.quantum.qgas.ansatze import Gate, genome_of, render_qasm
from workbench.quantum.qgas.qasm import InvalidProposal, Rules, extract_qasm, parse_proposal

GOOD = """OPENQASM 3.0;
include "stdgates.inc";
input float[64] a;
input float[64] b;
qubit[3] q;
x q[0];
ry(a) q[1];
cx q[0], q[1];
crz(2*b + 0.5) q[1], q[2];
swap q[0], q[2];
"""


def test_valid_proposal_parses_with_its_counts():
    ans = parse_proposal(f"Here you go:\n```qasm\n{GOOD}```\nEnjoy.", Rules(3))
    a, b = Parameter("a"), Parameter("b")
    ref = QuantumCircuit(3)
    ref.x(0), ref.ry(a, 1), ref.cx(0, 1), ref.crz(2 * b + 0.5, 1, 2), ref.swap(0, 2)
    assert ans.depth == ref.depth()
    assert ans.gates == 5 and ans.params == 2
    assert ans.cnots == 1 + 2 + 3  # cx, crz (2), swap (3)
    assert [i.name for i in ans.circuit.data] == [i.name for i in ref.data]


def test_extract_qasm_without_fence_starts_at_openqasm():
    assert extract_qasm("I suggest:\n" + GOOD).startswith("OPENQASM 3.0;")


BAD = {
    "include": ('OPENQASM 3.0;\ninclude "/etc/passwd";\nqubit[3] q;', r'include "/etc/passwd" is not allowed'),
    "parse": ("import os; os.system('rm -rf /')", r"not a valid OpenQASM 3 program"),
    "qubits": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[5] q;\nry(a) q[0];',
        r"uses 5 qubits: valid value is 3",
    ),
    "classical": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nbit[1] c;\nry(a) q[0];\nc[0] = measure q[0];',
        r"declares 1 classical bits: valid range is 0 \(none\)",
    ),
    "gate": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\ngate g(t) x { ry(t) x; }\nqubit[3] q;\ng(a) q[0];',
        r"gate 'g' is not allowed",
    ),
    "reset": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nry(a) q[0];\nreset q[0];',
        r"instruction 1 is a reset: not supported",
    ),
    "angle": ('OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nry(a*a) q[0];', r"not affine"),
    "params": ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[3] q;\nh q[0];', r"no free parameters"),
    "too_long": ("OPENQASM 3.0;\nqubit[3] q;\n" + "h q[0];\n" * 5000, r"characters: valid range is 1..20000"),
    "empty": ("```qasm\n```", r"proposal is empty"),
    # the parser would build this register at once (minutes, gigabytes): refused before parsing
    "size": ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[100000000] q;', r"\[100000000\] = 100000000 is too large"),
    "classical-loop": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nfor int i in [0:10] { ry(a) q[0]; }',
        r"instruction 0 is classical control \(for_loop\)",
    ),
    "size-loop": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nfor int i in [0:1000] { ry(a) q[0]; }',
        r"\[1000\] = 1000 is too large: valid sizes and indices are 0\.\.64",
    ),
    "size-hex": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[0x5F5E100] q;',
        r"\[0x5F5E100\] = 100000000 is too large",
    ),
    "expansion": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ngate g0 a { x a; }\n'
        + "".join(f"gate g{i} a {{ g{i - 1} a; g{i - 1} a; }}\n" for i in range(1, 30))
        + "qubit[3] q;\ng29 q[0];",
        r"gate 'g11' expands to 2048 gate applications: valid range is 1\.\.1200",
    ),
    "redefinition": (
        "OPENQASM 3.0;\ninput float[64] a;\ngate rx(t) x { U(t, 0, 0) x; }\nqubit[3] q;\nrx(a) q[0];",
        r"gate 'rx' redefines the standard gate rx",
    ),
    "nesting": (
        'OPENQASM 3.0;\ninclude "stdgates.inc";\ninput float[64] a;\nqubit[3] q;\nry('
        + "(" * 3000
        + "a"
        + ")" * 3000
        + ") q[0];",
        r"brackets nest 3001 deep",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_invalid_or_malicious_proposals_are_refused_naming_the_rule(case):
    text, message = BAD[case]
    with pytest.raises(InvalidProposal, match=message) as info:
        parse_proposal(text, Rules(3))
    assert isinstance(info.value, ValueError)
    assert info.value.reason == case.split("-")[0]


@pytest.mark.parametrize(("rule", "limit"), [("max_depth", 3), ("max_cnots", 5), ("max_params", 1)])
def test_budget_is_enforced(rule, limit):
    with pytest.raises(InvalidProposal, match=r"valid range is 0\.\."):
        parse_proposal(GOOD, Rules(3, **{rule: limit}))


def test_genome_round_trips_through_qasm():
    genome = (Gate("x", (0,)), Gate("ry", (1,)), Gate("cz", (1, 2)), Gate("rz", (2,), 0.25), Gate("rx", (0,)))
    ans = parse_proposal(render_qasm(genome, 3), Rules(3))
    assert genome_of(ans.circuit) == genome
    assert ans.params == 2
