"""Two-qubit molecular Hamiltonians for pulse VQE on two transmons, as shipped data.

NAPA/PAN's code (``zlianghahaha/QPulse``, ``utils.pauli_dict_dist``) uses PySCF STO-3G, the parity mapping with
two-qubit reduction: H2 at 0.735 A and HeH+ at 1.0 A (charge +1) become 2-qubit Hamiltonians. Here the same
reduction (4 spin orbitals, 2 electrons -> 2 qubits) comes from openfermion's
``symmetry_conserving_bravyi_kitaev`` on the PySCF (RHF, STO-3G) molecular Hamiltonian; total energies include the
nuclear repulsion, so H2's ground state is the FCI -1.1373 Ha. The data file ``napa_molecules.json`` was written
by ``python -m workbench.quantum.napa.hamiltonians`` (recorded in it with the package versions); at run time only
numpy is needed. Labels follow qiskit (rightmost character = qubit 0).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from workbench.quantum.molecules import pauli_matrix

__all__ = ["ReducedHamiltonian", "MOLECULES", "load", "bond_lengths"]

DATA = "napa_molecules.json"
#: molecule -> (atom at the origin (the H is at +z), charge, frozen occupied orbitals, active orbitals or None = all)
MOLECULES = {"H2": ("H", 0, None, None), "HeH+": ("He", 1, None, None), "LiH": ("Li", 0, [0], [1, 2])}


@dataclass(frozen=True)
class ReducedHamiltonian:
    """``terms``: ((coefficient Ha, label), ...) on 2 qubits; ``exact``: lowest eigenvalue (Ha, by numpy);
    ``fci``: the exact energy in the active space recorded at generation (PySCF FCI; for LiH's (2e, 2o) active
    space the CASCI energy from the 4-qubit Jordan-Wigner Hamiltonian's 2-electron sector): the same number,
    tested. ``full_fci``: PySCF's FCI of the whole molecule (LiH's active space costs ~19 mHa)."""

    molecule: str
    bond_length: float
    terms: tuple[tuple[float, str], ...]
    exact: float
    fci: float
    full_fci: float
    info: dict[str, Any]

    def matrix(self) -> np.ndarray:
        return pauli_matrix(self.terms, 2)


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(resources.files("workbench.quantum.napa").joinpath(DATA).read_text())


def bond_lengths(molecule: str) -> tuple[float, ...]:
    """Bond lengths (A) shipped for ``molecule``."""
    entry = _data()["molecules"].get(molecule)
    if entry is None:
        raise ValueError(f"molecule={molecule!r} is unknown: valid molecules are {', '.join(_data()['molecules'])}")
    return tuple(float(k) for k in entry)


def load(molecule: str, bond_length: float) -> ReducedHamiltonian:
    """The 2-qubit Hamiltonian of ``molecule`` at a shipped ``bond_length`` (A)."""
    lengths = bond_lengths(molecule)
    match = [b for b in lengths if abs(b - bond_length) < 1e-9]
    if not match:
        raise ValueError(
            f"bond_length={bond_length} is not shipped for {molecule}: valid values are "
            f"{', '.join(f'{b:g}' for b in lengths)} (regenerate with python -m workbench.quantum.napa.hamiltonians)"
        )
    entry = _data()["molecules"][molecule][f"{match[0]:.4f}"]
    terms = tuple((float(c), str(lbl)) for c, lbl in entry["terms"])
    exact = float(np.linalg.eigvalsh(pauli_matrix(terms, 2))[0])
    return ReducedHamiltonian(
        molecule, match[0], terms, exact, float(entry["fci"]), float(entry["full_fci"]), _data()["info"]
    )


def _generate() -> dict[str, Any]:  # pragma: no cover - needs pyscf + openfermion (the data-gen extra)
    import openfermion as of
    import openfermionpyscf
    import pyscf
    from openfermionpyscf import run_pyscf

    scans = {
        "H2": sorted({0.735, *np.round(np.arange(0.4, 2.01, 0.1), 4)}),
        "HeH+": sorted({1.0, *np.round(np.arange(0.6, 2.01, 0.2), 4)}),
        "LiH": sorted({1.5, *np.round(np.arange(1.0, 3.01, 0.25), 4)}),
    }
    out: dict[str, Any] = {}
    for molecule, lengths in scans.items():
        atom, charge, frozen, active = MOLECULES[molecule]
        out[molecule] = {}
        for b in lengths:
            mol = of.MolecularData([(atom, (0, 0, 0)), ("H", (0, 0, float(b)))], "sto-3g", 1, charge)
            mol = run_pyscf(mol, run_scf=True, run_fci=True)
            fermion = of.get_fermion_operator(
                mol.get_molecular_hamiltonian(occupied_indices=frozen, active_indices=active)
            )
            qubit = of.symmetry_conserving_bravyi_kitaev(fermion, active_orbitals=4, active_fermions=2)
            jw = of.get_sparse_operator(of.jordan_wigner(fermion), n_qubits=4).toarray()
            two = [i for i in range(16) if bin(i).count("1") == 2]
            active_exact = float(np.linalg.eigvalsh(jw[np.ix_(two, two)])[0])
            terms = []
            for ops, coeff in sorted(qubit.terms.items()):
                label = ["I", "I"]
                for q, p in ops:
                    label[1 - q] = p  # qiskit order: qubit 0 is the rightmost character
                terms.append([float(np.real(coeff)), "".join(label)])
            out[molecule][f"{float(b):.4f}"] = {
                "terms": terms, "fci": active_exact, "full_fci": float(mol.fci_energy), "hf": float(mol.hf_energy)
            }  # fmt: skip
    info = {
        "command": "python -m workbench.quantum.napa.hamiltonians",
        "basis": "sto-3g",
        "geometry": "atom at the origin, H at (0, 0, bond length) in Angstrom",
        "method": "PySCF RHF integrals; openfermion symmetry_conserving_bravyi_kitaev (4 spin orbitals, 2 electrons)",
        "active space": "H2, HeH+: all orbitals; LiH: Li 1s frozen, orbitals 1-2 active (2 electrons, 2 orbitals)",
        "energies": "total (electronic + nuclear repulsion), Hartree",
        "versions": {
            "pyscf": pyscf.__version__,
            "openfermion": of.__version__,
            "openfermionpyscf": getattr(openfermionpyscf, "__version__", "?"),
        },
    }
    return {"info": info, "molecules": out}


if __name__ == "__main__":  # pragma: no cover
    from pathlib import Path

    from workbench.atomic import atomic_write

    path = Path(__file__).with_name(DATA)
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(_generate(), f, indent=1)
    print(f"wrote {path}")
