"""Memory guards: generators and loaders refuse, before allocating, what cannot fit (reference: the kernel's
accounting of RLIMIT_AS in a subprocess, and a patched ``available_bytes``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench import memory
from workbench.graphs import generators, loaders
from workbench.solvers import matrices, wathen


def test_available_bytes_sees_an_address_space_limit():
    code = (
        "import resource; from workbench.memory import available_bytes; "
        "resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.RLIM_INFINITY)); print(available_bytes())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 0 < int(out.stdout) < 8 << 30


@pytest.mark.parametrize(
    "build, what",
    [
        (lambda: generators.rmat(24, 64), "graph rmat-24-64 needs about 194 GB"),
        (lambda: generators.erdos_renyi(1 << 20, 0.0002), "graph er-1048576-0.0002 needs about"),
        (lambda: generators.grid(4000, 4000), "graph grid-4000-4000 needs about"),
        (lambda: wathen.wathen(1000, 1000), "wathen-1000-1000 needs about"),
    ],
)
def test_generators_refuse_with_the_estimate_and_the_available_memory(monkeypatch, build, what):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 30)
    with pytest.raises(ValueError, match=rf"{what}.* of memory but 1.07 GB is available"):
        build()


def test_loaders_refuse_a_file_too_large_to_parse(monkeypatch, tmp_path):
    edges = tmp_path / "big.txt"
    edges.write_text("0 1\n" * 10_000)
    mtx = tmp_path / "big.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n")
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(ValueError, match="reading graph file .*big.txt needs about 1.6 MB"):
        loaders.load_edge_list(edges)
    with pytest.raises(ValueError, match="reading matrix file .*big.mtx.* needs about"):
        matrices.read_matrix_market(mtx)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_cli_refuses_with_exit_2_under_an_8_gb_limit():
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.RLIM_INFINITY)); "
        "from workbench.cli import main; sys.exit(main(['run', 'dwarvesgraph', '--graph', 'rmat-24-8']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "graph rmat-24-8 needs about 25.2 GB of memory but" in out.stderr
