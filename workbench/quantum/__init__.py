"""The quantum core: a differentiable torch simulator (statevector and density matrix) with noise models,
real device calibrations and an equivalent qiskit-aer reference.

Public entry points (qiskit qubit order throughout: qubit q is bit q of a basis-state index)::

    statevector(circuit, params=None)                 -> [2**n] or [B, 2**n] (complex)
    density_matrix(circuit, params=None, noise=None)  -> [2**n, 2**n] or [B, 2**n, 2**n]
    probabilities(circuit, params=None, noise=None)   -> [2**n] or [B, 2**n] (real; readout errors included)
    expectation(circuit, observable, params=None, noise=None) -> [] or [B] (real)

``circuit`` is a qiskit ``QuantumCircuit`` or a list of them (same width; bound parameters, or a list of
per-circuit ``params``): a list gives ``[C, ...]`` results. ``params`` is ``[P]`` or ``[B, P]`` (torch tensor
or array, in ``circuit.parameters`` order) or a dict by parameter; gradients flow to it. ``noise`` is None, a
:class:`NoiseSpec`, a device name (``"fake_jakarta"``) or, for a list of circuits, a list of those.

Example::

    >>> from qiskit import QuantumCircuit
    >>> qc = QuantumCircuit(2); _ = qc.h(0); _ = qc.cx(0, 1)
    >>> probabilities(qc).tolist()
    [0.4999999999999999, 0.0, 0.0, 0.4999999999999999]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from workbench.quantum.calibration import DeviceCalibration, device_names, list_devices, load_calibration
from workbench.quantum.circuit import Program, Step, bind, from_qiskit, resolve_params
from workbench.quantum.density import apply_readout, diagonal, run_density, run_density_circuits
from workbench.quantum.device import get_device
from workbench.quantum.noise import IDEAL, NoiseSpec
from workbench.quantum.observables import expectation_from_density, expectation_from_state
from workbench.quantum.statevector import run_statevector, simulate_statevector

__all__ = [
    "statevector",
    "density_matrix",
    "probabilities",
    "expectation",
    "NoiseSpec",
    "IDEAL",
    "DeviceCalibration",
    "load_calibration",
    "list_devices",
    "device_names",
    "from_qiskit",
    "bind",
    "Program",
    "Step",
    "run_statevector",
    "run_density",
    "run_density_circuits",
    "apply_readout",
]

Noise = NoiseSpec | str | None


def _noise(noise: Noise) -> NoiseSpec | None:
    if noise is None:
        return None
    if isinstance(noise, str):  # the public entry's boundary: a user's device name, resolved once here
        return get_device(noise).noise()
    if not isinstance(noise, NoiseSpec):
        raise TypeError(f"noise must be a NoiseSpec, a device name or None, got {type(noise).__name__}")
    return None if noise.is_ideal else noise


def _is_list(circuit: Any) -> bool:
    return isinstance(circuit, (list, tuple))


def _per_circuit(value: Any, count: int, what: str) -> list:
    if _is_list(value):
        if len(value) != count:
            raise ValueError(
                f"{what} has {len(value)} entries for {count} circuits: give one per circuit or one for all"
            )
        return list(value)
    return [value] * count


def _check_width(circuit: Any, spec: NoiseSpec | None) -> None:
    cal = spec.calibration if spec is not None else None
    if cal is not None and circuit.num_qubits > cal.num_qubits:
        raise ValueError(
            f"circuit has {circuit.num_qubits} qubits but device {cal.name} has {cal.num_qubits}: "
            f"valid widths are 1..{cal.num_qubits}"
        )


def statevector(
    circuit: Any, params: Any = None, *, dtype: torch.dtype = torch.complex128, device: torch.device | str | None = None
) -> Tensor:
    """The state ``C|0...0>``, equal to ``qiskit.quantum_info.Statevector(circuit).data`` (global phase included).

    Returns ``[2**n]``, ``[B, 2**n]`` for batched params, ``[C, ...]`` for a list of circuits (same width).
    Raises ValueError for unsupported gates, non-unitary operations, too many qubits or bad params.
    """
    if _is_list(circuit):
        ps = _per_circuit(params, len(circuit), "params") if params is not None else [None] * len(circuit)
        return torch.stack([statevector(c, p, dtype=dtype, device=device) for c, p in zip(circuit, ps)])
    state, batched = simulate_statevector(from_qiskit(circuit), params, dtype=dtype, device=device)
    return state if batched else state[0]


def density_matrix(
    circuit: Any,
    params: Any = None,
    *,
    noise: Noise = None,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
) -> Tensor:
    """The (noisy) density matrix ``[2**n, 2**n]`` (``[B, ...]`` batched params, ``[C, ...]`` for a list).

    Readout errors do not enter the state (they act on measurement: see :func:`probabilities`).
    """
    if _is_list(circuit):
        return _density_list(circuit, params, noise, dtype, device)
    spec = _noise(noise)
    _check_width(circuit, spec)
    program = from_qiskit(circuit)
    theta, batched = resolve_params(program, params, dtype=dtype, device=device)
    batch = 1 if theta is None else theta.shape[0]
    steps, _ = bind(program, theta, dtype=dtype, device=device)
    rho = run_density(steps, program.num_qubits, batch=batch, noise=spec, dtype=dtype, device=device)
    return rho if batched else rho[0]


def _density_list(circuits: Sequence[Any], params: Any, noise: Any, dtype: torch.dtype, device: Any) -> Tensor:
    count = len(circuits)
    specs = [_noise(x) for x in _per_circuit(noise, count, "noise")]
    ps = _per_circuit(params, count, "params") if params is not None else [None] * count
    for c, s in zip(circuits, specs):
        _check_width(c, s)
    if any(p is not None for p in ps):
        return torch.stack(
            [density_matrix(c, p, noise=s, dtype=dtype, device=device) for c, p, s in zip(circuits, ps, specs)]
        )
    programs = [from_qiskit(c) for c in circuits]
    return run_density_circuits(programs, specs, dtype=dtype, device=device)


def probabilities(
    circuit: Any,
    params: Any = None,
    *,
    noise: Noise = None,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
) -> Tensor:
    """Probabilities of all ``2**n`` outcomes of measuring every qubit (index = sum of bit q * 2**q), under
    ``noise`` including its readout errors; real ``[2**n]`` (``[B, ...]`` batched params, ``[C, ...]`` list).

    Equals qiskit-aer's density-matrix result under ``noise.to_aer()`` (tests/quantum/test_quantum_noise_vs_aer.py).
    """
    if _is_list(circuit):
        count = len(circuit)
        specs = [_noise(x) for x in _per_circuit(noise, count, "noise")]
        if all(s is None for s in specs):
            return statevector(circuit, params, dtype=dtype, device=device).abs() ** 2
        probs = diagonal(_density_list(circuit, params, specs, dtype, device))
        n = circuit[0].num_qubits
        confusion = [s.readout_matrices(n) if s is not None else None for s in specs]
        if all(a is None for a in confusion):
            return probs
        eye = torch.eye(2, dtype=probs.dtype).expand(n, 2, 2)
        stacked = torch.stack([eye if a is None else torch.as_tensor(a).to(probs.dtype) for a in confusion])
        if probs.dim() == 3:  # [C, B, 2**n]: per-circuit params
            stacked = stacked[:, None]
        return apply_readout(probs, stacked.to(probs.device), n)
    spec = _noise(noise)
    if spec is None:
        state = statevector(circuit, params, dtype=dtype, device=device)
        return state.real**2 + state.imag**2
    probs = diagonal(density_matrix(circuit, params, noise=spec, dtype=dtype, device=device))
    return apply_readout(probs, spec.readout_matrices(circuit.num_qubits), circuit.num_qubits)


def expectation(
    circuit: Any,
    observable: Any,
    params: Any = None,
    *,
    noise: Noise = None,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
) -> Tensor:
    """``<O>`` for a qiskit ``SparsePauliOp`` (or Pauli label) ``observable``: exact, from the statevector (no
    noise) or the density matrix (noise; readout errors not included). Real ``[]`` or ``[B]``."""
    spec = _noise(noise)
    if spec is None:
        return expectation_from_state(statevector(circuit, params, dtype=dtype, device=device), observable)
    return expectation_from_density(density_matrix(circuit, params, noise=spec, dtype=dtype, device=device), observable)
