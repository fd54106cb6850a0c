"""The training data of GNNPipe: a Planetoid graph as the symmetric normalised adjacency, features, labels, split.

``A_hat = D^-1/2 (A + I) D^-1/2`` (Kipf & Welling; PyG's ``gcn_norm`` with self-loops), built in float64 with
scipy and kept as scipy CSR, handed to torch as sparse COO row blocks. PubMed: the shared data folder lacks ``ind.pubmed.allx`` (the
features of 18,657 of its 19,717 nodes; see the data README), so, as the README suggests for structure and
communication experiments, *every* PubMed node gets seeded standard-normal features of the same width (500);
the 1,060 rows the files do hold are not mixed in, so all inputs come from one distribution. PubMed accuracy
is therefore not comparable with the literature; bytes and times are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from workbench.graphs.graph import Graph
from workbench.graphs.loaders import load_graph, load_planetoid_features

__all__ = ["GraphData", "load_data", "normalised_adjacency", "adj_rows", "to_torch_sparse", "permuted"]

TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True, eq=False)
class GraphData:
    """One dataset ready to train on (all arrays in the same vertex order).

    Attributes:
        name: dataset name; n: vertices; directed_edges: stored edges without self-loops (PyG's count).
        adj: scipy CSR ``(n, n)`` float64, the normalised adjacency with self-loops.
        x: float ``(n, f)``; y: int64 ``(n,)`` (-1: unlabelled); train, val, test: int64 vertex ids.
        feature_note: how the features were made (states PubMed's replacement).
        indptr, indices: the graph without self-loops (CSR), for partitions and halos.
    """

    name: str
    n: int
    directed_edges: int
    adj: sp.csr_matrix
    x: torch.Tensor
    y: torch.Tensor
    train: torch.Tensor
    val: torch.Tensor
    test: torch.Tensor
    feature_note: str
    indptr: np.ndarray
    indices: np.ndarray
    sparse_features: bool = True
    vertex_ids: np.ndarray | None = None

    def row_mask(self, mask: torch.Tensor | None) -> torch.Tensor | None:
        """A per-vertex ``(n, width)`` tensor of the original numbering in this data's row order."""
        if mask is None or self.vertex_ids is None:
            return mask
        return mask[torch.from_numpy(self.vertex_ids)]

    def feature_rows(self, rows: slice | torch.Tensor) -> torch.Tensor:
        """Feature rows as the input layer takes them: sparse COO (bag-of-words) or dense (PubMed's random)."""
        block = self.x[rows]
        return block.to_sparse_coo().coalesce() if self.sparse_features else block

    def train_rows(self, rows: slice) -> tuple[torch.Tensor, torch.Tensor]:
        """The training vertices among ``rows``: their indices relative to ``rows.start``, and their labels."""
        tr = self.train
        local = tr[(tr >= rows.start) & (tr < rows.stop)] - rows.start
        return local, self.y[local + rows.start]

    @property
    def features(self) -> int:
        return int(self.x.shape[1])

    @property
    def classes(self) -> int:
        return int(self.y.max().item()) + 1


def normalised_adjacency(indptr: np.ndarray, indices: np.ndarray, n: int) -> sp.csr_matrix:
    """``D^-1/2 (A + I) D^-1/2`` as float64 CSR with sorted indices (A: the symmetric 0/1 adjacency)."""
    a = sp.csr_matrix((np.ones(len(indices)), indices.astype(np.int64), indptr.astype(np.int64)), shape=(n, n))
    a = (a + sp.identity(n, format="csr")).tocsr()
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = 1.0 / np.sqrt(deg)
    out = sp.diags(inv) @ a @ sp.diags(inv)
    out = out.tocsr()
    out.sort_indices()
    return out


def adj_rows(adj: sp.csr_matrix, rows: slice | np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """Rows of ``adj`` as a coalesced torch sparse COO tensor (all columns kept; row-major order)."""
    return to_torch_sparse(adj[rows].tocsr(), dtype)


def to_torch_sparse(block: sp.csr_matrix, dtype: torch.dtype) -> torch.Tensor:
    """A scipy CSR matrix as a coalesced torch sparse COO tensor."""
    block = block.tocsr()
    block.sort_indices()
    coo = block.tocoo()
    index = torch.from_numpy(np.stack([coo.row, coo.col]).astype(np.int64))
    return torch.sparse_coo_tensor(
        index, torch.from_numpy(coo.data).to(dtype), size=block.shape, check_invariants=False, is_coalesced=True
    )


def load_data(dataset: str, *, dtype: str = "float64", data_dir: str | None = None, seed: int = 0) -> GraphData:
    """Load Planetoid ``dataset`` (cora, citeseer, pubmed) through the data registry.

    Raises:
        ValueError: an unknown dataset, or a corrupt file (the loader names it).
        FileNotFoundError: the dataset is not in the data directory (and cannot be fetched).
    """
    if dataset not in ("cora", "citeseer", "pubmed"):
        raise ValueError(f"dataset={dataset!r} is not allowed: valid values are 'cora', 'citeseer', 'pubmed'")
    from workbench.data import ensure_dataset

    graph: Graph = load_graph(f"planetoid-{dataset}", data_dir=data_dir or None)
    root = ensure_dataset(f"planetoid-{dataset}", data_dir or None)
    feats = load_planetoid_features(root, dataset, graph.n)
    tdt = TORCH_DTYPES[dtype]
    if feats.missing:
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(graph.n, feats.x.shape[1], generator=gen, dtype=torch.float64).to(tdt)
        note = (
            f"{', '.join(feats.missing)} is missing from the data folder ({int((~feats.present).sum()):,} of "
            f"{graph.n:,} nodes without features): every node gets seeded N(0, 1) features of width "
            f"{feats.x.shape[1]} (seed {seed}); accuracy is not comparable with the literature"
        )
    else:
        x = torch.from_numpy(feats.x.astype(np.float64)).to(tdt)
        note = f"Planetoid features ({feats.x.shape[1]} bag-of-words columns)"
    adj = normalised_adjacency(graph.indptr, graph.indices, graph.n)
    return GraphData(
        name=dataset,
        n=graph.n,
        directed_edges=int(len(graph.indices)),
        adj=adj,
        x=x,
        y=torch.from_numpy(feats.y),
        train=torch.from_numpy(feats.train),
        val=torch.from_numpy(feats.val),
        test=torch.from_numpy(feats.test),
        feature_note=note,
        indptr=graph.indptr,
        indices=graph.indices,
        sparse_features=not feats.missing,
    )


def permuted(data: GraphData, order: np.ndarray) -> GraphData:
    """``data`` with vertex ``order[i]`` renamed ``i`` (chunks or partitions become contiguous row ranges)."""
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (data.n,) or not np.array_equal(np.sort(order), np.arange(data.n)):
        raise ValueError(f"order must be a permutation of 0..{data.n - 1}")
    new_id = np.empty(data.n, dtype=np.int64)
    new_id[order] = np.arange(data.n)
    adj = data.adj[order][:, order].tocsr()
    adj.sort_indices()
    a = sp.csr_matrix(
        (np.ones(len(data.indices)), data.indices.astype(np.int64), data.indptr.astype(np.int64)),
        shape=(data.n, data.n),
    )[order][:, order].tocsr()
    a.sort_indices()
    t = torch.from_numpy(new_id)
    return GraphData(
        name=data.name,
        n=data.n,
        directed_edges=data.directed_edges,
        adj=adj,
        x=data.x[order],
        y=data.y[order],
        train=torch.sort(t[data.train]).values,
        val=torch.sort(t[data.val]).values,
        test=torch.sort(t[data.test]).values,
        feature_note=data.feature_note,
        indptr=a.indptr,
        indices=a.indices,
        sparse_features=data.sparse_features,
        vertex_ids=order if data.vertex_ids is None else data.vertex_ids[order],
    )
