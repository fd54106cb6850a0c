"""The native-pulse ansatz on two transmons, as NAPA/PAN's code parameterises it.

One layer (the code's hardware-efficient design space, ``5n - 3`` = 7 parameters for n = 2, plus a detuning per
single-qubit pulse when the frequency is trainable):

- **SNP** on each qubit: the device's calibrated X pulse shape (DRAG, 160 dt, sigma 40 dt, its beta) with
  trainable amplitude ``|amp| = 0.9 x`` and phase ``2 pi x``; with ``trainable_frequency`` a detuning
  ``(x - 0.5) * 2 * MAX_DETUNING_MHZ``;
- **TNP**: the echoed cross-resonance of the calibrated ECR (``CR(+) X_control CR(-)``, GaussianSquare, sigma 64 dt)
  with trainable CR amplitude ``x``, phase ``2 pi x`` and duration per half ``256 + 16 round(48 x)`` samples (the
  code's grid 256..1024), flat width = duration - 4 sigma.

Every parameter lives in [0, 1] (COBYLA's box, ``rhobeg`` 0.1, as the code). A play whose amplitude is at most
0.001 is dropped (the code's rule), and a TNP whose CR is dropped loses its echo too, so a layer of zero
amplitudes is the identity with zero duration: the progressive growth starts new layers there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from workbench.quantum.common.pulse.natives import CR_SIGMA, X_DURATION, X_SIGMA, NativeGates
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag, gaussian_square

__all__ = ["PulseAnsatz", "MAX_SNP_AMP", "MAX_DETUNING_MHZ", "DROP_AMP", "cr_duration", "STARTS"]

#: initial parameters: the code's small random amplitudes, or a Hartree-Fock-aware start (:meth:`PulseAnsatz.start`)
STARTS = ("hartree-fock", "random")

MAX_SNP_AMP = 0.9  # the code's bound on |amp|
MAX_DETUNING_MHZ = 20.0  # ours: the code's frequency tuning is commented out
DROP_AMP = 1e-3  # plays at or below this amplitude are dropped (the code's rule)
TWO_PI_MHZ = 2 * math.pi * 1e-3  # rad/ns per MHz


def _value(v) -> float:
    return float(v.detach()) if isinstance(v, torch.Tensor) else float(v)


def cr_duration(x: float) -> int:
    """CR duration per half (samples) for normalised ``x``: 256..1024 in steps of 16."""
    return 256 + 16 * int(round(48 * min(max(float(x), 0.0), 1.0)))


@dataclass(frozen=True)
class PulseAnsatz:
    """``layers`` NAPA layers on the calibrated pair ``natives`` (local qubits 0 = control, 1 = target).

    A layer's parameters: ``[amp_0, phase_0, amp_1, phase_1, cr_amp, cr_phase, cr_duration]`` and, with a
    trainable frequency, ``[detuning_0, detuning_1]``, all normalised to [0, 1]."""

    natives: NativeGates
    layers: int
    trainable_frequency: bool = False

    @property
    def per_layer(self) -> int:
        return 9 if self.trainable_frequency else 7

    @property
    def num_params(self) -> int:
        return self.layers * self.per_layer

    def split(self, x: np.ndarray | torch.Tensor, layer: int):
        k = self.per_layer
        return x[layer * k : (layer + 1) * k]

    def schedule(self, x: np.ndarray | torch.Tensor) -> Schedule:
        """The pulse schedule of parameters ``x`` (``num_params`` values in [0, 1]; torch keeps gradients)."""
        if len(x) != self.num_params:
            raise ValueError(f"x has {len(x)} values: this ansatz takes {self.num_params}")
        plays: list[Play] = []
        t = 0
        for layer in range(self.layers):
            p = self.split(x, layer)
            snp_end = t
            for q in (0, 1):
                amp, phase = MAX_SNP_AMP * p[2 * q], 2 * math.pi * p[2 * q + 1]
                det = (p[7 + q] - 0.5) * 2 * MAX_DETUNING_MHZ * TWO_PI_MHZ if self.trainable_frequency else 0.0
                if _value(amp) > DROP_AMP:
                    beta = self.natives.x[q].beta
                    plays.append(Play(f"d{q}", drag(X_DURATION, amp, X_SIGMA, beta, phase), t, det))
                    snp_end = t + X_DURATION
            t = snp_end
            cr_amp, cr_phase, d = p[4], 2 * math.pi * p[5], cr_duration(_value(p[6]))
            if _value(cr_amp) > DROP_AMP:
                width = d - 4 * CR_SIGMA
                plays.append(Play("u0-1", gaussian_square(d, cr_amp, CR_SIGMA, width, cr_phase), t))
                plays.append(self.natives.x[0].play(t + d))
                plays.append(
                    Play("u0-1", gaussian_square(d, cr_amp, CR_SIGMA, width, cr_phase + math.pi), t + d + X_DURATION)
                )
                t += 2 * d + X_DURATION
        return Schedule.of(plays, max(t, 1))

    def duration_ns(self, x: np.ndarray) -> float:
        """The schedule's duration (ns) at parameters ``x``."""
        return self.schedule(x).duration * self.natives.device.dt

    def identity_layer(self) -> np.ndarray:
        """One layer's parameters that play nothing (every amplitude 0, detunings 0): the identity, 0 ns."""
        x = np.zeros(self.per_layer)
        if self.trainable_frequency:
            x[7:9] = 0.5
        return x

    def hartree_fock(self, hf_bits: int, seed: int = 0) -> np.ndarray:
        """A start near the Hartree-Fock determinant ``hf_bits`` (bit q = qubit q occupied): layer 1's single-qubit
        pulses are the calibrated X (pi) pulses where a bit is set, plus an amplitude uniform in [0, 0.05) and a
        random phase; every CR starts at the shortest duration (256 samples per half) with an amplitude uniform in
        [0.3, 0.9) (strong enough to entangle: jakarta's calibrated ECR is 0.37 at 560 samples); later layers'
        single-qubit amplitudes uniform in [0, 0.1). Random parts from ``seed``."""
        rng = np.random.default_rng(seed)
        x = self.initial(seed)
        for layer in range(self.layers):
            base = layer * self.per_layer
            x[base + 4], x[base + 6] = rng.uniform(0.3, 0.9), 0.0
        for q in (0, 1):
            pi = self.natives.x[q].amp / MAX_SNP_AMP if (hf_bits >> q) & 1 else 0.0
            x[2 * q] = min(pi + rng.uniform(0, 0.05), 1.0)
        return x

    def start(self, kind: str, seed: int, hf_bits: int) -> np.ndarray:
        """Initial parameters of ``kind`` (one of :data:`STARTS`) from ``seed``."""
        if kind not in STARTS:
            raise ValueError(f"start={kind!r} is unknown: valid starts are {', '.join(STARTS)}")
        return self.hartree_fock(hf_bits, seed) if kind == "hartree-fock" else self.initial(seed)

    def initial(self, seed: int = 0, scale: float = 0.1) -> np.ndarray:
        """Small random amplitudes near the identity (phases and durations uniform), from ``seed``."""
        rng = np.random.default_rng(seed)
        x = rng.uniform(0, 1, self.num_params)
        for layer in range(self.layers):
            base = layer * self.per_layer
            for i in (0, 2, 4):
                x[base + i] = rng.uniform(0, scale)
            if self.trainable_frequency:
                x[base + 7 : base + 9] = 0.5
        return x
