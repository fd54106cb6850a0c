"""Graph loaders: SNAP-style edge lists, Matrix Market, the Planetoid pickles, and names/specs.

Every loader returns a simple undirected :class:`~workbench.graphs.graph.Graph` through
:func:`~workbench.graphs.graph.from_edges` (self-loops and duplicate edges dropped and counted in
``graph.report``). A malformed file raises ``ValueError`` naming the file and the line number.

- :func:`load_edge_list`: whitespace- or comma-separated ``u v`` pairs (more columns, e.g. weights, are
  ignored); ``#`` and ``%`` comment lines; an optional first line ``n m`` with the counts, recognised when
  exactly ``m`` edge lines follow (GraphPi's format); any non-negative integer ids, remapped to ``0..n-1``.
- :func:`load_mtx`: ``%%MatrixMarket matrix coordinate {pattern,real,integer,complex}
  {general,symmetric,skew-symmetric,hermitian}``, square; the stored entries are the edges (values ignored).
- :func:`load_planetoid`: ``ind.<name>.graph`` (a pickled ``defaultdict(list)``), read with
  :class:`RestrictedUnpickler`, which admits only the handful of builtin/numpy types these files hold;
  class labels from ``ally``/``ty``/``test.index`` when present; :func:`load_planetoid_features` adds the
  feature rows and the standard split as PyTorch Geometric's ``Planetoid`` builds them.
- :func:`load_graph`: a registry name (``karate``, ``wiki-vote``, ``planetoid-citeseer`` ...), a synthetic
  spec (``er-1000-0.01``, ``rmat-12-8``, ``grid-30-30``, see :mod:`.generators`) or a file path.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.graphs.graph import Graph, from_edges
from workbench.memory import require

__all__ = [
    "RestrictedUnpickler",
    "load_edge_list",
    "load_mtx",
    "load_planetoid",
    "load_graph",
    "REGISTRY_GRAPHS",
    "restricted_load",
    "PlanetoidFeatures",
    "load_planetoid_features",
]

log = logging.getLogger(__name__)

#: registry name -> (loader kind, planetoid dataset name)
REGISTRY_GRAPHS = {
    "karate": ("mtx", ""),
    "wiki-vote": ("edges", ""),
    "planetoid-cora": ("planetoid", "cora"),
    "planetoid-citeseer": ("planetoid", "citeseer"),
    "planetoid-pubmed": ("planetoid", "pubmed"),
}


def _data_lines(path: Path):
    """(line number, stripped text) of every non-empty line; clear error for unreadable or binary files."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line:
            yield number, line


#: measured peak bytes of parsing a text graph file per byte of file (wiki-vote edge list: 32), with a margin
PARSE_BYTES_PER_FILE_BYTE = 40


def _check_file_memory(path: Path) -> None:
    require(
        path.stat().st_size * PARSE_BYTES_PER_FILE_BYTE,
        what=f"reading graph file {path}",
        hint="valid files fit in memory once parsed (about 40x their size): use a smaller graph",
    )


def load_edge_list(path: str | os.PathLike[str], *, name: str | None = None) -> Graph:
    """Read a SNAP-style edge list (see module docstring).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a line that is not two non-negative integers (message names file and line), or a
            header whose edge count does not match the edge lines.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"graph file {path} not found")
    _check_file_memory(path)
    rows: list[tuple[int, int, int]] = []  # (line, u, v)
    for number, line in _data_lines(path):
        if line[0] in "#%":
            continue
        parts = line.replace(",", " ").split()
        if len(parts) < 2:
            raise ValueError(f"{path}, line {number}: expected two vertex ids 'u v', got {line[:60]!r}")
        try:
            u, v = int(parts[0]), int(parts[1])
        except ValueError:
            raise ValueError(f"{path}, line {number}: vertex ids must be integers, got {line[:60]!r}") from None
        if u < 0 or v < 0:
            raise ValueError(f"{path}, line {number}: vertex ids must be >= 0, got {line[:60]!r}")
        rows.append((number, u, v))
    if not rows:
        raise ValueError(f"{path}: no edges found")
    first = rows[0]
    header = False
    if len(rows) > 1 and first[2] == len(rows) - 1:
        header = True  # "n m" followed by exactly m edges
    edges = np.array([(u, v) for _, u, v in (rows[1:] if header else rows)], dtype=np.int64).reshape(-1, 2)
    graph = from_edges(edges[:, 0], edges[:, 1], name=name or path.stem, source=str(path), remap=True)
    if header and graph.n > first[1]:
        raise ValueError(f"{path}, line {first[0]}: header says {first[1]} vertices but the edges use {graph.n}")
    return graph


_MTX_FIELDS = ("pattern", "real", "integer", "complex")
_MTX_SYMMETRY = ("general", "symmetric", "skew-symmetric", "hermitian")


def load_mtx(path: str | os.PathLike[str], *, name: str | None = None) -> Graph:
    """Read a square Matrix Market coordinate file as a graph: entry (i, j) is edge {i-1, j-1}.

    Values are ignored (the sparsity pattern is the graph); general matrices are symmetrised (``A + A^T``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: bad banner, ``array`` format, non-square size, entry out of range or malformed
            (message names file and line), or fewer/more entries than the size line says.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"graph file {path} not found")
    _check_file_memory(path)
    lines = _data_lines(path)
    try:
        number, banner = next(lines)
    except StopIteration:
        raise ValueError(f"{path}: empty file") from None
    words = banner.lower().split()
    if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
        raise ValueError(
            f"{path}, line {number}: expected '%%MatrixMarket matrix coordinate <field> <symmetry>', "
            f"got {banner[:80]!r}"
        )
    if words[2] != "coordinate":
        raise ValueError(f"{path}, line {number}: format {words[2]!r} is not supported: valid format is 'coordinate'")
    if words[3] not in _MTX_FIELDS or words[4] not in _MTX_SYMMETRY:
        raise ValueError(
            f"{path}, line {number}: field {words[3]!r} / symmetry {words[4]!r} not recognised: valid "
            f"fields are {', '.join(_MTX_FIELDS)}; symmetries {', '.join(_MTX_SYMMETRY)}"
        )
    size = None
    src: list[int] = []
    dst: list[int] = []
    for number, line in lines:
        if line[0] == "%":
            continue
        parts = line.split()
        if size is None:
            try:
                rows, cols, nnz = (int(x) for x in parts[:3])
            except ValueError:
                raise ValueError(
                    f"{path}, line {number}: expected the size line 'rows cols entries', got {line[:60]!r}"
                ) from None
            if len(parts) != 3:
                raise ValueError(
                    f"{path}, line {number}: expected the size line 'rows cols entries', got {line[:60]!r}"
                )
            if rows != cols:
                raise ValueError(f"{path}, line {number}: matrix is {rows} x {cols}; a graph needs a square matrix")
            size = (rows, nnz, number)
            continue
        try:
            i, j = int(parts[0]), int(parts[1])
        except (ValueError, IndexError):
            raise ValueError(f"{path}, line {number}: expected 'row col [value]', got {line[:60]!r}") from None
        if not (1 <= i <= size[0] and 1 <= j <= size[0]):
            raise ValueError(f"{path}, line {number}: entry ({i}, {j}) is out of range: valid indices are 1..{size[0]}")
        src.append(i - 1)
        dst.append(j - 1)
    if size is None:
        raise ValueError(f"{path}: no size line after the banner")
    if len(src) != size[1]:
        raise ValueError(f"{path}, line {size[2]}: size line says {size[1]} entries but the file has {len(src)}")
    return from_edges(
        np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), size[0], name=name or path.stem, source=str(path)
    )


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler for the Planetoid files: admits only the types they hold (never arbitrary code).

    Allowed globals: builtin ``list``/``dict``/``set``, ``collections.defaultdict`` and ``OrderedDict``,
    numpy ``ndarray``/``dtype``/``_reconstruct``/``scalar``, and scipy's ``csr_matrix``/``csc_matrix``
    (the feature matrices). Anything else raises ``pickle.UnpicklingError`` naming the refused global.
    """

    def _allowed(self) -> dict[tuple[str, str], Any]:
        import collections

        allowed: dict[tuple[str, str], Any] = {
            ("__builtin__", "list"): list,
            ("builtins", "list"): list,
            ("__builtin__", "dict"): dict,
            ("builtins", "dict"): dict,
            ("__builtin__", "set"): set,
            ("builtins", "set"): set,
            ("collections", "defaultdict"): collections.defaultdict,
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("numpy", "ndarray"): np.ndarray,
            ("numpy", "dtype"): np.dtype,
        }
        for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
            allowed[(mod, "_reconstruct")] = _np_reconstruct()
            allowed[(mod, "scalar")] = _np_scalar()
        return allowed

    def find_class(self, module: str, name: str) -> Any:
        allowed = self._allowed()
        if (module, name) in allowed:
            return allowed[(module, name)]
        if module in ("scipy.sparse.csr", "scipy.sparse._csr") and name == "csr_matrix":
            import scipy.sparse

            return scipy.sparse.csr_matrix
        if module in ("scipy.sparse.csc", "scipy.sparse._csc") and name == "csc_matrix":
            import scipy.sparse

            return scipy.sparse.csc_matrix
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a Planetoid file")


def _np_reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


def _np_scalar():
    try:
        from numpy._core.multiarray import scalar
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import scalar
    return scalar


def restricted_load(path: str | os.PathLike[str]) -> Any:
    """Unpickle a Planetoid file with :class:`RestrictedUnpickler` (``latin1`` for the Python-2 pickles)."""
    data = Path(path).read_bytes()
    try:
        return RestrictedUnpickler(io.BytesIO(data), encoding="latin1").load()
    except pickle.UnpicklingError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except (EOFError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"{path}: not a readable Planetoid pickle ({type(exc).__name__}: {exc})") from None


def _onehot_labels(arr: Any) -> np.ndarray:
    a = np.asarray(arr)
    lab = a.argmax(axis=1).astype(np.int32)
    lab[a.max(axis=1) <= 0] = -1
    return lab


def load_planetoid(root: str | os.PathLike[str], dataset: str, *, labels: bool = True) -> Graph:
    """Read Planetoid ``ind.<dataset>.graph`` under ``root`` (and the class labels when present).

    Vertices keep their Planetoid ids ``0..n-1`` (isolated ones included); labels are the class index, or
    -1 for vertices without a label (CiteSeer's 15 test-less nodes).

    Raises:
        FileNotFoundError: no ``ind.<dataset>.graph`` under ``root``.
        ValueError: the file holds other types than the Planetoid ones, or not a dict of id lists.
    """
    root = Path(root)
    path = root / f"ind.{dataset}.graph"
    if not path.is_file():
        raise FileNotFoundError(f"Planetoid graph file {path} not found")
    adjacency = restricted_load(path)
    if not isinstance(adjacency, dict):
        raise ValueError(f"{path}: expected a dict of neighbour lists, got {type(adjacency).__name__}")
    src: list[int] = []
    dst: list[int] = []
    for key, neighbours in adjacency.items():
        if not isinstance(neighbours, (list, tuple)):
            raise ValueError(f"{path}: entry {key!r} is a {type(neighbours).__name__}, expected a list of ids")
        src.extend([int(key)] * len(neighbours))
        dst.extend(int(x) for x in neighbours)
    n = max(len(adjacency), max(src + dst, default=-1) + 1)
    lab = _planetoid_labels(root, dataset, n) if labels else None
    return from_edges(
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        n,
        name=f"planetoid-{dataset}",
        source=str(path),
        labels=lab,
    )


def _planetoid_labels(root: Path, dataset: str, n: int) -> np.ndarray | None:
    files = [root / f"ind.{dataset}.{s}" for s in ("ally", "ty", "test.index")]
    if not all(f.is_file() for f in files):
        return None
    ally, ty = _onehot_labels(restricted_load(files[0])), _onehot_labels(restricted_load(files[1]))
    test_index = np.array([int(x) for x in files[2].read_text().split()], dtype=np.int64)
    out = np.full(n, -1, dtype=np.int32)
    out[: min(len(ally), n)] = ally[:n]
    keep = test_index < n
    out[test_index[keep]] = ty[: len(test_index)][keep]
    return out


@dataclass(frozen=True, eq=False)
class PlanetoidFeatures:
    """Node features, labels and the standard split of a Planetoid dataset, in the graph's vertex ids.

    Attributes:
        x: float32 ``(n, f)`` feature rows; a row whose features the files do not hold is zero.
        present: bool ``(n,)``: the files hold this row's features (PubMed without ``allx``: only the
            ``x`` and ``tx`` rows; CiteSeer's 15 nodes outside ``test.index``'s range gap: zero rows, present).
        y: int64 ``(n,)`` class index (-1: no label).
        train, val, test: int64 vertex ids of the standard split (``range(len(y))``, the next 500, and
            ``test.index``), as PyTorch Geometric's ``Planetoid(split="public")``.
        missing: names of the files that were absent (``("ind.pubmed.allx",)`` for the shared PubMed).
    """

    x: np.ndarray
    present: np.ndarray
    y: np.ndarray
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    missing: tuple[str, ...] = ()


def load_planetoid_features(root: str | os.PathLike[str], dataset: str, n: int) -> PlanetoidFeatures:
    """Features, labels and the public split of Planetoid ``dataset`` under ``root`` for ``n`` vertices.

    Follows PyTorch Geometric's ``read_planetoid_data``: rows ``0..len(allx)-1`` from ``allx``, the row of
    vertex ``test.index[i]`` from ``tx[i]`` (CiteSeer's ids in the test range without a test row: zero
    features, label -1 here where PyG writes class 0; they are in no split). A missing ``allx`` (the shared
    PubMed) leaves those rows zero and ``present`` false, and names the file in ``missing``.

    Raises:
        FileNotFoundError: ``x``, ``tx``, ``ally``, ``ty``, ``y`` or ``test.index`` is missing.
        ValueError: a file is not a Planetoid pickle, or shapes disagree.
    """
    root = Path(root)
    need = {s: root / f"ind.{dataset}.{s}" for s in ("x", "y", "tx", "ty", "ally", "test.index")}
    for path in need.values():
        if not path.is_file():
            raise FileNotFoundError(f"Planetoid file {path} not found")

    def dense(path: Path) -> np.ndarray:
        obj = restricted_load(path)
        arr = obj.toarray() if hasattr(obj, "toarray") else np.asarray(obj)
        if arr.ndim != 2:
            raise ValueError(f"{path}: expected a 2-D matrix, got shape {arr.shape}")
        return arr

    x_train, tx = dense(need["x"]), dense(need["tx"])
    y_train, ty, ally = (_onehot_labels(dense(need[s])) for s in ("y", "ty", "ally"))
    try:
        test_index = np.array([int(t) for t in need["test.index"].read_text().split()], dtype=np.int64)
    except ValueError:
        raise ValueError(f"{need['test.index']}: expected one integer vertex id per line") from None
    if len(test_index) != tx.shape[0] or tx.shape[1] != x_train.shape[1]:
        raise ValueError(
            f"{need['tx']}: {tx.shape} rows/columns disagree with test.index ({len(test_index)}) "
            f"or x ({x_train.shape[1]} columns)"
        )
    if test_index.size and (test_index.min() < 0 or test_index.max() >= n):
        raise ValueError(f"{need['test.index']}: ids must lie in 0..{n - 1}")
    x = np.zeros((n, x_train.shape[1]), dtype=np.float32)
    present = np.zeros(n, dtype=bool)
    missing: list[str] = []
    allx_path = root / f"ind.{dataset}.allx"
    if allx_path.is_file():
        allx = dense(allx_path)
        x[: len(allx)] = allx[:n]
        present[: len(allx)] = True
    else:
        missing.append(allx_path.name)
        x[: len(x_train)] = x_train
        present[: len(x_train)] = True
    x[test_index] = tx
    present[test_index] = True
    if dataset == "citeseer":  # PyG's tx_extended: ids in the test range without a row are zero, yet present
        present[test_index.min() : test_index.max() + 1] = True
    y = np.full(n, -1, dtype=np.int64)
    y[: len(ally)] = ally[:n]
    y[test_index] = ty
    train = np.arange(len(y_train), dtype=np.int64)
    val = np.arange(len(y_train), len(y_train) + 500, dtype=np.int64)
    return PlanetoidFeatures(
        x=x, present=present, y=y, train=train, val=val, test=np.sort(test_index), missing=tuple(missing)
    )


def load_graph(spec: str, *, data_dir: str | os.PathLike[str] | None = None) -> Graph:
    """A graph from a registry name, a synthetic spec or a file path.

    Args:
        spec: ``karate``, ``wiki-vote``, ``planetoid-cora|citeseer|pubmed`` (read from the data directory
            through :func:`workbench.data.registry.dataset_path`), a synthetic spec ``er-N-P``,
            ``rmat-SCALE-EDGEFACTOR[-SEED]``, ``grid-R-C`` (see :func:`.generators.from_spec`), or a path
            to a ``.mtx`` file or an edge list.
        data_dir: data directory for registry names (default: ``WORKBENCH_DATA`` or the project's ``data/``).

    Raises:
        FileNotFoundError: a registry dataset or a file that is not there.
        ValueError: an unknown name that is no file either (the message lists the valid forms).
    """
    from workbench.graphs.generators import SPEC_HELP, from_spec, is_spec

    spec = spec.strip()
    if spec in REGISTRY_GRAPHS:
        from workbench.data.fetch import ensure_dataset

        kind, dataset = REGISTRY_GRAPHS[spec]
        path = ensure_dataset(spec, data_dir)
        if kind == "mtx":
            return load_mtx(path, name=spec)
        if kind == "edges":
            return load_edge_list(path, name=spec)
        return load_planetoid(path, dataset)
    if is_spec(spec):
        return from_spec(spec)
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix.lower() == ".mtx":
            return load_mtx(path)
        return load_edge_list(path)
    if path.suffix or os.sep in spec:
        raise FileNotFoundError(f"graph file {path} not found")
    raise ValueError(
        f"graph={spec!r} is neither a dataset ({', '.join(REGISTRY_GRAPHS)}), a synthetic spec ({SPEC_HELP}) nor a file"
    )
