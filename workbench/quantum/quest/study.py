"""The QuEst study: the workflow on top of the pieces (dataset summary and the PST-vs-fidelity rank check,
training the three models into a :class:`~workbench.quantum.quest.checkpoint.Checkpoint`, evaluating one on its
held-out split, the issue's targets), and the panel's memoised view (:func:`quest_view`).

The view: a circuit of (family, width, depth, seed) placed on a device (:func:`placement`: random device circuits on
connected qubits, or an algorithm transpiled once and mirrored), under the device's calibration as it is or one
QuEst noise draw of the whole device, gate and readout errors x the noise scale (:func:`device_noise`); all three
models predict its PST along the noise-scale and width sweeps in one batch. Points are named by
:class:`PointKey`; qiskit-aer simulates them on demand (:func:`simulate_points`, memoised). Calibrations come from
qiskit-ibm-runtime's snapshots and the checkpoint is part of the view's key, so no data directory enters a key.
Every cache of this module is cleared by :func:`clear_caches`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.config import Config, param
from workbench.quantum.calibration import DeviceCalibration, calibration_subset, device_names
from workbench.quantum.circuits import mirror
from workbench.quantum.device import get_device
from workbench.quantum.quest.batching import NormalizedSet, Normalizer
from workbench.quantum.quest.checkpoint import Checkpoint, load_checkpoint
from workbench.quantum.quest.dataset import (
    ALGORITHM_DEVICES,
    DEVICE_KINDS,
    FAMILIES,
    FAMILY_WIDTHS,
    GATE_COUNTS,
    KINDS,
    RANDOM_DEVICES,
    DatasetSpec,
    QuestDataset,
    connected_qubits,
    random_circuit,
)
from workbench.quantum.quest.net import ABLATIONS, MODELS, build_model
from workbench.quantum.quest.predict import check_device, place, predict_pst, quest_devices, simulate_pst
from workbench.quantum.quest.train import (
    TrainSettings,
    fit,
    metrics_by_device,
    metrics_by_kind,
    predict_indices,
    split_by_group,
)
from workbench.threads import one_thread

__all__ = [
    "dataset_summary",
    "fidelity_check",
    "RankCheck",
    "rank_check",
    "train_checkpoint",
    "evaluate_checkpoint",
    "targets",
    "SCALES",
    "MAX_WIDTH",
    "MIRROR_REPS",
    "NOISE_MODELS",
    "QUBIT_COLORS",
    "QuestViewConfig",
    "width_range",
    "depth_options",
    "device_choices",
    "PointKey",
    "Placement",
    "placement",
    "device_noise",
    "point",
    "device_layout",
    "coupler_errors",
    "QuestView",
    "quest_view",
    "simulate_points",
    "clear_caches",
]


def fidelity_check(data: QuestDataset) -> dict[str, Any]:
    """Spearman rank correlation of PST and density-matrix state fidelity over the samples that have both."""
    from scipy.stats import pearsonr, spearmanr

    mask = ~torch.isnan(data.fidelity)
    n = int(mask.sum())
    if n < 3:
        return {"n": n, "spearman": math.nan, "pearson": math.nan}
    p, f = data.pst[mask].numpy(), data.fidelity[mask].numpy()
    return {"n": n, "spearman": float(spearmanr(p, f).statistic), "pearson": float(pearsonr(p, f).statistic)}


@dataclass(frozen=True)
class RankCheck:
    """PST and state fidelity of fresh random circuits (one noise draw each): ``spearman`` is their rank
    correlation; ``labels`` say width, gates and error scale per circuit."""

    pst: tuple[float, ...]
    fidelity: tuple[float, ...]
    labels: tuple[str, ...]
    spearman: float


def rank_check(device: str, count: int, *, seed: int = 11) -> RankCheck:
    """``count`` fresh random circuits on ``device`` (widths 1-4, the dataset's smaller gate counts, errors scaled
    by ``2**U(-3, 3)``), each simulated with aer for its PST and its state fidelity."""
    from scipy.stats import spearmanr

    from workbench.quantum.quest.labels import effective_calibration, noise_model, pst, state_fidelity

    if count < 3:
        raise ValueError(f"count={count} is out of range: valid range is 3.. (a rank correlation needs circuits)")
    rng = np.random.default_rng(seed)
    device_cal = get_device(device).calibration
    psts, fids, labels = [], [], []
    for _ in range(count):
        width = int(rng.integers(1, min(5, device_cal.num_qubits + 1)))
        sub = calibration_subset(device_cal, connected_qubits(device_cal, width, rng))
        scale = float(2.0 ** rng.uniform(-3, 3))
        noisy = effective_calibration(sub, rng, scale)
        gates = int(rng.choice(GATE_COUNTS[:10]))
        circuit = random_circuit(width, gates, noisy.coupling_map, device_cal.two_qubit_gate or "cx", rng)
        model = noise_model(noisy)
        psts.append(float(pst([circuit], model)[0]))
        fids.append(float(state_fidelity(circuit, model)))
        labels.append(f"{width} qubits, {gates} gates, errors x{scale:.2f}")
    return RankCheck(tuple(psts), tuple(fids), tuple(labels), float(spearmanr(psts, fids).statistic))


def dataset_summary(data: QuestDataset) -> dict[str, Any]:
    """Sample counts by kind and family, PST range, and the fidelity rank check."""
    kind, family = data.meta["kind"], data.meta["family"]
    return {
        "samples": len(data),
        "by_kind": {name: int((kind == k).sum()) for k, name in enumerate(KINDS)},
        "by_family": {name: int((family == k).sum()) for k, name in enumerate(FAMILIES) if (family == k).any()},
        "circuits": int(torch.unique(data.meta["structure"]).numel())
        if "structure" in data.meta
        else int(torch.unique(data.meta["group"]).numel()),
        "groups": int(torch.unique(data.meta["group"]).numel()),
        "by_device_kind": (
            {name: int((data.meta["device_kind"] == k).sum()) for k, name in enumerate(DEVICE_KINDS)}
            if "device_kind" in data.meta
            else {}
        ),
        "unseen_device_samples": int(data.meta["unseen"].sum()) if "unseen" in data.meta else 0,
        "pst": {"min": float(data.pst.min()), "mean": float(data.pst.mean()), "max": float(data.pst.max())},
        "fidelity_check": fidelity_check(data),
    }


def _test_record(data: QuestDataset, indices: torch.Tensor, preds: dict[str, torch.Tensor]) -> dict[str, list]:
    return {
        "pst": data.pst[indices].tolist(),
        "kind": data.meta["kind"][indices].tolist(),
        "family": data.meta["family"][indices].tolist(),
        "width": data.meta["width"][indices].tolist(),
        "gates": data.meta["gates"][indices].tolist(),
        **{f"pred_{name}": p.double().tolist() for name, p in preds.items()},
    }


def train_checkpoint(
    data: QuestDataset,
    spec: DatasetSpec,
    settings: TrainSettings,
    *,
    layers: int = 2,
    progress: bool = False,
    command: str = "",
    on_epoch: Callable[[str, int, float, float], None] | None = None,
) -> Checkpoint:
    """Train the transformer, both baselines and the ablation on the same split; held-out metrics and predictions
    included."""
    split = split_by_group(data, spec.seed)
    if len(split.train) == 0 or len(split.val) == 0:
        raise ValueError(
            f"the dataset has {len(data)} samples in {int(torch.unique(data.meta['group']).numel())} "
            "circuits: valid datasets have at least 3 circuits (train, validation and test)"
        )
    norm = Normalizer.fit(data, split.train)
    normed = NormalizedSet.build(data, norm)
    models, history, preds = {}, {}, {}
    for name in MODELS + ABLATIONS:
        torch.manual_seed(settings.seed)  # the initial weights: training is reproducible from the seed
        model = build_model(name, layers)
        hook = (lambda e, a, b, name=name: on_epoch(name, e, a, b)) if on_epoch is not None else None
        history[name] = fit(model, normed, split, settings, progress=progress, on_epoch=hook).to_dict()
        models[name] = model.eval()
        preds[name] = predict_indices(model, normed, split.test)
    metric = {
        name: {**metrics_by_kind(preds[name], data, split.test), **metrics_by_device(preds[name], data, split.test)}
        for name in preds
    }
    return Checkpoint(
        norm,
        models,
        layers,
        spec,
        spec.seed,
        settings,
        history,
        metric,
        _test_record(data, split.test, preds),
        dataset_summary(data),
        command,
    )


def evaluate_checkpoint(ckpt: Checkpoint, data: QuestDataset) -> dict[str, Any]:
    """Metrics of every model on the held-out split of ``data`` (the checkpoint's own dataset: same spec)."""
    split = split_by_group(data, ckpt.split_seed)
    normed = NormalizedSet.build(data, ckpt.normalizer)
    out = {}
    for name, model in ckpt.models.items():
        pred = predict_indices(model, normed, split.test)
        out[name] = {**metrics_by_kind(pred, data, split.test), **metrics_by_device(pred, data, split.test)}
    return out


def targets(metric: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets on held-out circuits: each with its measured value and whether it is met (NaN: not)."""
    t, g, liu = metric["transformer"], metric["global"], metric["liu"]
    rows = [
        ("random circuits: RMSE <= 0.05", t["random"]["rmse"], lambda v: v <= 0.05),
        ("random circuits: R^2 >= 0.90", t["random"]["r2"], lambda v: v >= 0.90),
        ("algorithm circuits: R^2 >= 0.85", t["algorithm"]["r2"], lambda v: v >= 0.85),
        ("RMSE below the global-features MLP", t["all"]["rmse"], lambda v: v < g["all"]["rmse"]),
        ("RMSE below the Liu MLP", t["all"]["rmse"], lambda v: v < liu["all"]["rmse"]),
    ]
    return [{"target": name, "value": value, "met": bool(check(value))} for name, value, check in rows]


# ---- the panel's view ---------------------------------------------------------------------------------------------
NOISE_MODELS = ("calibrated", "randomized")
SCALES = (0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)  # the dataset's levels span 2**-3..2**3
#: the dataset's widest circuits (algorithms on the 7-qubit devices)
MAX_WIDTH = max(max(widths) for widths in FAMILY_WIDTHS.values())
MIRROR_REPS = (1, 2, 3, 4, 5, 6)
#: what the coupling map's qubits are coloured by (a display choice: it does not enter the view)
QUBIT_COLORS = ("readout error", "T1")


def width_range(family: str, num_qubits: int) -> tuple[int, int]:
    """Valid widths of ``family`` on a device of ``num_qubits`` qubits (capped at :data:`MAX_WIDTH`)."""
    lo, hi = (1, MAX_WIDTH) if family == "random" else (min(FAMILY_WIDTHS[family]), max(FAMILY_WIDTHS[family]))
    return lo, min(hi, num_qubits, MAX_WIDTH)


def depth_options(family: str) -> tuple[int, ...]:
    """Valid depths: gate counts of the dataset for random circuits, mirror repetitions for algorithms."""
    return GATE_COUNTS if family == "random" else MIRROR_REPS


def device_choices() -> tuple[str, ...]:
    """Devices QuEst encodes, the dataset's first (random circuits on the 5-qubit ones, algorithms on the
    7-qubit ones)."""
    encodable = quest_devices()
    common = tuple(d for d in RANDOM_DEVICES + ALGORITHM_DEVICES if d in encodable)
    return common + tuple(d for d in encodable if d not in common)


@dataclass(frozen=True, kw_only=True)
class QuestViewConfig(Config):
    """The view's parameters (the panel's controls); ``QuestConfig`` is the CLI's (generate / train / evaluate /
    predict)."""

    device: str = param(
        "fake_lima", choices=device_names(), label="device", help="device snapshot (cx, ecr or cz basis)"
    )
    noise_model: str = param(
        "calibrated",
        choices=NOISE_MODELS,
        label="noise",
        help="calibrated: the snapshot as it is; randomized: one QuEst noise draw of the "
        "device (every T1, T2, gate and readout error x U(0.5, 1.5), from the seed)",
    )
    noise_scale: float = param(
        1.0,
        lo=SCALES[0],
        hi=SCALES[-1],
        unit="x errors",
        label="noise scale",
        help="gate and readout errors x this (T1/T2 kept)",
    )
    family: str = param("qft", choices=FAMILIES, label="circuit family", help="random device circuit or an algorithm")
    width: int = param(3, lo=1, hi=MAX_WIDTH, unit="qubits", label="width", help="circuit width")
    depth: int = param(
        1,
        lo=1,
        hi=max(GATE_COUNTS),
        label="depth",
        help="random: number of gates; algorithms: mirror repetitions U (U^dag U)^(depth-1)",
    )
    seed: int = param(
        0, lo=0, hi=99, label="seed", help="random circuit / algorithm choices, transpiler and noise draw"
    )
    qubit_color: str = param(
        "readout error", choices=QUBIT_COLORS, label="colour qubits by", help="coupling map: colour qubits by"
    )
    checkpoint: str = param("", label="checkpoint", help="checkpoint file (default: the shipped one)")

    def check_combination(self) -> None:
        check_device(self.device)
        cal = get_device(self.device).calibration
        lo, hi = width_range(self.family, cal.num_qubits)
        if not lo <= self.width <= hi:
            why = (
                "Grover's multi-controlled gates grow too fast past 5 qubits"
                if self.family == "grover" and self.width <= cal.num_qubits
                else f"{self.device} has {cal.num_qubits} qubits"
            )
            raise ValueError(
                f"width={self.width} is out of range for family={self.family!r} on {self.device}: "
                f"valid widths are {lo}..{hi} ({why})"
            )
        if self.family != "random" and self.depth > max(MIRROR_REPS):
            raise ValueError(
                f"depth={self.depth} is out of range for family={self.family!r}: valid mirror "
                f"repetitions are 1..{max(MIRROR_REPS)} (depth counts gates only for random circuits)"
            )


@dataclass(frozen=True)
class PointKey:
    """One point of a sweep: the circuit (device, family, width, depth, seed) and its noise (model, scale)."""

    device: str
    family: str
    width: int
    depth: int
    seed: int
    noise_model: str
    scale: float


@dataclass(frozen=True, eq=False)
class Placement:
    """A circuit on the device: compact device-basis ``circuit``, its ``physical`` qubits, gate counts and the
    physical pairs its cx gates use."""

    circuit: Any
    physical: tuple[int, ...]
    gates: int
    cx: int
    cx_pairs: tuple[tuple[int, int], ...]


@functools.lru_cache(maxsize=256)
def _algorithm(device: str, family: str, width: int, seed: int) -> Any:
    from workbench.quantum.quest.algorithms import algorithm_circuit

    return place(algorithm_circuit(family, width, seed), device, seed=seed)


@functools.lru_cache(maxsize=512)
def placement(device: str, family: str, width: int, depth: int, seed: int) -> Placement:
    """The circuit of (family, width, depth, seed) on ``device`` (random: ``depth`` gates on connected qubits;
    algorithms: transpiled once, then mirrored ``depth`` times)."""
    if family == "random":
        rng = np.random.default_rng(seed)
        cal = get_device(device).calibration
        physical = connected_qubits(cal, width, rng)
        circuit = random_circuit(
            width, depth, calibration_subset(cal, physical).coupling_map, cal.two_qubit_gate or "cx", rng
        )
    else:
        placed = _algorithm(device, family, width, seed)
        circuit, physical = mirror(placed.circuit, depth), placed.physical
    ops = [inst for inst in circuit.data if inst.operation.name not in ("barrier", "measure")]
    index = {q: i for i, q in enumerate(circuit.qubits)}
    pairs = {tuple(sorted(physical[index[q]] for q in inst.qubits)) for inst in ops if len(inst.qubits) == 2}
    return Placement(
        circuit, tuple(physical), len(ops), sum(len(inst.qubits) == 2 for inst in ops), tuple(sorted(pairs))
    )


@functools.lru_cache(maxsize=64)
def device_noise(device: str, noise_model: str, seed: int, scale: float) -> DeviceCalibration:
    """The whole device's effective calibration: as calibrated or one seeded QuEst draw, errors x ``scale``."""
    cal = get_device(device).calibration
    if noise_model == "randomized":
        cal = _randomized(device, seed)
    return cal.scaled(scale, relaxation=False)


@functools.lru_cache(maxsize=64)
def _randomized(device: str, seed: int) -> DeviceCalibration:
    return get_device(device).calibration.randomized(np.random.default_rng(seed))


@functools.lru_cache(maxsize=4096)
def point(key: PointKey) -> tuple[Any, DeviceCalibration]:
    """(circuit, calibration of its qubits) of the point ``key``."""
    p = placement(key.device, key.family, key.width, key.depth, key.seed)
    return p.circuit, calibration_subset(device_noise(key.device, key.noise_model, key.seed, key.scale), p.physical)


@functools.lru_cache(maxsize=4096)
def _simulated(key: PointKey) -> float:
    return simulate_pst(*point(key))


def simulate_points(keys: Sequence[PointKey], on_step: Callable[[int], None] | None = None) -> dict[PointKey, float]:
    """PST of every point by qiskit-aer's density-matrix simulation (memoised per point); ``on_step(i)`` after
    the i-th."""
    out = {}
    for i, key in enumerate(keys, 1):
        out[key] = _simulated(key)
        if on_step is not None:
            on_step(i)
    return out


@functools.lru_cache(maxsize=8)
def device_layout(device: str) -> np.ndarray:
    """``[n, 2]`` qubit positions: SMACOF stress majorisation with weights d^-2 on the coupling graph's hop
    distances d (Gansner, Koren and North 2004), started from classical MDS, widest direction horizontal."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    cal = get_device(device).calibration
    n = cal.num_qubits
    edges = np.array(cal.coupling_map or [(0, 0)]).T
    dist = shortest_path(
        coo_matrix((np.ones(edges.shape[1]), edges), shape=(n, n)).tocsr(), directed=False, unweighted=True
    )
    dist[~np.isfinite(dist)] = dist[np.isfinite(dist)].max() + 1  # disconnected parts: one hop further
    centre = np.eye(n) - 1 / n
    vals, vecs = np.linalg.eigh(-0.5 * centre @ dist**2 @ centre)
    pos = vecs[:, -2:] * np.sqrt(np.maximum(vals[-2:], 1e-9))  # [n, 2] classical MDS
    weight = np.divide(1.0, dist**2, out=np.zeros_like(dist), where=dist > 0)  # [n, n]
    laplacian_pinv = np.linalg.pinv(np.diag(weight.sum(1)) - weight)
    stress = math.inf
    for _ in range(300):  # Guttman transform: X <- L_w^+ B(X) X; stress never increases
        now = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=-1)  # [n, n]
        new_stress = float((weight * (now - dist) ** 2).sum())
        if new_stress > (1 - 1e-5) * stress:
            break
        stress = new_stress
        b = -weight * np.divide(dist, now, out=np.zeros_like(dist), where=now > 1e-12)
        b[np.diag_indices(n)] = -b.sum(1)
        pos = laplacian_pinv @ (b @ pos)
    pos -= pos.mean(0)
    _, _, axes = np.linalg.svd(pos, full_matrices=False)
    return pos @ axes.T


def coupler_errors(cal: DeviceCalibration) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Every coupler (sorted qubit pair) and its cx error, averaged over both directions."""
    errors: dict[tuple[int, int], list[float]] = {}
    for g in cal.gates:
        if len(g.qubits) == 2:
            errors.setdefault(tuple(sorted(g.qubits)), []).append(g.error)
    pairs = sorted(errors)
    return pairs, np.array([np.mean(errors[p]) for p in pairs])


def qubit_values(cal: DeviceCalibration, kind: str) -> list[float | None]:
    """Per qubit: mean readout error ((P(1|0) + P(0|1)) / 2) or T1 in microseconds (None when infinite)."""
    if kind == "T1":
        return [t * 1e6 if math.isfinite(t) else None for t in cal.t1]
    if kind == "readout error":
        return [(p01 + p10) / 2 for p01, p10 in zip(cal.readout_p01, cal.readout_p10)]
    raise ValueError(f"qubit_color={kind!r} is unknown: valid values are {', '.join(map(repr, QUBIT_COLORS))}")


@dataclass(frozen=True, eq=False)
class QuestView:
    """Predictions ``[len(xs)]`` per model along the scale and width sweeps, their point keys (for aer), the
    current placement and the device's effective calibration."""

    config: QuestViewConfig
    checkpoint: Checkpoint
    placement: Placement
    device: DeviceCalibration
    scales: tuple[float, ...]
    widths: tuple[int, ...]
    by_scale: dict[str, np.ndarray]
    by_width: dict[str, np.ndarray]
    scale_keys: tuple[PointKey, ...]
    width_keys: tuple[PointKey, ...]

    @property
    def current(self) -> dict[str, float]:
        """Each model's prediction at the current setting."""
        i = self.scales.index(self.config.noise_scale)
        return {m: float(v[i]) for m, v in self.by_scale.items()}

    @property
    def current_key(self) -> PointKey:
        return self.scale_keys[self.scales.index(self.config.noise_scale)]

    @property
    def keys(self) -> tuple[PointKey, ...]:
        """Every point of both sweeps, each once (the current point is in both)."""
        return tuple(dict.fromkeys(self.scale_keys + self.width_keys))

    def rmse_vs(self, simulated: Mapping[PointKey, float]) -> tuple[int, float]:
        """(number of points, transformer RMSE) against the simulated PST of the sweep points in ``simulated``
        (points along both sweeps, the current point counted in each)."""
        keys = self.scale_keys + self.width_keys
        pred = np.concatenate([self.by_scale["transformer"], self.by_width["transformer"]])
        sim = np.array([simulated.get(k, math.nan) for k in keys])
        done = ~np.isnan(sim)
        if not done.any():
            return 0, math.nan
        return int(done.sum()), float(np.sqrt(np.mean((pred[done] - sim[done]) ** 2)))


def quest_view(config: QuestViewConfig) -> QuestView:
    """Predicted PST of ``config``'s circuit along the noise-scale and width sweeps (one batched call, memoised per
    setting and checkpoint file; the qubit colouring does not enter it)."""
    return _quest_view(config.replace(qubit_color=QUBIT_COLORS[0]), load_checkpoint(config.checkpoint or None))


@functools.lru_cache(maxsize=512)
def _quest_view(c: QuestViewConfig, ckpt: Checkpoint) -> QuestView:
    cal = get_device(c.device).calibration
    scales = tuple(sorted({*SCALES, c.noise_scale}))
    lo, hi = width_range(c.family, cal.num_qubits)
    widths = tuple(range(lo, hi + 1))
    scale_keys = tuple(PointKey(c.device, c.family, c.width, c.depth, c.seed, c.noise_model, s) for s in scales)
    width_keys = tuple(PointKey(c.device, c.family, w, c.depth, c.seed, c.noise_model, c.noise_scale) for w in widths)
    points = [point(k) for k in scale_keys + width_keys]
    with one_thread():
        preds = predict_pst(ckpt, [p[0] for p in points], [p[1] for p in points], models=MODELS)
    k = len(scales)
    return QuestView(
        c,
        ckpt,
        placement(c.device, c.family, c.width, c.depth, c.seed),
        device_noise(c.device, c.noise_model, c.seed, c.noise_scale),
        scales,
        widths,
        {m: v[:k] for m, v in preds.items()},
        {m: v[k:] for m, v in preds.items()},
        scale_keys,
        width_keys,
    )


def clear_caches() -> None:
    """Forget every memoised placement, noise draw, point, simulation, layout and view of this module."""
    for cached in (_algorithm, placement, device_noise, _randomized, point, _simulated, device_layout, _quest_view):
        cached.cache_clear()
