"""FIITED's orchestration, shared by the runner and the study: data sets (train / validation / test), memoised
training runs, sweeps over budgets and seeds with paired differences against the full table, the uniform-width
curve, the memory estimate of a run.

Caches: every memo of this technique lives here (generated data sets, runs keyed by everything they depend
on, sweeps); :func:`clear_caches` empties them. Synthetic data sets of 500,000 rows or more are also stored in
``workbench.data.cache_dir("fiited")`` (generation is reproducible, so the file is only a time saver).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from workbench.recsys.fiited.config import FiitedConfig
from workbench.recsys.fiited.train import METHODS, PTR_BYTES, MethodRun, Settings, check_budget, train_method
from workbench.recsys.samples import CTRData, load_sample
from workbench.recsys.synthetic import NUM_DENSE, CTRDataset, SyntheticSpec, estimate_bytes, load_or_generate

__all__ = [
    "DataSplit",
    "data_split",
    "spec_of",
    "settings_of",
    "run_method",
    "sweep",
    "Sweep",
    "mean_ci",
    "paired",
    "Paired",
    "uniform_curve",
    "UniformCurve",
    "estimate_run_bytes",
    "clear_caches",
]

DISK_CACHE_ROWS = 500_000


@dataclass(frozen=True)
class DataSplit:
    """Train, validation and test rows, with the planted model's AUC on the test rows (synthetic data only)."""

    train: CTRData
    val: CTRData | None
    test: CTRData
    oracle_auc: float | None
    source: str
    small_sample: bool
    dataset: CTRDataset | None = None


def spec_of(config: FiitedConfig) -> SyntheticSpec:
    """The synthetic data set ``config`` names."""
    return SyntheticSpec(rows=config.rows, vocab_scale=config.vocab_scale, skew=config.skew, seed=config.seed)


_SPLITS: dict[tuple, DataSplit] = {}


def data_split(config: FiitedConfig, *, progress: Callable[[int, int], None] | None = None) -> DataSplit:
    """The data ``config`` names, split into train, validation (``val_fraction`` of the training rows) and
    test (memoised)."""
    key = (
        config.dataset,
        config.rows if config.dataset == "synthetic" else 0,
        config.vocab_scale,
        config.skew,
        config.seed,
        config.test_fraction,
        config.val_fraction,
    )
    if key not in _SPLITS:
        _SPLITS[key] = _build_split(config, progress)
    return _SPLITS[key]


def _three_way(data: CTRData, test_fraction: float, val_fraction: float) -> tuple[CTRData, CTRData | None, CTRData]:
    train, test = data.split(test_fraction)
    if val_fraction <= 0 or train.rows < 4:
        return train, None, test
    train, val = train.split(val_fraction)
    return train, val, test


def _build_split(config: FiitedConfig, progress: Callable[[int, int], None] | None) -> DataSplit:
    if config.dataset == "synthetic":
        spec = spec_of(config)
        cache = None
        if spec.rows >= DISK_CACHE_ROWS:
            from workbench.data import cache_dir

            cache = cache_dir("fiited")
        made: CTRDataset = load_or_generate(spec, cache, progress=progress)
        train, val, test = _three_way(made.data, config.test_fraction, config.val_fraction)
        from sklearn.metrics import roc_auc_score

        prob = made.probability[made.data.rows - test.rows :]
        oracle = float(roc_auc_score(test.label, prob)) if 0 < test.label.sum() < test.rows else None
        return DataSplit(train, val, test, oracle, made.data.source, False, made)
    data = load_sample(config.dataset.removesuffix("-sample"))
    train, val, test = _three_way(data, config.test_fraction, config.val_fraction)
    return DataSplit(train, val, test, None, data.source, True)


def settings_of(config: FiitedConfig | Mapping[str, Any]) -> Settings:
    """The training settings of a config."""
    c = config if isinstance(config, FiitedConfig) else FiitedConfig.from_dict(config)
    return Settings(
        dim=c.dim,
        chunk=c.chunk,
        epochs=c.epochs,
        batch_size=c.batch_size,
        lr=c.lr,
        seed=c.seed,
        decay=c.ema_decay,
        warmup=c.warmup,
        interval=c.interval,
        schedule=c.schedule,
        ramp=c.ramp,
        regrow=c.regrow,
        load_factor=c.load_factor,
        min_chunks=c.min_chunks,
        patience=c.patience,
    )


_RUNS: dict[tuple, MethodRun] = {}


def run_method(
    config: FiitedConfig,
    method: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    floor_check: bool = True,
) -> MethodRun:
    """``method`` trained as ``config`` says (memoised on the config and the method)."""
    key = (config, method, floor_check)
    if key not in _RUNS:
        split = data_split(config)
        _RUNS[key] = train_method(
            method,
            split.train,
            split.test,
            settings_of(config),
            config.budget_fraction,
            val=split.val,
            progress=progress,
            floor_check=floor_check,
        )
    return _RUNS[key]


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """(mean, half-width of the Student-t confidence interval); half-width 0 for one value."""
    x = np.asarray([v for v in values if v == v], dtype=np.float64)
    if x.size == 0:
        return float("nan"), float("nan")
    if x.size == 1:
        return float(x[0]), 0.0
    return float(x.mean()), float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))


@dataclass(frozen=True)
class Paired:
    """Paired AUC differences (method - full, same seed and data) at one budget: mean, CI half-width, n."""

    mean: float
    half_width: float
    n: int

    def within(self, tolerance: float) -> bool:
        """The mean drop is at most ``tolerance`` (the claims' declared accuracy tolerance)."""
        return self.mean >= -tolerance


def paired(a: Sequence[float], b: Sequence[float]) -> Paired:
    """Mean and t half-width of ``a[i] - b[i]``."""
    m, h = mean_ci([x - y for x, y in zip(a, b)])
    return Paired(m, h, len(a))


@dataclass(frozen=True)
class Sweep:
    """Per method and budget: mean and CI half-width of AUC and log-loss over seeds, mean bytes, and the paired
    AUC difference to the full table of the same seed."""

    budgets: tuple[float, ...]
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    auc: dict[str, np.ndarray]  # method -> [budgets, 2] (mean, half-width)
    logloss: dict[str, np.ndarray]
    bytes: dict[str, np.ndarray]  # method -> [budgets]
    diff: dict[str, list[Paired]]  # method -> per budget, AUC - full AUC (paired by seed)
    full_bytes: int
    oracle_auc: float | None
    runs: dict[tuple[str, float, int], MethodRun]

    def over_budget(self, method: str, i: int, slack: float = 0.01) -> bool:
        """Whether ``method`` used more than budget ``i`` (+ ``slack``, relative): a floor it cannot go below."""
        return bool(self.bytes[method][i] > self.budgets[i] * self.full_bytes * (1 + slack))


def sweep(
    config: FiitedConfig,
    *,
    budgets: Sequence[float],
    seeds: Sequence[int],
    methods: Sequence[str] = METHODS,
    on_run: Callable[[], None] | None = None,
) -> Sweep:
    """Every method at every budget and seed (each run memoised by :func:`run_method`); the full table is
    trained once per seed. Baselines may sit above a budget they cannot reach (see :meth:`Sweep.over_budget`)."""
    budgets, seeds, methods = tuple(budgets), tuple(seeds), tuple(dict.fromkeys(("full", *methods)))
    split = data_split(config)
    rows = int(sum(split.train.cardinalities))
    if "fiited" in methods:
        for b in budgets:
            check_budget(rows, settings_of(config), b, len(split.train.cardinalities))
    runs: dict = {}
    for seed in seeds:
        full = run_method(config.replace(budget_fraction=1.0, seed=seed, baselines="none"), "full")
        for b in budgets:
            for m in methods:
                c = config.replace(budget_fraction=1.0 if m == "full" else b, seed=seed, baselines="none")
                runs[m, b, seed] = full if m == "full" else run_method(c, m, floor_check=False)
                if on_run is not None:
                    on_run()
    auc, ll, nbytes, diff = {}, {}, {}, {}
    for m in methods:
        auc[m] = np.array([mean_ci([runs[m, b, s].auc for s in seeds]) for b in budgets])
        ll[m] = np.array([mean_ci([runs[m, b, s].logloss for s in seeds]) for b in budgets])
        nbytes[m] = np.array([np.mean([runs[m, b, s].embedding_bytes for s in seeds]) for b in budgets])
        diff[m] = [paired([runs[m, b, s].auc for s in seeds], [runs["full", b, s].auc for s in seeds]) for b in budgets]
    oracle = [data_split(config.replace(seed=s)).oracle_auc for s in seeds]
    return Sweep(
        budgets,
        seeds,
        methods,
        auc,
        ll,
        nbytes,
        diff,
        rows * config.dim * 4,
        float(np.mean(oracle)) if all(o is not None for o in oracle) else None,
        runs,
    )


@dataclass(frozen=True)
class UniformCurve:
    """AUC of uniform tables against their width (floats per id), mean over seeds, with the paired difference
    to the full table."""

    widths: tuple[int, ...]
    auc: np.ndarray  # [widths, 2] (mean, half-width)
    diff: tuple[Paired, ...]
    full_auc: float
    oracle_auc: float | None


def uniform_curve(config: FiitedConfig, *, widths: Sequence[int], seeds: Sequence[int]) -> UniformCurve:
    """Uniform tables of ``widths`` floats per id (the full table's width included as the reference)."""
    widths, seeds = tuple(widths), tuple(seeds)
    full = [run_method(config.replace(budget_fraction=1.0, seed=s, baselines="none"), "full").auc for s in seeds]
    aucs, diffs = [], []
    for k in widths:
        frac = min(1.0, (k + 0.5) / config.dim)
        got = [
            run_method(config.replace(budget_fraction=frac, seed=s, baselines="none"), "uniform", floor_check=False).auc
            for s in seeds
        ]
        aucs.append(mean_ci(got))
        diffs.append(paired(got, full))
    oracle = [data_split(config.replace(seed=s)).oracle_auc for s in seeds]
    return UniformCurve(
        widths,
        np.array(aucs),
        tuple(diffs),
        float(np.mean(full)),
        float(np.mean(oracle)) if all(o is not None for o in oracle) else None,
    )


def estimate_run_bytes(config: FiitedConfig) -> int:
    """Peak memory of ``workbench run fiited`` (closed form, bytes): the generator's peak
    (:func:`workbench.recsys.synthetic.estimate_bytes`) or the data it leaves, plus the largest method's table:
    FIITED's warm-up pool (weights and Adagrad state at full size, the free list, keys, pointers, utility EMAs,
    the early-stopping copy) or a dense table with its Adagrad state and copy."""
    if config.dataset != "synthetic":
        return 64 << 20
    spec = spec_of(config)
    ids = sum(spec.cardinalities)
    data = config.rows * (26 * 8 + NUM_DENSE * 4 + 2 * 4)
    table = ids * config.dim * 4
    nc = config.dim // config.chunk
    slots = math.ceil(ids / config.load_factor)
    index = slots * (8 + nc * PTR_BYTES + (nc + 1) * 4 * 2) + ids * nc * 8  # keys, pointers, utility, free list
    copies = 2 if config.val_fraction > 0 and config.epochs > 1 else 1  # the best epoch's copy
    training = table * 2 * copies + index * copies + ids * 8 * 3  # weights + state; frequencies, key maps
    generator = estimate_bytes(spec)
    return int(max(generator, data) + training)


def clear_caches() -> None:
    """Forget every memo of the experiment layer: data sets and runs."""
    _SPLITS.clear()
    _RUNS.clear()
