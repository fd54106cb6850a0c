"""QGAS transcripts: a ``--replay`` file or a cached transcript with missing or mistyped fields is refused in one
line naming the file, the record and the field (exit 2, no KeyError/TypeError traceback); an unwritable
``--transcript`` names the flag before the first iteration; a replayed answer that would hang or exhaust the
parser (nested gates, a hexadecimal register size) is logged as an invalid proposal with the reader's rule.

Reference: the Record dataclass (its fields and types) and the reader's refusal messages.
"""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.quantum.qgas.search import load_records
from workbench.quantum.qgas.transcript import record_from_dict

FAST = ["--train-steps", "2", "--restarts", "1"]
GOOD = {"iteration": 0, "proposer": "local", "raw": "x", "valid": False, "reason": "parse", "theta": None}
NESTED = (
    'OPENQASM 3.0;\ninclude "stdgates.inc";\ngate g0 a { x a; }\n'
    + "".join(f"gate g{i} a {{ g{i - 1} a; g{i - 1} a; }}\n" for i in range(1, 30))
    + "qubit[4] q;\ng29 q[0];"
)


def _replay(tmp_path, transcript, capsys):
    path = tmp_path / "in.json"
    path.write_text(transcript if isinstance(transcript, str) else json.dumps(transcript))
    argv = ["run", "qgas", "--problem", "h2", "--proposer", "replay", "--replay", str(path), "--iterations", "1"]
    code = main([*argv, "--transcript", str(tmp_path / "out.json"), "--json", *FAST])
    return code, capsys.readouterr()


@pytest.mark.parametrize(
    ("transcript", "message"),
    [
        ({"records": [{"rawx": "x"}]}, r"records\[0\] has no 'raw' field: valid is the answer text"),
        ({"records": [{"raw": 5}]}, r"records\[0\] has 'raw' of type int"),
        ({"records": "nope"}, r"it has no 'records' list"),
        ({"records": [7]}, r"records\[0\] is int, expected an object"),
        ([1, 2], r"it has no 'records' list"),
        ("{not json", r"is not a QGAS transcript: Expecting property name"),
        ("[" * 100_000 + "]" * 100_000, r"is not a QGAS transcript: nested too deeply"),
    ],
)
def test_malformed_replay_transcripts_exit_2_in_one_line(tmp_path, capsys, transcript, message):
    import re

    code, out = _replay(tmp_path, transcript, capsys)
    assert code == 2 and re.search(r"replay='.*in.json' " + ".*" + message, out.err), out.err
    assert "Traceback" not in out.err and out.err.strip().count("\n") == 0


@pytest.mark.parametrize(
    ("raw", "reason", "message"),
    [
        (NESTED, "expansion", "proposal: gate 'g12' expands to 4096 gate applications: valid range is 1..4000"),
        (
            'OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[0x5F5E100] q;',
            "size",
            "proposal: [0x5F5E100] = 100000000 is too large: valid sizes and indices are 0..64",
        ),
        ("OPENQASM 3.0;\nqubit[4] q;\n/* never closed", "comment", "the /* comment at line 3 is never closed"),
    ],
)
def test_replayed_answers_that_would_hang_or_crash_are_logged_invalid(tmp_path, capsys, raw, reason, message):
    code, out = _replay(tmp_path, {"records": [{"raw": raw}]}, capsys)
    assert code == 0, out.err
    assert json.loads(out.out)["valid_fraction"] == 0.0
    record = json.loads((tmp_path / "out.json").read_text())["records"][0]
    assert (record["valid"], record["reason"]) == (False, reason) and message in record["error"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("/no/such/folder/t.json", "transcript='/no/such/folder/t.json' cannot be written: the folder"),
        ("{tmp}", "is a folder: give the path of a JSON file to write"),
    ],
)
def test_an_unwritable_transcript_names_the_flag(tmp_path, capsys, target, message):
    target = target.format(tmp=tmp_path)
    assert main(["run", "qgas", "--problem", "h2", "--iterations", "1", "--transcript", target, *FAST]) == 2
    err = capsys.readouterr().err
    assert message in err and "transcript=" in err and "Traceback" not in err and err.strip().count("\n") == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"iteration": "0"}, r'records\[0\] field .iteration. is "0": valid type is int'),
        ({"valid": 1}, r"field 'valid' is 1: valid type is bool"),
        ({"energy": "low"}, r'field .energy. is "low": valid type is float or null'),
        ({"theta": [0.1, "x"]}, r'field .theta. is \[0.1, "x"\]: valid type is a list of finite numbers or null'),
        ({"bogus": 1}, r"has an unknown field 'bogus': valid fields are iteration, proposer"),
        ({"raw": None}, r"field 'raw' is null: valid type is str"),
    ],
)
def test_cached_transcript_records_are_checked_field_by_field(tmp_path, change, message):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"records": [{**GOOD, **change}]}))
    with pytest.raises(ValueError, match=r"transcript='.*t.json' records\[0\].*" + message.split("records\\[0\\]")[-1]):
        load_records(path)
    missing = {k: v for k, v in GOOD.items() if k != "proposer"}
    with pytest.raises(ValueError, match=r"misses the field 'proposer': required fields are iteration, proposer"):
        record_from_dict(missing, "here")
    assert record_from_dict({**GOOD, "theta": [1, 2.5]}, "here").theta == (1.0, 2.5)
