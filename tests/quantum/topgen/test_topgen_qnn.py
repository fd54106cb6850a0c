"""The QNN, its placement on a device and the runner's bad input. References: qiskit ``Statevector``
expectation values per image (``topgen.reference.reference_logits``); the logical circuit's own logits for
the transpiled-and-routed one at noise scale 0 (checks the final-layout readout mapping); the direct
density-matrix evaluation (``workbench.quantum.probabilities``, the path before the variational Machine) for the
noisy logits; the CLI's exit code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.cli import main
from workbench.quantum.device import get_device
from workbench.quantum.topgen.baselines import SubConfig, hardware_efficient, subcircuit
from workbench.quantum.topgen.config import TopgenConfig
from workbench.quantum.topgen.device import noisy_logits, place_qnn
from workbench.quantum.topgen.digits import load_task
from workbench.quantum.topgen.qnn import LOGIT_SCALE, QNN, full_circuit, initial_weights
from workbench.quantum.topgen.reference import reference_logits
from workbench.quantum.topgen.study import generated


@pytest.fixture(scope="module")
def data():
    return load_task("digits-4", seed=0, max_train=24, max_test=5)


def _models():
    gen = generated(get_device("fake_jakarta"), 5, 3, 1, 2, 100, 75, 0)
    a, _ = subcircuit(5, SubConfig((5, 3), (2, 5)))
    return [("topgen", gen.ansatz, gen.tiling.region), ("hea", hardware_efficient(5, 2), None), ("quantumnas", a, None)]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_logits_equal_qiskit_statevector_expectations(index, data):
    name, ansatz, _ = _models()[index]
    w = initial_weights(ansatz, 3, scale=1.0)
    model = QNN(ansatz, w, 4)
    ours = model.logits(data.x_test).detach().numpy()
    ref = reference_logits(full_circuit(ansatz), data.x_test.numpy(), w.numpy(), 4, LOGIT_SCALE)
    np.testing.assert_allclose(ours, ref, atol=1e-10)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_transpiled_routed_circuit_at_zero_noise_gives_the_logical_logits(index, data):
    _, ansatz, layout = _models()[index]
    model = QNN(ansatz, initial_weights(ansatz, 1, scale=1.0), 4)
    ideal = model.logits(data.x_test).detach()
    placed = noisy_logits(model, data.x_test, get_device("fake_jakarta"), layout, scale=0.0)
    torch.testing.assert_close(placed, ideal, atol=1e-9, rtol=0)  # transpiler angles: float64 round-off
    noisy = noisy_logits(model, data.x_test, get_device("fake_jakarta"), layout)
    assert 0 < float((noisy - ideal).abs().max()) < LOGIT_SCALE


def _direct_noisy_logits(model, x, device, layout, scale=1.0):
    """The evaluation as it was before it ran through ``variational.Machine`` (kept here as the independent
    reference): the transpiled circuit on its active qubits, exact noisy probabilities from
    ``workbench.quantum.probabilities`` under the calibration subset, ``Z`` signs of the readout qubits."""
    from workbench.quantum import probabilities
    from workbench.quantum.calibration import calibration_subset, load_calibration
    from workbench.quantum.circuits import compact
    from workbench.quantum.noise import NoiseSpec
    from workbench.quantum.topgen.device import transpile_ansatz
    from workbench.quantum.topgen.qnn import assemble

    placed = transpile_ansatz(full_circuit(model.ansatz), get_device(device), layout, seed=0)
    small, physical = compact(placed.circuit)
    cal = calibration_subset(load_calibration(device), physical)
    probs = probabilities(small, assemble(small, x, model.weights), noise=NoiseSpec.device(cal, scale=scale))
    readout = [physical.index(placed.final[c]) for c in range(model.classes)]
    bits = np.arange(2**small.num_qubits)
    signs = np.stack([1.0 - 2.0 * ((bits >> q) & 1) for q in readout], axis=1)
    return LOGIT_SCALE * (probs.detach().numpy() @ signs)


@pytest.mark.parametrize(
    ("index", "device"),
    [(0, "fake_jakarta"), (1, "fake_jakarta"), (2, "fake_lima"), (1, "fake_sherbrooke"), (0, "fake_torino")],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_noisy_logits_through_the_machine_equal_the_direct_density_matrix(index, device, data):
    """cx (jakarta, lima), ecr (sherbrooke) and cz (torino) device bases."""
    _, ansatz, layout = _models()[index]
    if device != "fake_jakarta":  # TopGen's region was chosen on jakarta: elsewhere qiskit places it
        layout = None
    model = QNN(ansatz, initial_weights(ansatz, 2, scale=1.0), 4)
    ours = noisy_logits(model, data.x_test, get_device(device), layout).numpy()
    np.testing.assert_allclose(ours, _direct_noisy_logits(model, data.x_test, device, layout), atol=1e-9, rtol=0)


def test_the_device_evaluation_counts_one_machine_execution_per_image(data):
    _, ansatz, layout = _models()[0]
    model = QNN(ansatz, initial_weights(ansatz, 2, scale=1.0), 4)
    placed = place_qnn(model, get_device("fake_jakarta"), layout)
    assert placed.machine.shots is None and placed.machine.executions == 0
    logits = placed.logits(data.x_test)
    assert placed.machine.circuits == placed.machine.executions == len(data.x_test) == logits.shape[0]
    assert placed.machine.calls == 1


def test_gradients_flow_to_every_weight(data):
    _, ansatz, _ = _models()[0]
    w = initial_weights(ansatz, 0, scale=1.0).requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(QNN(ansatz, w, 4).logits(data.x_train[:8], w), data.y_train[:8])
    (g,) = torch.autograd.grad(loss, w)
    assert torch.isfinite(g).all() and (g != 0).sum() > 0.9 * g.numel()


def test_digits_split_is_disjoint_and_scaled():
    d = load_task("digits-2", seed=1)
    assert d.x_train.shape[1] == 16 and float(d.x_train.max()) <= np.pi + 1e-12 and float(d.x_train.min()) >= 0
    rows = {tuple(r) for r in d.x_train.numpy().round(12)}
    assert set(d.y_train.tolist()) == {0, 1} and len(d.x_test) > 0
    assert len(rows) > 0.9 * len(d.x_train)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"fragment_size": 8}, "fragment_size=8 is wider than device='fake_jakarta' (7 qubits)"),
        ({"device": "fake_lima", "qubits": 6}, "qubits=6 is wider than device='fake_lima'"),
        ({"qubits": 3}, "qubits=3 is out of range for the QNN task"),
        ({"circuit": "sim-4"}, "circuit='sim-4' is unknown"),
        ({"circuit": "OPENQASM 2.0; qreg q[2]; bogus q[0];"}, "valid OpenQASM"),
        ({"task": "digits-10"}, "task='digits-10' is not allowed"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(params, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        TopgenConfig.from_dict(params)


@pytest.mark.parametrize(
    "args",
    [
        ["topgen", "--fragment-size", "9"],
        ["expressibility", "--circuit", "sim-5"],
        ["expressibility", "--circuit", "OPENQASM 3.0; qubit q; garbage q;"],
    ],
)
def test_cli_exits_2_with_one_line(args, capsys):
    assert main(["run", *args, "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.strip().count("\n") == 0


def test_expressibility_alias_prints_the_two_keys(capsys):
    import json

    assert main(["run", "expressibility", "--circuit", "sim-1", "--qubits", "4", "--pairs", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert abs(out["meyer_wallach"]) < 1e-12 and 0 < out["expressibility_kl"] < 1


def test_qasm_wider_than_the_sampler_is_refused():
    wide = 'OPENQASM 2.0; include "qelib1.inc"; qreg q[13]; rx(0.1) q[0];'
    with pytest.raises(ValueError, match="circuit has 13 qubits: valid range is 1..12"):
        TopgenConfig.from_dict({"circuit": wide})


def test_chunked_fidelities_pair_each_chunks_halves():
    import math

    from workbench.quantum import statevector
    from workbench.quantum.topgen.expressibility import fidelities
    from workbench.quantum.topgen.templates import sim_circuit

    qc = sim_circuit(2, 3)
    parts = fidelities(qc, 10, torch.Generator().manual_seed(0), chunk=4)  # chunks of 4, 4, 2 pairs
    theta = torch.rand(20, qc.num_parameters, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    states = statevector(qc, theta * (2 * math.pi))
    pairs = [(0, 4), (1, 5), (2, 6), (3, 7), (8, 12), (9, 13), (10, 14), (11, 15), (16, 18), (17, 19)]
    expected = torch.stack([(states[a].conj() @ states[b]).abs() ** 2 for a, b in pairs])
    torch.testing.assert_close(parts, expected.real, atol=1e-12, rtol=0)
