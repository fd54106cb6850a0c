"""The devices technique's claim. It is not a paper technique (device noise snapshots and a torch density-matrix
simulator), so its one claim is the workbench's own: our simulator gives qiskit-aer's fidelities on the same
device-transpiled circuits under the same noise, to round-off (the agreement the tests ask for, 1e-8).
"""

from __future__ import annotations

import functools

from workbench.claims import Assumption, Baseline, Claim, Figure
from workbench.quantum.devices.experiment import fidelity_points

__all__ = ["CLAIMS", "AGREEMENT"]

#: the largest |ours - aer| over state and Hellinger fidelities the tests accept (round-off, not physics)
AGREEMENT = 1e-8
#: the setting: fake_lima (5 qubits), GHZ mirrors of widths 2..3 and depths 1..2, calibrated scale 1
SETTING = {"device": "fake_lima", "family": "ghz", "scale": 1.0, "widths": (2, 3), "depths": (1, 2)}


@functools.cache
def max_abs_diff(noise_model: str) -> float:
    """The largest |ours - aer| over both fidelities of every point of :data:`SETTING` under ``noise_model``."""
    s = SETTING
    common = (s["device"], s["family"], noise_model, s["scale"], s["widths"], s["depths"])
    ours = fidelity_points(*common, engine="ours")
    aer = fidelity_points(*common, engine="aer")
    return max(
        abs(getattr(a, k) - getattr(b, k)) for a, b in zip(ours, aer) for k in ("state_fidelity", "hellinger_fidelity")
    )


def _measure(*, noise_model: str) -> Figure:
    return Figure(max_abs_diff(noise_model), note=f"{noise_model} noise, {SETTING['device']} GHZ mirrors")


CLAIMS = (
    Claim(
        technique="devices",
        key="matches_aer",
        text="our torch density-matrix simulator gives qiskit-aer's state and Hellinger fidelities on "
        "device-transpiled GHZ mirrors under the same noise (largest difference)",
        kind="error",
        paper=AGREEMENT,
        paper_source="not a paper: the workbench's agreement target with qiskit-aer (round-off; the tests' 1e-8)",
        unit="fidelity",
        baseline=Baseline(
            name="qiskit-aer density-matrix simulation (NoiseSpec.to_aer())",
            why="the reference noisy simulator a practitioner runs; the same circuits and noise parameters",
        ),
        assumptions=(
            Assumption(
                name="noise_model",
                value="device",
                choices=("device", "depolarizing", "thermal", "coherent"),
                sourced=False,
                why="the calibrated device noise (readout included) and the uniform models sized from the "
                "device's medians; each is built for both simulators from one NoiseSpec",
            ),
        ),
        evidence=(
            "tests/quantum/devices/test_devices_study.py::test_aer_sweeps_agree_with_ours",
            "tests/quantum/devices/test_devices_runner.py::test_runner_list_schema_and_fidelity_vs_aer",
            "tests/quantum/devices/test_devices_claims.py",
        ),
        measure=_measure,
    ),
)
