"""TopGen's orchestration, called by the runner (CLI) and the study (panel, notebook): a named circuit's
descriptors, the generated ansatz on a device, and the QNN task run (TopGen vs the baselines under device noise),
with the figures a run gives (``ratios``, ``accuracy_gain``).

Memoised here (``clear_caches()`` empties them); finished task runs are also kept as JSON in
``workbench.data.cache_dir("topgen")`` keyed by their full config, so the notebook and the panel show the
default results without retraining.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.quantum.device import Device
from workbench.quantum.topgen import model as cx_model
from workbench.quantum.topgen.config import TopgenConfig
from workbench.quantum.topgen.digits import load_task
from workbench.quantum.topgen.expressibility import Descriptors, describe
from workbench.quantum.topgen.generate import Generated, ScoredTemplate, best_template, generate, growth_block
from workbench.quantum.topgen.templates import circuit_by_name
from workbench.quantum.topgen.topology import choose_region, undirected_edges
from workbench.results import Result


# ---- descriptors ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def circuit_descriptors(circuit: str, qubits: int, layers: int, pairs: int, bins: int, seed: int) -> Descriptors:
    """Expressibility and MW of ``circuit`` (a sim-* name or QASM) with these sample sizes (memoised)."""
    return describe(circuit_by_name(circuit, qubits, layers), pairs=pairs, bins=bins, seed=seed)


# ---- generation ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def region_for(device: Device, qubits: int) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    """The device region of ``qubits`` qubits (most inner edges, lowest summed CNOT error) and the device edges."""
    cal = device.calibration
    edges = undirected_edges(cal.coupling_map)
    cost: dict[tuple[int, int], float] = {}
    for g in cal.gates:
        if len(g.qubits) == 2:
            e = (min(g.qubits), max(g.qubits))
            cost[e] = max(cost.get(e, 0.0), g.error)
    return choose_region(edges, qubits, cal.num_qubits, cost), edges


@functools.lru_cache(maxsize=256)
def scored_shape(
    k: int, edges: tuple[tuple[int, int], ...], candidates: int, pairs: int, bins: int, seed: int
) -> tuple[ScoredTemplate, list[ScoredTemplate]]:
    """The best template (and all scored) of a fragment shape ``(k, local edges)`` (memoised: shapes repeat)."""
    return best_template(k, edges, candidates=candidates, pairs=pairs, bins=bins, seed=seed, w_ent=0.5, w_cx=0.02)


@functools.lru_cache(maxsize=64)
def generated(
    device: Device, qubits: int, fragment_size: int, blocks: int, candidates: int, pairs: int, bins: int, seed: int
) -> Generated:
    """TopGen's initial ansatz for these settings (memoised; template scores memoised per shape)."""
    region, edges = region_for(device, qubits)
    return generate(
        edges,
        region,
        fragment_size=fragment_size,
        blocks=blocks,
        candidates=candidates,
        pairs=pairs,
        bins=bins,
        seed=seed,
        scorer=lambda k, e: scored_shape(k, e, candidates, pairs, bins, seed),
    )


# ---- the task run --------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class MethodOutcome(Result):
    """One method's trained QNN: test accuracy noiseless and under each snapshot's noise (and their mean),
    the ansatz on the device (depth, native CNOTs, SWAPs routing added), parameters, blocks, gradient
    variance at random initialisation, and the validation-accuracy curve. Also the CLI's per-baseline JSON
    (``workbench run topgen --json``: ``baselines``)."""

    name: str
    accuracy: float
    accuracy_noiseless: float
    accuracy_by_device: dict[str, float]
    depth: int
    cx_count: int
    swaps: int
    num_parameters: int
    blocks: int
    gradient_variance: float
    val_curve: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class TaskOutcome:
    """A full task run: TopGen and the baselines, the snapshots, the region and tiling, growth events."""

    topgen: MethodOutcome
    baselines: dict[str, MethodOutcome]
    snapshots: tuple[str, ...]
    region: tuple[int, ...]
    fragments: tuple[tuple[int, ...], ...]
    stitches: tuple[tuple[int, int], ...]
    templates: tuple[str, ...]
    grown_at: tuple[int, ...]
    removed_at: tuple[int, ...]
    growth_check: tuple[float, ...]
    cx_model: int


def _outcome(name, model, log_curve, data, snapshots, layout, device, seed) -> MethodOutcome:
    import torch

    from workbench.quantum.topgen.device import counts, noisy_accuracy
    from workbench.quantum.topgen.qnn import accuracy, gradient_variance

    with torch.no_grad():
        clean = accuracy(model.logits(data.x_test), data.y_test)
    by = {d.name: noisy_accuracy(model, data.x_test, data.y_test, d, layout, seed=seed) for d in snapshots}
    placed = counts(model.ansatz, device, layout, seed=seed)
    return MethodOutcome(
        name=name,
        accuracy=float(np.mean(list(by.values()))),
        accuracy_noiseless=clean,
        accuracy_by_device=by,
        depth=placed.depth,
        cx_count=placed.cx_count,
        swaps=placed.swaps,
        num_parameters=model.ansatz.num_parameters,
        blocks=model.ansatz.num_blocks,
        gradient_variance=gradient_variance(model.ansatz, data, data.num_classes, seed=seed),
        val_curve=tuple(log_curve),
    )


@functools.lru_cache(maxsize=16)
def _run_task(config: TopgenConfig) -> TaskOutcome:
    return compute_task(config)


def run_task(config: TopgenConfig, progress: Callable[[float, str], None] | None = None) -> TaskOutcome:
    """TopGen vs the hardware-efficient and QuantumNAS-style baselines on ``config``'s task (memoised when no
    ``progress`` callback is given; ``progress(fraction, stage)`` is called between stages)."""
    if progress is None:
        return _run_task(config)
    return compute_task(config, progress)


def compute_task(c: TopgenConfig, progress: Callable[[float, str], None] | None = None) -> TaskOutcome:
    """The task run of ``c`` computed afresh (not memoised; :func:`run_task` and :func:`cached_task` are)."""
    from workbench.quantum.topgen.baselines import hardware_efficient, search_quantumnas
    from workbench.quantum.topgen.device import same_topology_devices
    from workbench.quantum.topgen.qnn import QNN, initial_weights, one_thread, train

    def tell(fraction: float, stage: str) -> None:
        if progress is not None:
            progress(fraction, stage)

    tell(0.0, "generating sub-circuits")
    device = c.resolved_device()
    gen = generated(device, c.qubits, c.fragment_size, c.blocks, c.candidates, c.score_pairs, c.bins, c.seed)
    data = load_task(c.task, seed=c.seed, max_train=c.max_train, max_test=c.max_test)
    snapshots = same_topology_devices(device, c.snapshots)
    region = gen.tiling.region
    with one_thread():
        tell(0.1, "training TopGen (with growth)")
        tg = QNN(gen.ansatz, initial_weights(gen.ansatz, c.seed), data.num_classes)
        log = train(
            tg,
            data,
            epochs=c.epochs,
            lr=c.lr,
            batch=c.batch,
            seed=c.seed,
            grow=lambda _a: growth_block(gen.tiling),
            patience=c.patience,
            max_blocks=c.max_blocks,
            progress=lambda f: tell(0.1 + 0.3 * f, "training TopGen (with growth)"),
        )
        tell(0.4, "training the hardware-efficient ansatz")
        hea_ansatz = hardware_efficient(c.qubits, tg.ansatz.num_blocks)
        hea = QNN(hea_ansatz, initial_weights(hea_ansatz, c.seed), data.num_classes)
        hea_log = train(hea, data, epochs=c.epochs, lr=c.lr, batch=c.batch, seed=c.seed)
        tell(0.55, "QuantumNAS-style search")
        searched = search_quantumnas(
            data,
            c.qubits,
            max_blocks=c.max_blocks,
            super_epochs=c.search_epochs,
            finetune_epochs=c.epochs,
            seed=c.seed,
            lr=c.lr,
            batch=c.batch,
        )
        tell(0.75, "evaluating under device noise")
        top = _outcome("topgen", tg, log.val_accuracy, data, snapshots, region, device, c.seed)
        base = {
            "hea": _outcome("hea", hea, hea_log.val_accuracy, data, snapshots, None, device, c.seed),
            "quantumnas": _outcome(
                "quantumnas", searched.model, searched.best_per_generation, data, snapshots, None, device, c.seed
            ),
        }
    grown = tg.ansatz.num_blocks - c.blocks
    inner_edges = sum(len(e) for e in gen.tiling.inner) + len(gen.tiling.stitches)
    model_cx = cx_model.topgen_cx(
        [s.template for s in gen.chosen], len(gen.tiling.stitches), c.blocks, grown, inner_edges
    )
    tell(1.0, "done")
    return TaskOutcome(
        topgen=top,
        baselines=base,
        snapshots=tuple(d.name for d in snapshots),
        region=region,
        fragments=gen.tiling.fragments,
        stitches=gen.tiling.stitches,
        templates=tuple(s.template.label() for s in gen.chosen),
        grown_at=tuple(log.grown_at),
        removed_at=tuple(log.removed_at),
        growth_check=tuple(log.growth_check),
        cx_model=model_cx,
    )


def task_file(config: TopgenConfig) -> str:
    """The cache file name of ``config``'s task run (``task-<sha256 of the full config>.json``)."""
    key = hashlib.sha256(json.dumps(config.to_flat_dict(), sort_keys=True).encode()).hexdigest()[:20]
    return f"task-{key}.json"


def outcome_from_json(d: dict[str, Any]) -> TaskOutcome:
    """The :class:`TaskOutcome` a cache file holds (``dataclasses.asdict`` of one, read back from JSON)."""

    def method(m: dict[str, Any]) -> MethodOutcome:
        return MethodOutcome(**{**m, "val_curve": tuple(m["val_curve"])})

    return TaskOutcome(
        topgen=method(d["topgen"]),
        baselines={k: method(v) for k, v in d["baselines"].items()},
        snapshots=tuple(d["snapshots"]),
        region=tuple(d["region"]),
        fragments=tuple(tuple(f) for f in d["fragments"]),
        stitches=tuple(tuple(e) for e in d["stitches"]),
        templates=tuple(d["templates"]),
        grown_at=tuple(d["grown_at"]),
        removed_at=tuple(d["removed_at"]),
        growth_check=tuple(d["growth_check"]),
        cx_model=int(d["cx_model"]),
    )


def cached_task(
    config: TopgenConfig,
    *,
    compute: bool = True,
    progress: Callable[[float, str], None] | None = None,
    cache: str | None = None,
) -> TaskOutcome | None:
    """The task run of ``config`` from the disk cache (``cache_dir('topgen')`` or ``cache``), else computed and
    stored when ``compute`` (else None)."""
    from workbench.atomic import atomic_write
    from workbench.data import cache_dir

    folder = Path(cache) if cache else Path(cache_dir("topgen"))
    path = folder / task_file(config)
    if path.is_file():
        try:
            return outcome_from_json(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):
            pass  # a damaged or old cache file: recompute
    if not compute:
        return None
    out = run_task(config, progress)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "w") as f:
        f.write(json.dumps(asdict(out)))
    return out


# ---- the figures behind the paper's claims (the claims: workbench.quantum.topgen.claims) --------------------
def ratios(out: TaskOutcome, *, equal_tolerance: float = 0.03) -> dict[str, dict[str, Any]]:
    """Per baseline: depth and CNOT ratios (baseline / TopGen, transpiled to the device) and whether TopGen is at
    equal accuracy (its noisy accuracy within ``equal_tolerance`` of the baseline's, or better)."""
    if not 0 <= equal_tolerance < 1:
        raise ValueError(f"equal_tolerance={equal_tolerance} is out of range: valid range is 0..1 (accuracy)")
    t = out.topgen
    return {
        name: {
            "depth_ratio": b.depth / max(t.depth, 1),
            "cx_ratio": b.cx_count / max(t.cx_count, 1),
            "equal": t.accuracy >= b.accuracy - equal_tolerance,
        }
        for name, b in out.baselines.items()
    }


def accuracy_gain(out: TaskOutcome) -> float:
    """TopGen's noisy accuracy minus the mean of the baselines' (the paper's "improvement over baselines")."""
    return out.topgen.accuracy - float(np.mean([b.accuracy for b in out.baselines.values()]))


def clear_caches() -> None:
    """Empty every memo of this module (not the disk cache)."""
    for f in (circuit_descriptors, region_for, scored_shape, generated, _run_task):
        f.cache_clear()
