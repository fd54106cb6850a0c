"""The Device object: one per device whatever the spelling, lazily loaded parts equal to the by-name loaders,
pickled as its name; devices without Hamiltonian data are not offered to the pulse techniques."""

import pickle

import pytest

from workbench.quantum.calibration import calibration_subset, device_names, load_calibration
from workbench.quantum.device import Device, get_device, pulse_device_names
from workbench.quantum.noise import NoiseSpec


def test_one_device_per_name_and_pickled_as_its_name():
    dev = get_device("fake_jakarta")
    assert get_device("jakarta") is dev and get_device("FakeJakartaV2") is dev and get_device(dev) is dev
    assert dev == Device("fake_jakarta") and hash(dev) == hash(Device("fake_jakarta"))
    assert pickle.loads(pickle.dumps(dev)) is dev
    with pytest.raises(ValueError, match="device='fake_nowhere' is unknown: valid devices are"):
        get_device("fake_nowhere")


def test_parts_equal_the_snapshot():
    dev = get_device("fake_jakarta")
    cal = load_calibration("fake_jakarta")
    assert dev.calibration == cal and dev.num_qubits == 7 and dev.coupling_map == cal.coupling_map
    assert dev.backend.num_qubits == 7
    assert dev.subset((1, 3)) == calibration_subset(cal, (1, 3))
    assert dev.noise((1, 3), scale=2.0) == NoiseSpec.device(calibration_subset(cal, (1, 3)), scale=2.0)
    ham = dev.require_hamiltonian()
    assert ham.num_qubits == 7 and dev.coupled_qubits(1) == (0, 2, 3)
    pair = dev.transmons((0, 1), levels=2)
    assert pair.t1 == (cal.t1[0] * 1e9, cal.t1[1] * 1e9) and pair.dt == ham.dt and pair.coupling(0, 1) != 0


def test_devices_without_hamiltonian_are_not_offered_to_pulse_techniques():
    from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
    from workbench.quantum.napa.config import NapaConfig
    from workbench.quantum.pulse_sim.config import PulseSimConfig
    from workbench.quantum.pulse_zne.config import PulseZneConfig

    names = pulse_device_names()
    assert "fake_torino" in device_names() and "fake_torino" not in names and "fake_jakarta" in names
    assert get_device("fake_torino").hamiltonian is None
    with pytest.raises(ValueError, match="device='fake_torino' has no Hamiltonian data in conf_torino.json: "
                                         "devices with Hamiltonian data are fake_algiers"):  # fmt: skip
        get_device("fake_torino").transmons((0,))
    for cls in (HybridQaoaConfig, NapaConfig, PulseSimConfig, PulseZneConfig):
        (spec,) = [s for s in cls.specs() if s.name == "device"]
        assert spec.choices == names, cls.__name__
        with pytest.raises(ValueError, match="device='fake_torino' is not allowed: valid values are one of 'fake_"):
            cls(device="fake_torino")
