"""The quantum area's one OpenQASM reader: a path or program text, OpenQASM 2 or 3, guarded before and after parsing.

Every technique that reads user or model QASM (QuEst ``--qasm``, TopGen ``--circuit``, QGAS proposals and
transcripts) calls :func:`read_qasm`. The text is data: it is parsed by qiskit's parsers (``qiskit.qasm2`` in
Rust, ``qiskit.qasm3`` through the ANTLR-based ``qiskit_qasm3_import``), never executed. Because both parsers
build what a program declares at once, and the OpenQASM 3 importer inlines custom gates, the text is checked
*before* parsing, in one linear pass each, against :class:`Limits`:

- length (characters) and comments (stripped by a linear scanner; an unclosed ``/*`` is refused);
- the version header (``OPENQASM 2`` or ``3``, after leading comments) and includes (only ``qelib1.inc`` for
  OpenQASM 2 and ``stdgates.inc`` for 3: no other file is read);
- nesting depth of ``( [ {`` (ANTLR's prediction is exponential in it);
- every size or index between brackets *evaluated* as the parser would read it (``0x5F5E100``,
  ``100_000_000``, ``10000*10000``, ``0b1...``) and hardware qubits ``$n``; a declaration size that is not a
  constant (``qubit[n]``) is refused; declared qubits and bits are summed;
- custom gates: redefining a standard gate name (``gate rx(t) a { U(t,0,0) a; }`` would be simulated as the
  standard ``rx``) and ``opaque`` gates are refused; the number of gate applications after inlining every
  definition (``gate g1 a { g0 a; g0 a; }`` ... doubles per level; ``pow(k) @`` repeats k times; a control on a
  custom gate costs :data:`CONTROL_COST` times its body, which qiskit unrolls and controls) is bounded.

The parse then runs under a wall-clock budget (``budget_s``; in the main thread a SIGALRM stops the pure-Python
OpenQASM 3 importer; elsewhere the pre-parse bounds are what limits it), with the parser's lexer messages
captured (never printed to stderr; the first one goes into the error). After parsing, the circuit is checked:
qubit and bit counts, no classical control (``if``, loops, ``switch``), no ``reset``, and measurements only at
the end (or none, ``Limits(measurements=False)``). Every refusal is a :class:`QasmError` (a ValueError) whose
``reason`` is a short rule name and whose message is one line naming the parameter, the value and the valid range.
"""

from __future__ import annotations

import ast
import contextlib
import io
import operator
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Limits",
    "QasmError",
    "STANDARD_GATES",
    "CLASSICAL_CONTROL",
    "read_qasm",
    "parse_qasm",
    "qasm_text",
    "looks_like_qasm",
    "strip_comments",
    "check_text",
    "check_circuit",
]

#: gate names a program may not redefine: OpenQASM 2's qelib1.inc, OpenQASM 3's stdgates.inc, the builtins and the
#: names qiskit's legacy OpenQASM 2 importer maps to its own gates by name
STANDARD_GATES = frozenset(
    "U CX gphase u u0 u1 u2 u3 p phase cphase id x y z h s sdg t tdg sx sxdg rx ry rz r cx cy cz cp ch crx cry crz "
    "cu cu1 cu3 csx cs csdg swap iswap dcx ecr ccx cswap ccz rxx ryy rzz rzx xx_minus_yy xx_plus_yy rccx rc3x c3x "
    "c3sqrtx c4x mcx delay measure reset barrier".split()
)
#: qiskit instructions that mean classical control flow (refused: the techniques simulate unitary circuits)
CLASSICAL_CONTROL = frozenset(
    {"if_else", "while_loop", "for_loop", "switch_case", "break_loop", "continue_loop", "box"}
)
_INCLUDES = {2: "qelib1.inc", 3: "stdgates.inc"}
_COMMENT_OR_STRING = re.compile(r'//|/\*|"')
_HEADER = re.compile(r"\s*OPENQASM\s+(\d+)(?:\.(\d+))?\s*;")
_INCLUDE = re.compile(r'\binclude\s+"([^"\n]*)"')
_DECLARATION = re.compile(
    r"(?:\b(qubit|bit|int|uint|float|angle|complex|array|duration|stretch)|\b(qreg|creg)\s+\w+)\s*$"
)
_NUMBER = r"0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?"
_TOKEN = re.compile(rf"\s*(?:(?P<num>{_NUMBER})|(?P<name>[A-Za-z_]\w*)|(?P<op>\*\*|<<|>>|[-+*/%()~&|^])|(?P<bad>\S))")
_HARDWARE = re.compile(r"\$(\d+)")
_DEFINITION = re.compile(r"\b(gate|opaque)\s+([A-Za-z_]\w*)")
_MODIFIER = re.compile(r"^\s*(?:(inv|ctrl|negctrl)(?:\s*\(([^)]*)\))?|pow\s*\(([^)]*)\))\s*@")
#: what one control (``ctrl @`` / ``negctrl @``) on a *custom* gate multiplies its cost by: qiskit's ``add_control``
#: unrolls the gate's body to basis gates and controls each one, so a chain ``gate g_k a0, ... { ctrl @ g_{k-1} ...
#: }`` grows about 8x per level (measured: a 466-byte chain of 6 levels parsed in 70 s, 5 levels in 9 s, 4 in 1 s)
CONTROL_COST = 8
_COUNTED = f"custom gates inlined, pow(k) @ repeats k times, a ctrl @ on a custom gate counts x{CONTROL_COST}"
_CALL = re.compile(r"^\s*([A-Za-z_]\w*)")
_KEYWORDS = frozenset(
    "OPENQASM include qreg creg qubit bit int uint float angle bool complex array const input output measure reset "
    "barrier if else for while switch case default break continue return let def defcal cal extern box delay "
    "duration stretch end".split()
)


class QasmError(ValueError):
    """A refused OpenQASM program; ``reason`` is a short machine-readable rule name."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """What :func:`read_qasm` accepts. Sizes are counts; ``budget_s`` is the parse's wall-clock budget (s)."""

    max_chars: int = 200_000
    max_qubits: int = 1024
    max_clbits: int = 1024
    max_size: int = 1024  # any constant size or index between brackets (``float[64]`` needs 64)
    max_nesting: int = 24  # depth of ( [ { together
    max_ops: int = 10_000  # gate applications after inlining every custom gate (the OpenQASM 3 importer: ~0.5 ms each)
    budget_s: float = 20.0
    measurements: bool = True  # final measurements allowed (False: no classical bits at all)
    version: int | None = None  # 2 or 3 to require that version; None: from the header


def looks_like_qasm(text: str) -> bool:
    """Whether ``text`` is program text rather than a file path (it holds ``;``, a newline or ``OPENQASM``)."""
    return ";" in text or "\n" in text or "OPENQASM" in text


def qasm_text(source: str | Path, *, what: str = "qasm", max_chars: int = Limits.max_chars) -> str:
    """The program text of ``source``: a :class:`~pathlib.Path`, a path string, or the text itself
    (:func:`looks_like_qasm`). Files larger than ``max_chars`` bytes are not read. Raises :class:`QasmError`."""
    if isinstance(source, str) and looks_like_qasm(source):
        return source
    if not isinstance(source, (str, Path)):
        raise QasmError("type", f"{what} must be a path or OpenQASM text, got {type(source).__name__}")
    path = Path(source)
    if not path.is_file():
        raise QasmError("path", f"{what}={str(source)!r}: no such file (give a path to an OpenQASM file or its text)")
    try:
        with path.open("rb") as handle:  # at most 4 bytes a character (UTF-8): never more is read
            data = handle.read(4 * max_chars + 1)
        if len(data) > 4 * max_chars:
            raise QasmError(
                "too_long",
                f"{what}={str(source)!r} has more than {4 * max_chars} bytes: valid range is 1..{max_chars} characters",
            )
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise QasmError(
            "encoding",
            f"{what}={str(source)!r} is not a text file (byte {exc.start} is not UTF-8): valid input is an "
            "OpenQASM 2 or 3 program",
        ) from None
    except OSError as exc:
        raise QasmError("path", f"{what}={str(source)!r} cannot be read: {exc.strerror or exc}") from None


def strip_comments(text: str, *, what: str = "qasm") -> str:
    """``text`` with ``//`` and ``/* */`` comments replaced by spaces (newlines kept), in one linear pass;
    strings (``"..."``) are kept as they are. Raises :class:`QasmError` for an unclosed ``/*`` or string."""
    out: list[str] = []
    pos = 0
    while True:
        match = _COMMENT_OR_STRING.search(text, pos)
        if match is None:
            out.append(text[pos:])
            return "".join(out)
        start = match.start()
        out.append(text[pos:start])
        token = match.group()
        if token == '"':
            end = text.find('"', start + 1)
            if end < 0:
                raise QasmError("parse", f"{what}: unclosed string at line {_line(text, start)}")
            out.append(text[start : end + 1])
            pos = end + 1
            continue
        if token == "//":
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
        else:
            end = text.find("*/", start + 2)
            if end < 0:
                raise QasmError(
                    "comment", f"{what}: the /* comment at line {_line(text, start)} is never closed (no */ follows)"
                )
            end += 2
        out.append(re.sub(r"[^\n]", " ", text[start:end]) if "\n" in text[start:end] else " ")
        pos = end


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _version(code: str, what: str, required: int | None) -> int:
    header = _HEADER.match(code)
    if header is None:
        if re.search(r"\bOPENQASM\b", code):
            raise QasmError("version", f"{what}: the OPENQASM header must be the first statement")
        version = 2 if re.search(r"\b(qreg|creg)\b", code) and not re.search(r"\bqubit\b", code) else 3
    else:
        version = int(header.group(1))
        if version not in (2, 3):
            raise QasmError("version", f"{what}: OPENQASM {header.group(1)} is not supported: valid versions are 2, 3")
    if required is not None and version != required:
        raise QasmError("version", f"{what}: OpenQASM {version} given: valid version is {required}")
    return version


def _check_includes(code: str, version: int, what: str) -> None:
    for name in _INCLUDE.findall(code):
        if name != _INCLUDES[version]:
            raise QasmError(
                "include",
                f'{what}: include "{name}" is not allowed: the only valid include in OpenQASM {version} is '
                f'"{_INCLUDES[version]}"',
            )


def _check_nesting(code: str, what: str, limit: int) -> None:
    depth = deepest = 0
    where = 0
    for i, char in enumerate(code):
        if char in "([{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, i
        elif char in ")]}":
            depth = max(depth - 1, 0)
    if deepest > limit:
        raise QasmError(
            "nesting",
            f"{what}: brackets nest {deepest} deep at line {_line(code, where)}: valid depth is 1..{limit}",
        )


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
}
_HUGE = 2**64


def _evaluate(node: ast.AST) -> float:
    """A constant integer expression's value, refusing to compute anything beyond 2**64 (ValueError)."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else (~int(value) if isinstance(node.op, ast.Invert) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, (ast.Pow, ast.LShift)) and (abs(right) > 64 or abs(left) > _HUGE):
            return float("inf")
        value = _BINARY[type(node.op)](left, right)
        return float("inf") if abs(value) > _HUGE else value
    raise ValueError("not a constant")


def _constant(piece: str) -> float | None:
    """The value of a bracketed piece that holds only numbers and operators; None when it names something."""
    parts: list[str] = []
    pos = 0
    while pos < len(piece):
        match = _TOKEN.match(piece, pos)
        if match is None:  # only trailing spaces
            break
        pos = match.end()
        if match.group("name") or match.group("bad"):
            return None
        number = match.group("num")
        if number is not None:
            digits = number.replace("_", "")
            if re.fullmatch(r"0\d+", digits):
                digits = str(int(digits, 10))
            parts.append(digits)
        else:
            parts.append(match.group("op"))
    if not parts:
        return None
    try:
        return _evaluate(ast.parse(" ".join(parts), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError):
        return float("inf")  # numbers only, yet not an expression we can bound: refused as too large


def _shown(value: float) -> str:
    return "more than 2**64" if value == float("inf") or value >= _HUGE else f"{value:.0f}"


def _brackets(code: str) -> Iterator[tuple[int, str]]:
    """``(position of '[', content)`` for every bracket pair, innermost first (inner pairs blanked out)."""
    chars = list(code)
    stack: list[int] = []
    for i, char in enumerate(chars):
        if char == "[":
            stack.append(i)
        elif char == "]" and stack:
            start = stack.pop()
            yield start, "".join(chars[start + 1 : i])
            chars[start + 1 : i] = " " * (i - start - 1)


def _check_sizes(code: str, what: str, limits: Limits) -> None:
    totals = {"qubit": 0, "bit": 0}
    for start, content in _brackets(code):
        before = _DECLARATION.search(code[max(0, start - 40) : start])
        kind = None if before is None else (before.group(1) or before.group(2))
        for piece in re.split(r"[,:]", content):
            if not piece.strip() or "{" in piece:
                continue
            value = _constant(piece)
            shown = piece.strip()[:40]
            if value is None:
                if kind is not None:
                    raise QasmError(
                        "size", f"{what}: {kind}[{shown}]: a size must be a constant integer (a number or arithmetic)"
                    )
                continue
            if value > limits.max_size or value < -limits.max_size:
                raise QasmError(
                    "size",
                    f"{what}: [{shown}] = {_shown(value)} is too large: valid sizes and indices are 0..{limits.max_size}",
                )
            if kind in ("qubit", "qreg"):
                totals["qubit"] += int(value)
            elif kind in ("bit", "creg"):
                totals["bit"] += int(value)
    totals["qubit"] += len(re.findall(r"\bqubit\s+[A-Za-z_]", code))
    totals["bit"] += len(re.findall(r"\bbit\s+[A-Za-z_]", code))
    for match in _HARDWARE.finditer(code):
        if int(match.group(1)) >= limits.max_qubits:
            raise QasmError(
                "qubits", f"{what}: hardware qubit ${match.group(1)}: valid range is $0..${limits.max_qubits - 1}"
            )
    if totals["qubit"] > limits.max_qubits:
        raise QasmError("size", f"{what} declares {totals['qubit']} qubits: valid range is 1..{limits.max_qubits}")
    if totals["bit"] > limits.max_clbits:
        valid = f"0..{limits.max_clbits}" if limits.max_clbits else "0 (none)"
        raise QasmError("classical", f"{what} declares {totals['bit']} classical bits: valid range is {valid}")


def _statements(body: str) -> Iterator[str]:
    for statement in body.split(";"):
        if statement.strip():
            yield statement.strip()


def _weight(statement: str, costs: dict[str, int]) -> int:
    """Gate applications one statement expands to (custom gates inlined, ``pow(k) @`` repeats k times, each control
    on a custom gate x :data:`CONTROL_COST`)."""
    factor, controls = 1, 0
    while True:
        modifier = _MODIFIER.match(statement)
        if modifier is None:
            break
        kind, count, power_text = modifier.groups()
        if power_text is not None:
            power = _constant(power_text)
            factor *= max(1, int(abs(power))) if power is not None and power != float("inf") else _HUGE
        elif kind in ("ctrl", "negctrl"):
            n = _constant(count) if count is not None else 1.0
            controls += max(1, int(abs(n))) if n is not None and n != float("inf") else 64
        statement = statement[modifier.end() :]
    call = _CALL.match(statement)
    if call is None or call.group(1) in _KEYWORDS:
        return 0 if call is not None and call.group(1) not in ("measure", "reset", "barrier") else 1
    name = call.group(1)
    if name in costs and controls:
        factor *= CONTROL_COST ** min(controls, 64)
    return min(factor * costs.get(name, 1), _HUGE)


def _check_definitions(code: str, what: str, limits: Limits) -> None:
    costs: dict[str, int] = {}
    top: list[str] = []
    pos = 0
    for match in _DEFINITION.finditer(code):
        kind, name = match.groups()
        if name in STANDARD_GATES:
            raise QasmError(
                "redefinition",
                f"{what}: {kind} {name!r} redefines the standard gate {name}: give the custom gate another name",
            )
        if kind == "opaque":
            raise QasmError("opaque", f"{what}: opaque gate {name!r} has no definition: valid gates have a body")
        if match.start() < pos:  # a definition inside another one's body: the parser reports it
            continue
        top.append(code[pos : match.start()])
        open_at = code.find("{", match.end())
        close_at = code.find("}", open_at + 1)
        if open_at < 0 or close_at < 0:
            break
        body = code[open_at + 1 : close_at]
        costs[name] = min(sum(_weight(s, costs) for s in _statements(body)), _HUGE)
        if costs[name] > limits.max_ops:
            raise QasmError(
                "expansion",
                f"{what}: gate {name!r} expands to {_shown(costs[name])} gate applications: valid range is "
                f"1..{limits.max_ops} ({_COUNTED})",
            )
        pos = close_at + 1
    top.append(code[pos:])
    total = sum(_weight(s, costs) for s in _statements(" ".join(top)))
    if total > limits.max_ops:
        raise QasmError(
            "expansion",
            f"{what}: the program expands to {_shown(total)} gate applications: valid range is "
            f"1..{limits.max_ops} ({_COUNTED})",
        )


def check_text(text: str, *, what: str = "qasm", limits: Limits = Limits()) -> int:
    """The pre-parse checks of the module docstring on program ``text``; returns its OpenQASM version (2 or 3).
    Each check is one linear pass. Raises :class:`QasmError`."""
    if len(text) > limits.max_chars:
        raise QasmError("too_long", f"{what} has {len(text)} characters: valid range is 1..{limits.max_chars}")
    code = strip_comments(text, what=what)
    if not code.strip():
        raise QasmError("empty", f"{what} is empty: expected an OpenQASM 2 or 3 program")
    version = _version(code, what, limits.version)
    _check_includes(code, version, what)
    _check_nesting(code, what, limits.max_nesting)
    _check_sizes(code, what, limits)
    _check_definitions(code, what, limits)
    return version


class _Timeout(BaseException):  # not an Exception: parsers that catch Exception cannot swallow it
    pass


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`_Timeout` after ``seconds`` of wall clock (SIGALRM; only in the main thread, elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _parse(text: str, version: int, what: str, budget_s: float) -> Any:
    from qiskit import qasm2, qasm3

    lexer = io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stderr(lexer), _deadline(budget_s):
            if version == 2:
                return qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
            return qasm3.loads(text)
    except _Timeout:
        raise QasmError(
            "timeout",
            f"{what}: parsing took more than {budget_s:g} s ({time.perf_counter() - start:.1f} s): the budget is "
            f"{budget_s:g} s",
        ) from None
    except RecursionError:
        raise QasmError("nesting", f"{what}: the program nests too deeply for the OpenQASM {version} parser") from None
    except Exception as exc:  # the parsers raise their own error types (QASM2ParseError, QASM3ImporterError, ...)
        detail = str(exc).strip() or lexer.getvalue().strip()
        first = detail.splitlines()[0][:300] if detail else f"{type(exc).__name__} at {text.strip()[:40]!r}"
        raise QasmError("parse", f"{what}: not a valid OpenQASM {version} program: {first}") from None


def check_circuit(circuit: Any, *, what: str = "qasm", limits: Limits = Limits()) -> None:
    """The post-parse checks: qubit and bit counts, no classical control, no reset, measurements only at the end
    (none at all with ``limits.measurements=False``). Raises :class:`QasmError`."""
    if circuit.num_qubits < 1 or circuit.num_qubits > limits.max_qubits:
        raise QasmError("qubits", f"{what} has {circuit.num_qubits} qubits: valid range is 1..{limits.max_qubits}")
    if circuit.num_clbits > (limits.max_clbits if limits.measurements else 0):
        valid = f"0..{limits.max_clbits}" if limits.measurements else "0 (none)"
        raise QasmError("classical", f"{what} declares {circuit.num_clbits} classical bits: valid range is {valid}")
    measured: set[Any] = set()
    for position, inst in enumerate(circuit.data):
        name = inst.operation.name
        if name in CLASSICAL_CONTROL:
            raise QasmError(
                "classical",
                f"{what}: instruction {position} is classical control ({name}): not supported, valid programs are "
                "gates with measurements at the end",
            )
        if name == "reset":
            raise QasmError(
                "reset", f"{what}: instruction {position} is a reset: not supported, valid programs start in |0...0>"
            )
        if name == "measure":
            measured.update(inst.qubits)
        elif name != "barrier" and measured.intersection(inst.qubits):
            raise QasmError(
                "measure",
                f"{what}: instruction {position} ({name}) acts on a measured qubit: valid programs measure at the end",
            )


def parse_qasm(text: str, *, what: str = "qasm", limits: Limits = Limits()) -> Any:
    """A qiskit ``QuantumCircuit`` from OpenQASM 2 or 3 program *text* (never read as a path), checked before
    parsing (:func:`check_text`), parsed within ``limits.budget_s`` seconds and checked after
    (:func:`check_circuit`). ``what`` names the parameter in messages. Raises :class:`QasmError`."""
    if not isinstance(text, str):
        raise QasmError("type", f"{what} must be OpenQASM text, got {type(text).__name__}")
    version = check_text(text, what=what, limits=limits)
    circuit = _parse(text, version, what, limits.budget_s)
    check_circuit(circuit, what=what, limits=limits)
    return circuit


def read_qasm(source: str | Path, *, what: str = "qasm", limits: Limits = Limits()) -> Any:
    """A qiskit ``QuantumCircuit`` from an OpenQASM 2 or 3 file path or program text (:func:`qasm_text`), through
    :func:`parse_qasm`. ``what`` names the parameter in messages (``qasm``, ``circuit``). Raises :class:`QasmError`."""
    return parse_qasm(qasm_text(source, what=what, max_chars=limits.max_chars), what=what, limits=limits)
