"""Patterns, canonical forms, automorphisms, cutting sets, shrinkages and the induced transform.

References: OEIS A001349 (connected graphs on k nodes: 1, 1, 2, 6, 21, 112, 853); networkx's VF2
isomorphism checks and automorphism counts; hand-derived decompositions of the brief's worked examples
(3-star, 4-cycle); the identity E(wedge) = V(wedge) + 3 V(triangle)."""

import itertools
import random

import networkx as nx
import pytest
from graph_oracles import automorphisms, nx_pattern

from workbench.graphs.decompose import component_classes, cut_symmetry, cutting_sets, shrinkages
from workbench.graphs.induced import containment_matrix, inverse_containment, supergraphs
from workbench.graphs.patterns import NAMED, Pattern, motifs, named_patterns, parse_pattern


@pytest.mark.parametrize("k, expected", [(1, 1), (2, 1), (3, 2), (4, 6), (5, 21), (6, 112)])
def test_motif_counts_match_oeis(k, expected):
    ms = motifs(k)
    assert len(ms) == expected
    assert all(p.is_connected() and p.k == k for p in ms)
    graphs = [nx_pattern(p.edges, k) for p in ms]
    assert not any(nx.is_isomorphic(a, b) for a, b in itertools.combinations(graphs, 2))


@pytest.mark.parametrize("pattern", [p for k in (4, 5, 6) for p in motifs(k)][::3], ids=lambda p: p.label)
def test_canonical_form_is_invariant_and_automorphisms_match_networkx(pattern):
    rng = random.Random(pattern.canonical[1])
    perm = list(range(pattern.k))
    rng.shuffle(perm)
    shuffled = Pattern(pattern.k, tuple((perm[a], perm[b]) for a, b in pattern.edges))
    assert shuffled.canonical == pattern.canonical
    assert pattern.n_automorphisms == automorphisms(nx_pattern(pattern.edges, pattern.k))


def test_named_patterns_parse_and_edge_strings_round_trip():
    for name, p in named_patterns().items():
        assert parse_pattern(name) == p
        assert parse_pattern(p.edge_string()).canonical == p.canonical
    assert parse_pattern("7-8, 8-9 ,9-7").label == "triangle"
    assert parse_pattern("6-chain") == parse_pattern("6-path")
    assert len(NAMED) >= 20


@pytest.mark.parametrize(
    "text, message",
    [
        ("hexagon-ish", "not a known name or an edge list"),
        ("0-1,1-1", "self-loop"),
        ("0-1,2-3", "not connected"),
        ("0-1,1-2,2-3,3-4,4-5,5-6,6-7", "8 vertices: valid range is 1..7"),
    ],
)
def test_bad_patterns_are_clear_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_pattern(text)


def test_labelled_canonical_forms_distinguish_labels():
    a = Pattern(3, ((0, 1), (1, 2)), (0, 1, 0))
    b = Pattern(3, ((0, 1), (0, 2)), (1, 0, 0))
    c = Pattern(3, ((0, 1), (1, 2)), (1, 0, 0))
    assert a.canonical == b.canonical != c.canonical


def test_three_star_decomposes_at_its_centre_with_the_brief_shrinkages():
    star = parse_pattern("3-star")  # centre 0
    assert (0,) in cutting_sets(star)
    assert len(component_classes(star, (0,))) == 1  # three isomorphic leaves share one count
    got = {q.label: mult for q, mult in shrinkages(star, (0,))}
    # merging two leaves gives a wedge (3 ways), merging all three an edge (1 way):
    # inj(3-star) = sum d^3 - 3 inj(wedge) - inj(edge) = sum d (d-1) (d-2)
    assert got == {"wedge": 3, "edge": 1}


def test_four_cycle_cut_at_opposite_vertices_needs_a_bridge_and_halves_by_symmetry():
    c4 = parse_pattern("4-cycle")  # 0-1-2-3-0
    assert (0, 2) in cutting_sets(c4) and not c4.is_connected((0, 2))
    assert len(cut_symmetry(c4, (0, 2))) == 2
    assert {q.label: mult for q, mult in shrinkages(c4, (0, 2))} == {"wedge": 1}


def test_cliques_have_no_cutting_set_and_house_has_its_base_edge():
    assert not cutting_sets(parse_pattern("5-clique"))
    house = parse_pattern("house")
    assert (0, 1) in cutting_sets(house)
    assert {q.label: mult for q, mult in shrinkages(house, (0, 1))} == {"diamond": 2}


def test_containment_matrix_identity_for_three_vertices():
    wedge, triangle = motifs(3)
    assert wedge.label == "wedge" and triangle.label == "triangle"
    assert containment_matrix(3) == ((1, 3), (0, 1))
    assert inverse_containment(3) == ((1, -3), (0, 1))
    assert supergraphs(wedge) == [(wedge, 1), (triangle, -3)]


@pytest.mark.parametrize("k", [4, 5])
def test_inverse_containment_is_the_inverse(k):
    s, inv = containment_matrix(k), inverse_containment(k)
    n = len(s)
    for i in range(n):
        for j in range(n):
            assert sum(s[i][l] * inv[l][j] for l in range(n)) == (i == j)
