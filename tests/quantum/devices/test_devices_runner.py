"""Device snapshots, the ``devices`` runner and CLI, circuits and observables. References: the fake
backends' ``Target`` and ``props_*.json`` (values quoted in ../shared/papers/quest.md for FakeJakartaV2),
qiskit's ``Statevector``/``DensityMatrix.expectation_value``, and the JSON schema of the issue."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from qiskit.quantum_info import DensityMatrix, SparsePauliOp, Statevector
from quantum_cases import random_circuit

from workbench.quantum import NoiseSpec, density_matrix, expectation, statevector
from workbench.quantum.calibration import calibration_subset, device_names, list_devices, load_calibration
from workbench.quantum.circuits import family_circuit, mirror, native_inverse, transpile_to_device
from workbench.quantum.device import get_device
from workbench.registry import get_technique

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def test_jakarta_snapshot_values():
    cal = load_calibration("FakeJakartaV2")
    assert cal.name == "fake_jakarta" and cal.num_qubits == 7 and cal.two_qubit_gate == "cx"
    assert cal.t1[0] == pytest.approx(81.8e-6, rel=1e-3) and cal.t2[0] == pytest.approx(41.5e-6, rel=1e-3)
    assert cal.gate("sx", (0,)).error == pytest.approx(4.9e-4, rel=1e-2)
    assert cal.gate("cx", (0, 1)).error == pytest.approx(8.9e-3, rel=1e-2)
    assert (cal.readout_p01[0] + cal.readout_p10[0]) / 2 == pytest.approx(2.1e-2, rel=1e-2)
    assert (0, 1) in cal.coupling_map and cal.gate("cx", (0, 2)) is None


def test_every_snapshot_lists_with_medians():
    names = device_names()
    assert len(names) >= 60 and "fake_sherbrooke" in names
    devices = list_devices(max_qubits=7)
    assert devices and all(d["num_qubits"] <= 7 for d in devices)
    for d in devices:
        assert {"name", "num_qubits", "coupling_map", "median_t1_us", "median_error_2q", "median_readout_error"} <= set(
            d
        )


def test_scaled_randomized_and_subset_calibrations():
    cal = load_calibration("fake_lima")
    twice = cal.scaled(2.0)
    assert twice.t1[1] == pytest.approx(cal.t1[1] / 2) and twice.gates[5].error == pytest.approx(2 * cal.gates[5].error)
    assert cal.scaled(2.0, relaxation=False).t1 == cal.t1
    a, b = cal.randomized(7), cal.randomized(7)
    assert a == b and a != cal.randomized(8)  # reproducible from the seed
    ratio = np.array(a.t1) / np.array(cal.t1)
    assert np.all((ratio >= 0.5) & (ratio <= 1.5))
    sub = calibration_subset(cal, (3, 1))
    assert sub.num_qubits == 2 and sub.t1 == (cal.t1[3], cal.t1[1])
    assert sub.gate("cx", (0, 1)).error == cal.gate("cx", (3, 1)).error
    with pytest.raises(ValueError, match=r"qubits=\[1, 1\] must be distinct qubits of fake_lima"):
        calibration_subset(cal, (1, 1))


def test_transpiled_family_and_mirror_keep_the_ideal_state():
    dc = transpile_to_device(family_circuit("qft", 4), get_device("fake_sherbrooke"), seed=3)
    assert dc.circuit.num_qubits == 4 and len(dc.physical) == 4
    assert set(dc.circuit.count_ops()) <= {"rz", "sx", "x", "ecr", "barrier"}
    psi = statevector(dc.circuit)
    for depth in (1, 2, 3):
        assert abs(torch.vdot(psi, statevector(mirror(dc.circuit, depth))).abs().item() - 1) < 1e-10
    qc = random_circuit(3, 30, 1, names=("rz", "sx", "x", "cx"))
    both = qc.compose(native_inverse(qc))
    assert abs(statevector(both)[0].abs().item() - 1) < 1e-10
    ghz = statevector(family_circuit("ghz", 3))
    assert torch.allclose(ghz.abs() ** 2, torch.tensor([0.5, 0, 0, 0, 0, 0, 0, 0.5], dtype=torch.float64), atol=1e-12)


def test_expectation_values_match_qiskit():
    qc = random_circuit(3, 25, 6)
    observable = SparsePauliOp(["XYZ", "IIZ", "YYI", "ZXX"], coeffs=[0.5, -1.2, 0.3, 0.8])
    ours = expectation(qc, observable).item()
    assert ours == pytest.approx(Statevector(qc).expectation_value(observable).real, abs=1e-12)
    spec = NoiseSpec(depolarizing=0.05, t1=20e-6, t2=20e-6)
    rho = density_matrix(qc, noise=spec).numpy()
    noisy = expectation(qc, observable, noise=spec).item()
    assert noisy == pytest.approx(DensityMatrix(rho).expectation_value(observable).real, abs=1e-12)


def test_runner_list_schema_and_fidelity_vs_aer():
    technique = get_technique("devices")
    listed = technique.run_dict({"max_qubits": "5", "coupling": "false"})
    assert listed["devices"] and all(d["num_qubits"] <= 5 and "coupling_map" not in d for d in listed["devices"])
    result = technique.run_dict({"mode": "fidelity", "device": "fake_lima", "width": 3, "depth": 2, "engine": "both"})
    f = result["fidelity"]
    assert [p["width"] for p in f["by_width"]] == [2, 3] and [p["depth"] for p in f["by_depth"]] == [1, 2]
    assert f["max_abs_diff_vs_aer"] <= 1e-8
    assert all(0 < p["state_fidelity"] <= 1 + 1e-12 for p in f["by_width"] + f["by_depth"])
    assert "Hellinger F" in technique.format_table(result)
    one = technique.run_dict({"device": "fake_jakarta"})
    assert [d["name"] for d in one["devices"]] == ["fake_jakarta"]
    with pytest.raises(ValueError, match=r"width=6 is out of range for device='fake_lima': valid range is 2..5"):
        technique.run_dict({"mode": "fidelity", "device": "fake_lima", "width": 6})
    with pytest.raises(ValueError, match="device='all' is only for mode='list'"):
        technique.run_dict({"mode": "fidelity", "device": "all"})


def test_cli_devices_json():
    out = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "devices", "--json"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["devices"]) == len(device_names())
    first = data["devices"][0]
    assert isinstance(first["name"], str) and isinstance(first["num_qubits"], int) and "coupling_map" in first
    bad = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "devices", "--device", "fake_nowhere"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "device='fake_nowhere' is not allowed" in bad.stderr


# the JSON schema of ``workbench run devices`` as it was before the typed results (captured with --json)
DEVICE = [
    "name",
    "num_qubits",
    "two_qubit_gate",
    "basis_gates",
    "median_t1_us",
    "median_t2_us",
    "median_error_1q",
    "median_error_2q",
    "median_readout_error",
    "median_duration_1q_ns",
    "median_duration_2q_ns",
    "num_edges",
    "calibration_date",
]
POINT = {
    "width": "int",
    "depth": "int",
    "num_gates": "int",
    "two_qubit_gates": "int",
    "state_fidelity": "float",
    "hellinger_fidelity": "float",
    "engine": "str",
}
SWEEPS = {"by_width": [POINT], "by_depth": [POINT]}


@pytest.mark.parametrize(
    "params, top, fidelity",
    [
        ({"max_qubits": 5}, ["technique", "mode", "count", "devices"], None),
        ({"device": "fake_jakarta", "coupling": False}, ["technique", "mode", "count", "devices"], None),
        (
            {"mode": "fidelity", "device": "fake_lima", "width": 2, "depth": 2, "engine": "aer"},
            ["technique", "mode", "engine", "devices", "fidelity"],
            {"family": "str", "noise_model": "str", "noise_scale": "float", "width": "int", "depth": "int", **SWEEPS},
        ),
        (
            {"mode": "fidelity", "device": "fake_lima", "width": 2, "depth": 1, "engine": "both"},
            ["technique", "mode", "engine", "devices", "fidelity"],
            {
                "family": "str",
                "noise_model": "str",
                "noise_scale": "float",
                "width": "int",
                "depth": "int",
                **SWEEPS,
                "aer": SWEEPS,
                "max_abs_diff_vs_aer": "float",
            },
        ),
    ],
)
def test_json_keys_are_unchanged(params, top, fidelity):
    from quantum_cases import key_tree

    from workbench.quantum.devices.runner import DevicesResult

    technique = get_technique("devices")
    result = technique.run(technique.config.from_dict(params))
    assert isinstance(result, DevicesResult)
    data = result.to_json()
    assert list(data) == top and data["technique"] == "devices" and data["mode"] == params.get("mode", "list")
    devices = key_tree(data)["devices"][0]
    coupling = params.get("coupling", True)
    assert list(devices) == DEVICE + (["coupling_map"] if coupling else [])
    if fidelity is None:
        assert data["count"] == len(data["devices"])
    else:
        assert key_tree(data["fidelity"]) == fidelity and data["engine"] == params["engine"]
        assert json.loads(json.dumps(data)) == data


def test_smoke_runs_in_seconds_and_matches_the_study():
    from workbench.quantum.devices.study import fidelity_points

    technique = get_technique("devices")
    data = technique.run_dict(technique.smoke)
    expected = fidelity_points("fake_lima", "ghz", "device", 1.0, [2], [1])[0]
    assert data["fidelity"]["by_depth"] == [expected.as_dict()]
    assert "Hellinger F" in technique.format_table(data)
