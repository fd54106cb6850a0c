"""The shipped molecular Hamiltonians (``workbench.quantum.molecules``).

References: exact diagonalisation (numpy ``eigvalsh``) of the Pauli sum built independently with qiskit's
``SparsePauliOp.to_matrix``; the energies pyscf recorded when the files were generated (FCI for H2 and HeH+,
whose active space is the whole space); the literature value of H2/STO-3G FCI at 0.735 A, -1.137 Ha; and, when
the optional ``data-gen`` packages are installed, the Hamiltonian regenerated with pyscf + openfermion.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from workbench.quantum.molecules import MOLECULES, bond_lengths, ground_energy, load_molecule

CASES = [(name, b) for name in MOLECULES for b in bond_lengths(name)]


@pytest.mark.parametrize(("name", "bond"), CASES, ids=[f"{n}-{b:g}" for n, b in CASES])
def test_shipped_energy_equals_diagonalisation_of_the_qiskit_matrix(name, bond):
    h = load_molecule(name, bond)
    matrix = h.sparse_pauli_op().to_matrix()  # independent Kronecker ordering (qiskit's own)
    np.testing.assert_allclose(matrix, matrix.conj().T, atol=1e-14)  # Hermitian
    electrons = h.info["active_electrons"]
    # fp64 eigen-solver on a 16 x 16 matrix with entries ~10 Ha: agreement to 1e-10 Ha
    assert h.exact_energy == pytest.approx(ground_energy(matrix, electrons), abs=1e-10)
    assert h.exact_energy == pytest.approx(h.info["exact_energy"], abs=1e-10)
    np.testing.assert_allclose(h.matrix(), matrix, atol=1e-13)
    # variational ordering: exact <= Hartree-Fock, and the HF bitstring's diagonal element is the HF energy
    hf_index = int(h.hf_bitstring, 2)
    assert matrix[hf_index, hf_index].real == pytest.approx(h.info["hf_energy"], abs=1e-8)
    assert h.exact_energy <= h.info["hf_energy"] + 1e-12


@pytest.mark.parametrize("name", ["h2", "heh+"])
def test_full_active_space_equals_pyscf_fci(name):
    for bond in bond_lengths(name):
        h = load_molecule(name, bond)
        assert h.exact_energy == pytest.approx(h.info["fci_energy_full_space"], abs=1e-8)


def test_h2_at_0735_is_the_known_fci_energy():
    h = load_molecule("h2", 0.735)
    assert h.num_qubits == 4 and len(h.terms) == 15
    assert h.exact_energy == pytest.approx(-1.137, abs=5e-4)  # H2/STO-3G FCI, -1.1373 Ha in the literature
    assert h.info["basis"] == "sto-3g" and "jordan-wigner" in h.info["mapping"]


def test_lih_is_a_four_qubit_active_space_above_the_full_fci():
    h = load_molecule("lih")
    assert h.num_qubits == 4 and h.bond_length == 1.595
    assert h.info["frozen_core_orbitals"] == [0] and h.info["active_orbitals"] == [1, 2]
    # the active-space energy lies between HF and the full-space FCI (it misses orbitals 3-5)
    assert h.info["fci_energy_full_space"] < h.exact_energy < h.info["hf_energy"]


def test_bad_names_and_bond_lengths_are_refused():
    with pytest.raises(ValueError, match=r"molecule='h2o' is not allowed: valid values are h2, heh\+, lih"):
        load_molecule("h2o")
    with pytest.raises(ValueError, match=r"bond_length=0.74 is not allowed for h2: valid values are 0.3, "):
        load_molecule("h2", 0.74)


@pytest.mark.slow  # imports pyscf and runs RHF + FCI: seconds
@pytest.mark.skipif(
    importlib.util.find_spec("openfermionpyscf") is None,
    reason="the data-gen extra (pyscf, openfermion) is not installed",
)
def test_regenerated_hamiltonian_matches_the_shipped_one():
    from workbench.quantum.molecule_data.generate import build

    fresh = build("lih", 1.595)
    shipped = load_molecule("lih", 1.595)
    got = dict((lbl, c) for c, lbl in fresh["terms"])
    want = dict((lbl, c) for c, lbl in shipped.terms)
    assert got.keys() == want.keys()
    for label in want:
        assert got[label] == pytest.approx(want[label], abs=1e-9)
