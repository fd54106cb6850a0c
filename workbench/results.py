"""Typed results: what a technique's ``run(config)`` returns, and number formatting, written once.

A result is a frozen dataclass deriving from :class:`Result`; :meth:`Result.to_json` turns it into the JSON
object ``workbench run NAME --json`` prints, with the dataclass's field names as keys in declaration order
(the JSON schema is the code). Nested results, dataclasses, numpy scalars and arrays, tuples and mappings
become plain JSON values; non-finite floats stay floats (``json.dumps`` writes ``NaN``/``Infinity`` as Python
does). Tables (``format_table``) format numbers with :func:`fmt` and :func:`fmt_bytes`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["Result", "to_plain", "fmt", "fmt_bytes", "fmt_seconds"]


def to_plain(value: Any) -> Any:
    """``value`` as plain JSON-able Python: dataclasses -> dicts (field order), numpy -> Python, tuples -> lists."""
    if isinstance(value, Result):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True, kw_only=True)
class Result:
    """Base of every technique's result: fields are the JSON keys; ``None`` fields listed in :attr:`OMIT_NONE`
    are left out (keys that only some modes print)."""

    #: fields that are left out of the JSON when they are None
    OMIT_NONE: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None and f.name in self.OMIT_NONE:
                continue
            out[f.name] = to_plain(value)
        return out


def fmt(x: Any, digits: int = 4) -> str:
    """A number for a table: integers with thousands separators, floats with ``digits`` significant digits."""
    if x is None:
        return "-"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x)).lower()
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"


def fmt_bytes(n: Any) -> str:
    """Bytes in decimal units (B, KB, MB, GB, TB), never plotly's ambiguous SI 'G'."""
    if n is None:
        return "-"
    n = float(n)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def fmt_seconds(s: Any) -> str:
    """Seconds with a unit that fits (s, ms, us)."""
    if s is None:
        return "-"
    s = float(s)
    if abs(s) >= 1 or s == 0:
        return f"{s:.3g} s"
    if abs(s) >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"
