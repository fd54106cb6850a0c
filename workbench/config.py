"""One definition of every parameter: declared once on a frozen config dataclass.

A technique's config is a ``@dataclass(frozen=True, kw_only=True)`` subclass of :class:`Config` whose
fields are made with :func:`param`. The field carries its unit, its valid range or choices and a help
line. The CLI builds its flags from these specs, panels build their controls from them, and the runner
and the report's ``-p name=value`` go through the same :meth:`Config.from_dict`, so a bad value fails in
the same words everywhere::

    >>> @dataclass(frozen=True, kw_only=True)
    ... class Demo(Config):
    ...     gpus: int = param(4, lo=1, hi=16, unit="GPUs", help="number of ranks")
    >>> Demo.from_dict({"gpus": "32"})
    Traceback (most recent call last):
    ValueError: gpus=32 is out of range: valid range is 1..16 (GPUs)
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["Config", "ParamSpec", "param", "param_specs", "coerce"]

_TYPES = (bool, int, float, str)


def param(
    default: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple | None = None,
    unit: str = "",
    help: str = "",
) -> Any:
    """Declare a config field with its default, valid range (``lo..hi`` inclusive) or choices, unit and help."""
    meta = {"lo": lo, "hi": hi, "choices": tuple(choices) if choices is not None else None, "unit": unit, "help": help}
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class ParamSpec:
    """What a parameter is: name, Python type, default, range or choices, unit, help."""

    name: str
    type: type
    default: Any
    lo: float | None
    hi: float | None
    choices: tuple | None
    unit: str
    help: str

    @property
    def flag(self) -> str:
        """The CLI flag, e.g. ``--head-dim`` for ``head_dim``."""
        return "--" + self.name.replace("_", "-")

    def describe_range(self) -> str:
        """Human text of the valid values, e.g. ``1..16 (GPUs)`` or ``one of 'float32', 'float64'``."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type is bool:
            return "true or false"
        if self.type is str:
            return "any text"
        lo = "-inf" if self.lo is None else _fmt(self.lo)
        hi = "inf" if self.hi is None else _fmt(self.hi)
        unit = f" ({self.unit})" if self.unit else ""
        return f"{lo}..{hi}{unit}"

    def check(self, value: Any) -> Any:
        """Coerce ``value`` to this parameter's type and check its range; raise ValueError naming it."""
        value = coerce(self, value)
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{self.name}={value!r} is not allowed: valid values are {self.describe_range()}")
        if self.type in (int, float):
            if value != value or (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
                raise ValueError(f"{self.name}={_fmt(value)} is out of range: valid range is {self.describe_range()}")
        return value


def _fmt(x: float) -> str:
    return f"{x:,}".replace(",", "_") if isinstance(x, int) and abs(x) >= 100_000 else f"{x:g}" if isinstance(x, float) else str(x)


def coerce(spec: ParamSpec, value: Any) -> Any:
    """Turn a CLI/report string (or a Python value) into ``spec.type``; ValueError naming the parameter."""
    t = spec.type
    if t is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{spec.name}={value!r} is not a boolean: valid values are true or false")
    if t is int:
        if isinstance(value, bool):
            raise ValueError(f"{spec.name}={value!r} is not an integer: valid range is {spec.describe_range()}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        try:
            return int(str(value).strip().replace("_", ""))
        except ValueError:
            raise ValueError(
                f"{spec.name}={value!r} is not an integer: valid range is {spec.describe_range()}"
            ) from None
    if t is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return float(str(value).strip())
        except ValueError:
            raise ValueError(f"{spec.name}={value!r} is not a number: valid range is {spec.describe_range()}") from None
    return str(value)


def param_specs(cls: type) -> tuple[ParamSpec, ...]:
    """The :class:`ParamSpec` of every field of config class ``cls``, in declaration order."""
    hints = typing.get_type_hints(cls)
    specs = []
    for f in dataclasses.fields(cls):
        t = hints[f.name]
        if t not in _TYPES:
            raise TypeError(f"config field {cls.__name__}.{f.name} has type {t!r}; use one of bool, int, float, str")
        m = f.metadata
        specs.append(
            ParamSpec(
                name=f.name, type=t, default=f.default, lo=m.get("lo"), hi=m.get("hi"),
                choices=m.get("choices"), unit=m.get("unit", ""), help=m.get("help", ""),
            )
        )
    return tuple(specs)


@dataclass(frozen=True, kw_only=True)
class Config:
    """Base of technique configs: checks every field on construction, then :meth:`check_combination`."""

    def __post_init__(self) -> None:
        for spec in param_specs(type(self)):
            object.__setattr__(self, spec.name, spec.check(getattr(self, spec.name)))
        self.check_combination()

    def check_combination(self) -> None:
        """Rules that involve several fields; subclasses raise ValueError naming the parameters."""

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        return param_specs(cls)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]):
        """Build from a mapping of names (``head_dim`` or ``head-dim``) to values or strings; rejects unknown keys."""
        names = {s.name for s in param_specs(cls)}
        clean = {}
        for key, value in values.items():
            name = key.replace("-", "_")
            if name not in names:
                raise ValueError(f"unknown parameter {key!r}: valid parameters are {', '.join(sorted(names))}")
            clean[name] = value
        return cls(**clean)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any):
        """A copy with ``changes`` applied (validated again)."""
        return type(self).from_dict({**self.to_dict(), **changes})
