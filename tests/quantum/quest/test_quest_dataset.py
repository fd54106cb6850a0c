"""QuEst dataset generation: reproducible from the seed (whatever the number of processes), cached, labelled
with aer's PST of the very circuits it encodes, split by circuit, and algorithm circuits in the device basis."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum.calibration import load_calibration
from workbench.quantum.device import get_device
from workbench.quantum.quest.algorithms import ALGORITHMS, algorithm_circuit
from workbench.quantum.quest.dataset import FAMILIES, DatasetSpec, _jobs, connected_qubits, generate, load_or_generate
from workbench.quantum.quest.experiment import dataset_summary
from workbench.quantum.quest.train import split_by_group

TINY = DatasetSpec(random_samples=10, algorithm_samples=6, noise_draws=3, fidelity_fraction=1.0, seed=3)


@pytest.fixture(scope="module")
def tiny():
    return generate(TINY)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_sizes_kinds_and_ranges(tiny):
    assert len(tiny) == 16
    summary = dataset_summary(tiny)
    assert summary["by_kind"] == {"random": 10, "algorithm": 6}
    assert 0 < summary["pst"]["min"] <= summary["pst"]["max"] <= 1
    assert summary["circuits"] == 10 + 2  # distinct structures: 10 random circuits, GHZ-2 and GHZ-3
    assert summary["groups"] == 3 + 2  # random: one group per noise draw (4 + 4 + 2 circuits); algorithm: per circuit
    fid = tiny.fidelity[~torch.isnan(tiny.fidelity)]
    assert len(fid) > 0 and ((fid > 0) & (fid <= 1 + 1e-9)).all()
    assert tiny.node_ptr[-1] == tiny.x.shape[0] and tiny.edge_ptr[-1] == tiny.edges.shape[1]


@pytest.mark.slow  # generates or trains for several seconds: the slow lane (CI) runs it
def test_same_seed_same_dataset_on_two_processes(tiny):
    again = generate(TINY, workers=2)
    assert torch.equal(again.pst, tiny.pst)
    assert torch.equal(again.x, tiny.x)
    assert again.devices == tiny.devices
    other = generate(DatasetSpec(random_samples=4, algorithm_samples=0, seed=4))
    assert not torch.equal(other.pst, tiny.pst[:4])


def test_cache_round_trip(tmp_path):
    spec = DatasetSpec(random_samples=4, algorithm_samples=0, seed=11)
    first, path, cached = load_or_generate(spec, tmp_path)
    assert path.is_file() and not cached
    second, _, cached = load_or_generate(spec, tmp_path)
    assert cached and torch.equal(first.pst, second.pst) and torch.equal(first.edges, second.edges)


@pytest.mark.slow  # several seconds (the slow lane, CI, runs it)
def test_split_keeps_circuits_together():
    data = generate(DatasetSpec(random_samples=0, algorithm_samples=16, noise_draws=2, seed=5))
    split = split_by_group(data, seed=1)
    groups = [set(data.meta["group"][part].tolist()) for part in (split.train, split.val, split.test)]
    assert not (groups[0] & groups[1]) and not (groups[0] & groups[2]) and not (groups[1] & groups[2])
    assert sum(len(p) for p in (split.train, split.val, split.test)) == len(data)


def test_jobs_cover_every_family():
    jobs = _jobs(DatasetSpec(random_samples=8, algorithm_samples=34 * 2, noise_draws=2))
    families = {j.family for j in jobs}
    assert families == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(ALGORITHMS))
def test_algorithm_circuits_transpile_to_device_basis(family):
    from workbench.quantum.circuits import transpile_to_device

    width = 3
    placed = transpile_to_device(algorithm_circuit(family, width, seed=1), get_device("fake_jakarta"))
    names = {inst.operation.name for inst in placed.circuit.data} - {"barrier"}
    assert names <= {"rz", "sx", "x", "cx"}
    assert placed.circuit.num_qubits <= 7


@pytest.mark.parametrize("device, gate", [("fake_brisbane", "ecr"), ("fake_fez", "cz"), ("fake_toronto", "cx")])
def test_wide_devices_place_a_few_qubits(device, gate):
    """27-, 127- and 156-qubit devices: an algorithm lands on a few of their qubits, in their basis, and encodes."""
    from workbench.quantum.circuits import transpile_to_device
    from workbench.quantum.quest.encoding import encode

    placed = transpile_to_device(algorithm_circuit("qft", 4, seed=1), get_device(device), seed=1)
    names = {inst.operation.name for inst in placed.circuit.data} - {"barrier"}
    assert names <= {"rz", "sx", "x", gate} and gate in names
    assert placed.circuit.num_qubits <= 6 and max(placed.physical) < load_calibration(device).num_qubits
    assert encode(placed.circuit, placed.calibration).x.shape[1] == 30


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_device_table_matches_the_snapshots():
    from workbench.quantum.quest.dataset import DEVICE_KINDS, DEVICES

    for name, (gate, qubits, _) in DEVICES.items():
        cal = load_calibration(name)
        assert (cal.two_qubit_gate, cal.num_qubits) == (gate, qubits), name
    for kind in DEVICE_KINDS:  # every kind has devices in training and devices kept out of it
        assert {u for g, _, u in DEVICES.values() if g == kind} == {False, True}


def test_connected_qubits_are_connected():
    cal = load_calibration("fake_guadalupe")
    rng = np.random.default_rng(0)
    for width in (1, 2, 5, 9):
        qubits = connected_qubits(cal, width, rng)
        assert len(set(qubits)) == width
        for q in qubits[1:]:
            earlier = set(qubits[: qubits.index(q)])
            assert any((q, p) in cal.coupling_map or (p, q) in cal.coupling_map for p in earlier)


def test_bad_specs():
    with pytest.raises(ValueError, match="random_samples=-1"):
        DatasetSpec(random_samples=-1)
    with pytest.raises(ValueError, match="at least one sample"):
        DatasetSpec(random_samples=0, algorithm_samples=0)
    with pytest.raises(ValueError, match="workers=0"):
        generate(DatasetSpec(random_samples=1, algorithm_samples=0), workers=0)
    with pytest.raises(ValueError, match="family='shor'"):
        algorithm_circuit("shor", 3, 0)
    assert math.isfinite(float(generate(DatasetSpec(random_samples=1, algorithm_samples=0)).pst[0]))
