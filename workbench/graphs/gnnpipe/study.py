"""GNNPipe's views for the panel and the notebook: stale-edge shares of chunk orders, the staleness schedule, the
panel's view, accuracy over seeds and the chunk sweep, on top of the orchestration both the runner and this
module call (:mod:`workbench.graphs.gnnpipe.experiment`: real runs, the check, bytes over depth, the crossover,
accuracy over depth, the paper-scale MODEL), whose entry points the panel and notebook reach through here.
:func:`studies` gives the notebook's three sweeps: recorded at its defaults (``studies_default.json``, written by
``python -m workbench.graphs.gnnpipe.study``), trained here at any other setting.
:func:`clear_caches` empties every memo (this module's and the experiment's).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from workbench.graphs.gnnpipe import experiment
from workbench.graphs.gnnpipe.config import (
    NOTEBOOK_SETTING,
    QUICK_SETTING,
    QUICK_STUDY,
    GnnpipeConfig,
    StudySettings,
)
from workbench.graphs.gnnpipe.experiment import (
    METHODS,
    CheckOutcome,
    CrossoverRow,
    MethodRun,
    bytes_vs_layers,
    cached_run,
    check,
    crossover,
    cut_of,
    dataset,
    depth_accuracy,
    hybrid_note,
    paper_scale,
    run_method,
)
from workbench.graphs.gnnpipe.partition import epoch_order, stale_edge_share

__all__ = [
    # views of this module
    "stale_shares",
    "schedule",
    "GnnpipeView",
    "gnnpipe_view",
    "accuracy_over_seeds",
    "chunk_sweep",
    "Studies",
    "STUDIES_FILE",
    "study_key",
    "run_studies",
    "recorded_studies",
    "studies",
    "clear_caches",
    # the experiment's entry points the panel and the notebook call (defined in .experiment)
    "METHODS",
    "MethodRun",
    "CheckOutcome",
    "CrossoverRow",
    "check",
    "dataset",
    "bytes_vs_layers",
    "crossover",
    "depth_accuracy",
    "hybrid_note",
    "paper_scale",
]

log = logging.getLogger(__name__)

_VIEWS: dict[tuple, Any] = {}


def clear_caches() -> None:
    """Forget every memoised view, and the experiment's datasets, cuts, halos, runs and projections."""
    _VIEWS.clear()
    experiment.clear_caches()


def stale_shares(cfg: GnnpipeConfig, epochs: int = 20) -> dict[str, dict[str, Any]]:
    """Per chunk order: the share of edges read from history in each of ``epochs`` epochs (after warm-up) and the
    share of edges stale in *every* one of them (a fixed order always stales the same edges). Memoised."""
    key = ("stale", cfg.dataset, cfg.data_dir, cfg.seed, cfg.chunks, cfg.partition, epochs)
    if key not in _VIEWS:
        _VIEWS[key] = _stale_shares(cfg, epochs)
    return _VIEWS[key]


def _stale_shares(cfg: GnnpipeConfig, epochs: int) -> dict[str, dict[str, Any]]:
    cut, data = cut_of(cfg, cfg.chunks)
    rows = np.repeat(np.arange(data.n), np.diff(data.indptr))
    owner = np.repeat(np.arange(cut.parts), np.diff(np.asarray(cut.bounds)))
    out = {}
    for order in ("fixed", "shuffled", "alternate"):
        shares, always = [], np.ones(len(data.indices), dtype=bool)
        for e in range(epochs):
            seq = epoch_order(cut.parts, order, cfg.seed, e)
            pos = np.empty(cut.parts, dtype=np.int64)
            pos[np.asarray(seq)] = np.arange(cut.parts)
            stale = pos[owner[data.indices]] > pos[owner[rows]]
            always &= stale
            shares.append(float(stale.mean()) if len(stale) else 0.0)
        out[order] = {
            "per_epoch": shares,
            "always": float(always.mean()) if len(always) else 0.0,
            "cross": float(np.mean(owner[data.indices] != owner[rows])) if len(rows) else 0.0,
        }
    assert math.isclose(
        out["fixed"]["per_epoch"][0], stale_edge_share(data.indptr, data.indices, cut.bounds, list(range(cut.parts)))
    )
    return out


def schedule(epochs: int, warmup: int, staleness: int) -> dict[str, list]:
    """Per epoch: whether it is a warm-up (exact) epoch and the age in epochs of the history it reads (0: exact;
    None: no history yet or staleness 0, so edges to later chunks are dropped)."""
    ages: list[int | None] = []
    last_refresh: int | None = None
    for e in range(epochs):
        warm = e < warmup
        if warm:
            ages.append(0)
        elif staleness == 0 or last_refresh is None:
            ages.append(None)
        else:
            ages.append(e - last_refresh)
        if staleness >= 1 and (warm or e % staleness == 0):
            last_refresh = e
    return {"epoch": list(range(epochs)), "warmup": [e < warmup for e in range(epochs)], "age": ages}


@dataclass(frozen=True)
class GnnpipeView:
    """What the panel draws: the byte model over depth, stale-edge shares, the schedule, the paper-scale model,
    the memoised runs of this setting (None when not run yet), and what the hybrid degenerates to (None: a real
    S x G grid)."""

    config: GnnpipeConfig
    bytes_rows: list[dict[str, Any]]
    stale: dict[str, dict[str, Any]]
    schedule: dict[str, list]
    paper: list[dict[str, Any]]
    runs: dict[str, MethodRun] | None
    feature_note: str
    n: int
    hybrid_note: str | None = None


def gnnpipe_view(cfg: GnnpipeConfig) -> GnnpipeView:
    """The panel's view (fast: cached halos, closed forms, memo look-ups; no training)."""
    data = dataset(cfg.dataset, cfg.dtype, cfg.data_dir, cfg.seed)
    if cfg.chunks > data.n:
        raise ValueError(
            f"chunks={cfg.chunks} is more than the {data.n:,} nodes of {cfg.dataset}: valid range is "
            f"1..{data.n} (chunks)"
        )
    layers = tuple(sorted({2, 4, 8, 16, 32, 64, cfg.layers}))
    runs = {name: cached_run(cfg, name) for name in METHODS}
    done = None if any(r is None for r in runs.values()) else runs
    return GnnpipeView(
        config=cfg,
        bytes_rows=bytes_vs_layers(cfg, layers),
        stale=stale_shares(cfg),
        schedule=schedule(cfg.epochs, cfg.warmup, cfg.staleness),
        paper=paper_scale(cfg),
        runs=done,
        feature_note=data.feature_note,
        n=data.n,
        hybrid_note=hybrid_note(cfg),
    )


# ----------------------------------------------------------------------------------------------- notebook studies
def accuracy_over_seeds(
    cfg: GnnpipeConfig, seeds: tuple[int, ...], warmup: int, progress: Callable[[int, int, str], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Test-accuracy curves of full-graph, graph-parallel, GNNPipe (no warm-up), GNNPipe + warm-up and the hybrid over
    ``seeds``: ``{label: {"epoch": [...], "mean": [...], "std": [...], "final": [...]}}``."""
    plan = [
        ("full", "full", {}),
        ("graph parallel", "graph-parallel", {}),
        ("GNNPipe", "gnnpipe", {"warmup": 0}),
        (f"GNNPipe + warm-up {warmup}", "gnnpipe", {"warmup": warmup}),
        (f"hybrid {cfg.hybrid_stages} x {cfg.workers // cfg.hybrid_stages}", "hybrid", {}),
    ]
    out: dict[str, dict[str, Any]] = {}
    total, step = len(plan) * len(seeds), 0
    for label, name, extra in plan:
        curves_ = []
        for seed in seeds:
            if progress:
                progress(step, total, f"{label}, seed {seed}")
            step += 1
            curves_.append(run_method(dataclasses.replace(cfg, seed=seed, **extra), name).curves)
        acc = np.array([c["test"] for c in curves_])
        out[label] = {
            "epoch": curves_[0]["epoch"],
            "mean": acc.mean(axis=0).tolist(),
            "std": acc.std(axis=0).tolist(),
            "final": acc[:, -1].tolist(),
        }
    return out


def chunk_sweep(
    cfg: GnnpipeConfig, chunks: tuple[int, ...], orders: tuple[str, ...], seeds: tuple[int, ...]
) -> list[dict[str, Any]]:
    """Final test accuracy of GNNPipe per (K, chunk order), mean and std over ``seeds``, with the stale-edge share."""
    rows = []
    for K in chunks:
        for order in orders:
            accs = [
                run_method(dataclasses.replace(cfg, chunks=K, chunk_order=order, seed=s), "gnnpipe").test_accuracy
                for s in seeds
            ]
            share = stale_shares(dataclasses.replace(cfg, chunks=K))[order]
            rows.append(
                {
                    "chunks": K,
                    "order": order,
                    "mean": float(np.mean(accs)),
                    "std": float(np.std(accs)),
                    "stale_share": float(np.mean(share["per_epoch"])),
                    "always_stale": share["always"],
                }
            )
    return rows


# ----------------------------------------------------------------------------------------------- recorded sweeps
#: the notebook's sweeps at its defaults, recorded by ``python -m workbench.graphs.gnnpipe.study`` (about 9
#: CPU-minutes of real training) and shipped, so that Run All at the defaults reads them instead of retraining
STUDIES_FILE = Path(__file__).with_name("studies_default.json")
STUDIES_VERSION = 1
RECORD_COMMAND = "python -m workbench.graphs.gnnpipe.study"
#: config fields that change no number of the sweeps (run limits, data location, the model mode's inputs)
_NEUTRAL_FIELDS = ("mode", "timeout_s", "data_dir", "paper_graph", "gpus")


@dataclass(frozen=True)
class Studies:
    """The notebook's three sweeps: ``seeds`` (:func:`accuracy_over_seeds`), ``depth`` (:func:`depth_accuracy`),
    ``chunks`` (:func:`chunk_sweep`); ``source`` says where they come from (recorded: the command and date)."""

    seeds: dict[str, dict[str, Any]]
    depth: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    source: str


def study_key(cfg: GnnpipeConfig, settings: StudySettings) -> dict[str, Any]:
    """Everything that decides the sweeps' numbers, as plain JSON (a recorded file answers only an equal key)."""
    fields = {k: v for k, v in cfg.to_flat_dict().items() if k not in _NEUTRAL_FIELDS}
    return {"version": STUDIES_VERSION, "config": fields, "study": json.loads(json.dumps(dataclasses.asdict(settings)))}


def run_studies(
    cfg: GnnpipeConfig, settings: StudySettings, progress: Callable[[int, int, str], None] | None = None
) -> Studies:
    """Train the three sweeps for real (memoised runs, shared between them); ``progress(done, total, what)``."""
    total = 3

    def step(i: int, what: str) -> None:
        if progress:
            progress(i, total, what)

    step(0, "accuracy over seeds")
    seeds = accuracy_over_seeds(cfg, settings.seeds, settings.warmup)
    step(1, "accuracy over depth")
    depth = depth_accuracy(cfg, settings.depths)
    step(2, "chunk sweep")
    chunks = chunk_sweep(cfg, settings.chunks, settings.orders, settings.sweep_seeds)
    step(3, "done")
    return Studies(seeds, depth, chunks, "trained here")


def _to_json(cfg: GnnpipeConfig, settings: StudySettings, out: Studies) -> dict[str, Any]:
    return {
        "key": study_key(cfg, settings),
        "command": RECORD_COMMAND,
        "date": date.today().isoformat(),
        "seeds": out.seeds,
        "depth": out.depth,
        "chunks": out.chunks,
    }


def recorded_studies(cfg: GnnpipeConfig, settings: StudySettings, path: Path = STUDIES_FILE) -> Studies | None:
    """The recorded sweeps at exactly this setting (``path``: by default the shipped file), None when there are
    none (no file, or one recorded at another setting)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    if data.get("key") != study_key(cfg, settings):
        return None
    return Studies(data["seeds"], data["depth"], data["chunks"], f"recorded by `{data['command']}` on {data['date']}")


def studies(
    cfg: GnnpipeConfig,
    settings: StudySettings,
    *,
    run: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> Studies:
    """The sweeps: the recorded ones when this setting was recorded and ``run`` is False, else trained here."""
    found = None if run else recorded_studies(cfg, settings)
    return found if found is not None else run_studies(cfg, settings, progress)


def record(path: Path, *, quick: bool = False) -> Studies:
    """Train the sweeps at the notebook's defaults (``quick``: the small setting of the test) and write them,
    atomically, to ``path``."""
    from workbench.atomic import atomic_write

    cfg = GnnpipeConfig(**(QUICK_SETTING if quick else NOTEBOOK_SETTING))
    settings = QUICK_STUDY if quick else StudySettings()
    out = run_studies(cfg, settings, lambda i, n, what: log.info("sweep %d/%d: %s", i, n, what))
    with atomic_write(path, "w") as f:
        f.write(json.dumps(_to_json(cfg, settings, out), indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m workbench.graphs.gnnpipe.study [--quick] [OUT]``: record the notebook's sweeps to OUT (default:
    the shipped ``studies_default.json``); ``--quick``: the test's small setting."""
    logging.basicConfig(level=logging.INFO)
    argv = sys.argv[1:] if argv is None else list(argv)
    quick = "--quick" in argv
    rest = [a for a in argv if a != "--quick"]
    record(Path(rest[0]) if rest else STUDIES_FILE, quick=quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
