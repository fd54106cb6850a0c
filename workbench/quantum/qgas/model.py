"""MODEL: the cost of a QGAS search carried to paper scale (more qubits, e.g. H2O), calibrated on this machine.

What is modelled (every number it prints is labelled MODEL):

- simulation: one energy+gradient evaluation of an ansatz with ``g`` gates on ``n`` qubits, batch ``R``
  restarts, costs ``t(n, g) = a + g * (b + c * R * 2**n) + d * R * 4**n`` seconds: a fixed overhead, a
  per-gate overhead (Python and torch dispatch), a per-amplitude term per gate, and the dense ``<psi|H|psi>``
  (QGAS keeps H dense: 2**n x 2**n). ``a, b, c, d`` are fitted (non-negative least squares) to timings of our
  simulator measured by :func:`calibrate` on hardware-efficient ansaetze of 4-10 qubits. Dense H needs
  ``16 * 4**n`` bytes: 4 GiB at 14 qubits (H2O in STO-3G with Jordan-Wigner), which is where this path ends
  (a Pauli-sum expectation would replace it: not calibrated here).
- training: a proposal costs ``evaluations * t(n, g)``; ``evaluations`` is taken from our searches (the
  median over proposals).
- prompts: tokens per prompt ~ characters / 4 (a common rule of thumb for English text and code with GPT
  tokenisers: an assumption, not measured with a tokeniser); the history table is capped at 12 rows, so
  prompts stop growing after a few iterations.

Not modelled: the language model's latency and price (the paper gives neither), noise, shots.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "Calibration",
    "calibrate",
    "evaluation_seconds",
    "search_seconds",
    "prompt_tokens",
    "dense_hamiltonian_bytes",
    "fit",
    "FORMULA",
]

FORMULA = (
    "t_eval(n, g) = a + g (b + c R 2^n) + d R 4^n;  t_search = iterations x evaluations x t_eval;  tokens = chars / 4"
)
CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class Calibration:
    """Fitted constants (seconds) and the points they were fitted to: ``points`` = ((n, g, R, seconds), ...)."""

    a: float
    b: float
    c: float
    d: float
    points: tuple[tuple[int, int, int, float], ...]


def evaluation_seconds(cal: Calibration, num_qubits: int, gates: int, restarts: int) -> float:
    """MODEL: seconds of one energy+gradient evaluation (see module docstring)."""
    return cal.a + gates * (cal.b + cal.c * restarts * 2.0**num_qubits) + cal.d * restarts * 4.0**num_qubits


def dense_hamiltonian_bytes(num_qubits: int) -> int:
    """Bytes of the dense complex128 Hamiltonian the training path holds."""
    return 16 * 4**num_qubits


def search_seconds(
    cal: Calibration, num_qubits: int, gates: int, restarts: int, evaluations: float, iterations: int
) -> float:
    """MODEL: seconds of simulation for a whole search (language-model time not included)."""
    return iterations * evaluations * evaluation_seconds(cal, num_qubits, gates, restarts)


def prompt_tokens(prompt_chars: float) -> float:
    """MODEL: tokens of a prompt of ``prompt_chars`` characters (chars / 4, an assumption)."""
    return prompt_chars / CHARS_PER_TOKEN


def calibrate(qubits=(4, 6, 8, 10, 12), reps: int = 2, restarts: int = 2, repeats: int = 7) -> Calibration:
    """Time our energy+gradient evaluation (the training inner loop) on ``n_local(ry, cx, linear, reps)``
    with a dense random Hermitian H at each width (the fastest of ``repeats`` runs after a warm-up: the
    least disturbed by other load), then :func:`fit` the constants."""
    from workbench.quantum.qgas.ansatze import hardware_efficient
    from workbench.quantum.qgas.vqe import energy_function, one_thread

    points = []
    rng = np.random.default_rng(0)
    for n in qubits:
        for r in (1, reps):
            circuit = hardware_efficient(n, reps=r)
            m = rng.normal(size=(2**n, 2**n))
            f = energy_function(circuit, (m + m.T) / 2)
            theta = torch.zeros(restarts, circuit.num_parameters, dtype=torch.float64, requires_grad=True)
            samples = []
            with one_thread():
                for _ in range(repeats + 1):
                    start = time.perf_counter()
                    f(theta).sum().backward()
                    samples.append(time.perf_counter() - start)
            points.append((n, len(circuit.data), restarts, float(np.min(samples[1:]))))  # min: least load noise
    return fit(points)


def fit(points) -> Calibration:
    """Fit ``a, b, c, d`` to ``points`` ((n, g, R, seconds), ...) by non-negative least squares on relative
    errors."""
    from scipy.optimize import nnls

    points = tuple(tuple(p) for p in points)
    A = np.array([[1.0, g, g * R * 2.0**n, R * 4.0**n] for n, g, R, _ in points])
    y = np.array([s for *_, s in points])
    (a, b, c, d), _ = nnls(A / y[:, None], np.ones_like(y))  # relative errors: small and large points alike
    return Calibration(float(a), float(b), float(c), float(d), tuple(points))
