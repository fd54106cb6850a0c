"""Compile generated loop nests with numba and run them over a graph on worker threads.

:func:`compile_plan` writes the source from :func:`.compiler.generate_source` to a file named by its hash in
a kernel cache directory, imports it, and compiles ``kernel`` with ``numba.njit(cache=True)``: a second run,
even in a new process, loads the machine code from numba's disk cache instead of compiling again. The
returned :class:`CompiledKernel` records the seconds spent compiling (or loading) so callers report them
apart from the counting time.

:func:`run_kernel` splits the root vertices into strided chunks (hubs have the smallest ids after
:meth:`Graph.by_degree`, so striding spreads them) and runs chunks on ``workers`` threads; the kernels
release the GIL (``nogil=True``), so threads run in parallel.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.atomic import write_text
from workbench.graphs.compiler import KernelPlan, generate_source, renamed
from workbench.graphs.graph import Graph

__all__ = ["CompiledKernel", "compile_plan", "precompile", "run_kernel", "run_emit", "default_cache_dir"]

log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """``~/.cache/workbench/graph-kernels`` (or a per-user temp folder when home is not writable)."""
    for base in (
        Path.home() / ".cache" / "workbench" / "graph-kernels",
        Path(tempfile.gettempdir()) / f"workbench-graph-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}",
    ):
        try:
            base.mkdir(parents=True, exist_ok=True)
            if os.access(base, os.W_OK):
                return base
        except OSError:
            continue
    raise OSError("no writable directory for compiled graph kernels")


@dataclass(frozen=True, eq=False)
class CompiledKernel:
    """A compiled kernel: the numba dispatcher, its source, tables it needs, compile/load seconds, and
    ``plab``, the label each pattern vertex must match (from the plan; -1 = any)."""

    fn: Callable[..., int]
    source: str
    n_tables: int
    compile_seconds: float
    from_disk_cache: bool
    digest: str
    plab: np.ndarray


@functools.lru_cache(maxsize=1024)
def _compile_source(source: str, cache_dir: str) -> tuple[Callable[..., int], float, bool, str]:
    start = time.perf_counter()
    path = _source_path(source, cache_dir)
    name = path.stem
    digest = name[4:]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    fn = module.kernel
    e32 = np.zeros(1, dtype=np.int32)
    fn(
        np.zeros(2, dtype=np.int64),
        e32,
        e32,
        e32,
        np.zeros(0, dtype=np.int64),
        np.zeros((1, 1), dtype=np.int64),
        np.zeros((1, 1), dtype=np.int32),
        1,
        np.zeros((0, 1), dtype=np.int32),
        np.zeros((0, 1), dtype=np.int64),
    )
    seconds = time.perf_counter() - start
    hits = sum(fn.stats.cache_hits.values()) if hasattr(fn, "stats") else 0
    path.with_suffix(".ok").touch()  # compiled once: precompile() skips it from now on
    log.debug("kernel %s ready in %.2f s (%s)", name, seconds, "disk cache" if hits else "compiled")
    return fn, seconds, bool(hits), digest


def compile_plan(plan: KernelPlan, cache_dir: str | os.PathLike[str] | None = None) -> CompiledKernel:
    """Generate, compile (or load from cache) the kernel of ``plan``.

    The first call in a process for a given source pays the compile (about 0.3-2 s) or a disk-cache load
    (about 10-50 ms); later calls return the in-process kernel at once with ``compile_seconds = 0``.
    """
    source, n_tables = generate_source(plan)
    directory = str(Path(cache_dir) if cache_dir is not None else default_cache_dir())
    before = _compile_source.cache_info().hits
    fn, seconds, from_disk, digest = _compile_source(source, directory)
    fresh = _compile_source.cache_info().hits == before
    plab = np.full(8, -1, dtype=np.int32)
    for b in renamed(plan).all_binds():  # the kernel names vertices in binding order
        plab[b.vertex] = b.label
    return CompiledKernel(fn, source, n_tables, seconds if fresh else 0.0, from_disk, digest, plab)


def _source_path(source: str, cache_dir: str) -> Path:
    """Write ``source`` to its hash-named file in ``cache_dir`` (atomically) and return the path."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    path = Path(cache_dir) / f"wbk_{digest}.py"
    if not path.is_file() or path.read_text() != source:
        write_text(path, source)  # atomic: concurrent processes (and threads) see a whole file
    return path


def compile_files(paths: list[str], cache_dir: str) -> None:
    """Entry point of a precompile worker process: compile each kernel file into numba's disk cache."""
    for path in paths:
        _compile_source(Path(path).read_text(), cache_dir)


def precompile(
    plans: list[KernelPlan], *, processes: int = 2, cache_dir: str | os.PathLike[str] | None = None
) -> float:
    """Compile the kernels of ``plans`` into the disk cache on ``processes`` worker processes (numba compiles
    one function at a time per process), so that :func:`compile_plan` then only loads them. Returns the
    wall seconds spent. Sources already compiled in this process are skipped; with ``processes <= 1`` or a
    single kernel, compiles here.
    """
    import subprocess

    directory = str(Path(cache_dir) if cache_dir is not None else default_cache_dir())
    sources = list(dict.fromkeys(generate_source(p)[0] for p in plans))
    start = time.perf_counter()
    todo = []
    for src in sources:
        path = _source_path(src, directory)
        if not path.with_suffix(".ok").is_file():
            todo.append(str(path))
    if processes > 1 and len(todo) > 1:
        code = (
            "import sys, json; from workbench.graphs.kernels import compile_files; "
            "compile_files(json.loads(sys.argv[1]), sys.argv[2])"
        )
        import json

        procs = [
            subprocess.Popen([sys.executable, "-c", code, json.dumps(todo[i::processes]), directory])
            for i in range(min(processes, len(todo)))
        ]
        for proc in procs:
            if proc.wait() != 0:
                log.warning("a precompile worker exited with status %s; compiling here instead", proc.returncode)
    for src in sources:
        _compile_source(src, directory)
    return time.perf_counter() - start


_NO_EMB = np.zeros((0, 1), dtype=np.int32)
_NO_EXT = np.zeros((0, 1), dtype=np.int64)


def run_emit(kernel: CompiledKernel, graph: Graph, cut_size: int, n_factors: int) -> tuple[np.ndarray, np.ndarray]:
    """Run an emit-mode kernel on every root (one thread, deterministic order): the cut embeddings
    ``(rows, cut_size)`` int32 and their factor counts ``(rows, n_factors)`` int64."""
    n = graph.n
    labels = graph.labels if graph.labels is not None else np.zeros(max(n, 1), dtype=np.int32)
    rows_cap = max(graph.m, 16)
    roots = np.arange(n, dtype=np.int64)
    width = n if kernel.n_tables else 1
    while True:
        emb = np.zeros((rows_cap, cut_size), dtype=np.int32)
        ext = np.zeros((rows_cap, max(n_factors, 1)), dtype=np.int64)
        tabs = np.zeros((max(kernel.n_tables, 1), width), dtype=np.int64)
        touched = np.zeros((max(kernel.n_tables, 1), width), dtype=np.int32)
        rows = int(
            kernel.fn(
                graph.indptr,
                graph.indices,
                labels,
                kernel.plab,
                roots,
                tabs,
                touched,
                max(graph.max_degree, 1),
                emb,
                ext,
            )
        )
        if rows <= rows_cap:
            return emb[:rows], ext[:rows, :n_factors]
        rows_cap = rows


def run_kernel(
    kernel: CompiledKernel,
    graph: Graph,
    *,
    workers: int = 1,
    roots: np.ndarray | None = None,
    chunks_per_worker: int = 4,
) -> int:
    """Sum of the kernel's count over ``roots`` (default every vertex), on ``workers`` threads.

    Returns the exact integer total. Raises OverflowError when a kernel's int64 total would overflow.
    """
    n = graph.n
    roots = np.arange(n, dtype=np.int64) if roots is None else np.asarray(roots, dtype=np.int64)
    labels = graph.labels if graph.labels is not None else np.zeros(max(n, 1), dtype=np.int32)
    bufsize = max(graph.max_degree, 1)
    rows = max(kernel.n_tables, 1)
    width = n if kernel.n_tables else 1

    def work(chunk: np.ndarray) -> int:
        tabs = np.zeros((rows, width), dtype=np.int64)
        touched = np.zeros((rows, width), dtype=np.int32)
        return int(
            kernel.fn(graph.indptr, graph.indices, labels, kernel.plab, chunk, tabs, touched, bufsize, _NO_EMB, _NO_EXT)
        )

    if workers <= 1 or roots.shape[0] < 64:
        results = [work(roots)]
    else:
        n_chunks = workers * chunks_per_worker
        parts = [np.ascontiguousarray(roots[i::n_chunks]) for i in range(n_chunks)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(work, parts))
    if min(results) < 0 or sum(results) > 2**63 - 1:
        raise OverflowError(f"count on {graph.name} exceeds the int64 range of the kernels (about 9.2e18)")
    return sum(results)
