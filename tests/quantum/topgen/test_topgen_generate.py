"""Topology fragments, generated sub-circuits, stitching and growth. References: brute-force enumeration of
vertex subsets (itertools + BFS), qiskit's transpiler (no SWAP added on the device; CNOT count equal to the
closed-form model), qiskit ``Statevector`` and ``Operator`` (our simulator's states; the growth block is the
identity at zero angles)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from workbench.quantum import statevector
from workbench.quantum.calibration import load_calibration
from workbench.quantum.device import get_device
from workbench.quantum.topgen import model as cx_model
from workbench.quantum.topgen.device import counts
from workbench.quantum.topgen.generate import generate, growth_block
from workbench.quantum.topgen.topology import choose_region, connected_subsets, is_connected, tile, undirected_edges


def _edges(device):
    return undirected_edges(load_calibration(device).coupling_map)


@pytest.mark.parametrize("device", ["fake_jakarta", "fake_manila", "fake_toronto"])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_connected_subsets_equal_brute_force(device, size):
    edges = _edges(device)
    nodes = sorted({v for e in edges for v in e})
    brute = [s for s in itertools.combinations(nodes, size) if is_connected(s, edges)]
    assert connected_subsets(edges, size) == brute


@pytest.mark.parametrize(
    ("device", "qubits"), [("fake_jakarta", 7), ("fake_jakarta", 5), ("fake_lima", 5), ("fake_toronto", 11)]
)
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_tiling_covers_the_region_once_with_connected_fragments(device, qubits, size):
    edges = _edges(device)
    region = choose_region(edges, qubits, load_calibration(device).num_qubits)
    assert is_connected(region, edges)
    t = tile(edges, region, size)
    flat = [v for f in t.fragments for v in f]
    assert sorted(flat) == sorted(region) and len(flat) == len(set(flat))
    assert all(len(f) <= size and is_connected(f, edges) for f in t.fragments)
    inside = {e for e in edges if e[0] in region and e[1] in region}
    assert set(t.stitches) | {e for inner in t.inner for e in inner} == inside


def test_region_wider_than_the_device_is_refused():
    with pytest.raises(ValueError, match="qubits=9 is out of range for a device of 7 qubits"):
        choose_region(_edges("fake_jakarta"), 9, 7)


@pytest.mark.parametrize(
    ("device", "qubits", "size", "blocks"),
    [
        ("fake_jakarta", 7, 3, 2),
        ("fake_jakarta", 5, 2, 1),
        ("fake_lima", 5, 4, 2),
        ("fake_manila", 5, 3, 1),
        ("fake_toronto", 9, 3, 1),
    ],
)
def test_generated_ansatz_uses_only_coupling_edges_and_transpiles_without_swaps(device, qubits, size, blocks):
    edges = _edges(device)
    region = choose_region(edges, qubits, load_calibration(device).num_qubits)
    gen = generate(edges, region, fragment_size=size, blocks=blocks, candidates=3, pairs=100, seed=1)
    a = gen.ansatz
    for g in a.gates:
        if len(g.qubits) == 2:
            p, q = (region[i] for i in g.qubits)
            assert (min(p, q), max(p, q)) in edges
    grown = a.then(*growth_block(gen.tiling))
    for ansatz, extra in ((a, 0), (grown, 1)):
        placed = counts(ansatz, get_device(device), region)
        assert placed.swaps == 0
        inner = sum(len(e) for e in gen.tiling.inner) + len(gen.tiling.stitches)
        model = cx_model.topgen_cx([s.template for s in gen.chosen], len(gen.tiling.stitches), blocks, extra, inner)
        assert placed.cx_count == ansatz.cx_count() == model  # counted == MODEL


def test_growth_block_is_the_identity_at_zero_angles():
    from qiskit.quantum_info import Operator

    edges = _edges("fake_jakarta")
    t = tile(edges, tuple(range(7)), 3)
    gates, count = growth_block(t)
    from workbench.quantum.common.variational import GateAnsatz

    block = GateAnsatz(7, (), 0).then(gates, count)
    op = Operator(block.circuit().assign_parameters([0.0] * count))
    assert op.equiv(Operator(np.eye(2**7)))


@pytest.mark.parametrize("qubits", [4, 5, 7])
def test_our_states_of_a_generated_ansatz_equal_qiskit(qubits):
    from qiskit.quantum_info import Statevector

    edges = _edges("fake_jakarta")
    region = choose_region(edges, qubits, 7)
    qc = generate(edges, region, fragment_size=3, candidates=2, pairs=100).ansatz.circuit()
    theta = torch.rand(3, qc.num_parameters, dtype=torch.float64, generator=torch.Generator().manual_seed(qubits)) * 6.3
    ours = statevector(qc, theta).numpy()
    for row, th in zip(ours, theta.numpy()):
        np.testing.assert_allclose(row, Statevector(qc.assign_parameters(list(th))).data, atol=1e-12)


@pytest.mark.parametrize("edges", [0, 1, 2])
def test_template_space_equals_enumerated_distinct_templates(edges):
    import numpy as np

    from workbench.quantum.topgen.generate import candidate_templates

    local = [(0, 1), (1, 2)][:edges]
    found = candidate_templates(edges + 1, local, 10_000, np.random.default_rng(0))
    assert len(found) == cx_model.template_space(edges)  # random draws reach every template of the grammar


def test_supercircuit_space_counts_its_configs():
    import itertools

    q, blocks = 3, 2
    per_block = list(itertools.product(range(1, q + 1), range(0, q + 1)))
    brute = sum(len(per_block) ** b for b in range(1, blocks + 1))
    assert cx_model.supercircuit_space(q, blocks) == brute
