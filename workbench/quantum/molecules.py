"""Molecular Hamiltonians as data: Pauli sums shipped as JSON, exact ground energies by diagonalisation.

The coefficients were computed once (pyscf RHF in STO-3G, openfermion Jordan-Wigner; the command, basis,
geometry, active space and mapping are recorded in every file) by
``python -m workbench.quantum.molecule_data.generate``; at run time nothing but numpy is needed.

Shipped: ``h2`` (4 qubits, 15 bond lengths 0.3-2.5 A), ``heh+`` (4 qubits), ``lih`` (Li 1s frozen, 2 electrons
in 2 spatial orbitals: 4 qubits). Labels follow qiskit (rightmost character = qubit 0).

Example::

    >>> h = load_molecule("h2", 0.735)
    >>> h.num_qubits, round(h.exact_energy, 4)
    (4, -1.1373)
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["MolecularHamiltonian", "MOLECULES", "load_molecule", "bond_lengths", "pauli_matrix", "ground_energy"]

#: molecule name -> file in ``workbench/quantum/molecule_data``
MOLECULES = {"h2": "h2.json", "heh+": "hehp.json", "lih": "lih.json"}

_PAULI = {
    "I": np.eye(2, dtype=complex),
    "X": np.array([[0, 1], [1, 0]], dtype=complex),
    "Y": np.array([[0, -1j], [1j, 0]], dtype=complex),
    "Z": np.array([[1, 0], [0, -1]], dtype=complex),
}


@dataclass(frozen=True)
class MolecularHamiltonian:
    """One molecule at one bond length: ``terms`` ``((coeff Ha, label), ...)``, ``num_qubits``, and the
    ground energy ``exact_energy`` (Ha) recomputed here by diagonalising the Pauli sum in the active space's
    electron-number sector. ``info`` holds the recorded provenance (basis, geometry, active space, mapping,
    RHF and full-space FCI energies, the generator command and versions)."""

    name: str
    bond_length: float
    terms: tuple[tuple[float, str], ...]
    num_qubits: int
    exact_energy: float
    hf_bitstring: str
    info: dict[str, Any]

    def matrix(self) -> np.ndarray:
        """The dense Hamiltonian ``[2**n, 2**n]`` (complex, qiskit basis order)."""
        return pauli_matrix(self.terms, self.num_qubits)

    def sparse_pauli_op(self):
        """The same sum as a qiskit ``SparsePauliOp``."""
        from qiskit.quantum_info import SparsePauliOp

        return SparsePauliOp.from_list([(lbl, c) for c, lbl in self.terms])


def pauli_matrix(terms: Any, num_qubits: int) -> np.ndarray:
    """Dense matrix of ``[(coeff, label)]`` (labels in qiskit order: rightmost = qubit 0)."""
    out = np.zeros((2**num_qubits, 2**num_qubits), dtype=complex)
    for coeff, label in terms:
        if len(label) != num_qubits or set(label) - set("IXYZ"):
            raise ValueError(f"Pauli label {label!r} must have {num_qubits} characters from I, X, Y, Z")
        m = np.ones((1, 1), dtype=complex)
        for char in label:  # leftmost character = highest qubit = most significant Kronecker factor
            m = np.kron(m, _PAULI[char])
        out += coeff * m
    return out


def ground_energy(matrix: np.ndarray, electrons: int | None = None) -> float:
    """Lowest eigenvalue of a Hermitian ``matrix``; with ``electrons``, only over basis states with that many
    1 bits (Jordan-Wigner: the electron-number sector, which the Hamiltonian conserves)."""
    if electrons is None:
        return float(np.linalg.eigvalsh(matrix)[0])
    n = matrix.shape[0].bit_length() - 1
    sector = np.array([j for j in range(2**n) if bin(j).count("1") == electrons])
    return float(np.linalg.eigvalsh(matrix[np.ix_(sector, sector)])[0])


@functools.cache
def _file(name: str) -> dict[str, Any]:
    text = resources.files("workbench.quantum").joinpath("molecule_data").joinpath(MOLECULES[name]).read_text()
    return json.loads(text)


def _check_name(name: str) -> None:
    if name not in MOLECULES:
        raise ValueError(f"molecule={name!r} is not allowed: valid values are {', '.join(MOLECULES)}")


def bond_lengths(name: str) -> tuple[float, ...]:
    """The shipped bond lengths of ``name`` (angstrom)."""
    _check_name(name)
    return tuple(p["bond_length_angstrom"] for p in _file(name)["points"])


@functools.lru_cache(maxsize=64)
def load_molecule(name: str, bond_length: float | None = None) -> MolecularHamiltonian:
    """The Hamiltonian of ``name`` (``h2``, ``heh+``, ``lih``) at ``bond_length`` (angstrom; None: the file's
    default, near equilibrium). Raises ValueError naming the molecule or the bond length and the valid values
    (only shipped bond lengths: no interpolation)."""
    _check_name(name)
    data = _file(name)
    bond = data["default_bond_length"] if bond_length is None else float(bond_length)
    points = [p for p in data["points"] if abs(p["bond_length_angstrom"] - bond) < 1e-9]
    if not points:
        valid = ", ".join(f"{b:g}" for b in bond_lengths(name))
        raise ValueError(f"bond_length={bond_length!r} is not allowed for {name}: valid values are {valid} (angstrom)")
    p = points[0]
    terms = tuple((float(c), str(lbl)) for c, lbl in p["terms"])
    n = int(p["num_qubits"])
    exact = ground_energy(pauli_matrix(terms, n), int(p["active_electrons"]))
    info = {k: v for k, v in p.items() if k != "terms"}
    return MolecularHamiltonian(name, bond, terms, n, exact, p["hartree_fock_bitstring"], info)
