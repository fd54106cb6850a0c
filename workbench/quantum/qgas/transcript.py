"""Reading QGAS transcripts (``--replay``, the study's cache) with every field checked, and checking that a
transcript can be written (``--transcript``) before a search starts.

A transcript is the JSON :func:`~workbench.quantum.qgas.search.run_search` writes: ``{"records": [...], ...}``,
each record a :class:`~workbench.quantum.qgas.prompt.Record` as a dict. A file that is missing, too large, not
JSON, nested too deeply, or whose records miss a field or hold a value of the wrong type is refused with one
ValueError line naming the file, the record and the field (never a KeyError or TypeError traceback).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from workbench.quantum.qgas.prompt import Record

__all__ = ["MAX_TRANSCRIPT_BYTES", "read_records", "record_from_dict", "check_writable"]

#: largest transcript read (bytes): 200 iterations of 20 000-character answers and prompts fit many times
MAX_TRANSCRIPT_BYTES = 64 * 2**20
#: the JSON types each Record field accepts (``None`` where the field is optional)
_TYPES: dict[str, tuple[str, bool]] = {
    "iteration": ("int", False),
    "proposer": ("str", False),
    "raw": ("str", False),
    "valid": ("bool", False),
    "reason": ("str", False),
    "error": ("str", False),
    "qasm": ("str", False),
    "depth": ("int", True),
    "gates": ("int", True),
    "cnots": ("int", True),
    "params": ("int", True),
    "energy": ("float", True),
    "energy_error": ("float", True),
    "approximation_ratio": ("float", True),
    "noisy_energy": ("float", True),
    "noisy_energy_error": ("float", True),
    "seconds": ("float", False),
    "prompt": ("str", False),
    "theta": ("floats", True),
    "evaluations": ("int", True),
    "noisy_executions": ("int", True),
}
_REQUIRED = tuple(f.name for f in fields(Record) if f.default is MISSING and f.default_factory is MISSING)


def read_records(path: str | os.PathLike[str], *, flag: str = "transcript") -> list[dict[str, Any]]:
    """The record dicts of the transcript JSON at ``path`` (only the outer structure checked: an object with a
    ``records`` list of objects). ``flag`` names the parameter in messages. Raises ValueError in one line."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{flag}={str(path)!r} does not exist: give the path of a transcript JSON file")
    size = p.stat().st_size
    if size > MAX_TRANSCRIPT_BYTES:
        raise ValueError(f"{flag}={str(path)!r} has {size} bytes: valid range is 1..{MAX_TRANSCRIPT_BYTES}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0][:200]
        raise ValueError(f"{flag}={str(path)!r} is not a QGAS transcript: {reason}") from None
    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise ValueError(f"{flag}={str(path)!r} is not a QGAS transcript: it has no 'records' list")
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise ValueError(
                f"{flag}={str(path)!r} is not a QGAS transcript: records[{i}] is {type(record).__name__}, "
                "expected an object"
            )
    return records


def _type_ok(value: Any, kind: str, optional: bool) -> bool:
    if value is None:
        return optional
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, list) and all(_type_ok(v, "float", False) for v in value)


def record_from_dict(data: dict[str, Any], where: str) -> Record:
    """A :class:`Record` from its transcript dict, every field checked (``where`` names the file and record in
    messages: ``transcript='x.json' records[3]``). Raises ValueError in one line."""
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        raise ValueError(f"{where} misses the field {missing[0]!r}: required fields are {', '.join(_REQUIRED)}")
    for name, value in data.items():
        if name not in _TYPES:
            raise ValueError(f"{where} has an unknown field {name!r}: valid fields are {', '.join(_TYPES)}")
        kind, optional = _TYPES[name]
        if not _type_ok(value, kind, optional):
            shown = "a list of finite numbers" if kind == "floats" else kind
            raise ValueError(
                f"{where} field {name!r} is {json.dumps(value)[:40]}: valid type is {shown}"
                + (" or null" if optional else "")
            )
    theta = data.get("theta")
    return Record(**{**data, "theta": None if theta is None else tuple(float(v) for v in theta)})


def check_writable(path: Path, *, flag: str = "transcript") -> None:
    """Raise ValueError naming ``flag`` unless a file can be written at ``path`` (its folder exists and is
    writable, and the path is not a folder)."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"{flag}={str(path)!r} is a folder: give the path of a JSON file to write")
    if not folder.is_dir():
        raise ValueError(f"{flag}={str(path)!r} cannot be written: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{flag}={str(path)!r} cannot be written: permission denied (give a writable path)")
