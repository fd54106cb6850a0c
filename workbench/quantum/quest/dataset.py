"""The QuEst dataset: device circuits, each under a randomised device noise draw, labelled with PST by aer.

Two kinds of samples (authors' generation scripts, ported to qiskit 2 and to today's devices):

- **random**: circuits of ``gates`` gates drawn from ``rz`` (angle ~ U[0, 2 pi)), ``sx``, ``x`` and the device's
  two-qubit gate (``cx``, ``ecr`` or ``cz``) on coupling-map edges, over ``width`` (1-5) connected physical
  qubits of a device, gate counts from :data:`GATE_COUNTS`; one noise draw (every calibration value
  x U(0.5, 1.5)) is shared by ``circuits_per_noise`` circuits, as the paper's "5 noise models, 4 circuits each".
  Half of the noise draws use the paper's uniform gate mix; the other half (workbench extension) draw the mix
  from Dirichlet(1, 1, 1, 1), so that two-qubit-heavy circuits whose qubits stay near basis states (as in QFT
  or GHZ, where many errors are harmless to the echo) are covered too.
- **algorithm**: GHZ, QFT, Grover, Bernstein-Vazirani, QAOA and a hardware-efficient ansatz on 2-7 qubits
  (:mod:`~workbench.quantum.quest.algorithms`), transpiled to a device of at least 7 qubits and compacted to its
  used qubits, each under ``noise_draws`` draws of the randomised noise with gate and readout errors scaled by
  ``2**U(-3, scale_log2_max)`` (the paper's noise levels ``2**linspace(-3, 6)``).

Every noise draw (both kinds; workbench extension) stretches the gate durations of half the draws by
``2**U(0, duration_log2_max)`` (T1, T2 and errors kept): the training devices' two-qubit gates take at most
1 us, but some snapshots' take far longer (fake_toronto's cx 6.8-13.8 us), and a model trained without such draws
underpredicts PST there (it extrapolates in relaxation per gate; see
:func:`~workbench.quantum.quest.outside.duration_counterfactual`).

Devices (:data:`DEVICES`): each job picks a kind of two-qubit gate uniformly (``cx``: Falcon-era devices,
``ecr``: Eagle, ``cz``: Heron), then a device of that kind; with probability ``unseen_fraction`` one of the
devices kept out of training (:data:`UNSEEN_DEVICES`), whose samples are only ever test samples.

Every sample records its **structure** (a hash of the logical circuit: the algorithm before transpilation, or
the random circuit itself) and its **noise draw**; :func:`~workbench.quantum.quest.train.split_by_group` keeps
every sample of a structure (an algorithm circuit on any device, under any draw) and of a noise draw on one
side of the split.

Every sample is encoded (:func:`~workbench.quantum.quest.encoding.encode`) with the noise values it was
simulated under. A density-matrix state fidelity is recorded for a ``fidelity_fraction`` of the samples with at
most 4 qubits. Jobs run on ``workers`` processes with a progress bar; the result is cached under the data
directory (``<data>/quest/<key>.pt``, key = hash of the spec and the encoding version) and is the same for the
same spec whatever the number of workers (per-job seeds from ``numpy.random.SeedSequence``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.atomic import atomic_write, verify_zip
from workbench.quantum.calibration import DeviceCalibration, calibration_subset
from workbench.quantum.device import Device, get_device
from workbench.quantum.quest.encoding import ENCODING_VERSION, CircuitGraph, encode, gate_count

__all__ = [
    "DatasetSpec",
    "QuestDataset",
    "generate",
    "load_or_generate",
    "RANDOM_DEVICES",
    "ALGORITHM_DEVICES",
    "GATE_COUNTS",
    "FAMILIES",
    "KINDS",
    "DEVICE_KINDS",
    "DEVICES",
    "TRAIN_DEVICES",
    "UNSEEN_DEVICES",
    "cache_path",
    "connected_qubits",
    "structure_hash",
]

#: device -> (two-qubit gate, qubits, kept out of training); qubit counts are checked against the snapshots in
#: the tests. fake_kyoto (ecr edges with error 1) and fake_cairo (both cx and ecr) are left out.
DEVICES: dict[str, tuple[str, int, bool]] = {
    "fake_lima": ("cx", 5, False),
    "fake_manila": ("cx", 5, False),
    "fake_belem": ("cx", 5, False),
    "fake_quito": ("cx", 5, False),
    "fake_jakarta": ("cx", 7, False),
    "fake_lagos": ("cx", 7, False),
    "fake_nairobi": ("cx", 7, False),
    "fake_perth": ("cx", 7, False),
    "fake_guadalupe": ("cx", 16, False),
    "fake_montreal": ("cx", 27, False),
    "fake_athens": ("cx", 5, True),
    "fake_oslo": ("cx", 7, True),
    "fake_toronto": ("cx", 27, True),
    "fake_brisbane": ("ecr", 127, False),
    "fake_sherbrooke": ("ecr", 127, False),
    "fake_kyiv": ("ecr", 127, False),
    "fake_osaka": ("ecr", 127, False),
    "fake_brussels": ("ecr", 127, False),
    "fake_peekskill": ("ecr", 27, True),
    "fake_quebec": ("ecr", 127, True),
    "fake_cusco": ("ecr", 127, True),
    "fake_torino": ("cz", 133, False),
    "fake_fez": ("cz", 156, False),
    "fake_marrakesh": ("cz", 156, False),
    "fake_aachen": ("cz", 156, False),
    "fake_berlin": ("cz", 120, False),
    "fake_kingston": ("cz", 156, True),
    "fake_prague": ("cz", 33, True),
    "fake_miami": ("cz", 120, True),
}
DEVICE_KINDS = ("cx", "ecr", "cz")
TRAIN_DEVICES = tuple(d for d, (_, _, unseen) in DEVICES.items() if not unseen)
UNSEEN_DEVICES = tuple(d for d, (_, _, unseen) in DEVICES.items() if unseen)
#: the paper's devices (5-qubit Falcons for random circuits, 7-qubit ones for algorithms): the panel's first choices
RANDOM_DEVICES = ("fake_lima", "fake_manila", "fake_belem", "fake_quito")
ALGORITHM_DEVICES = ("fake_jakarta", "fake_lagos", "fake_nairobi", "fake_perth")
ALGORITHM_MIN_QUBITS = 7
GATE_COUNTS = (10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70, 80, 90, 100, 120, 150, 200, 250, 500)
#: algorithm families and their widths (Grover's multi-controlled gates grow too fast past 5 qubits)
FAMILY_WIDTHS = {
    "ghz": range(2, 8),
    "qft": range(2, 8),
    "grover": range(2, 6),
    "bv": range(2, 8),
    "qaoa": range(2, 8),
    "hea": range(2, 8),
}
FAMILIES = ("random",) + tuple(FAMILY_WIDTHS)
KINDS = ("random", "algorithm")
MAX_FIDELITY_WIDTH = 4


@dataclass(frozen=True)
class DatasetSpec:
    """What to generate (sizes are numbers of samples, i.e. (circuit, noise draw) pairs)."""

    random_samples: int = 4000
    algorithm_samples: int = 1600
    circuits_per_noise: int = 4
    noise_draws: int = 8
    scale_log2_max: float = 3.0
    duration_log2_max: float = 6.0
    fidelity_fraction: float = 0.1
    seed: int = 42
    unseen_fraction: float = 0.15

    def __post_init__(self) -> None:
        for name, lo in (
            ("random_samples", 0),
            ("algorithm_samples", 0),
            ("circuits_per_noise", 1),
            ("noise_draws", 1),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < lo:
                raise ValueError(f"{name}={value!r} is out of range: valid range is {lo}.. (integer)")
        if self.random_samples + self.algorithm_samples == 0:
            raise ValueError("random_samples=0 and algorithm_samples=0: valid datasets have at least one sample")
        if not -3 <= self.scale_log2_max <= 6:
            raise ValueError(f"scale_log2_max={self.scale_log2_max} is out of range: valid range is -3..6")
        if not 0 <= self.duration_log2_max <= 8:
            raise ValueError(f"duration_log2_max={self.duration_log2_max} is out of range: valid range is 0..8")
        if not 0 <= self.fidelity_fraction <= 1:
            raise ValueError(f"fidelity_fraction={self.fidelity_fraction} is out of range: valid range is 0..1")
        if not 0 <= self.unseen_fraction < 1:
            raise ValueError(
                f"unseen_fraction={self.unseen_fraction} is out of range: valid range is 0..1 "
                "(1 excluded: some devices must be seen in training)"
            )

    def key(self) -> str:
        text = json.dumps({**asdict(self), "encoding": ENCODING_VERSION}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class _Job:
    kind: str  # "random" | "algorithm"
    index: int
    device: Device  # resolved once from the dataset's device table (pickles as its name)
    family: str
    width: int
    gates: int  # random: gate count; algorithm: 0
    count: int  # random: circuits sharing the noise draw; algorithm: noise draws of the circuit
    seed: Any  # SeedSequence


def _pick_device(plan: np.random.Generator, unseen_fraction: float, min_qubits: int) -> Device:
    """A kind of two-qubit gate uniformly, then a device of that kind (unseen with ``unseen_fraction``): the
    dataset spec's boundary, where a name of its device table becomes a :class:`Device`."""
    kind = DEVICE_KINDS[int(plan.integers(len(DEVICE_KINDS)))]
    unseen = bool(plan.random() < unseen_fraction)
    pool = sorted(d for d, (k, n, u) in DEVICES.items() if k == kind and u == unseen and n >= min_qubits)
    return get_device(pool[int(plan.integers(len(pool)))])


def _jobs(spec: DatasetSpec) -> list[_Job]:
    root = np.random.SeedSequence(spec.seed)
    plan = np.random.default_rng(root.spawn(1)[0])
    jobs: list[_Job] = []
    left = spec.random_samples
    while left > 0:
        count = min(spec.circuits_per_noise, left)
        jobs.append(
            _Job(
                "random",
                len(jobs),
                _pick_device(plan, spec.unseen_fraction, 5),
                "random",
                int(plan.integers(1, 6)),
                int(plan.choice(GATE_COUNTS)),
                count,
                None,
            )
        )
        left -= count
    families = [(f, w) for f, widths in FAMILY_WIDTHS.items() for w in widths]
    left, k = spec.algorithm_samples, 0
    while left > 0:
        family, width = families[k % len(families)]
        count = min(spec.noise_draws, left)
        jobs.append(
            _Job(
                "algorithm",
                len(jobs),
                _pick_device(plan, spec.unseen_fraction, ALGORITHM_MIN_QUBITS),
                family,
                width,
                0,
                count,
                None,
            )
        )
        left -= count
        k += 1
    seeds = root.spawn(len(jobs) + 1)[1:]
    return [replace(job, seed=seed) for job, seed in zip(jobs, seeds)]


def connected_qubits(calibration: DeviceCalibration, width: int, rng: np.random.Generator) -> tuple[int, ...]:
    """``width`` physical qubits forming a connected piece of the coupling map (random start, random growth)."""
    neighbours: dict[int, set[int]] = {q: set() for q in range(calibration.num_qubits)}
    for a, b in calibration.coupling_map:
        neighbours[a].add(b)
        neighbours[b].add(a)
    chosen = [int(rng.integers(calibration.num_qubits))]
    while len(chosen) < width:
        frontier = sorted({n for q in chosen for n in neighbours[q]} - set(chosen))
        if not frontier:
            raise ValueError(f"width={width} is out of range for {calibration.name}: no connected set of that size")
        chosen.append(int(rng.choice(frontier)))
    return tuple(chosen)


def structure_hash(circuit: Any) -> int:
    """A 56-bit hash of a circuit's gate sequence (names, qubit indices, parameters to 1e-9): equal for
    gate-for-gate equal circuits."""
    index = {q: i for i, q in enumerate(circuit.qubits)}
    parts = [f"{circuit.num_qubits}"]
    for inst in circuit.data:
        params = ",".join(f"{float(p):.9f}" for p in inst.operation.params)
        parts.append(f"{inst.operation.name}({params}){[index[q] for q in inst.qubits]}")
    return int.from_bytes(hashlib.sha256(";".join(parts).encode()).digest()[:7], "big")


def _sample_row(
    graph: CircuitGraph,
    pst: float,
    fidelity: float,
    job: _Job,
    group: int,
    scale: float,
    gates: int,
    structure: int,
    noise: int,
) -> dict[str, Any]:
    kind, _, unseen = DEVICES[job.device.name]
    return {
        "graph": graph,
        "pst": pst,
        "fidelity": fidelity,
        "kind": KINDS.index(job.kind),
        "family": FAMILIES.index(job.family),
        "device": job.device.name,
        "width": job.width,
        "gates": gates,
        "scale": scale,
        "group": group,
        "structure": structure,
        "noise": noise,
        "device_kind": DEVICE_KINDS.index(kind),
        "unseen": int(unseen),
    }


def _run_job(
    job: _Job, fidelity_fraction: float, scale_log2_max: float, duration_log2_max: float
) -> list[dict[str, Any]]:
    """Generate, simulate and encode one job's samples (runs in a worker process)."""
    from workbench.quantum.circuits import random_device_circuit, transpile_to_device
    from workbench.quantum.quest.algorithms import algorithm_circuit
    from workbench.quantum.quest.labels import effective_calibration, noise_model, pst, state_fidelity

    rng = np.random.default_rng(job.seed)
    rows = []
    if job.kind == "random":
        cal = job.device.calibration
        physical = connected_qubits(cal, job.width, rng)
        noisy = effective_calibration(calibration_subset(cal, physical), rng, 1.0, duration_log2_max)
        model = noise_model(noisy)
        mix = None if rng.random() < 0.5 else rng.dirichlet(np.ones(4))
        two = DEVICES[job.device.name][0]
        circuits = [
            random_device_circuit(job.width, job.gates, noisy.coupling_map, rng, two_qubit_gate=two, mix=mix)
            for _ in range(job.count)
        ]
        labels = pst(circuits, model)
        noise = job.index * 1000  # one noise draw for the job's circuits: they form one group
        for qc, label in zip(circuits, labels):
            fid = math.nan
            if job.width <= MAX_FIDELITY_WIDTH and rng.random() < fidelity_fraction:
                fid = state_fidelity(qc, model)
            rows.append(
                _sample_row(encode(qc, noisy), float(label), fid, job, noise, 1.0, job.gates, structure_hash(qc), noise)
            )
        return rows
    logical = algorithm_circuit(job.family, job.width, int(rng.integers(2**31)))
    structure = structure_hash(logical)  # the group: every placement and draw of this logical circuit
    placed = transpile_to_device(logical, job.device, seed=int(rng.integers(2**31)))
    gates = gate_count(placed.circuit)
    for draw in range(job.count):
        scale = float(2.0 ** rng.uniform(-3.0, scale_log2_max))
        noisy = effective_calibration(placed.calibration, rng, scale, duration_log2_max)
        model = noise_model(noisy)
        label = float(pst([placed.circuit], model)[0])
        fid = math.nan
        if placed.circuit.num_qubits <= MAX_FIDELITY_WIDTH and rng.random() < fidelity_fraction:
            fid = state_fidelity(placed.circuit, model)
        rows.append(
            _sample_row(
                encode(placed.circuit, noisy),
                label,
                fid,
                job,
                structure,
                scale,
                gates,
                structure,
                job.index * 1000 + draw,
            )
        )
    return rows


def _results(jobs: list[_Job], spec: DatasetSpec, workers: int) -> Iterator[list[dict[str, Any]]]:
    if workers <= 1:
        for job in jobs:
            yield _run_job(job, spec.fidelity_fraction, spec.scale_log2_max, spec.duration_log2_max)
        return
    import multiprocessing

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            pool.submit(_run_job, job, spec.fidelity_fraction, spec.scale_log2_max, spec.duration_log2_max)
            for job in jobs
        ]
        for future in futures:
            yield future.result()


@dataclass(frozen=True, eq=False)
class QuestDataset:
    """Samples as concatenated arrays: node features ``x [N_total, 24]`` with ``node_ptr [S+1]``, edges
    ``[2, E_total]`` (local node indices) with ``edge_ptr [S+1]``, ``globals [S, 6]``, ``liu [S, 110]``,
    labels ``pst [S]``, ``fidelity [S]`` (NaN where not computed) and per-sample ``meta`` columns (kind,
    family, width, gates, scale, group (the split unit), structure (logical-circuit hash), noise (noise-draw id),
    device_kind (index into :data:`DEVICE_KINDS`), unseen (1: a device kept out of training): int/float tensors
    ``[S]``) and ``devices`` (names)."""

    x: torch.Tensor
    node_ptr: torch.Tensor
    edges: torch.Tensor
    edge_ptr: torch.Tensor
    globals: torch.Tensor
    liu: torch.Tensor
    pst: torch.Tensor
    fidelity: torch.Tensor
    meta: dict[str, torch.Tensor]
    devices: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.pst.shape[0])

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]]) -> QuestDataset:
        graphs: list[CircuitGraph] = [r["graph"] for r in rows]
        nodes = np.cumsum([0] + [g.x.shape[0] for g in graphs])
        edges = np.cumsum([0] + [g.edges.shape[1] for g in graphs])
        cat = lambda arrays, dim: torch.from_numpy(np.concatenate(arrays, axis=dim))  # noqa: E731
        meta = {
            "kind": torch.tensor([r["kind"] for r in rows], dtype=torch.int64),
            "family": torch.tensor([r["family"] for r in rows], dtype=torch.int64),
            "width": torch.tensor([r["width"] for r in rows], dtype=torch.int64),
            "gates": torch.tensor([r["gates"] for r in rows], dtype=torch.int64),
            "scale": torch.tensor([r["scale"] for r in rows], dtype=torch.float64),
            "group": torch.tensor([r["group"] for r in rows], dtype=torch.int64),
            **{
                k: torch.tensor([r[k] for r in rows], dtype=torch.int64)
                for k in ("structure", "noise", "device_kind", "unseen")
            },
        }
        return cls(
            x=cat([g.x for g in graphs], 0),
            node_ptr=torch.from_numpy(nodes),
            edges=cat([g.edges for g in graphs], 1),
            edge_ptr=torch.from_numpy(edges),
            globals=torch.from_numpy(np.stack([g.globals for g in graphs])),
            liu=torch.from_numpy(np.stack([g.liu for g in graphs])),
            pst=torch.tensor([r["pst"] for r in rows], dtype=torch.float64),
            fidelity=torch.tensor([r["fidelity"] for r in rows], dtype=torch.float64),
            meta=meta,
            devices=tuple(r["device"] for r in rows),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": self.x,
            "node_ptr": self.node_ptr,
            "edges": self.edges,
            "edge_ptr": self.edge_ptr,
            "globals": self.globals,
            "liu": self.liu,
            "pst": self.pst,
            "fidelity": self.fidelity,
            "meta": self.meta,
            "devices": list(self.devices),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QuestDataset:
        return cls(**{**d, "devices": tuple(d["devices"])})

    def graph(self, i: int) -> CircuitGraph:
        """Sample ``i``'s graph (numpy views)."""
        n0, n1 = int(self.node_ptr[i]), int(self.node_ptr[i + 1])
        e0, e1 = int(self.edge_ptr[i]), int(self.edge_ptr[i + 1])
        return CircuitGraph(
            self.x[n0:n1].numpy(), self.edges[:, e0:e1].numpy(), self.globals[i].numpy(), self.liu[i].numpy()
        )


def cache_path(spec: DatasetSpec, cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / f"quest-{spec.key()}.pt"


def generate(
    spec: DatasetSpec, *, workers: int = 1, progress: bool = False, on_job: Callable[[int, int], None] | None = None
) -> QuestDataset:
    """Simulate and encode every sample of ``spec`` on ``workers`` processes (1: in this process).

    ``progress`` shows a tqdm bar (jobs done / total); ``on_job(done, total)`` is called after each job.
    """
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r} is out of range: valid range is 1.. (processes)")
    from tqdm.auto import tqdm

    jobs = _jobs(spec)
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(jobs), desc="QuEst dataset (aer density matrix)", unit="job", disable=not progress)
    for done, job_rows in enumerate(_results(jobs, spec, workers), 1):
        rows.extend(job_rows)
        bar.update()
        if on_job is not None:
            on_job(done, len(jobs))
    bar.close()
    return QuestDataset.from_rows(rows)


def load_or_generate(
    spec: DatasetSpec, cache_dir: str | os.PathLike[str], *, workers: int = 1, progress: bool = False
) -> tuple[QuestDataset, Path, bool]:
    """The cached dataset of ``spec`` under ``cache_dir`` (generated and saved atomically when absent):
    ``(dataset, path, was_cached)``."""
    path = cache_path(spec, cache_dir)
    if path.is_file():
        verify_zip(path, what="QuEst dataset", remedy="delete it; the next run generates it again")
        return QuestDataset.from_dict(torch.load(path, weights_only=True)), path, True
    if progress:  # say what is coming before minutes of aer simulation (measured: 5,600 samples in 382 s)
        samples = spec.random_samples + spec.algorithm_samples
        minutes = samples * 0.07 / 60 / max(workers, 1)
        print(
            f"generating the QuEst dataset once: {samples:,} circuits simulated with qiskit-aer, about "
            f"{minutes:.0f} min on {workers} process(es); cached in {path}",
            file=sys.stderr,
        )
    data = generate(spec, workers=workers, progress=progress)
    with atomic_write(path) as f:  # temp file, fsync, rename: concurrent generators each publish a whole file
        torch.save(data.to_dict(), f)
    return data, path, False
