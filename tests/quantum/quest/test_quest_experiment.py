"""The orchestration module's warnings for devices the data set leaves out: fake_kyoto (broken edges) and broken
gates on a placement are named; a data-set device with working gates gets none. Reference: the calibration's own
error-1 gates and the data set's device table."""

from __future__ import annotations

import pytest
from qiskit import QuantumCircuit

from workbench.quantum.calibration import calibration_subset
from workbench.quantum.circuits import DeviceCircuit
from workbench.quantum.device import get_device
from workbench.quantum.quest.dataset import DEVICES
from workbench.quantum.quest.experiment import device_warnings


def _placed(device: str, gate: str, physical: tuple[int, int]) -> DeviceCircuit:
    qc = QuantumCircuit(2)
    qc.x(0)
    qc.append(_gate(gate), [0, 1])
    return DeviceCircuit(qc, physical, calibration_subset(get_device(device).calibration, physical))


def _gate(name: str):
    from qiskit.circuit.library import CXGate, CZGate, ECRGate

    return {"cx": CXGate, "ecr": ECRGate, "cz": CZGate}[name]()


def _broken_pair(device: str) -> tuple[str, tuple[int, int]]:
    g = next(g for g in get_device(device).calibration.gates if len(g.qubits) == 2 and g.error >= 1.0)
    return g.name, g.qubits


def _working_pair(device: str) -> tuple[str, tuple[int, int]]:
    g = next(g for g in get_device(device).calibration.gates if len(g.qubits) == 2 and g.error < 0.5)
    return g.name, g.qubits


def test_kyoto_is_outside_the_data_set_and_its_broken_gate_is_named():
    assert "fake_kyoto" not in DEVICES
    name, pair = _broken_pair("fake_kyoto")
    warnings = device_warnings("fake_kyoto", _placed("fake_kyoto", name, pair))
    assert len(warnings) == 2
    assert "outside QuEst's data set" in warnings[0] and "fake_kyoto" in warnings[0]
    assert "broken" in warnings[1] and f"{name} {pair}" in warnings[1]


def test_broken_gate_on_a_training_device_is_named_and_working_gates_are_not():
    name, pair = _broken_pair("fake_brussels")  # a training device with some broken edges
    (warning,) = device_warnings("fake_brussels", _placed("fake_brussels", name, pair))
    assert f"{name} {pair}" in warning
    name, pair = _working_pair("fake_lima")
    assert device_warnings("fake_lima", _placed("fake_lima", name, pair)) == ()


def test_held_out_device_is_named():
    name, pair = _working_pair("fake_athens")
    (warning,) = device_warnings("fake_athens", _placed("fake_athens", name, pair))
    assert "held out" in warning


def test_runner_and_study_share_the_experiment_not_each_other():
    from pathlib import Path

    import workbench.quantum.quest as package

    root = Path(package.__file__).parent
    runner, study = (root / "runner.py").read_text(), (root / "study.py").read_text()
    assert "quest.experiment import" in runner and "quest.study" not in runner
    assert "quest.runner" not in study


@pytest.mark.slow  # aer on a few small circuits
def test_width_sweep_times_both_sides_and_refuses_widths_past_the_device():
    from workbench.quantum.quest.checkpoint import load_checkpoint
    from workbench.quantum.quest.speed import width_sweep

    (row,) = width_sweep(load_checkpoint(), (2,), count=2, gates=10, repeats=1, device=get_device("fake_guadalupe"))
    assert row["width"] == 2 and row["circuits"] == 2
    assert row["aer"] > 0 and row["predict"] > 0 and row["speedup"] == pytest.approx(row["aer"] / row["predict"])
    with pytest.raises(ValueError, match="widths=.*valid widths are 1..16"):
        width_sweep(load_checkpoint(), (17,), count=1, device=get_device("fake_guadalupe"))
