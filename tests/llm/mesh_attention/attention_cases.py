"""Shared parameter cases for the real multi-process attention checks (one launch per case, cached)."""

from __future__ import annotations

import functools

import pytest

from workbench.llm.mesh_attention.check import run_check

# (gpus, seq, heads, head_dim, causal, dtype, extra keyword arguments)
# sequence lengths mostly not divisible by P (or 2P for the causal zigzag layout): padding is exercised
CASES = [
    (1, 7, 2, 4, True, "float64", {}),
    (1, 9, 2, 4, False, "float32", {}),
    (2, 17, 4, 4, True, "float64", {}),
    (2, 16, 4, 4, False, "float32", {}),
    (3, 25, 6, 4, True, "float32", {}),
    (3, 24, 6, 4, False, "float64", {}),
    (4, 30, 4, 8, True, "float64", {}),
    (4, 32, 4, 8, False, "float64", {}),
    (4, 33, 4, 4, True, "float32", {}),
    (4, 20, 6, 4, False, "float64", {}),  # heads=6: Ulysses cannot run, USP takes u=2
    (5, 23, 5, 4, True, "float64", {}),
    (6, 50, 6, 4, True, "float64", {}),
    (6, 47, 6, 4, False, "float32", {}),
    (6, 36, 6, 4, True, "float64", {"tile": (2, 3)}),
    (8, 40, 8, 4, True, "float32", {"gpus_per_node": 4}),
    (9, 30, 9, 4, False, "float64", {}),
    (10, 43, 10, 4, True, "float64", {}),
    (12, 50, 12, 4, False, "float64", {"ulysses_degree": 3}),
    pytest.param((16, 70, 16, 4, True, "float64", {"gpus_per_node": 8}), marks=pytest.mark.slow),
]


def case_id(case) -> str:
    gpus, seq, heads, head_dim, causal, dtype, extra = case
    tail = "-".join(f"{k}{v}" for k, v in extra.items())
    return f"P{gpus}-S{seq}-H{heads}-{'causal' if causal else 'full'}-{dtype[5:]}" + (f"-{tail}" if tail else "")


def ids(cases) -> list[str]:
    return [case_id(c.values[0] if hasattr(c, "values") else c) for c in cases]


@functools.cache
def _cached(gpus, seq, heads, head_dim, causal, dtype, extra_items):
    return run_check(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype=dtype,
        seed=gpus * 1000 + seq,
        **dict(extra_items),
    )


def check_results(case) -> list[dict]:
    """run_check for a case, launched once per test session."""
    gpus, seq, heads, head_dim, causal, dtype, extra = case
    return _cached(gpus, seq, heads, head_dim, causal, dtype, tuple(sorted(extra.items())))
