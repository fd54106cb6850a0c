"""Tests of ``workbench.distributed.launch``: forked gloo workers, results in rank order, errors re-raised.

Reference: the obvious expected values (each rank returns a function of its rank; a broadcast-free sum).
"""

from __future__ import annotations

import os
import time

import pytest
import torch

from workbench.distributed import init_from_env, run_workers

# worker processes, subprocesses or whole CLI runs: the slow lane
pytestmark = pytest.mark.slow


def _rank_info(rank: int, world: int, comm, offset: int) -> tuple[int, int, int, int]:
    total = torch.tensor([float(rank)])
    comm.all_reduce(total)
    return rank + offset, world, comm.rank, int(total.item())


@pytest.mark.parametrize("world", [1, 2, 3, 16])
def test_results_come_back_in_rank_order(world: int) -> None:
    res = run_workers(_rank_info, world, 100)
    assert res == [(100 + r, world, r, world * (world - 1) // 2) for r in range(world)]


def _fail_on_rank(rank: int, world: int, comm, bad: int, exc_type: type) -> int:
    if rank == bad:
        raise exc_type(f"rank {rank} refuses: value=7 is out of range")
    comm.barrier()  # the others block until the failing rank is gone
    return rank


@pytest.mark.parametrize("exc_type", [ValueError, KeyError, RuntimeError])
def test_worker_exception_keeps_type_and_message(exc_type: type) -> None:
    start = time.monotonic()
    with pytest.raises(exc_type, match="rank 1 refuses: value=7 is out of range"):
        run_workers(_fail_on_rank, 3, 1, exc_type, timeout_s=60)
    assert time.monotonic() - start < 30  # peers are terminated, not left waiting for the gloo timeout


def _sleep(rank: int, world: int, comm) -> None:
    time.sleep(30)


def test_timeout_kills_workers() -> None:
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="timeout_s=1"):
        run_workers(_sleep, 2, timeout_s=1)
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    "world, message",
    [(0, "world_size=0 is out of range: valid range is 1..64"), (65, "world_size=65"), (2.0, "world_size=2.0")],
)
def test_bad_world_size(world, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_workers(_rank_info, world, 0)


def test_bad_backend_and_timeout() -> None:
    with pytest.raises(ValueError, match="backend='mpi' is unknown"):
        run_workers(_rank_info, 1, 0, backend="mpi")
    with pytest.raises(ValueError, match="timeout_s=0 must be > 0"):
        run_workers(_rank_info, 1, 0, timeout_s=0)


def test_init_from_env_names_missing_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(ValueError, match=r"\['WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT'\] are not set: .*torchrun"):
        init_from_env()


def _noisy(rank: int, world: int, comm, fail: bool) -> int:
    os.write(2, f"native noise from rank {rank}\n".encode())  # as a C++ library writes, under Python's stderr
    if fail and rank == 1:
        raise ValueError("bad rank 1")
    return rank


def test_worker_stderr_is_replayed_after_a_good_run(capfd: pytest.CaptureFixture) -> None:
    assert run_workers(_noisy, 2, False) == [0, 1]
    err = capfd.readouterr().err
    assert err == "native noise from rank 0\nnative noise from rank 1\n"


def test_worker_stderr_goes_into_the_error_not_onto_the_terminal(capfd: pytest.CaptureFixture) -> None:
    """A failing run's workers print nothing to the terminal (the CLI reports one line); their stderr travels
    in the exception's notes."""
    with pytest.raises(ValueError, match="bad rank 1") as err:
        run_workers(_noisy, 2, True)
    assert capfd.readouterr().err == ""
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert "stderr rank 0:\nnative noise from rank 0" in notes and "native noise from rank 1" in notes


def test_socket_dir_is_short_under_a_long_tmpdir(tmp_path) -> None:
    """A TMPDIR too long for a Unix socket (pytest's tmp_path is) made DataLoader workers hang; the socket
    folder then lies under /tmp, and is removed when the process exits."""
    import subprocess
    import sys

    long_tmp = tmp_path / ("d" * 60) / ("e" * 60)
    long_tmp.mkdir(parents=True)
    code = (
        "import socket, os\n"
        "from workbench.distributed.sockets import ensure_socket_dir\n"
        "d = ensure_socket_dir()\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(d, 'listener-12345678')); s.close()\n"
        "print(d)\n"
    )
    env = {**os.environ, "TMPDIR": str(long_tmp)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    folder = done.stdout.strip()
    assert folder.startswith(("/tmp/", "/var/tmp/")) and len(folder) < 60
    assert not os.path.exists(folder)  # multiprocessing removed it at exit
    assert list(long_tmp.iterdir()) == []
