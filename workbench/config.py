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

A field may itself be a config (a *group*: the cluster, a device, a dataset), declared with :func:`group`. Its
parameters appear under dotted names (``cluster.inter_node_bw_gbps``): CLI flags ``--cluster.inter-node-bw-gbps``,
panel controls grouped under a heading, and ``from_dict`` keys ``"cluster.inter_node_bw_gbps"`` (or a nested
mapping ``{"cluster": {...}}``). Old spellings of a renamed parameter stay accepted through the class's
``ALIASES`` mapping (old name -> dotted name).
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["Config", "ParamSpec", "param", "group", "param_specs", "coerce", "add_config_flag"]

_TYPES = (bool, int, float, str)


def group(cls: type, *, help: str = "", **defaults: Any) -> Any:
    """Declare a field that is itself a config of class ``cls`` (defaults overridable by ``defaults``)."""
    return field(default_factory=lambda: cls(**defaults), metadata={"group": cls, "help": help})


def param(
    default: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple | None = None,
    unit: str = "",
    help: str = "",
    label: str = "",
) -> Any:
    """Declare a config field with its default, valid range (``lo..hi`` inclusive) or choices, unit, help and
    a short readable ``label`` for panels (default: the name in words)."""
    meta = {
        "lo": lo,
        "hi": hi,
        "choices": tuple(choices) if choices is not None else None,
        "unit": unit,
        "help": help,
        "label": label,
    }
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
    label: str = ""

    @property
    def flag(self) -> str:
        """The CLI flag, e.g. ``--head-dim`` for ``head_dim``, ``--cluster.inter-node-bw-gbps`` in a group."""
        return "--" + self.name.replace("_", "-")

    @property
    def group(self) -> str:
        """The group a parameter belongs to (``cluster`` for ``cluster.inter_node_bw_gbps``), else ``""``."""
        return self.name.rpartition(".")[0]

    @property
    def title(self) -> str:
        """What a panel shows: the declared ``label``, else the name in words, with the unit."""
        text = self.label or self.name.rpartition(".")[2].replace("_", " ")
        shown = self.unit and self.unit.lower() not in text.lower()  # "GPUs per node", not "... (GPUs)"
        return text + (f" ({self.unit})" if shown else "")

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
    return (
        f"{x:,}".replace(",", "_")
        if isinstance(x, int) and abs(x) >= 100_000
        else f"{x:g}"
        if isinstance(x, float)
        else str(x)
    )


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


def _group_class(f: dataclasses.Field) -> type[Config] | None:
    return f.metadata.get("group")


def _group_defaults(f: dataclasses.Field) -> dict[str, Any]:
    """The flat defaults of group field ``f`` as its config sets them (a group field always has a default_factory)."""
    return typing.cast("typing.Callable[[], Config]", f.default_factory)().to_flat_dict()


def param_specs(cls: type, prefix: str = "") -> tuple[ParamSpec, ...]:
    """The :class:`ParamSpec` of every field of config class ``cls`` in declaration order; a group's fields
    follow under dotted names (``cluster.gpus_per_node``)."""
    hints = typing.get_type_hints(cls)
    specs: list[ParamSpec] = []
    for f in dataclasses.fields(cls):
        sub = _group_class(f)
        if sub is not None:
            defaults = _group_defaults(f)  # the group's defaults as this config sets them
            specs.extend(
                dataclasses.replace(spec, default=defaults[spec.name.removeprefix(prefix + f.name + ".")])
                for spec in param_specs(sub, prefix + f.name + ".")
            )
            continue
        t = hints[f.name]
        if t not in _TYPES:
            raise TypeError(f"config field {cls.__name__}.{f.name} has type {t!r}; use one of bool, int, float, str")
        m = f.metadata
        specs.append(
            ParamSpec(
                name=prefix + f.name,
                type=t,
                default=f.default,
                lo=m.get("lo"),
                hi=m.get("hi"),
                choices=m.get("choices"),
                unit=m.get("unit", ""),
                help=m.get("help", ""),
                label=m.get("label", ""),
            )
        )
    return tuple(specs)


@dataclass(frozen=True, kw_only=True)
class Config:
    """Base of technique configs: checks every field on construction, then :meth:`check_combination`."""

    #: old parameter names still accepted by :meth:`from_dict` (and as CLI flags): old name -> current name
    ALIASES: ClassVar[Mapping[str, str]] = {}

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            sub = _group_class(f)
            value = getattr(self, f.name)
            if sub is not None:
                if isinstance(value, Mapping):
                    value = sub.from_dict(value)
                elif not isinstance(value, sub):
                    raise ValueError(
                        f"{f.name}={value!r} is not a {sub.__name__}: give one, or a mapping of its fields"
                    )
                object.__setattr__(self, f.name, value)
        for spec in param_specs(type(self)):
            if "." not in spec.name:
                object.__setattr__(self, spec.name, spec.check(getattr(self, spec.name)))
        self.check_combination()

    def check_combination(self) -> None:
        """Rules that involve several fields; subclasses raise ValueError naming the parameters."""

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        return param_specs(cls)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]):
        """Build from a mapping of names (``head_dim``, ``head-dim``, dotted ``cluster.gpus_per_node``, an
        alias in :attr:`ALIASES`) to values or strings, or ``{"cluster": {...}}``; rejects unknown keys."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        classes = {name: sub for name, f in fields.items() if (sub := _group_class(f)) is not None}
        groups: dict[str, dict[str, Any]] = {name: {} for name in classes}
        names = {s.name for s in param_specs(cls)}
        clean: dict[str, Any] = {}
        for key, value in values.items():
            name = key.replace("-", "_")
            name = cls.ALIASES.get(name, name)
            head, dot, rest = name.partition(".")
            if dot and head in groups and name in names:
                groups[head][rest] = value
            elif name in groups and isinstance(value, Mapping):
                groups[name].update(value)
            elif name in fields and name not in groups:
                clean[name] = value
            elif name in groups and isinstance(value, classes[name]):
                groups[name].update(value.to_flat_dict())
            else:
                raise ValueError(f"unknown parameter {key!r}: valid parameters are {', '.join(sorted(names))}")
        for name, sub_values in groups.items():
            if sub_values:
                start = _group_defaults(fields[name])
                try:
                    clean[name] = classes[name].from_dict({**start, **sub_values})
                except ValueError as exc:  # name the group: cluster.gpus_per_node=0 ...
                    raise ValueError(f"{name}.{exc.args[0] if exc.args else exc}") from None
        return cls(**clean)

    def to_dict(self) -> dict[str, Any]:
        """Plain values; a group is a nested dict."""
        return dataclasses.asdict(self)

    def to_flat_dict(self) -> dict[str, Any]:
        """Plain values under the names of :meth:`specs` (a group's fields dotted)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Config):
                out.update({f"{f.name}.{k}": v for k, v in value.to_flat_dict().items()})
            else:
                out[f.name] = value
        return out

    def replace(self, **changes: Any):
        """A copy with ``changes`` applied (validated again; a group takes a config or a mapping)."""
        return type(self).from_dict({**self.to_flat_dict(), **changes})


def add_config_flag(parser: argparse.ArgumentParser, spec: ParamSpec, old_flags: Sequence[str] = ()) -> None:
    """One flag per parameter (a group's as ``--cluster.inter-node-bw-gbps``), plus its old spellings."""
    text = f"{spec.help} [{spec.describe_range()}; default {spec.default!r}]"
    flags = [spec.flag, *old_flags]
    if spec.type is bool:
        parser.add_argument(*flags, dest=spec.name, action=argparse.BooleanOptionalAction, default=None, help=text)
    else:
        metavar = spec.name.rpartition(".")[2].upper()
        parser.add_argument(*flags, dest=spec.name, default=None, metavar=metavar, help=text)
