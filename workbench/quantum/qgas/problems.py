"""The problems QGAS searches ansaetze for: molecular ground states (VQE) and two combinatorial instances (QAOA).

Every problem is a Hermitian cost operator on ``num_qubits`` qubits given as a Pauli sum ``((coeff, label), ...)``
(qiskit labels: rightmost character = qubit 0) plus its exact minimum:

- ``h2`` (H2, STO-3G, Jordan-Wigner, 4 qubits, 0.735 A) and ``lih`` (LiH, STO-3G, Li 1s frozen, 2 electrons in
  2 spatial orbitals, Jordan-Wigner, 4 qubits, 1.595 A): :mod:`workbench.quantum.molecules`; exact energy by
  diagonalisation in the electron-number sector (equal to the lowest eigenvalue overall for these two).
- ``maxcut``: a weighted 5-node graph (odd size on purpose); cost ``sum_ij w_ij (Z_i Z_j - 1) / 2`` = minus
  the cut weight of the measured bitstring; optimum by brute force over all 2**5 cuts.
- ``portfolio``: 4 assets, pick exactly 2 (Markowitz mean-variance with a quadratic budget penalty, as in
  Qiskit Finance's ``PortfolioOptimization``); cost of bitstring x = q x^T S x - mu^T x + A (sum x - 2)^2;
  optimum by brute force over all 2**4 selections. Returns and covariance are fixed numbers below (a made-up
  instance, labelled as such), not market data.

A diagonal cost (maxcut, portfolio) is turned into Z-strings by the Walsh-Hadamard transform of its diagonal.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from workbench.quantum.molecules import load_molecule, pauli_matrix

__all__ = ["Problem", "PROBLEMS", "get_problem", "diagonal_to_paulis", "maxcut_graph", "portfolio_instance"]

PROBLEMS = ("lih", "h2", "maxcut", "portfolio")

#: the MaxCut instance: 5 nodes, a ring plus two chords, integer weights
MAXCUT_EDGES = ((0, 1, 1.0), (1, 2, 2.0), (2, 3, 1.0), (3, 4, 1.0), (4, 0, 2.0), (0, 2, 1.0), (1, 3, 1.0))
#: the portfolio instance (made up, not market data): expected returns, covariance, risk factor, budget, penalty
PORTFOLIO = dict(
    mu=(0.12, 0.08, 0.10, 0.05),
    sigma=(
        (0.10, 0.02, 0.04, 0.00),
        (0.02, 0.06, 0.01, 0.01),
        (0.04, 0.01, 0.08, 0.02),
        (0.00, 0.01, 0.02, 0.03),
    ),
    risk=0.5,
    budget=2,
    penalty=1.0,
)


@dataclass(frozen=True)
class Problem:
    """A cost operator to minimise. ``kind``: ``vqe`` (chemistry, energies in Hartree) or ``qaoa``
    (combinatorial, cost units). ``exact``: its minimum eigenvalue (by diagonalisation or brute force);
    ``worst``: the maximum over computational basis states for qaoa problems (for the approximation ratio);
    ``optimum``: the optimal bitstrings (qaoa); ``hint``: the reference state (HF bitstring or '')."""

    name: str
    kind: str
    num_qubits: int
    terms: tuple[tuple[float, str], ...]
    exact: float
    description: str
    unit: str
    hint: str = ""
    worst: float | None = None
    optimum: tuple[str, ...] = ()

    def matrix(self) -> np.ndarray:
        """The dense cost operator ``[2**n, 2**n]`` (complex)."""
        return pauli_matrix(self.terms, self.num_qubits)

    def approximation_ratio(self, energy: float) -> float | None:
        """``(worst - E) / (worst - exact)`` for qaoa problems (1 = optimal), None for chemistry."""
        if self.worst is None:
            return None
        return float((self.worst - energy) / (self.worst - self.exact))


def diagonal_to_paulis(diag: np.ndarray, tol: float = 1e-12) -> tuple[tuple[float, str], ...]:
    """Z-string Pauli sum of the diagonal operator ``diag`` ``[2**n]`` (index bit q = qubit q).

    ``c_S = 2**-n sum_j diag[j] (-1)^{popcount(j & S)}``: the Walsh-Hadamard transform.
    """
    diag = np.asarray(diag, dtype=float)
    n = diag.size.bit_length() - 1
    if diag.size != 2**n:
        raise ValueError(f"diag has {diag.size} entries: expected a power of two")
    coeffs = diag.copy()
    h = 1
    while h < diag.size:  # in-place fast Walsh-Hadamard transform
        for i in range(0, diag.size, 2 * h):
            a, b = coeffs[i : i + h].copy(), coeffs[i + h : i + 2 * h].copy()
            coeffs[i : i + h], coeffs[i + h : i + 2 * h] = a + b, a - b
        h *= 2
    coeffs /= diag.size
    out = []
    for mask, c in enumerate(coeffs):
        if abs(c) > tol:
            label = "".join("Z" if mask >> q & 1 else "I" for q in reversed(range(n)))
            out.append((float(c), label))
    return tuple(out)


def _bits(j: int, n: int) -> np.ndarray:
    return np.array([j >> q & 1 for q in range(n)])


def maxcut_graph() -> tuple[int, tuple[tuple[int, int, float], ...]]:
    """``(nodes, edges)`` of the MaxCut instance."""
    return 5, MAXCUT_EDGES


def maxcut_costs(n: int, edges) -> np.ndarray:
    """Cost of every bitstring ``[2**n]``: minus its cut weight (the brute force)."""
    out = np.zeros(2**n)
    for j in range(2**n):
        x = _bits(j, n)
        out[j] = -sum(w for a, b, w in edges if x[a] != x[b])
    return out


def portfolio_instance() -> dict:
    """The portfolio numbers (a made-up instance)."""
    return dict(PORTFOLIO)


def portfolio_costs(p: dict) -> np.ndarray:
    """Cost of every selection bitstring ``[2**n]`` (the brute force)."""
    mu, sigma = np.asarray(p["mu"]), np.asarray(p["sigma"])
    n = mu.size
    out = np.zeros(2**n)
    for j in range(2**n):
        x = _bits(j, n)
        out[j] = p["risk"] * x @ sigma @ x - mu @ x + p["penalty"] * (x.sum() - p["budget"]) ** 2
    return out


def _combinatorial(name: str, costs: np.ndarray, description: str) -> Problem:
    n = costs.size.bit_length() - 1
    best = costs.min()
    optimum = tuple(format(j, f"0{n}b") for j in np.flatnonzero(np.isclose(costs, best)))
    return Problem(
        name=name,
        kind="qaoa",
        num_qubits=n,
        terms=diagonal_to_paulis(costs),
        exact=float(best),
        description=description,
        unit="cost",
        worst=float(costs.max()),
        optimum=optimum,
    )


@functools.cache
def get_problem(name: str, bond_length: float = 0.0) -> Problem:
    """The problem ``name`` (one of :data:`PROBLEMS`); ValueError naming it otherwise. ``bond_length``
    (angstrom, chemistry only; 0 = the shipped default near equilibrium) must be a shipped bond length."""
    if name in ("lih", "h2"):
        h = load_molecule(name, bond_length or None)
        info = h.info
        desc = (
            f"{name.upper()} ground state at {h.bond_length:g} A, {info['basis']}, {info['active_space_note']}, "
            f"{info['mapping'].split(',')[0]}; exact {h.exact_energy:.6f} Ha"
        )
        return Problem(name, "vqe", h.num_qubits, h.terms, h.exact_energy, desc, "Ha", hint=h.hf_bitstring)
    if bond_length and name in PROBLEMS:
        raise ValueError(f"bond_length={bond_length} applies to lih and h2 only: valid value for {name} is 0")
    if name == "maxcut":
        n, edges = maxcut_graph()
        return _combinatorial(name, maxcut_costs(n, edges), f"MaxCut on a weighted {n}-node graph {list(edges)}")
    if name == "portfolio":
        p = portfolio_instance()
        return _combinatorial(
            name,
            portfolio_costs(p),
            f"portfolio: {len(p['mu'])} assets, pick {p['budget']} (made-up returns and covariance)",
        )
    raise ValueError(f"problem={name!r} is not allowed: valid values are {', '.join(PROBLEMS)}")


def brute_force_minimum(costs: np.ndarray) -> tuple[float, list[str]]:
    """Minimum of ``costs`` over all bitstrings and the bitstrings reaching it (plain loop: the oracle)."""
    n = len(costs).bit_length() - 1
    best = min(costs)
    return float(best), [format(j, f"0{n}b") for j, c in zip(itertools.count(), costs) if abs(c - best) < 1e-12]
