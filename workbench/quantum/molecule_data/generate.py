"""Regenerate the molecular Hamiltonians shipped in this folder (a one-off; pyscf + openfermion are NOT runtime
dependencies: ``pip install research-workbench[data-gen]``).

Command (recorded in every JSON file it writes)::

    python -m workbench.quantum.molecule_data.generate

For each molecule and bond length: restricted Hartree-Fock in the STO-3G basis with pyscf
(``openfermionpyscf.run_pyscf``), the one- and two-electron integrals in the RHF molecular-orbital basis,
an optional active space (frozen doubly occupied core orbitals, chosen active orbitals), the
Jordan-Wigner mapping with openfermion (spin orbitals interleaved: qubit 2i = orbital i spin up, qubit 2i+1 =
orbital i spin down), and the Pauli sum written as ``(coeff, label)`` with qiskit's label order (rightmost
character = qubit 0). Also recorded: the RHF and full-space FCI energies from pyscf, and the Hartree-Fock
bitstring of the active space. The exact ground energy a user sees is recomputed by diagonalisation from the
shipped Pauli sum (``workbench.quantum.molecules``), and tests compare it with the ``exact_energy`` stored here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
COMMAND = "python -m workbench.quantum.molecule_data.generate"

#: name -> (atoms with a bond length placeholder, charge, multiplicity, frozen core orbitals, active orbitals,
#: bond lengths in angstrom, description)
MOLECULES = {
    "h2": dict(
        atoms=("H", "H"),
        charge=0,
        multiplicity=1,
        occupied=(),
        active=(0, 1),
        bonds=(0.3, 0.4, 0.5, 0.6, 0.7, 0.735, 0.8, 0.9, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5),
        default=0.735,
        note="all 2 spatial orbitals active (2 electrons, 4 spin orbitals)",
    ),
    "heh+": dict(
        atoms=("He", "H"),
        charge=1,
        multiplicity=1,
        occupied=(),
        active=(0, 1),
        bonds=(0.5, 0.6, 0.7, 0.772, 0.8, 0.9, 1.0, 1.2, 1.5, 2.0),
        default=0.772,
        note="all 2 spatial orbitals active (2 electrons, 4 spin orbitals)",
    ),
    "lih": dict(
        atoms=("Li", "H"),
        charge=0,
        multiplicity=1,
        occupied=(0,),
        active=(1, 2),
        bonds=(1.0, 1.2, 1.4, 1.5, 1.595, 1.7, 1.8, 2.0, 2.4, 3.0),
        default=1.595,
        note=(
            "Li 1s (orbital 0) frozen doubly occupied; active space = orbitals 1, 2 (the sigma HOMO and the "
            "lowest virtual: 2 electrons in 2 spatial orbitals, 4 spin orbitals); orbitals 3-5 dropped"
        ),
    ),
}


def pauli_sum(qubit_operator, num_qubits: int) -> list[tuple[float, str]]:
    """openfermion ``QubitOperator`` -> ``[(coeff, qiskit label)]`` sorted by label (real coefficients)."""
    out = {}
    for term, coeff in qubit_operator.terms.items():
        label = ["I"] * num_qubits
        for q, op in term:
            label[num_qubits - 1 - q] = op
        if abs(complex(coeff).imag) > 1e-12:
            raise ValueError(f"term {term} has a complex coefficient {coeff}")
        key = "".join(label)
        out[key] = out.get(key, 0.0) + float(complex(coeff).real)
    return sorted(((c, lbl) for lbl, c in out.items() if abs(c) > 1e-12), key=lambda t: t[1])


def build(name: str, bond: float) -> dict:
    import openfermion as of
    import pyscf
    from openfermionpyscf import run_pyscf

    spec = MOLECULES[name]
    a, b = spec["atoms"]
    geometry = [(a, (0.0, 0.0, 0.0)), (b, (0.0, 0.0, float(bond)))]
    mol = of.MolecularData(geometry, "sto-3g", spec["multiplicity"], spec["charge"])
    mol = run_pyscf(mol, run_scf=True, run_fci=True)
    ham = mol.get_molecular_hamiltonian(
        occupied_indices=list(spec["occupied"]) or None, active_indices=list(spec["active"])
    )
    fermion = of.get_fermion_operator(ham)
    qubit = of.jordan_wigner(fermion)
    n = 2 * len(spec["active"])
    terms = pauli_sum(qubit, n)
    electrons = mol.n_electrons - 2 * len(spec["occupied"])
    sparse = of.get_sparse_operator(qubit, n_qubits=n).toarray()
    # ground state in the active space's electron-number sector (and over all sectors, for the record)
    number = of.get_sparse_operator(of.number_operator(n), n_qubits=n).toarray().real.diagonal()
    sector = np.where(np.isclose(number, electrons))[0]
    exact = float(np.linalg.eigvalsh(sparse[np.ix_(sector, sector)])[0])
    lowest = float(np.linalg.eigvalsh(sparse)[0])
    hf_bits = "".join("1" if q < electrons else "0" for q in reversed(range(n)))  # qiskit order: qubit 0 rightmost
    return {
        "molecule": name,
        "bond_length_angstrom": float(bond),
        "geometry_angstrom": [[atom, list(xyz)] for atom, xyz in geometry],
        "charge": spec["charge"],
        "multiplicity": spec["multiplicity"],
        "basis": "sto-3g",
        "method": "RHF molecular orbitals (pyscf via openfermionpyscf)",
        "frozen_core_orbitals": list(spec["occupied"]),
        "active_orbitals": list(spec["active"]),
        "active_space_note": spec["note"],
        "active_electrons": int(electrons),
        "mapping": "jordan-wigner (openfermion), spin orbitals interleaved: qubit 2i = orbital i up, 2i+1 = down",
        "label_order": "qiskit: rightmost character = qubit 0",
        "num_qubits": n,
        "hartree_fock_bitstring": hf_bits,
        "hf_energy": float(mol.hf_energy),
        "fci_energy_full_space": float(mol.fci_energy),
        "exact_energy": exact,
        "exact_energy_sector": f"{electrons} electrons (lowest eigenvalue of the Pauli sum in that sector)",
        "lowest_eigenvalue_all_sectors": lowest,
        "terms": [[c, lbl] for c, lbl in terms],
        "generator": {
            "command": COMMAND,
            "pyscf": pyscf.__version__,
            "openfermion": of.__version__,
            "python": sys.version.split()[0],
        },
    }


def main() -> None:
    from workbench.atomic import write_text

    for name, spec in MOLECULES.items():
        records = [build(name, bond) for bond in spec["bonds"]]
        payload = {"molecule": name, "default_bond_length": spec["default"], "points": records}
        path = HERE / f"{name.replace('+', 'p')}.json"
        write_text(path, json.dumps(payload, indent=1) + "\n")
        print(f"{path.name}: {len(records)} bond lengths, {records[0]['num_qubits']} qubits")


if __name__ == "__main__":
    main()
