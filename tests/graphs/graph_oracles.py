"""Brute-force oracles for the graph-mining tests, independent of workbench.graphs' counting code:
networkx's VF2 monomorphism matcher (edge-induced) and exhaustive subset enumeration with
networkx.is_isomorphic (vertex-induced)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
from networkx.algorithms import isomorphism as iso


def nx_pattern(edges, k: int, labels=None) -> nx.Graph:
    p = nx.Graph()
    p.add_nodes_from(range(k))
    p.add_edges_from(edges)
    if labels is not None:
        nx.set_node_attributes(p, dict(enumerate(labels)), "label")
    return p


def nx_graph(graph) -> nx.Graph:
    g = graph.to_networkx()
    if graph.labels is not None:
        nx.set_node_attributes(g, dict(enumerate(graph.labels.tolist())), "label")
    return g


def injective_maps(G: nx.Graph, P: nx.Graph) -> int:
    """Injective maps V(P) -> V(G) sending edges to edges (and labels to equal labels, if any)."""
    match = iso.categorical_node_match("label", None) if nx.get_node_attributes(P, "label") else None
    gm = iso.GraphMatcher(G, P, node_match=match)
    return sum(1 for _ in gm.subgraph_monomorphisms_iter())


def automorphisms(P: nx.Graph) -> int:
    return sum(1 for _ in iso.GraphMatcher(P, P).isomorphisms_iter())


def edge_induced(G: nx.Graph, P: nx.Graph) -> int:
    return injective_maps(G, P) // automorphisms(P)


def vertex_induced(G: nx.Graph, P: nx.Graph) -> int:
    """Vertex subsets S with G[S] isomorphic to P, by trying every subset of |P| vertices."""
    k, m = P.number_of_nodes(), P.number_of_edges()
    total = 0
    for subset in itertools.combinations(G.nodes(), k):
        H = G.subgraph(subset)
        if H.number_of_edges() == m and nx.is_isomorphic(H, P):
            total += 1
    return total


def vertex_census(G: nx.Graph, k: int) -> dict[frozenset, int]:
    """Counts of connected induced k-vertex subgraphs by isomorphism class, keyed by the edge set of a
    representative (as a frozenset of frozensets on 0..k-1): one pass over all k-subsets."""
    reps: list[tuple[nx.Graph, frozenset]] = []
    counts: dict[frozenset, int] = {}
    for subset in itertools.combinations(G.nodes(), k):
        H = G.subgraph(subset)
        if not nx.is_connected(H):
            continue
        for R, key in reps:
            if R.number_of_edges() == H.number_of_edges() and nx.is_isomorphic(R, H):
                counts[key] += 1
                break
        else:
            index = {v: i for i, v in enumerate(subset)}
            key = frozenset(frozenset((index[a], index[b])) for a, b in H.edges())
            reps.append((nx.relabel_nodes(H, index), key))
            counts[key] = 1
    return counts


def census_count(census: dict[frozenset, int], P: nx.Graph) -> int:
    """The vertex-induced count of ``P`` looked up in a :func:`vertex_census`."""
    for key, value in census.items():
        R = nx.Graph()
        R.add_nodes_from(P.nodes())
        R.add_edges_from(tuple(e) for e in key)
        if R.number_of_edges() == P.number_of_edges() and nx.is_isomorphic(R, P):
            return value
    return 0


def mni_domains(G: nx.Graph, P: nx.Graph) -> dict[int, set]:
    """Per pattern vertex, the data vertices it maps to in some monomorphism (MNI domains)."""
    match = iso.categorical_node_match("label", None) if nx.get_node_attributes(P, "label") else None
    gm = iso.GraphMatcher(G, P, node_match=match)
    dom: dict[int, set] = {u: set() for u in P.nodes()}
    for mapping in gm.subgraph_monomorphisms_iter():  # data vertex -> pattern vertex
        for x, u in mapping.items():
            dom[u].add(x)
    return dom


def random_labels(n: int, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, k, n).astype(np.int32)
