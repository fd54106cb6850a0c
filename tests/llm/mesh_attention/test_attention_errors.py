"""Bad parameters fail early with messages that name the parameter, its value and the rule.

Reference: the message texts themselves (checked with regular expressions), raised in the parent or
re-raised there from a worker process with the original type.
"""

from __future__ import annotations

import pytest
import torch

from workbench.distributed import run_workers
from workbench.llm.mesh_attention.check import run_check
from workbench.llm.mesh_attention.mesh import mesh_attention
from workbench.llm.mesh_attention.ring import ring_attention
from workbench.llm.mesh_attention.ulysses import ulysses_attention
from workbench.llm.mesh_attention.usp import usp_attention

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow

BASE = {"gpus": 4, "seq": 16, "heads": 4, "head_dim": 4, "causal": False, "dtype": "float64"}


@pytest.mark.parametrize(
    "override, message",
    [
        ({"gpus": 17}, r"gpus=17 is out of range: valid range is 1..16"),
        ({"gpus": 0}, r"gpus=0 is out of range: valid range is 1..16"),
        ({"seq": 0}, r"seq=0 is out of range: valid range is >= 1"),
        ({"heads": -1}, r"heads=-1 is out of range"),
        (
            {"dtype": "float16"},
            r"dtype='float16' is not supported by the real check: valid values are \('float32', 'float64'\)",
        ),
        ({"methods": ("ring", "flash")}, r"methods=\['ring', 'flash'\] must be distinct names from"),
        ({"methods": ()}, r"at least one"),
        (
            {"tile": (2, 3)},
            r"tile=\(2, 3\) has a\*b=6 but gpus=4: the tile must satisfy a\*b == gpus; valid tiles are \[\(1, 4\), \(2, 2\), \(4, 1\)\]",
        ),
        ({"ulysses_degree": 3}, r"ulysses_degree=3 does not divide gpus=4: valid values are \[1, 2, 4\]"),
        ({"seed": -1}, r"seed=-1 is out of range: valid range is 0..2\*\*63-1"),
    ],
)
def test_run_check_rejects_bad_arguments(override, message) -> None:
    with pytest.raises(ValueError, match=message):
        run_check(**(BASE | override))


def test_ulysses_with_indivisible_heads_is_reported_not_raised() -> None:
    results = run_check(**(BASE | {"heads": 6, "methods": ("ulysses", "usp")}))
    assert results[0] == {
        "method": "ulysses",
        "error": "heads=6 is not divisible by the Ulysses degree 4: the all-to-all over heads needs heads % degree "
        "== 0; degrees that work with heads=6 and gpus=4 are [1, 2]",
    }
    assert results[1]["ulysses_degree"] == 2 and results[1]["max_abs_err_out"] < 1e-10


def _call(rank: int, world: int, comm, fn, heads: int, length: int, kwargs: dict) -> None:
    x = torch.zeros(1, heads, length, 4, dtype=torch.float64)
    fn(x, x, x, comm, **kwargs)


@pytest.mark.parametrize(
    "fn, heads, length, kwargs, message",
    [
        (ulysses_attention, 6, 4, {}, r"heads=6 is not divisible by the Ulysses degree 4: .*heads % degree == 0"),
        (usp_attention, 4, 4, {"ulysses_degree": 3}, r"ulysses_degree=3 does not divide gpus=4"),
        (usp_attention, 6, 4, {"ulysses_degree": 4}, r"heads=6 is not divisible by the Ulysses degree 4"),
        (mesh_attention, 4, 4, {"tile": (3, 2)}, r"tile=\(3, 2\) has a\*b=6 but gpus=4"),
        (
            ring_attention,
            4,
            4,
            {"seq_len": 5},
            r"seq_len=5 does not match local length 4 on 4 ranks .* valid range is 13..16",
        ),
        (ring_attention, 4, 3, {"causal": True}, r"local sequence length 3 is odd"),
    ],
)
def test_kernels_raise_value_errors_in_workers(fn, heads: int, length: int, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_workers(_call, 4, fn, heads, length, kwargs)
