"""Data sets, memoised training runs, sweeps over budgets and seeds, the panel's view and the equal-AUC comparison
behind FIITED's claims (the claims and their verdicts live in :mod:`workbench.recsys.fiited.claims`).

Caches: every memo of this technique lives here (generated data sets, runs keyed by everything they depend
on, sweeps); :func:`clear_caches` empties them. Synthetic data sets of 500,000 rows or more are also stored in
``workbench.data.cache_dir("fiited")`` (generation is reproducible, so the file is only a time saver).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from workbench.recsys.fiited.config import FiitedConfig, FiitedViewConfig
from workbench.recsys.fiited.train import METHODS, MethodRun, Settings, check_budget, fiited_floor, train_method
from workbench.recsys.fiited.utility import Schedule, schedule_curve
from workbench.recsys.samples import CTRData, load_sample
from workbench.recsys.synthetic import CTRDataset, SyntheticSpec, expected_counts, load_or_generate

__all__ = [
    "EqualAuc",
    "equal_auc",
    "DataSplit",
    "data_split",
    "settings_of",
    "run_method",
    "sweep",
    "Sweep",
    "fiited_view",
    "FiitedView",
    "clear_caches",
    "mean_ci",
    "PANEL_BUDGETS",
    "PANEL_SEEDS",
]

PANEL_BUDGETS = (0.35, 0.5, 0.75, 1.0)
PANEL_SEEDS = (0, 1, 2)
DISK_CACHE_ROWS = 500_000


@dataclass(frozen=True)
class DataSplit:
    """Train and test rows, with the true click probabilities of the test rows (synthetic data only)."""

    train: CTRData
    test: CTRData
    oracle_auc: float | None
    source: str
    small_sample: bool


def data_split(config: FiitedConfig, *, progress: Callable[[int, int], None] | None = None) -> DataSplit:
    """The data ``config`` names, split into train and test (memoised)."""
    key = (
        config.dataset,
        config.rows if config.dataset == "synthetic" else 0,
        config.vocab_scale,
        config.skew,
        config.seed,
        config.test_fraction,
    )
    if key not in _SPLITS:
        _SPLITS[key] = _build_split(key, progress)
    return _SPLITS[key]


_SPLITS: dict[tuple, DataSplit] = {}


def _build_split(key: tuple, progress) -> DataSplit:
    dataset, rows, vocab_scale, skew, seed, test_fraction = key
    if dataset == "synthetic":
        spec = SyntheticSpec(rows=rows, vocab_scale=vocab_scale, skew=skew, seed=seed)
        cache = None
        if rows >= DISK_CACHE_ROWS:
            from workbench.data import cache_dir

            cache = cache_dir("fiited")
        made: CTRDataset = load_or_generate(spec, cache, progress=progress)
        train, test = made.data.split(test_fraction)
        from sklearn.metrics import roc_auc_score

        prob = made.probability[train.rows :]
        oracle = float(roc_auc_score(test.label, prob)) if 0 < test.label.sum() < test.rows else None
        return DataSplit(train, test, oracle, made.data.source, False)
    data = load_sample(dataset.removesuffix("-sample"))
    train, test = data.split(test_fraction)
    return DataSplit(train, test, None, data.source, True)


def settings_of(config: FiitedConfig | Mapping[str, Any]) -> Settings:
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
    )


_RUNS: dict[tuple, MethodRun] = {}


def run_method(config: FiitedConfig, method: str, *, progress: Callable[[int, int], None] | None = None) -> MethodRun:
    """``method`` trained as ``config`` says (memoised on the config and the method)."""
    key = (config, method)
    if key not in _RUNS:
        split = data_split(config)
        _RUNS[key] = train_method(
            method, split.train, split.test, settings_of(config), config.budget_fraction, progress=progress
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
class Sweep:
    """Per method and budget: mean and CI half-width of AUC and log-loss over seeds, and mean bytes."""

    budgets: tuple[float, ...]
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    auc: dict[str, np.ndarray]  # method -> [budgets, 2] (mean, half-width)
    logloss: dict[str, np.ndarray]
    bytes: dict[str, np.ndarray]  # method -> [budgets]
    full_bytes: int
    oracle_auc: float | None
    runs: dict[tuple[str, float, int], MethodRun]


def sweep(
    config: FiitedConfig,
    *,
    budgets: Sequence[float],
    seeds: Sequence[int],
    methods: Sequence[str] = METHODS,
    on_run: Callable[[], None] | None = None,
) -> Sweep:
    """Every method at every budget and seed (each run memoised by :func:`run_method`); the full table is
    trained once per seed (its bytes do not depend on the budget). Budgets below FIITED's floor raise."""
    budgets, seeds, methods = tuple(budgets), tuple(seeds), tuple(methods)
    rows = int(sum(data_split(config).train.cardinalities))
    for b in budgets:
        check_budget(rows, settings_of(config), b)
    runs: dict = {}
    for seed in seeds:
        for b in budgets:
            for m in methods:
                c = config.replace(budget_fraction=1.0 if m == "full" else b, seed=seed)
                runs[m, b, seed] = run_method(c, m)
                if on_run is not None:
                    on_run()
    auc, ll, nbytes = {}, {}, {}
    for m in methods:
        auc[m] = np.array([mean_ci([runs[m, b, s].auc for s in seeds]) for b in budgets])
        ll[m] = np.array([mean_ci([runs[m, b, s].logloss for s in seeds]) for b in budgets])
        nbytes[m] = np.array([np.mean([runs[m, b, s].embedding_bytes for s in seeds]) for b in budgets])
    oracle = [data_split(config.replace(seed=s)).oracle_auc for s in seeds]
    return Sweep(
        budgets,
        seeds,
        methods,
        auc,
        ll,
        nbytes,
        rows * config.dim * 4,
        float(np.mean(oracle)) if all(o is not None for o in oracle) else None,
        runs,
    )


# ---- the panel's view ---------------------------------------------------------------------------------------
def panel_config(view: FiitedViewConfig) -> FiitedConfig:
    """The training config behind a panel view: synthetic data, defaults otherwise."""
    return FiitedConfig(
        rows=view.rows,
        skew=view.skew,
        schedule=view.schedule,
        warmup=view.warmup,
        interval=view.interval,
        budget_fraction=view.budget_fraction,
    )


_SWEEPS: dict[FiitedConfig, Sweep] = {}


def panel_sweep(view: FiitedViewConfig, *, on_run: Callable[[], None] | None = None) -> Sweep:
    """Train (or recall) the panel's sweep at ``view``: :data:`PANEL_BUDGETS` x :data:`PANEL_SEEDS`."""
    config = panel_config(view)
    key = config.replace(budget_fraction=0.5)
    if key not in _SWEEPS:
        _SWEEPS[key] = sweep(config, budgets=PANEL_BUDGETS, seeds=PANEL_SEEDS, on_run=on_run)
    return _SWEEPS[key]


def remember_sweep(view: FiitedViewConfig, result: Sweep) -> None:
    """Make a sweep computed elsewhere (a notebook, with its own budgets and seeds, on
    ``panel_config(view)``) what the panel shows for ``view``'s data set and schedule."""
    config = panel_config(view)
    _SWEEPS[config.replace(budget_fraction=0.5)] = result


@dataclass(frozen=True)
class FiitedView:
    """One redraw: the cached sweep (None when not yet run), the schedule curve, the expected id frequencies per
    rank of the hottest features, FIITED's dims at the cached budget nearest the chosen one, and the floor."""

    view: FiitedViewConfig
    sweep: Sweep | None
    schedule_steps: np.ndarray
    schedule_budget: np.ndarray
    ranks: list[np.ndarray]
    counts: list[np.ndarray]
    features: list[str]
    dims: np.ndarray | None
    freq: np.ndarray | None
    dims_budget: float | None
    floor_fraction: float


def fiited_view(values: Mapping[str, Any] | FiitedViewConfig) -> FiitedView:
    """What the panel draws at ``values`` (cheap: analytic curves and cached runs only)."""
    view = values if isinstance(values, FiitedViewConfig) else FiitedViewConfig.from_dict(values)
    part = _fiited_view(view)
    config = panel_config(view)
    cached = _SWEEPS.get(config.replace(budget_fraction=0.5))
    if cached is None:
        return part
    nearest = min(cached.budgets, key=lambda x: abs(x - view.budget_fraction))
    run = cached.runs["fiited", nearest, cached.seeds[0]]
    return dataclasses.replace(part, sweep=cached, dims=run.dims, freq=run.freq, dims_budget=nearest)


@functools.lru_cache(maxsize=64)
def _fiited_view(view: FiitedViewConfig) -> FiitedView:
    """The analytic part of the view (no sweep)."""
    config = panel_config(view)
    spec = SyntheticSpec(rows=view.rows, vocab_scale=config.vocab_scale, skew=view.skew, seed=config.seed)
    cards = spec.cardinalities
    rows_total = int(sum(cards))
    settings = settings_of(config)
    check_budget(rows_total, settings, view.budget_fraction)
    floor, _ = fiited_floor(rows_total, settings)
    n_train = int(round(view.rows * (1 - config.test_fraction)))
    steps = max(1, math.ceil(n_train / config.batch_size)) * config.epochs
    sched = Schedule(
        total_steps=steps,
        warmup=int(round(view.warmup * steps)),
        interval=view.interval,
        kind=view.schedule,
        ramp=config.ramp,
    )
    nc = config.dim // config.chunk
    full = rows_total * nc
    final = int(
        (view.budget_fraction * rows_total * config.dim * 4 - (floor - rows_total * config.chunk * 4))
        // (config.chunk * 4)
    )
    t, b = schedule_curve(sched, full, final)
    counts = expected_counts(spec)
    hottest = sorted(range(len(cards)), key=lambda f: -cards[f])[:3]
    ranks = [np.unique(np.geomspace(1, cards[f], 200).astype(np.int64)) for f in hottest]
    return FiitedView(
        view,
        None,
        t,
        b / full,
        ranks,
        [counts[f][r - 1] for f, r in zip(hottest, ranks)],
        [f"C{f + 1} ({cards[f]:,} ids)" for f in hottest],
        None,
        None,
        None,
        floor / (rows_total * config.dim * 4),
    )


def dims_by_frequency(dims: np.ndarray, freq: np.ndarray, bins: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Mean dimension per log-spaced frequency bin: (bin centre counts, mean dims); ids never seen in bin 0."""
    edges = np.concatenate([[0, 1], np.unique(np.geomspace(1, max(2, freq.max() + 1), bins).astype(np.int64))[1:]])
    which = np.clip(np.searchsorted(edges, freq, side="right") - 1, 0, edges.size - 2)
    centre, mean = [], []
    for i in range(edges.size - 1):
        sel = which == i
        if sel.any():
            centre.append(float(freq[sel].mean()))
            mean.append(float(dims[sel].mean()))
    return np.array(centre), np.array(mean)


@dataclass(frozen=True)
class EqualAuc:
    """Which tables reach the full table's AUC (within ``tolerance``, mean over ``seeds``), and at what share of
    the full table's bytes. ``rows``: (method, label, share of full bytes, mean AUC) per run setting; the
    shares are the smallest within tolerance of ``full_auc`` (NaN when none is)."""

    seeds: tuple[int, ...]
    full_auc: float
    tolerance: float
    rows: tuple[tuple[str, str, float, float], ...]
    uniform_share: float
    fiited_share: float
    elem_share: float

    def smallest(self, method: str) -> float:
        ok = [share for m, _, share, auc in self.rows if m == method and auc >= self.full_auc - self.tolerance]
        return min(ok) if ok else float("nan")


_EQUAL: dict[tuple, EqualAuc] = {}


def equal_auc(
    config: FiitedConfig,
    *,
    seeds: Sequence[int] = PANEL_SEEDS,
    uniform_dims: Sequence[int] = (1, 2, 3, 4, 8, 16),
    tolerance: float | None = None,
) -> EqualAuc:
    """The full table, uniform tables of ``uniform_dims`` floats (below FIITED's floor too), and FIITED and
    elem-prune at the smallest budget FIITED can hold (its floor, rounded up to 0.01), over ``seeds``
    (memoised). ``tolerance``: the AUC drop that counts as the same AUC (default: the declared accuracy
    tolerance of :data:`workbench.claims.TOLERANCES`)."""
    from workbench.claims import TOLERANCES

    tol = TOLERANCES["accuracy"].abs if tolerance is None else float(tolerance)
    key = (config, tuple(seeds), tuple(uniform_dims), tol)
    if key in _EQUAL:
        return _EQUAL[key]
    rows_total = int(sum(data_split(config).train.cardinalities))
    s = settings_of(config)
    floor, _ = fiited_floor(rows_total, s)
    budget = math.ceil(floor / (rows_total * s.dim * 4) * 100) / 100

    def mean_run(method: str, fraction: float, check: bool = True) -> tuple[float, float]:
        runs = []
        for seed in seeds:
            c = config.replace(budget_fraction=fraction, seed=seed, baselines="none")
            split = data_split(c)
            runs.append(
                train_method(method, split.train, split.test, settings_of(c), fraction, floor_check=check)
                if not check
                else run_method(c, method)
            )
        full = rows_total * s.dim * 4
        return float(np.mean([r.embedding_bytes for r in runs])) / full, float(np.mean([r.auc for r in runs]))

    out = [("full", "full", *mean_run("full", 1.0))]
    for k in uniform_dims:
        out.append(("uniform", f"uniform d={k}", *mean_run("uniform", (k + 0.5) / s.dim, check=False)))
    out.append(("fiited", f"fiited budget {budget:g}", *mean_run("fiited", budget)))
    out.append(("elem-prune", f"elem-prune budget {budget:g}", *mean_run("elem-prune", budget)))
    full_auc = out[0][3]
    probe = EqualAuc(tuple(seeds), full_auc, tol, tuple(out), math.nan, math.nan, math.nan)
    result = dataclasses.replace(
        probe,
        uniform_share=probe.smallest("uniform"),
        fiited_share=probe.smallest("fiited"),
        elem_share=probe.smallest("elem-prune"),
    )
    _EQUAL[key] = result
    return result


def clear_caches() -> None:
    """Forget every memo: data sets, runs, sweeps, views."""
    _fiited_view.cache_clear()
    _SPLITS.clear()
    _RUNS.clear()
    _SWEEPS.clear()
    _EQUAL.clear()


def exactness_report(n: int = 37, dim: int = 12, chunk: int = 4, seed: int = 0) -> dict[str, float]:
    """Max |chunked - dense| of outputs and gradients with nothing pruned, vs ``nn.Embedding`` and
    ``nn.EmbeddingBag`` (sum), on an awkward size (odd ids, d = 3 chunks). The references use sparse gradients
    (as the chunked table does); ``EmbeddingBag gradient (dense-gradient module)`` compares with the dense-gradient
    module, whose backward adds an id's repeated rows in another order (last-bit differences)."""
    import torch
    from torch import nn

    from workbench.recsys.fiited.chunked import ChunkedEmbedding

    gen = torch.Generator().manual_seed(seed)
    keys = np.arange(n, dtype=np.int64) * 1_000_003 + 17
    init = torch.randn(n, dim, generator=gen)
    out: dict[str, float] = {}
    for kind in ("Embedding", "EmbeddingBag", "EmbeddingBag (dense-gradient module)"):
        ce = ChunkedEmbedding(keys, dim=dim, chunk=chunk, init=init, by_feature=False)
        sparse = "dense" not in kind
        ref = (
            nn.Embedding(n, dim, sparse=True)
            if kind == "Embedding"
            else nn.EmbeddingBag(n, dim, mode="sum", sparse=sparse)
        )
        ref.weight.data.copy_(init)
        idx = torch.randint(0, n, (61,), generator=gen)
        if kind == "Embedding":
            a, b = ce(keys[idx.numpy()]), ref(idx)
        else:
            offsets = torch.tensor([0, 4, 4, 19, 40])
            a, b = ce.bag(keys[idx.numpy()], offsets), ref(idx, offsets)
        g = torch.randn(b.shape, generator=gen)
        (a * g).sum().backward()
        (b * g).sum().backward()
        pool = ce.table.weight.grad.to_dense()
        mine = pool[ce.table.physical(ce.table.lookup(keys))].reshape(n, dim)
        theirs = ref.weight.grad.to_dense() if ref.weight.grad.is_sparse else ref.weight.grad
        if sparse:
            out[f"{kind} output"] = float((a - b).detach().abs().max())
        out[f"{kind} gradient"] = float((mine - theirs).abs().max())
    return out


def sweep_markdown_rows(result: Sweep) -> list[tuple[str, ...]]:
    """(method, budget, bytes / full, AUC mean +- CI, log-loss mean +- CI) rows."""
    rows: list[tuple[str, ...]] = []
    for m in result.methods:
        for i, b in enumerate(result.budgets):
            if m == "full" and i:
                continue
            a, l = result.auc[m][i], result.logloss[m][i]
            rows.append(
                (
                    m,
                    "1" if m == "full" else f"{b:g}",
                    f"{result.bytes[m][i] / result.full_bytes:.3f}",
                    f"{a[0]:.4f} ± {a[1]:.4f}",
                    f"{l[0]:.4f} ± {l[1]:.4f}",
                )
            )
    return rows
