"""MODEL: the cost of a QGAS search carried to paper scale (more qubits, e.g. H2O), calibrated on this machine.

What is modelled (every number it prints is labelled MODEL):

- simulation: one energy+gradient evaluation of an ansatz with ``g`` gates on ``n`` qubits, batch ``R``
  restarts, costs ``t(n, g) = a + g * (b + c * R * 2**n) + d * R * 4**n`` seconds: a fixed overhead, a
  per-gate overhead (Python and torch dispatch), a per-amplitude term per gate, and the dense ``<psi|H|psi>``
  (QGAS keeps H dense: 2**n x 2**n). ``a, b, c, d`` are fitted (non-negative least squares) to timings of our
  simulator measured by :func:`calibrate` on hardware-efficient ansaetze of 4-10 qubits (beyond: extrapolated). Dense H needs
  ``16 * 4**n`` bytes: 4 GiB at 14 qubits (H2O in STO-3G with Jordan-Wigner), which is where this path ends
  (a Pauli-sum expectation would replace it: not calibrated here).
- a proposal: ``evaluations * (t(n, g) + o)``: ``evaluations`` (energy+gradient calls of L-BFGS) is taken from
  our searches (the median over proposals); ``o`` is what each evaluation costs besides the simulation (the
  optimiser's line search and bookkeeping, the forward-only passes, QASM parsing spread over the evaluations),
  measured by :func:`calibrate` as (time of parse + train of a 4-qubit ansatz - evaluations x t) / evaluations.
- prompts: tokens per prompt ~ characters / 4 (a common rule of thumb for English text and code with GPT
  tokenisers: an assumption, not measured with a tokeniser); the history table is capped at 12 rows, so
  prompts stop growing after a few iterations.

Not modelled: the language model's latency and price (the paper gives neither), noise, shots.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "Calibration",
    "calibrate",
    "evaluation_seconds",
    "search_seconds",
    "proposal_seconds",
    "prompt_tokens",
    "dense_hamiltonian_bytes",
    "fit",
    "FORMULA",
]

FORMULA = (
    "t_eval(n, g) = a + g (b + c R 2^n) + d R 4^n;  t_proposal = evaluations x (t_eval + o);  "
    "t_search = iterations x t_proposal;  tokens = chars / 4"
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
    o: float = 0.0  # seconds per evaluation besides the simulation (optimiser, parsing spread over evaluations)


def evaluation_seconds(cal: Calibration, num_qubits: int, gates: int, restarts: int) -> float:
    """MODEL: seconds of one energy+gradient evaluation (see module docstring)."""
    return cal.a + gates * (cal.b + cal.c * restarts * 2.0**num_qubits) + cal.d * restarts * 4.0**num_qubits


def dense_hamiltonian_bytes(num_qubits: int) -> int:
    """Bytes of the dense complex128 Hamiltonian the training path holds."""
    return 16 * 4**num_qubits


def proposal_seconds(cal: Calibration, num_qubits: int, gates: int, restarts: int, evaluations: float) -> float:
    """MODEL: seconds to parse and train one proposal (see module docstring)."""
    return evaluations * (evaluation_seconds(cal, num_qubits, gates, restarts) + cal.o)


def search_seconds(
    cal: Calibration, num_qubits: int, gates: int, restarts: int, evaluations: float, iterations: int
) -> float:
    """MODEL: seconds of simulation for a whole search (language-model time not included)."""
    return iterations * proposal_seconds(cal, num_qubits, gates, restarts, evaluations)


def prompt_tokens(prompt_chars: float) -> float:
    """MODEL: tokens of a prompt of ``prompt_chars`` characters (chars / 4, an assumption)."""
    return prompt_chars / CHARS_PER_TOKEN


def calibrate(qubits=(4, 6, 8, 10), reps: int = 2, restarts: int = 2, repeats: int = 5) -> Calibration:
    """Time our energy+gradient evaluation (the training inner loop) on ``n_local(ry, cx, linear, reps)``
    with a dense random Hermitian H at each width (the fastest of ``repeats`` runs after a warm-up: the
    least disturbed by other load), then :func:`fit` the constants."""
    from workbench.quantum.common.variational.losses import energy_function
    from workbench.quantum.qgas.ansatze import hardware_efficient
    from workbench.threads import one_thread

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
    cal = fit(points)
    return dataclasses.replace(cal, o=_overhead(cal, restarts, repeats=2))


def _overhead(cal: Calibration, restarts: int, repeats: int) -> float:
    """Seconds per evaluation besides the simulation: (parse + train of a 4-qubit, 2-layer HEA - evaluations x
    t_eval) / evaluations (fastest of ``repeats`` after a warm-up; never below 0)."""
    from workbench.quantum.qgas.ansatze import Gate, render_qasm
    from workbench.quantum.qgas.qasm import Rules, parse_proposal
    from workbench.quantum.qgas.vqe import train

    layer = [Gate("ry", (q,)) for q in range(4)]
    chain = [Gate("cx", (q, q + 1)) for q in range(3)]
    text = render_qasm(tuple(layer + chain + layer + chain + layer), 4)  # the 2-layer HEA as a proposal
    m = np.random.default_rng(1).normal(size=(16, 16))
    out = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        ansatz = parse_proposal(text, Rules(4))
        trained = train(ansatz.circuit, (m + m.T) / 2, steps=10, restarts=restarts)
        spent = time.perf_counter() - start
        t_eval = evaluation_seconds(cal, 4, ansatz.gates, restarts)
        out.append((spent - trained.evaluations * t_eval) / trained.evaluations)
    return max(0.0, float(np.min(out[1:])))


def fit(points) -> Calibration:
    """Fit ``a, b, c, d`` to ``points`` ((n, g, R, seconds), ...) by non-negative least squares on relative
    errors."""
    from scipy.optimize import nnls

    points = tuple(tuple(p) for p in points)
    A = np.array([[1.0, g, g * R * 2.0**n, R * 4.0**n] for n, g, R, _ in points])
    y = np.array([s for *_, s in points])
    (a, b, c, d), _ = nnls(A / y[:, None], np.ones_like(y))  # relative errors: small and large points alike
    return Calibration(float(a), float(b), float(c), float(d), tuple(points))
