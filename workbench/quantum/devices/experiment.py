"""How fidelity falls with width, depth and noise on a real device snapshot: the computation the ``devices``
runner (fidelity mode) and the study's memoised sweeps (panel, notebook) both call.

A family circuit U (GHZ or QFT) is transpiled to the device and compacted (:func:`device_circuit`, cached),
then repeated as the mirror ``U (U^dag U)^(depth-1)`` whose ideal output is ``U|0>``. Two fidelities:

- state fidelity ``F = <psi|rho|psi>`` with ``psi`` the ideal state (readout errors not included);
- Hellinger fidelity ``(sum_x sqrt(p_x q_x))**2`` of the ideal and the noisy outcome distributions
  (readout errors included), as ``qiskit.quantum_info.hellinger_fidelity``.

Either engine computes them from its own density matrix: ``ours`` (torch, all depths of a width in one
batched call) or ``aer`` (qiskit-aer density-matrix method with ``NoiseSpec.to_aer()``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch

from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.circuits import DeviceCircuit, family_circuit, mirror, transpile_to_device
from workbench.quantum.device import Device, get_device
from workbench.quantum.devices.config import NOISE_MODELS
from workbench.quantum.noise import NoiseSpec

Engine = Literal["ours", "aer"]


#: coherent model: over-rotation fraction and ZZ angle (rad) per two-qubit gate at scale 1
COHERENT_OVER_ROTATION = 0.02


COHERENT_ZZ = 0.02


def noise_for(model: str, calibration: DeviceCalibration, scale: float) -> NoiseSpec:
    """The :class:`NoiseSpec` of ``model`` for ``calibration`` at ``scale``. Uniform models take the device's
    medians: depolarizing ``p = e d/(d-1)`` from the median gate error e (so its average infidelity is e),
    thermal the median T1, T2 and gate durations, coherent a fixed over-rotation and ZZ."""
    m = calibration.medians()
    if model == "device":
        return NoiseSpec.device(calibration, scale=scale)
    if model == "device-no-readout":
        return NoiseSpec.device(calibration, scale=scale, readout=False)
    if model == "depolarizing":
        return NoiseSpec(
            depolarizing=2 * (m["error_1q"] or 0.0), depolarizing_2q=4 / 3 * (m["error_2q"] or 0.0), scale=scale
        )
    if model == "thermal":
        t1 = (m["t1_us"] or math.inf) * 1e-6
        t2 = min((m["t2_us"] or math.inf) * 1e-6, 2 * t1)
        return NoiseSpec(
            t1=t1,
            t2=t2,
            time_1q=(m["duration_1q_ns"] or 0.0) * 1e-9,
            time_2q=(m["duration_2q_ns"] or 0.0) * 1e-9,
            scale=scale,
        )
    if model == "coherent":
        return NoiseSpec(over_rotation=COHERENT_OVER_ROTATION, zz=COHERENT_ZZ, scale=scale)
    raise ValueError(f"noise_model={model!r} is unknown: valid values are {', '.join(NOISE_MODELS)}")


@functools.lru_cache(maxsize=256)
def device_circuit(device: Device, family: str, width: int, seed: int = 0) -> DeviceCircuit:
    """``family`` on ``width`` qubits transpiled to ``device`` (optimisation level 1, ``seed``), compacted."""
    return transpile_to_device(family_circuit(family, width), device, seed=seed)


@dataclass(frozen=True)
class FidelityPoint:
    """One circuit's result: its width, depth, gate counts after transpilation, both fidelities, the engine."""

    width: int
    depth: int
    num_gates: int
    two_qubit_gates: int
    state_fidelity: float
    hellinger_fidelity: float
    engine: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _hellinger(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.sum(np.sqrt(np.clip(p, 0, None) * np.clip(q, 0, None))) ** 2)


def _gates(circuit: Any) -> tuple[int, int]:
    counts = [inst for inst in circuit.data if inst.name not in ("barrier", "measure")]
    return len(counts), sum(1 for inst in counts if len(inst.qubits) == 2)


def fidelity_points(
    device: str | Device,
    family: str,
    noise_model: str,
    scale: float,
    widths: Sequence[int],
    depths: Sequence[int],
    *,
    engine: Engine = "ours",
    seed: int = 0,
) -> list[FidelityPoint]:
    """Fidelities of every (width, depth) pair (see the module docstring), widths outer, depths inner. A notebook's
    entry: a device name is resolved here, once."""
    from workbench.quantum import density_matrix, statevector
    from workbench.quantum.aer import aer_density_matrix, aer_noise_model, readout_from_model
    from workbench.quantum.density import apply_readout

    device = get_device(device)  # the notebook's boundary (a Device passes through)
    out = []
    for width in widths:
        dc = device_circuit(device, family, int(width), seed)
        spec = noise_for(noise_model, dc.calibration, scale)
        psi = statevector(dc.circuit).numpy()
        ideal = np.abs(psi) ** 2
        circuits = [mirror(dc.circuit, int(d)) for d in depths]
        n = dc.circuit.num_qubits
        if engine == "ours":
            rhos = density_matrix(circuits, noise=spec).numpy()
            confusion = spec.readout_matrices(n)
        elif engine == "aer":
            rhos = np.stack([aer_density_matrix(c, spec) for c in circuits])
            confusion = readout_from_model(aer_noise_model(spec, circuits), n)
        else:
            raise ValueError(f"engine={engine!r} is unknown: valid values are 'ours', 'aer'")
        for d, circuit, rho in zip(depths, circuits, rhos):
            probs = np.real(np.diagonal(rho)).copy()
            if confusion is not None:
                probs = apply_readout(torch.as_tensor(probs)[None], confusion, n)[0].numpy()
            total, two = _gates(circuit)
            out.append(
                FidelityPoint(
                    int(width),
                    int(d),
                    total,
                    two,
                    float(np.real(psi.conj() @ rho @ psi)),
                    _hellinger(ideal, probs),
                    engine,
                )
            )
    return out


def fidelity_vs_scale(
    device: str | Device,
    family: str,
    noise_model: str,
    scales: Sequence[float],
    width: int,
    depth: int,
    *,
    engine: Engine = "ours",
    seed: int = 0,
) -> list[FidelityPoint]:
    """Fidelity of one circuit (``width``, ``depth``) at each noise scale; ours runs all scales in one batch
    (same circuit, a different noise per row). A notebook's entry: a device name is resolved here, once."""
    device = get_device(device)  # the notebook's boundary (a Device passes through)
    if engine == "aer":
        return [
            fidelity_points(device, family, noise_model, s, [width], [depth], engine="aer", seed=seed)[0]
            for s in scales
        ]
    from workbench.quantum import density_matrix, statevector
    from workbench.quantum.density import apply_readout

    dc = device_circuit(device, family, int(width), seed)
    psi = statevector(dc.circuit).numpy()
    ideal = np.abs(psi) ** 2
    circuit = mirror(dc.circuit, int(depth))
    specs = [noise_for(noise_model, dc.calibration, float(s)) for s in scales]
    rhos = density_matrix([circuit] * len(specs), noise=specs).numpy()
    n = dc.circuit.num_qubits
    total, two = _gates(circuit)
    out = []
    for spec, rho in zip(specs, rhos):
        probs = np.real(np.diagonal(rho)).copy()
        confusion = spec.readout_matrices(n)
        if confusion is not None:
            probs = apply_readout(torch.as_tensor(probs)[None], confusion, n)[0].numpy()
        out.append(
            FidelityPoint(
                int(width),
                int(depth),
                total,
                two,
                float(np.real(psi.conj() @ rho @ psi)),
                _hellinger(ideal, probs),
                engine,
            )
        )
    return out
