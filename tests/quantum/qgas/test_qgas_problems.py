"""QGAS problems: the combinatorial optima by brute force, the Pauli forms by diagonalisation.

References: a plain loop over all 2**n bitstrings (``brute_force_minimum``), networkx's ``cut_size`` for the
cut values, numpy ``eigvalsh`` of the Pauli sum, and the Walsh-Hadamard transform inverted by qiskit's matrix.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from workbench.quantum.qgas.problems import (
    PROBLEMS,
    brute_force_minimum,
    diagonal_to_paulis,
    get_problem,
    maxcut_costs,
    maxcut_graph,
    portfolio_costs,
    portfolio_instance,
)


def test_maxcut_costs_are_minus_networkx_cut_sizes():
    n, edges = maxcut_graph()
    g = nx.Graph()
    g.add_weighted_edges_from(edges)
    costs = maxcut_costs(n, edges)
    for j in range(2**n):
        side = {q for q in range(n) if j >> q & 1}
        assert costs[j] == -nx.cut_size(g, side, weight="weight")


@pytest.mark.parametrize("name", PROBLEMS)
def test_exact_minimum_equals_diagonalisation_and_brute_force(name):
    p = get_problem(name)
    eig = np.linalg.eigvalsh(p.matrix())
    assert p.exact == pytest.approx(eig[0], abs=1e-10)
    if p.kind == "qaoa":
        diag = p.matrix().diagonal().real
        np.testing.assert_allclose(p.matrix(), np.diag(diag), atol=1e-12)  # a diagonal (Ising) cost
        best, argbest = brute_force_minimum(list(diag))
        assert best == pytest.approx(p.exact, abs=1e-12)
        assert sorted(format(int(b, 2), f"0{p.num_qubits}b") for b in argbest) == sorted(p.optimum)
        assert p.approximation_ratio(p.exact) == pytest.approx(1.0)
        assert p.approximation_ratio(p.worst) == pytest.approx(0.0)


def test_portfolio_optimum_picks_the_budget():
    p = get_problem("portfolio")
    inst = portfolio_instance()
    (best,) = p.optimum
    assert best.count("1") == inst["budget"]
    costs = portfolio_costs(inst)
    assert costs[int(best, 2)] == pytest.approx(p.exact)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_walsh_hadamard_pauli_form_round_trips(n):
    from qiskit.quantum_info import SparsePauliOp

    diag = np.random.default_rng(n).normal(size=2**n)
    terms = diagonal_to_paulis(diag)
    matrix = SparsePauliOp.from_list([(lbl, c) for c, lbl in terms]).to_matrix()
    np.testing.assert_allclose(matrix.diagonal().real, diag, atol=1e-12)


def test_bad_problem_and_bond_length():
    with pytest.raises(ValueError, match=r"problem='tsp' is not allowed: valid values are lih, h2, maxcut, portfolio"):
        get_problem("tsp")
    with pytest.raises(ValueError, match=r"bond_length=1.0 applies to lih and h2 only"):
        get_problem("maxcut", 1.0)
