"""The QuEst study: views for the panel and the notebook on top of the orchestration
(:mod:`workbench.quantum.quest.experiment`: dataset, training, evaluation, targets): the PST-vs-fidelity rank check
of fresh circuits (:func:`rank_check`) and the panel's memoised view (:func:`quest_view`; its parameters,
:class:`~workbench.quantum.quest.config.QuestViewConfig`, live in ``config.py``).

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

from workbench.quantum.calibration import DeviceCalibration, calibration_subset
from workbench.quantum.circuits import mirror, random_device_circuit
from workbench.quantum.device import Device, get_device
from workbench.quantum.quest.checkpoint import Checkpoint, load_checkpoint
from workbench.quantum.quest.config import (
    MAX_WIDTH,
    MIRROR_REPS,
    NOISE_MODELS,
    QUBIT_COLORS,
    SCALES,
    QuestViewConfig,
    width_range,
)
from workbench.quantum.quest.dataset import ALGORITHM_DEVICES, GATE_COUNTS, RANDOM_DEVICES, connected_qubits
from workbench.quantum.quest.net import MODELS
from workbench.quantum.quest.predict import place, predict_pst, quest_devices, simulate_pst
from workbench.threads import one_thread

__all__ = [
    "RankCheck",
    "rank_check",
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
    "qubit_values",
    "QuestView",
    "quest_view",
    "simulate_points",
    "clear_caches",
]


@dataclass(frozen=True)
class RankCheck:
    """PST and state fidelity of fresh random circuits (one noise draw each): ``spearman`` is their rank
    correlation; ``labels`` say width, gates and error scale per circuit."""

    pst: tuple[float, ...]
    fidelity: tuple[float, ...]
    labels: tuple[str, ...]
    spearman: float


def rank_check(device: str | Device, count: int, *, seed: int = 11) -> RankCheck:
    """``count`` fresh random circuits on ``device`` (widths 1-4, the dataset's smaller gate counts, errors scaled
    by ``2**U(-3, 3)``), each simulated with aer for its PST and its state fidelity. A notebook's entry: a device
    name is resolved here, once."""
    from scipy.stats import spearmanr

    from workbench.quantum.quest.labels import effective_calibration, noise_model, pst, state_fidelity

    if count < 3:
        raise ValueError(f"count={count} is out of range: valid range is 3.. (a rank correlation needs circuits)")
    rng = np.random.default_rng(seed)
    device_cal = get_device(device).calibration  # the notebook's boundary
    psts, fids, labels = [], [], []
    for _ in range(count):
        width = int(rng.integers(1, min(5, device_cal.num_qubits + 1)))
        sub = calibration_subset(device_cal, connected_qubits(device_cal, width, rng))
        scale = float(2.0 ** rng.uniform(-3, 3))
        noisy = effective_calibration(sub, rng, scale)
        gates = int(rng.choice(GATE_COUNTS[:10]))
        circuit = random_device_circuit(
            width, gates, noisy.coupling_map, rng, two_qubit_gate=device_cal.two_qubit_gate or "cx"
        )
        model = noise_model(noisy)
        psts.append(float(pst([circuit], model)[0]))
        fids.append(float(state_fidelity(circuit, model)))
        labels.append(f"{width} qubits, {gates} gates, errors x{scale:.2f}")
    return RankCheck(tuple(psts), tuple(fids), tuple(labels), float(spearmanr(psts, fids).statistic))


# ---- the panel's view ---------------------------------------------------------------------------------------------
def depth_options(family: str) -> tuple[int, ...]:
    """Valid depths: gate counts of the dataset for random circuits, mirror repetitions for algorithms."""
    return GATE_COUNTS if family == "random" else MIRROR_REPS


def device_choices() -> tuple[str, ...]:
    """Devices QuEst encodes, the dataset's first (random circuits on the 5-qubit ones, algorithms on the
    7-qubit ones)."""
    encodable = quest_devices()
    common = tuple(d for d in RANDOM_DEVICES + ALGORITHM_DEVICES if d in encodable)
    return common + tuple(d for d in encodable if d not in common)


@dataclass(frozen=True)
class PointKey:
    """One point of a sweep: the circuit (device, family, width, depth, seed) and its noise (model, scale)."""

    device: Device
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
def _algorithm(device: Device, family: str, width: int, seed: int) -> Any:
    from workbench.quantum.quest.algorithms import algorithm_circuit

    return place(algorithm_circuit(family, width, seed), device, seed=seed)


@functools.lru_cache(maxsize=512)
def placement(device: Device, family: str, width: int, depth: int, seed: int) -> Placement:
    """The circuit of (family, width, depth, seed) on ``device`` (random: ``depth`` gates on connected qubits;
    algorithms: transpiled once, then mirrored ``depth`` times)."""
    if family == "random":
        rng = np.random.default_rng(seed)
        cal = device.calibration
        physical = connected_qubits(cal, width, rng)
        edges = calibration_subset(cal, physical).coupling_map
        circuit = random_device_circuit(width, depth, edges, rng, two_qubit_gate=cal.two_qubit_gate or "cx")
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
def device_noise(device: Device, noise_model: str, seed: int, scale: float) -> DeviceCalibration:
    """The whole device's effective calibration: as calibrated or one seeded QuEst draw, errors x ``scale``."""
    cal = device.calibration
    if noise_model == "randomized":
        cal = _randomized(device, seed)
    return cal.scaled(scale, relaxation=False)


@functools.lru_cache(maxsize=64)
def _randomized(device: Device, seed: int) -> DeviceCalibration:
    return device.calibration.randomized(np.random.default_rng(seed))


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
def device_layout(device: Device) -> np.ndarray:
    """``[n, 2]`` qubit positions: SMACOF stress majorisation with weights d^-2 on the coupling graph's hop
    distances d (Gansner, Koren and North 2004), started from classical MDS, widest direction horizontal."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    cal = device.calibration
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
    dev = c.resolved_device()
    cal = dev.calibration
    scales = tuple(sorted({*SCALES, c.noise_scale}))
    lo, hi = width_range(c.family, cal.num_qubits)
    widths = tuple(range(lo, hi + 1))
    scale_keys = tuple(PointKey(dev, c.family, c.width, c.depth, c.seed, c.noise_model, s) for s in scales)
    width_keys = tuple(PointKey(dev, c.family, w, c.depth, c.seed, c.noise_model, c.noise_scale) for w in widths)
    points = [point(k) for k in scale_keys + width_keys]
    with one_thread():
        preds = predict_pst(ckpt, [p[0] for p in points], [p[1] for p in points], models=MODELS)
    k = len(scales)
    return QuestView(
        c,
        ckpt,
        placement(dev, c.family, c.width, c.depth, c.seed),
        device_noise(dev, c.noise_model, c.seed, c.noise_scale),
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
