"""The quantum area's one OpenQASM reader (``workbench.quantum.qasm``): every limit refuses its case with one
line naming the rule (and, through the CLIs, exit 2), valid programs read as qiskit's own parsers read them, and
every technique that reads QASM goes through it.

References: ``qiskit.qasm2.loads`` / ``qiskit.qasm3.loads`` called directly on the same valid text (equal
operators), and a scan of the quantum area's sources for direct parser calls.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.quantum.qasm import Limits, QasmError, parse_qasm, read_qasm, strip_comments

REPO = Path(__file__).resolve().parents[2]
H2 = 'OPENQASM 2.0;\ninclude "qelib1.inc";\n'
H3 = 'OPENQASM 3.0;\ninclude "stdgates.inc";\n'


def _nested_gates(levels: int, version: int = 3) -> str:
    """Gate g_k applies g_{k-1} twice: 2**levels applications from a few hundred bytes."""
    head = H3 if version == 3 else H2
    lines = [head + "gate g0 a { x a; }"]
    lines += [f"gate g{i} a {{ g{i - 1} a; g{i - 1} a; }}" for i in range(1, levels)]
    lines.append(("qubit[2] q;" if version == 3 else "qreg q[2];") + f"\ng{levels - 1} q[0];")
    return "\n".join(lines)


def _controlled_chain(levels: int) -> str:
    """Gate g_k is ``ctrl @ g_{k-1}`` on one more qubit: qiskit unrolls and controls each level's body, ~8x per
    level (6 levels: 466 bytes of OpenQASM 3 that took 70 s to parse before the reader counted controls)."""
    lines = [H3 + f"qubit[{levels + 1}] q;\ngate g0 a {{ h a; t a; h a; }}"]
    for i in range(1, levels + 1):
        wires = ", ".join(f"a{j}" for j in range(i + 1))
        lines.append(f"gate g{i} {wires} {{ ctrl @ g{i - 1} {wires}; }}")
    lines.append(f"g{levels} " + ", ".join(f"q[{j}]" for j in range(levels + 1)) + ";")
    return "\n".join(lines)


# name: (text, reason, message pattern)
REFUSED = {
    "size-hex": (H3 + "qubit[0x5F5E100] q;", "size", r"\[0x5F5E100\] = 100000000 is too large: valid sizes .* 0\.\.1024"),
    "size-underscore": (H3 + "qubit[100_000_000] q;", "size", r"\[100_000_000\] = 100000000 is too large"),
    "size-product": (H3 + "qubit[10000*10000] q;", "size", r"\[10000\*10000\] = 100000000 is too large"),
    "size-power": (H3 + "qubit[2**40] q;", "size", r"\[2\*\*40\] = 1099511627776 is too large"),
    "size-binary": (H3 + "qubit[0b1111111111111111] q;", "size", r"= 65535 is too large"),
    "size-bit": (H3 + "qubit[2] q;\nbit[0x7FFFFFFF] c;", "size", r"\[0x7FFFFFFF\] = 2147483647 is too large"),
    "size-qreg": (H2 + "qreg q[100000000];", "size", r"\[100000000\] = 100000000 is too large"),
    "size-symbolic": (H3 + "const uint n = 100000000;\nqubit[n] q;", "size", r"qubit\[n\]: a size must be a constant"),
    "size-total": (H3 + "qubit[1000] a;\nqubit[1000] b;", "size", r"declares 2000 qubits: valid range is 1\.\.1024"),
    "size-bits": (H3 + "qubit[1] q;\nbit[1000] a;\nbit[1000] b;", "classical", r"declares 2000 classical bits"),
    "hardware-qubit": (H3 + "x $100000000;", "qubits", r"hardware qubit \$100000000: valid range is \$0\.\.\$1023"),
    "nesting": (H3 + "qubit[1] q;\nrx(" + "(" * 300 + "1" + ")" * 300 + ") q[0];", "nesting", r"nest 301 deep"),
    "expansion-3": (_nested_gates(30), "expansion", r"gate 'g14' expands to 16384 gate applications: valid range is 1\.\.10000"),
    "expansion-2": (_nested_gates(30, 2), "expansion", r"gate 'g14' expands to 16384"),
    "expansion-ctrl": (_controlled_chain(6), "expansion", r"gate 'g4' expands to 12288 gate applications: valid range is 1\.\.10000 \(.*a ctrl @ on a custom gate counts x8\)"),
    "expansion-pow": (H3 + "qubit[1] q;\npow(1000000) @ x q[0];", "expansion", r"program expands to 1000000 gate applications: valid range is 1\.\.10000"),
    "comment": ("OPENQASM 2.0;\n" + "/* x\n" * 30_000, "comment", r"the /\* comment at line 2 is never closed"),
    "too_long": (H2 + "qreg q[1];\n" + "x q[0];\n" * 30_000, "too_long", r"has \d+ characters: valid range is 1\.\.200000"),
    "empty": ("// nothing\n/* here */", "empty", r"qasm is empty"),
    "include": (H2.replace("qelib1.inc", "/etc/passwd") + "qreg q[1];", "include", r'include "/etc/passwd" is not'),
    "include-3": (H3 + 'include "qelib1.inc";\nqubit[1] q;', "include", r"only valid include in OpenQASM 3"),
    "version": ("OPENQASM 4.0;\nqubit[1] q;", "version", r"OPENQASM 4 is not supported: valid versions are 2, 3"),
    "header-late": ("qubit[1] q;\nOPENQASM 3.0;", "version", r"the OPENQASM header must be the first statement"),
    "redefine-2": ("OPENQASM 2.0;\ngate rx(t) a { U(t,0,0) a; }\nqreg q[1];\nrx(0.3) q[0];", "redefinition", r"gate 'rx' redefines the standard gate rx"),
    "redefine-3": ("OPENQASM 3.0;\ngate rx(t) a { U(t,0,0) a; }\nqubit[1] q;\nrx(0.3) q[0];", "redefinition", r"gate 'rx' redefines"),
    "opaque": (H2 + "opaque magic a;\nqreg q[1];\nmagic q[0];", "opaque", r"opaque gate 'magic' has no definition"),
    "reset": (H3 + "qubit[1] q;\nreset q[0];", "reset", r"instruction 0 is a reset: not supported"),
    "if-2": (H2 + "qreg q[1];\ncreg c[1];\nmeasure q[0] -> c[0];\nif (c==1) x q[0];", "classical", r"instruction 1 is classical control \(if_else\)"),
    "if-3": (H3 + "qubit[1] q;\nbit[1] c;\nc[0] = measure q[0];\nif (c[0]) x q[0];", "classical", r"classical control \(if_else\)"),
    "for-3": (H3 + "qubit[1] q;\nfor int i in [0:3] { x q[0]; }", "classical", r"classical control \(for_loop\)"),
    "mid-measure": (H2 + "qreg q[2];\ncreg c[2];\nmeasure q[0] -> c[0];\ncx q[0],q[1];", "measure", r"instruction 1 \(cx\) acts on a measured qubit"),
    "parse-3": (H3 + "qubit[2] q;\nx q[0]; ~ $", "parse", r"not a valid OpenQASM 3 program: .*token recognition error"),
    "parse-2": (H2 + "qreg q[1];\nnope q[0];", "parse", r"not a valid OpenQASM 2 program"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_each_limit_refuses_its_case_in_one_line_naming_the_rule(case, capfd):
    text, reason, message = REFUSED[case]
    with pytest.raises(QasmError, match=message) as info:
        read_qasm(text)
    assert info.value.reason == reason and isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and str(info.value).startswith("qasm")
    assert capfd.readouterr().err == ""  # no lexer or parser messages on stderr


def test_the_parse_budget_stops_a_slow_parse():
    text = H3 + "qubit[2] q;\n" + "cx q[0], q[1];\n" * 3000  # accepted by every pre-parse limit; seconds to parse
    with pytest.raises(QasmError, match=r"parsing took more than 0\.2 s .* the budget is 0\.2 s") as info:
        read_qasm(text, limits=Limits(budget_s=0.2))
    assert info.value.reason == "timeout"


def test_limits_are_parameters():
    with pytest.raises(QasmError, match=r"valid sizes and indices are 0\.\.8"):
        read_qasm(H3 + "qubit[9] q;", limits=Limits(max_size=8))
    with pytest.raises(QasmError, match=r"expands to 8 gate applications: valid range is 1\.\.4"):
        read_qasm(_nested_gates(4), limits=Limits(max_ops=4))
    with pytest.raises(QasmError, match=r"OpenQASM 2 given: valid version is 3"):
        read_qasm(H2 + "qreg q[1];", limits=Limits(version=3))
    with pytest.raises(QasmError, match=r"declares 1 classical bits: valid range is 0 \(none\)"):
        read_qasm(H2 + "qreg q[1];\ncreg c[1];\nmeasure q[0] -> c[0];", limits=Limits(measurements=False))
    assert read_qasm(_nested_gates(4), limits=Limits(max_ops=8)).num_qubits == 2


def test_comments_are_stripped_in_one_pass_keeping_strings_and_lines():
    text = 'OPENQASM 2.0; // a\ninclude "qelib1.inc"; /* b\n c */ qreg q[1];\n"//kept"'
    out = strip_comments(text)
    assert out.count("\n") == text.count("\n") and '"//kept"' in out and "/*" not in out and " a" not in out


VALID = {
    "qasm2-measured": H2 + "qreg q[3];\ncreg c[3];\nh q[0];\ncx q[0],q[1];\nrz(0.3) q[2];\nmeasure q -> c;",
    "qasm3-leading-comment": "// GHZ, written by hand\n/* two\nlines */\n"
    + H3
    + "qubit[3] q;\nh q[0];\ncx q[0], q[1];\n"
    "cx q[1], q[2];",
    "qasm3-custom-gate": H3 + "gate mine(t) a, b { cx a, b; rz(t) b; cx a, b; }\nqubit[2] q;\nmine(0.4) q[0], q[1];",
    "qasm3-controlled-custom": H3 + "gate g0 a { h a; t a; }\ngate g1 a, b { ctrl @ g0 a, b; }\nqubit[3] q;\n"
    "ctrl @ g1 q[0], q[1], q[2];\nctrl(2) @ x q[0], q[1], q[2];",
    "qasm3-sizes": H3 + "qubit[0x2] q;\nqubit[0b1_1] r;\nbit[2*2] c;\nh q[1];\ncx q[0], r[2];\nc[3] = measure r[2];",
}


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_programs_read_as_qiskits_parsers_read_them(case):
    from qiskit import qasm2, qasm3
    from qiskit.quantum_info import Operator

    text = VALID[case]
    circuit = read_qasm(text)
    reference = (
        qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS) if "2.0" in text else qasm3.loads(text)
    )
    assert (circuit.num_qubits, circuit.num_clbits) == (reference.num_qubits, reference.num_clbits)
    mine = circuit.remove_final_measurements(inplace=False)
    theirs = reference.remove_final_measurements(inplace=False)
    assert Operator(mine).equiv(Operator(theirs))


def test_paths_and_text_are_both_read(tmp_path):
    qft = read_qasm(REPO / "examples" / "qft4.qasm")  # OpenQASM 3 behind a comment line
    assert qft.num_qubits == 4 and qft.count_ops()["cp"] == 6
    assert read_qasm(str(REPO / "examples" / "ghz3.qasm")).count_ops() == {"cx": 2, "h": 1}
    with pytest.raises(QasmError, match=r"qasm='.*nope.qasm': no such file"):
        read_qasm(str(tmp_path / "nope.qasm"))
    binary = tmp_path / "bin.qasm"
    binary.write_bytes(bytes(range(200, 256)) * 4)
    with pytest.raises(QasmError, match=r"is not a text file \(byte 0 is not UTF-8\)"):
        read_qasm(binary)
    with pytest.raises(QasmError, match=r"qasm must be OpenQASM text, got PosixPath"):
        parse_qasm(binary)  # text only: a proposal is never opened as a file


def test_every_technique_reads_qasm_through_the_reader():
    direct = re.compile(r"\bqasm[23]\.loads?\(|\bqasm[23]\.load\(|loads_experimental")
    offenders = [
        str(p.relative_to(REPO))
        for p in (REPO / "workbench" / "quantum").rglob("*.py")
        if p.name != "qasm.py" or p.parent.name != "quantum"
        if direct.search(p.read_text())
    ]
    assert offenders == []


def test_each_technique_refuses_through_the_reader():
    from workbench.quantum.qgas.qasm import InvalidProposal, Rules, parse_proposal
    from workbench.quantum.quest.predict import read_qasm as quest_read
    from workbench.quantum.topgen.templates import circuit_by_name

    text = H3 + "qubit[0x5F5E100] q;"
    with pytest.raises(QasmError, match=r"^qasm: \[0x5F5E100\]"):
        quest_read(text)
    with pytest.raises(QasmError, match=r"^circuit: \[0x5F5E100\]"):
        circuit_by_name(text, 4)
    with pytest.raises(InvalidProposal, match=r"^proposal: \[0x5F5E100\] = 100000000 is too large: .* 0\.\.64"):
        parse_proposal(text, Rules(3))


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh process (exit code and stderr as a user sees them; 300 s guards against a hang)."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", "run", *argv], capture_output=True, text=True, timeout=300, cwd=REPO
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", ["size-hex", "size-product", "expansion-3", "expansion-ctrl", "comment", "redefine-2", "if-2"]
)
def test_quest_cli_refuses_each_case_with_exit_2_and_one_line(case, tmp_path):
    text, _, message = REFUSED[case]
    path = tmp_path / "c.qasm"
    path.write_text(text)
    out = _cli("quest", "--mode", "predict", "--qasm", str(path), "--device", "fake_lima")
    assert out.returncode == 2, out.stderr[-2000:]
    assert re.search(message, out.stderr) and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0


@pytest.mark.slow
def test_topgen_circuit_accepts_a_file_path_as_quest_qasm_does(tmp_path, capsys):
    from workbench.cli import main

    path = tmp_path / "ghz.qasm"
    path.write_text((REPO / "examples" / "ghz3.qasm").read_text())
    assert main(["run", "expressibility", "--circuit", str(path), "--pairs", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["qubits"] == 3 and out["circuit"] == str(path)
    bad = tmp_path / "big.qasm"
    bad.write_text(REFUSED["size-bit"][0])
    assert main(["run", "expressibility", "--circuit", str(bad), "--json"]) == 2
    err = capsys.readouterr().err
    assert "circuit: [0x7FFFFFFF] = 2147483647 is too large" in err and err.strip().count("\n") == 0
