"""QuEst panel: a trained graph transformer predicts a circuit's PST on a real device snapshot, live, next to its
two baselines; qiskit-aer simulates the same points on demand.

Everything drawn comes from ``workbench.quantum.quest``: circuits are placed with ``predict.place`` (algorithm
families) or drawn with ``random_device_circuit`` on connected qubits (``dataset.connected_qubits``), mirrored
for depth, and scored with ``predict.predict_pst`` (all three models in one batch) and ``predict.simulate_pst``.
The noise is the device's calibration as it is, or one QuEst noise draw of the whole device (every value
x U(0.5, 1.5), seeded), with gate and readout errors x the noise scale (T1/T2 kept, as in the dataset).

Placements are memoised per (device, family, width, depth, seed) and predictions per full setting, so a redraw
is a batched forward pass; aer runs only behind the button and its points stay for every setting it has seen.
Figures: (a) PST vs noise scale and vs width, (b) predicted vs true PST on the checkpoint's held-out test set,
(c) training curves, (d) the device's coupling map coloured by its (effective) error rates.
"""

from __future__ import annotations

import contextlib
import functools
import html
import math
from dataclasses import dataclass
from typing import Any, Iterator

import ipywidgets as W
import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from workbench.config import Config, param
from workbench.quantum.circuits import mirror, random_device_circuit
from workbench.quantum.calibration import DeviceCalibration, calibration_subset, device_names, load_calibration
from workbench.quantum.quest.checkpoint import Checkpoint, load_checkpoint
from workbench.quantum.quest.dataset import FAMILIES, FAMILY_WIDTHS, GATE_COUNTS, connected_qubits
from workbench.quantum.quest.net import MODELS
from workbench.quantum.quest.predict import check_device, place, predict_pst, quest_devices, simulate_pst
from widgets.base import Panel
from widgets.quantum.quest_figures import (MODEL_COLORS, MODEL_DASH, MODEL_LABELS, fill_heldout_scatter,
                                         fill_training_curves, heldout_scatter_figure, label_colors,
                                         training_curves_figure)

#: the dataset's devices first (random circuits on the 5-qubit ones, algorithms on the 7-qubit ones)
COMMON_DEVICES = ("fake_lima", "fake_manila", "fake_belem", "fake_quito", "fake_jakarta", "fake_lagos",
                  "fake_nairobi", "fake_perth")
NOISE_MODELS = ("calibrated", "randomized")
SCALES = (0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)  # the dataset's levels span 2**-3..2**3
MAX_WIDTH = 7  # the dataset's widest circuits (7-qubit devices)
MIRROR_REPS = (1, 2, 3, 4, 5, 6)
QUBIT_COLORS = ("readout error", "T1")
EDGE_BINS = 6


def width_range(family: str, num_qubits: int) -> tuple[int, int]:
    """Valid widths of ``family`` on a device of ``num_qubits`` qubits (capped at :data:`MAX_WIDTH`)."""
    lo, hi = (1, MAX_WIDTH) if family == "random" else (min(FAMILY_WIDTHS[family]), max(FAMILY_WIDTHS[family]))
    return lo, min(hi, num_qubits, MAX_WIDTH)


@dataclass(frozen=True, kw_only=True)
class QuestPanelConfig(Config):
    """The panel's own controls (``QuestConfig`` is the CLI's: generate / train / evaluate / predict)."""

    device: str = param("fake_lima", choices=device_names(), help="device snapshot (cx basis)")
    noise_model: str = param("calibrated", choices=NOISE_MODELS,
                             help="calibrated: the snapshot as it is; randomized: one QuEst noise draw of the "
                                  "device (every T1, T2, gate and readout error x U(0.5, 1.5), from the seed)")
    noise_scale: float = param(1.0, lo=SCALES[0], hi=SCALES[-1], unit="x errors",
                               help="gate and readout errors x this (T1/T2 kept)")
    family: str = param("qft", choices=FAMILIES, help="random device circuit or an algorithm")
    width: int = param(3, lo=1, hi=MAX_WIDTH, unit="qubits", help="circuit width")
    depth: int = param(1, lo=1, hi=max(GATE_COUNTS),
                       help="random: number of gates; algorithms: mirror repetitions U (U^dag U)^(depth-1)")
    seed: int = param(0, lo=0, hi=99, help="random circuit / algorithm choices, transpiler and noise draw")
    qubit_color: str = param("readout error", choices=QUBIT_COLORS, help="coupling map: colour qubits by")
    checkpoint: str = param("", help="checkpoint file (default: the shipped one)")

    def check_combination(self) -> None:
        check_device(self.device)
        cal = load_calibration(self.device)
        lo, hi = width_range(self.family, cal.num_qubits)
        if not lo <= self.width <= hi:
            why = ("Grover's multi-controlled gates grow too fast past 5 qubits" if self.family == "grover"
                   and self.width <= cal.num_qubits else f"{self.device} has {cal.num_qubits} qubits")
            raise ValueError(f"width={self.width} is out of range for family={self.family!r} on {self.device}: "
                             f"valid widths are {lo}..{hi} ({why})")
        if self.family != "random" and self.depth > max(MIRROR_REPS):
            raise ValueError(f"depth={self.depth} is out of range for family={self.family!r}: valid mirror "
                             f"repetitions are 1..{max(MIRROR_REPS)} (depth counts gates only for random circuits)")


# ---- the kernel calls, memoised ----------------------------------------------------------------------------
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
        cal = load_calibration(device)
        physical = connected_qubits(cal, width, rng)
        circuit = random_device_circuit(width, depth, calibration_subset(cal, physical).coupling_map, rng)
    else:
        placed = _algorithm(device, family, width, seed)
        circuit, physical = mirror(placed.circuit, depth), placed.physical
    ops = [inst for inst in circuit.data if inst.operation.name not in ("barrier", "measure")]
    index = {q: i for i, q in enumerate(circuit.qubits)}
    pairs = {tuple(sorted(physical[index[q]] for q in inst.qubits)) for inst in ops if inst.operation.name == "cx"}
    return Placement(circuit, tuple(physical), len(ops), sum(inst.operation.name == "cx" for inst in ops),
                     tuple(sorted(pairs)))


@functools.lru_cache(maxsize=64)
def device_noise(device: str, noise_model: str, seed: int, scale: float) -> DeviceCalibration:
    """The whole device's effective calibration: as calibrated or one seeded QuEst draw, errors x ``scale``."""
    cal = load_calibration(device)
    if noise_model == "randomized":
        cal = _randomized(device, seed)
    return cal.scaled(scale, relaxation=False)


@functools.lru_cache(maxsize=64)
def _randomized(device: str, seed: int) -> DeviceCalibration:
    return load_calibration(device).randomized(np.random.default_rng(seed))


@functools.lru_cache(maxsize=4096)
def point(key: tuple) -> tuple[Any, DeviceCalibration]:
    """(circuit, calibration of its qubits) of point ``key`` = (device, family, width, depth, seed, noise_model,
    scale)."""
    device, family, width, depth, seed, noise_model, scale = key
    p = placement(device, family, width, depth, seed)
    return p.circuit, calibration_subset(device_noise(device, noise_model, seed, scale), p.physical)


@functools.lru_cache(maxsize=8)
def device_layout(device: str) -> np.ndarray:
    """``[n, 2]`` qubit positions: SMACOF stress majorisation with weights d^-2 on the coupling graph's hop
    distances d (Gansner, Koren and North 2004), started from classical MDS, widest direction horizontal."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    cal = load_calibration(device)
    n = cal.num_qubits
    edges = np.array(cal.coupling_map or [(0, 0)]).T
    dist = shortest_path(coo_matrix((np.ones(edges.shape[1]), edges), shape=(n, n)).tocsr(), directed=False,
                         unweighted=True)
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


# ---- one redraw -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class QuestView:
    """Predictions ``[len(xs)]`` per model along the scale and width sweeps, their point keys (for aer), the
    current placement and the device's effective calibration."""

    config: QuestPanelConfig
    checkpoint: Checkpoint
    placement: Placement
    device: DeviceCalibration
    scales: tuple[float, ...]
    widths: tuple[int, ...]
    by_scale: dict[str, np.ndarray]
    by_width: dict[str, np.ndarray]
    scale_keys: tuple[tuple, ...]
    width_keys: tuple[tuple, ...]

    @property
    def current(self) -> dict[str, float]:
        i = self.scales.index(self.config.noise_scale)
        return {m: float(v[i]) for m, v in self.by_scale.items()}

    @property
    def current_key(self) -> tuple:
        return self.scale_keys[self.scales.index(self.config.noise_scale)]


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one thread: a redraw's batch (tens of small graphs) gains nothing from intra-op threads, and
    on a busy 2-core machine their spinning made the forward pass ~20x slower (390 ms vs 18 ms measured)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@functools.lru_cache(maxsize=512)
def quest_view(config: QuestPanelConfig, ckpt: Checkpoint) -> QuestView:
    """Predicted PST of the current circuit along the noise-scale and width sweeps (one batched call)."""
    c = config
    cal = load_calibration(c.device)
    scales = tuple(sorted({*SCALES, c.noise_scale}))
    lo, hi = width_range(c.family, cal.num_qubits)
    widths = tuple(range(lo, hi + 1))
    scale_keys = tuple((c.device, c.family, c.width, c.depth, c.seed, c.noise_model, s) for s in scales)
    width_keys = tuple((c.device, c.family, w, c.depth, c.seed, c.noise_model, c.noise_scale) for w in widths)
    points = [point(k) for k in scale_keys + width_keys]
    with _one_thread():
        preds = predict_pst(ckpt, [p[0] for p in points], [p[1] for p in points], models=MODELS)
    k = len(scales)
    return QuestView(c, ckpt, placement(c.device, c.family, c.width, c.depth, c.seed),
                     device_noise(c.device, c.noise_model, c.seed, c.noise_scale), scales, widths,
                     {m: v[:k] for m, v in preds.items()}, {m: v[k:] for m, v in preds.items()},
                     scale_keys, width_keys)


class QuestPanel(Panel):
    """Device, noise, family, width, depth, seed; predicted PST live, aer on a button; test scatter, training
    curves and the device's coupling map."""

    technique = "quest"
    config = QuestPanelConfig
    title = "QuEst: predicted PST (graph transformer vs two baselines) on real device snapshots, qiskit-aer on demand"
    hidden = ("checkpoint",)
    static_slider = ("noise_scale", (0.25, 0.5, 1.0, 2.0, 4.0))

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.simulated: dict[tuple, float] = {}  # point key -> PST from aer, kept for the panel's lifetime
        self._depth_memory = {"random": 40, "algorithm": 1}
        self.simulate_button = W.Button(description="simulate with qiskit-aer", button_style="primary",
                                        tooltip="density-matrix PST of every point on the curves (memoised)",
                                        layout=W.Layout(width="220px"))
        self.progress = W.IntProgress(value=0, min=0, max=1, description="aer", layout=W.Layout(width="300px"))
        self.simulate_button.on_click(lambda _: self.simulate())
        family = values.get("family", QuestPanelConfig.__dataclass_fields__["family"].default)
        self.options = {"noise_scale": SCALES, "depth": self._depth_options(family)}
        super().__init__(static=static, **values)

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        encodable = quest_devices()
        devices = [d for d in COMMON_DEVICES if d in encodable] + [d for d in encodable if d not in COMMON_DEVICES]
        self.controls["device"].options = devices if initial["device"] in devices else [*devices, initial["device"]]
        self.controls["device"].value = initial["device"]
        self._set_ranges(initial["device"], initial["family"], keep=initial["width"])
        self.controls["depth"].description = self._depth_label(initial["family"])

    # ---- dependent controls ---------------------------------------------------------------------------------
    @staticmethod
    def _depth_options(family: str) -> tuple[int, ...]:
        return GATE_COUNTS if family == "random" else MIRROR_REPS

    @staticmethod
    def _depth_label(family: str) -> str:
        return "depth (gates)" if family == "random" else "depth (mirror reps)"

    def _set_ranges(self, device: str, family: str, keep: int | None = None) -> None:
        """Width slider over the family's widths on ``device`` (``keep``: widen it to hold that start value, so
        a bad notebook parameter shows in the status line instead of being moved silently)."""
        lo, hi = width_range(family, load_calibration(device).num_qubits)
        width = self.controls["width"]
        if keep is not None:
            lo, hi = min(lo, keep), max(hi, keep)
        if hi >= width.min:  # ipywidgets refuses min > max at every step
            width.max, width.min = hi, lo
        else:
            width.min, width.max = lo, hi

    def adjust_controls(self, changed: str) -> None:
        values = self.values()
        if changed == "family":
            kind = "random" if values["family"] == "random" else "algorithm"
            depth = self.controls["depth"]
            if list(depth.options) != list(self._depth_options(values["family"])):
                self._depth_memory["algorithm" if kind == "random" else "random"] = depth.value
                depth.options = self._depth_options(values["family"])
                depth.value = self._depth_memory[kind]
            depth.description = self._depth_label(values["family"])
        self._set_ranges(values["device"], values["family"])

    # ---- figures --------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        sweep = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                              subplot_titles=("vs noise scale (at the chosen width)", "vs width (at the chosen scale)"))
        for col in (1, 2):
            for m in MODELS:
                sweep.add_trace(go.Scatter(
                    x=[], y=[], mode="lines+markers",
                    name=MODEL_LABELS[m] + (" (predicted)" if m == "transformer" else " (baseline)"),
                    legendgroup=m, showlegend=col == 1, marker=dict(size=5),
                    line=dict(color=MODEL_COLORS[m], dash=MODEL_DASH[m], width=3 if m == "transformer" else 2),
                    hovertemplate="%{x}: predicted PST %{y:.3f}<extra>" + MODEL_LABELS[m] + "</extra>"), row=1, col=col)
            sweep.add_trace(go.Scatter(x=[], y=[], mode="markers", name="qiskit-aer (simulated)", legendgroup="aer",
                                       showlegend=col == 1, marker=dict(symbol="x", size=10, color="black"),
                                       hovertemplate="%{x}: simulated PST %{y:.3f}<extra>qiskit-aer</extra>"),
                            row=1, col=col)
            sweep.add_trace(go.Scatter(x=[], y=[], mode="markers", name="current setting", legendgroup="current",
                                       showlegend=col == 1, hoverinfo="skip",
                                       marker=dict(symbol="circle-open", size=16, color="#d62728",
                                                   line=dict(width=2))), row=1, col=col)
        sweep.update_xaxes(title_text="noise scale (x gate and readout errors)", type="log",
                           tickvals=list(SCALES), ticktext=[f"{s:g}" for s in SCALES], row=1, col=1)
        sweep.update_xaxes(title_text="width (qubits)", dtick=1, row=1, col=2)
        sweep.update_yaxes(title_text="PST  P(0...0) after U U^-1", range=[-0.02, 1.04], row=1, col=1)
        sweep.update_layout(title="Predicted PST", height=420, legend=dict(orientation="h", y=-0.22),
                            margin=dict(t=80))

        device = go.Figure(layout=dict(height=460, xaxis=dict(visible=False), plot_bgcolor="white",
                                       yaxis=dict(visible=False, scaleanchor="x"), showlegend=False,
                                       margin=dict(t=70, l=10)))
        for color in pc.sample_colorscale("Reds", [0.3 + 0.7 * i / (EDGE_BINS - 1) for i in range(EDGE_BINS)]):
            device.add_trace(go.Scatter(x=[], y=[], mode="lines", line=dict(color=color, width=7), hoverinfo="skip"))
        device.add_trace(go.Scatter(x=[], y=[], mode="lines", line=dict(color="black", width=2.5), hoverinfo="skip",
                                    name="used by the circuit's cx"))
        device.add_trace(go.Scatter(x=[], y=[], mode="markers", hovertemplate="%{text}<extra></extra>", text=[],
                                    marker=dict(size=9, color=[], colorscale="Reds", symbol="diamond", colorbar=dict(
                                        title="cx error", x=1.16, len=0.8, thickness=14))))
        device.add_trace(go.Scatter(x=[], y=[], mode="markers+text", text=[], hovertext=[], hoverinfo="text",
                                    textfont=dict(size=10),
                                    marker=dict(size=24, color=[], line=dict(color="#333", width=1), colorbar=dict(
                                        title="", x=1.02, len=0.8, thickness=14))))
        device.add_trace(go.Scatter(x=[], y=[], mode="markers+text", text=[], textposition="top center",
                                    hoverinfo="skip", textfont=dict(size=11, color="black"),
                                    marker=dict(symbol="circle-open", size=34, color="black", line=dict(width=3))))
        return [sweep, heldout_scatter_figure(), training_curves_figure(), device]

    def compute(self, values: dict[str, Any]) -> QuestView:
        config = QuestPanelConfig.from_dict(values)  # the coupling map's colouring does not enter the view
        return quest_view(config.replace(qubit_color=QUBIT_COLORS[0]), load_checkpoint(config.checkpoint or None))

    def draw(self, figures: list[Any], view: QuestView, values: dict[str, Any]) -> None:
        sweep, scatter, curves, device = figures
        c = view.config
        per_col = len(MODELS) + 2
        for col, (xs, preds, keys) in enumerate(((view.scales, view.by_scale, view.scale_keys),
                                                 (view.widths, view.by_width, view.width_keys))):
            for i, m in enumerate(MODELS):
                sweep.data[col * per_col + i].x, sweep.data[col * per_col + i].y = list(xs), preds[m].tolist()
            done = [(x, self.simulated[k]) for x, k in zip(xs, keys) if k in self.simulated]
            aer = sweep.data[col * per_col + len(MODELS)]
            aer.x, aer.y = [x for x, _ in done], [y for _, y in done]
            here = sweep.data[col * per_col + len(MODELS) + 1]
            here.x, here.y = [c.noise_scale if col == 0 else c.width], [view.current["transformer"]]
        noise = "calibrated" if c.noise_model == "calibrated" else f"randomized draw (seed {c.seed})"
        name = c.family.upper() if c.family != "random" else "a random circuit"
        depth = "" if c.family == "random" else f"depth {c.depth}, "
        sweep.layout.title.text = (f"Predicted PST of {name} (width {c.width}, {depth}{view.placement.gates} gates) "
                                   f"on {c.device}, {noise} noise x{c.noise_scale:g}")
        fill_heldout_scatter(scatter, view.checkpoint, highlight=c.family)
        fill_training_curves(curves, view.checkpoint)
        self._draw_device(device, view, values)

    def _draw_device(self, fig: Any, view: QuestView, values: dict[str, Any]) -> None:
        c, cal, placed = view.config, view.device, view.placement
        pos = device_layout(c.device)
        errors: dict[tuple[int, int], list[float]] = {}
        for g in cal.gates:
            if g.name == "cx" and len(g.qubits) == 2:
                errors.setdefault(tuple(sorted(g.qubits)), []).append(g.error)
        pairs = sorted(errors)
        err = np.array([np.mean(errors[p]) for p in pairs])
        # errors span decades (a dead coupler reports 1): colour by log10, ticks in plain numbers
        log_err = np.log10(np.maximum(err, 1e-6))
        lo, hi = (float(log_err.min()), float(log_err.max())) if len(err) else (-3.0, -1.0)
        hi = max(hi, lo + 0.3)
        bins = np.clip(((log_err - lo) / (hi - lo) * EDGE_BINS).astype(int), 0, EDGE_BINS - 1)

        def segments(edges: list[tuple[int, int]]) -> tuple[list, list]:
            xs, ys = [], []
            for a, b in edges:
                xs += [pos[a, 0], pos[b, 0], None]
                ys += [pos[a, 1], pos[b, 1], None]
            return xs, ys

        for k in range(EDGE_BINS):
            fig.data[k].x, fig.data[k].y = segments([p for p, b in zip(pairs, bins) if b == k])
        fig.data[EDGE_BINS].x, fig.data[EDGE_BINS].y = segments(list(placed.cx_pairs))
        mids = fig.data[EDGE_BINS + 1]
        mids.x = [(pos[a, 0] + pos[b, 0]) / 2 for a, b in pairs]
        mids.y = [(pos[a, 1] + pos[b, 1]) / 2 for a, b in pairs]
        mids.text = [f"Q{a}-Q{b}: cx error {e:.2e}" for (a, b), e in zip(pairs, err)]
        mids.marker.color, mids.marker.cmin, mids.marker.cmax = log_err.tolist(), lo, hi
        ticks = [t for t in (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0)
                 if lo - 0.05 <= math.log10(t) <= hi + 0.05]
        mids.marker.colorbar.tickvals = [math.log10(t) for t in ticks]
        mids.marker.colorbar.ticktext = [f"{t:g}" for t in ticks]
        size = 26 if cal.num_qubits <= 7 else 20 if cal.num_qubits <= 16 else 16 if cal.num_qubits <= 28 else 9

        readout = [(p01 + p10) / 2 for p01, p10 in zip(cal.readout_p01, cal.readout_p10)]
        t1 = [t * 1e6 if math.isfinite(t) else None for t in cal.t1]
        sx = {g.qubits[0]: g.error for g in cal.gates if g.name == "sx" and len(g.qubits) == 1}
        wire = {q: i for i, q in enumerate(placed.physical)}
        nodes = fig.data[EDGE_BINS + 2]
        nodes.x, nodes.y, nodes.marker.size = pos[:, 0].tolist(), pos[:, 1].tolist(), size
        nodes.text = [str(q) for q in range(cal.num_qubits)] if size > 9 else []  # small dots: numbers on hover
        nodes.hovertext = [
            f"Q{q}: T1 {cal.t1[q] * 1e6:.0f} us, T2 {cal.t2[q] * 1e6:.0f} us<br>"
            f"readout P(1|0) {cal.readout_p01[q]:.3f}, P(0|1) {cal.readout_p10[q]:.3f}<br>sx error {sx.get(q, 0.0):.2e}"
            + (f"<br><b>circuit qubit {wire[q]}</b>" if q in wire else "") for q in range(cal.num_qubits)]
        shade, scale, title = ((t1, "Viridis", "T1 (us)") if values["qubit_color"] == "T1" else
                               (readout, "YlOrRd", "readout error"))
        nodes.marker.color, nodes.marker.colorscale, nodes.marker.colorbar.title.text = shade, scale, title
        nodes.textfont.color = label_colors(shade, scale)
        rings = fig.data[EDGE_BINS + 3]
        rings.x, rings.y = [pos[q, 0] for q in placed.physical], [pos[q, 1] for q in placed.physical]
        rings.marker.size, rings.marker.line.width = size + 10, 3 if size > 9 else 2
        rings.text = [f"c{i}" for i in range(len(placed.physical))]
        noise = "as calibrated" if c.noise_model == "calibrated" else f"randomized draw, seed {c.seed}"
        fig.layout.title.text = (f"{c.device} ({noise}, errors x{c.noise_scale:g}): qubits by {values['qubit_color']}, "
                                 f"couplers by cx error;<br>circled: qubits c0..c{len(placed.physical) - 1} of the "
                                 "circuit, black: its cx couplers")

    def notes(self, view: QuestView, values: dict[str, Any]) -> str:
        c, p, now = view.config, view.placement, view.current
        text = (f"{c.family} width {c.width} on qubits {list(p.physical)} of {c.device}: {p.gates} gates ({p.cx} cx); "
                f"predicted PST <b>{now['transformer']:.3f}</b> (global MLP {now['global']:.3f}, Liu MLP "
                f"{now['liu']:.3f})")
        if view.current_key in self.simulated:
            text += f"; qiskit-aer <b>{self.simulated[view.current_key]:.3f}</b>"
        keys = [k for k in view.scale_keys + view.width_keys if k in self.simulated]
        if keys:
            pred = np.concatenate([view.by_scale["transformer"], view.by_width["transformer"]])
            sim = [self.simulated.get(k, math.nan) for k in view.scale_keys + view.width_keys]
            err = np.asarray(pred) - np.asarray(sim)
            text += f" &middot; transformer RMSE vs aer on {len(keys)} points: <b>{np.sqrt(np.nanmean(err**2)):.3f}</b>"
        largest = max(view.checkpoint.test.get("gates", [0]) or [0])
        if p.gates > largest:
            text += (f' &middot; <span style="color:#b35900">{p.gates} gates: beyond the test set\'s largest circuit '
                     f"({largest} gates), an extrapolation</span>")
        return text

    # ---- aer on demand ----------------------------------------------------------------------------------------
    def simulate(self) -> None:
        """Simulate every point of the current curves with qiskit-aer (memoised), with a progress bar; redraw."""
        try:
            view = self.compute(self.values())
        except (ValueError, FileNotFoundError) as exc:
            self.status.value = f'<span style="color:#b00020">&#9888; {html.escape(str(exc))}</span>'
            return
        todo = [k for k in dict.fromkeys(view.scale_keys + view.width_keys) if k not in self.simulated]
        self.progress.max, self.progress.value = max(len(todo), 1), 0
        for i, key in enumerate(todo, 1):
            self.simulated[key] = simulate_pst(*point(key))
            self.progress.value = i
        self.progress.max = self.progress.value = max(len(todo), 1)
        self.redraw()

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:3], W.HBox([self.simulate_button, self.progress]), *box.children[3:]])

    def static_figures(self) -> list[go.Figure]:
        """Slider frames only on the figures that depend on the noise scale (the sweep and the device map)."""
        figures = super().static_figures()
        for i in (1, 2):
            figures[i] = go.Figure(self.figures[i])
        sweep = figures[0]  # its slider goes below the legend
        if sweep.layout.sliders:
            sweep.update_layout(height=sweep.layout.height + 90, margin=dict(b=170))
            sweep.layout.sliders[0].update(y=-0.42, pad=dict(t=0))
        return figures
