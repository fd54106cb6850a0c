"""QuEst's label, the probability of successful trial (PST), and the density-matrix fidelity it stands for.

PST of a circuit U: run ``U`` followed by its inverse (in the device basis, :func:`native_inverse`), measure
every qubit and take the probability of the all-zero outcome. The paper samples 1,024-2,048 shots; we take
aer's exact density-matrix probability (the infinite-shot limit), readout errors included. PST is an echo
return probability, not the fidelity of ``U``'s output: :func:`state_fidelity` gives that,
``<psi|rho|psi>`` with ``psi`` the ideal state and ``rho`` the noisy one, for the rank check.

Noise: one :class:`~workbench.quantum.noise.NoiseSpec` per calibration, handed to aer as its ``NoiseModel``
(thermal relaxation + depolarizing sized to each gate's error, readout errors), built with aer's own
constructors (``exact=False``: aer's usual mixture form; it differs from the exact channel by ~1e-8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.quantum.aer import aer_density_matrix, aer_probabilities, aer_statevector
from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.circuits import native_inverse
from workbench.quantum.noise import NoiseSpec

__all__ = ["echo_circuit", "noise_model", "pst", "state_fidelity", "effective_calibration"]


def effective_calibration(
    calibration: DeviceCalibration, rng: np.random.Generator, scale: float = 1.0, duration_log2_max: float = 0.0
) -> DeviceCalibration:
    """QuEst's noise draw: every T1, T2, gate and readout error x U(0.5, 1.5), then gate and readout errors
    (not T1/T2) x ``scale`` (the algorithm dataset's noise levels). With ``duration_log2_max`` > 0 (workbench
    extension), half of the draws also stretch every gate duration by ``2**U(0, duration_log2_max)``, so that
    training sees the slow two-qubit gates of some snapshots (fake_toronto's cx take 6.8-13.8 us, the training
    devices' at most 1 us); with 0 no extra number is drawn (the earlier datasets' draws)."""
    if not (scale >= 0 and math.isfinite(scale)):
        raise ValueError(f"scale={scale} is out of range: valid range is 0..inf (finite)")
    if not (0 <= duration_log2_max <= 8):
        raise ValueError(f"duration_log2_max={duration_log2_max} is out of range: valid range is 0..8")
    noisy = calibration.randomized(rng).scaled(scale, relaxation=False)
    if duration_log2_max > 0 and rng.random() < 0.5:
        noisy = noisy.durations_scaled(float(2.0 ** rng.uniform(0.0, duration_log2_max)))
    return noisy


def noise_model(calibration: DeviceCalibration) -> Any:
    """aer ``NoiseModel`` of ``calibration`` (qubit i of the calibration is circuit qubit i)."""
    return NoiseSpec.device(calibration).to_aer(exact=False)


def echo_circuit(circuit: Any) -> Any:
    """``circuit`` followed by its device-basis inverse (final measurements and barriers dropped)."""
    body = circuit.remove_final_measurements(inplace=False)
    return body.compose(native_inverse(body))


def pst(circuits: Sequence[Any], model: Any) -> np.ndarray:
    """PST ``[C]`` of each circuit under the aer noise ``model`` (one aer run for all of them)."""
    if not circuits:
        return np.zeros(0)
    probs = aer_probabilities([echo_circuit(c) for c in circuits], model)
    return np.asarray(probs[:, 0], dtype=np.float64)


def state_fidelity(circuit: Any, model: Any) -> float:
    """``<psi|rho|psi>``: ideal output state ``psi`` of ``circuit`` against its noisy density matrix under
    ``model`` (readout errors do not enter)."""
    body = circuit.remove_final_measurements(inplace=False)
    psi = aer_statevector(body)
    rho = aer_density_matrix(body, model)
    return float(np.real(np.conj(psi) @ rho @ psi))
