"""Config declarations: one validation for CLI strings, panel values and Python values (reference: the spec)."""

from dataclasses import dataclass

import pytest

from workbench.config import Config, ParamSpec, param


@dataclass(frozen=True, kw_only=True)
class Demo(Config):
    gpus: int = param(4, lo=1, hi=16, unit="GPUs", help="ranks")
    rate: float = param(0.5, lo=0.0, hi=1.0, help="a rate")
    causal: bool = param(False, help="mask")
    dtype: str = param("float64", choices=("float32", "float64"), help="precision")

    def check_combination(self) -> None:
        if self.dtype == "float32" and self.gpus > 8:
            raise ValueError(f"gpus={self.gpus} with dtype='float32': valid range is 1..8")


def test_defaults_and_string_coercion():
    c = Demo.from_dict({"gpus": "6", "rate": "0.25", "causal": "true"})
    assert (c.gpus, c.rate, c.causal, c.dtype) == (6, 0.25, True, "float64")
    assert Demo() == Demo(gpus=4)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"gpus": 17}, "gpus=17 is out of range: valid range is 1..16 (GPUs)"),
        ({"gpus": "four"}, "gpus='four' is not an integer: valid range is 1..16 (GPUs)"),
        ({"gpus": 2.5}, "gpus=2.5 is not an integer"),
        ({"rate": "nan"}, "rate=nan is out of range"),
        ({"causal": "maybe"}, "causal='maybe' is not a boolean"),
        ({"dtype": "bf16"}, "dtype='bf16' is not allowed: valid values are one of 'float32', 'float64'"),
        ({"gpu": 3}, "unknown parameter 'gpu': valid parameters are causal, dtype, gpus, rate"),
        ({"dtype": "float32", "gpus": 9}, "gpus=9 with dtype='float32'"),
    ],
)
def test_bad_values_name_parameter_value_and_range(values, message):
    with pytest.raises(ValueError) as info:
        Demo.from_dict(values)
    assert message in str(info.value)


def test_frozen_and_replace_revalidates():
    c = Demo()
    with pytest.raises(AttributeError):
        c.gpus = 3  # type: ignore[misc]
    assert c.replace(gpus=8).gpus == 8
    with pytest.raises(ValueError, match="gpus=0 is out of range"):
        c.replace(gpus=0)


def test_specs_carry_flags_and_ranges():
    specs = {s.name: s for s in Demo.specs()}
    assert specs["gpus"].flag == "--gpus"
    assert specs["gpus"].describe_range() == "1..16 (GPUs)"
    text = ParamSpec("path", str, "", None, None, None, "", "")
    assert text.describe_range() == "any text"
    assert specs["causal"].type is bool
