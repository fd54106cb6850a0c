"""Parameters of FIITED (``workbench run fiited ...``) and of its panel's view."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

DATASETS = ("synthetic", "criteo-sample", "avazu-sample", "movielens-sample")
SCHEDULES = ("gradual", "one-shot")
BASELINE_SETS = ("all", "none")


@dataclass(frozen=True, kw_only=True)
class FiitedConfig(Config):
    """One FIITED training run on CTR data at a memory budget, with the baselines at the same budget."""

    dataset: str = param(
        "synthetic",
        choices=DATASETS,
        help="synthetic: Criteo-shaped generated data (planted labels); *-sample: the shared "
        "DeepCTR samples (100-200 rows: smoke tests only, no accuracy claims)",
    )
    rows: int = param(
        100_000,
        lo=100,
        hi=20_000_000,
        unit="rows",
        help="synthetic rows generated (train + test); ignored for the samples",
    )
    budget_fraction: float = param(
        0.5,
        lo=0.001,
        hi=1.0,
        unit="of full",
        help="embedding memory budget as a fraction of the full table's bytes (FIITED: the served table's "
        "chunks, keys, pointers and default vectors)",
        label="memory budget",
    )
    epochs: int = param(
        5,
        lo=1,
        hi=100,
        unit="epochs",
        help="most passes over the training rows (early stopping on the validation rows)",
    )
    val_fraction: float = param(
        0.1, lo=0.0, hi=0.5, help="share of the training rows held out for early stopping (0: no early stopping)"
    )
    patience: int = param(
        1, lo=1, hi=20, unit="epochs", help="epochs without a better validation log-loss before stopping"
    )
    min_chunks: int = param(
        0,
        lo=0,
        hi=1,
        unit="chunks",
        help="least chunks per id: 0 lets an id drop to its feature's shared default vector, 1 keeps one chunk",
    )
    dim: int = param(64, lo=2, hi=1024, unit="floats", help="full embedding dimension d")
    chunk: int = param(16, lo=1, hi=1024, unit="floats", help="chunk size c (divides d): the pruning granule")
    vocab_scale: float = param(
        0.002,
        lo=1e-6,
        hi=1.0,
        unit="x Criteo",
        help="synthetic: each feature keeps min(N, max(64, N x scale)) of Criteo's N values",
    )
    skew: float = param(
        1.0,
        lo=0.0,
        hi=3.0,
        unit="x fitted",
        help="synthetic: multiplier on the Zipf exponents fitted on criteo_sample.txt",
    )
    batch_size: int = param(1024, lo=8, hi=65_536, unit="rows", help="rows per training step")
    lr: float = param(0.05, lo=1e-5, hi=10.0, help="Adagrad learning rate (tables and MLPs)")
    ema_decay: float = param(0.9, lo=0.0, hi=0.999, help="decay of the utility EMAs, per pruning interval")
    warmup: float = param(
        0.2, lo=0.0, hi=0.95, unit="of steps", help="share of the first epoch's steps before the first prune"
    )
    interval: int = param(50, lo=1, hi=1_000_000, unit="steps", help="steps between prune events")
    schedule: str = param(
        "gradual", choices=SCHEDULES, help="gradual: cubic ramp to the budget; one-shot: the budget at the first event"
    )
    ramp: float = param(0.5, lo=0.05, hi=1.0, unit="of steps", help="gradual: share of post-warm-up steps of the ramp")
    regrow: bool = param(True, help="pruned chunks whose utility rises are allocated again")
    load_factor: float = param(0.8, lo=0.1, hi=0.95, help="VHPI keys per slot (linear probing)")
    baselines: str = param("all", choices=BASELINE_SETS, help="also train the baselines at the same budget")
    test_fraction: float = param(0.2, lo=0.05, hi=0.5, help="share of the rows held out for AUC / log-loss")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the data, the initial weights and the batch order")

    def check_combination(self) -> None:
        if self.dim % self.chunk:
            raise ValueError(
                f"chunk={self.chunk} does not divide dim={self.dim}: valid values are the divisors of {self.dim}"
            )


@dataclass(frozen=True, kw_only=True)
class FiitedViewConfig(Config):
    """What the panel shows: cached sweeps at a data set (skew, rows) and schedule, marked at a budget."""

    budget_fraction: float = param(0.5, lo=0.001, hi=1.0, unit="of full", label="memory budget")
    skew: float = param(1.0, lo=0.0, hi=3.0, unit="x fitted", help="Zipf exponents x this")
    rows: int = param(40_000, lo=2_000, hi=2_000_000, unit="rows", help="synthetic rows (train + test)")
    schedule: str = param("gradual", choices=SCHEDULES, help="pruning schedule")
    warmup: float = param(0.2, lo=0.0, hi=0.95, unit="of steps", help="share of steps before the first prune")
    interval: int = param(10, lo=1, hi=10_000, unit="steps", help="steps between prune events")
