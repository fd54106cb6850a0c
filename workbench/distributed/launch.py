"""Start real ``torch.distributed`` worker processes on one machine, or join a ``torchrun`` job.

``run_workers`` forks ``world_size`` processes (start method "fork": no re-import of torch, 16 workers start
in well under a second on 2 cores), rendezvous through a ``file://`` store in a fresh temporary directory (so
parallel runs never collide on a port), runs ``fn(rank, world_size, comm, *args)`` in each and returns the
return values in rank order. A worker's exception is re-raised in the parent with its type and message
(the worker's traceback is attached as a note). ``init_from_env`` is the ``torchrun`` path: the same kernels,
with the rank and rendezvous read from the environment (gloo on CPU, NCCL when CUDA is available).
"""

from __future__ import annotations

import importlib
import logging
import os
import pickle
import shutil
import tempfile
import time
import traceback
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from workbench.distributed.comm import Comm

log = logging.getLogger(__name__)

#: torch.multiprocessing can fork at most this many workers in one call here (a guard against typos)
MAX_WORKERS = 64


def _worker(
    rank: int, fn: Callable[..., Any], world_size: int, workdir: str, backend: str, timeout_s: float,
    args: tuple,
) -> None:
    """Body of one forked worker: init the group, run ``fn``, pickle its result or its exception."""
    torch.set_num_threads(1)
    out = Path(workdir)

    def record(exc: BaseException) -> None:
        # timestamp first: peers fail later ("connection closed") once this rank tears its group down
        rec = {"time": time.time(), "tb": traceback.format_exc(), "type": type(exc).__name__, "msg": str(exc)}
        try:
            rec["exc"] = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an unpicklable exception travels as type name and message
            pass
        path = out / f"error_{rank}.pkl"
        if not path.exists():
            path.write_bytes(pickle.dumps(rec))

    try:
        dist.init_process_group(
            backend, init_method=f"file://{workdir}/store", rank=rank, world_size=world_size,
            timeout=timedelta(seconds=timeout_s),
        )
        try:
            result = fn(rank, world_size, Comm(), *args)
        except BaseException as exc:
            record(exc)
            raise
        finally:
            dist.destroy_process_group()
        (out / f"result_{rank}.pkl").write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # noqa: BLE001 - recorded for the parent, then re-raised
        record(exc)
        raise


def _first_error(workdir: Path) -> BaseException | None:
    """The earliest recorded worker exception (later ones are usually peers losing their connection)."""
    records = [pickle.loads(p.read_bytes()) for p in workdir.glob("error_*.pkl")]
    if not records:
        return None
    first = min(records, key=lambda r: r["time"])
    exc: BaseException | None = None
    if "exc" in first:
        try:
            exc = pickle.loads(first["exc"])
        except Exception:  # noqa: BLE001 - fall back to a RuntimeError carrying the message
            exc = None
    if exc is None:
        exc = RuntimeError(f"{first['type']}: {first['msg']}")
    if hasattr(exc, "add_note"):
        exc.add_note("worker traceback:\n" + first["tb"])
    return exc


def run_workers(
    fn: Callable[..., Any], world_size: int, *args: Any, backend: str = "gloo", timeout_s: float = 120.0
) -> list[Any]:
    """Run ``fn(rank, world_size, comm, *args)`` in ``world_size`` forked processes; return results by rank.

    Parameters:
        fn: the worker body; gets its rank, the world size, a :class:`Comm` over all ranks, then ``args``.
            It must return something picklable (tensors are fine).
        world_size: number of processes, 1..64.
        backend: "gloo" (CPU) or "nccl" (CUDA; the parent must not have initialised CUDA before forking).
        timeout_s: wall-clock limit for the whole run and for any collective (seconds, > 0).

    Returns:
        ``[fn's return value on rank 0, ..., on rank world_size-1]``.

    Raises:
        The first worker exception with its original type and message (ValueError stays ValueError);
        TimeoutError when the run exceeds ``timeout_s``; ValueError for bad arguments.

    Example:
        >>> run_workers(lambda rank, world, comm: rank * 10, 3)
        [0, 10, 20]
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or not 1 <= world_size <= MAX_WORKERS:
        raise ValueError(f"world_size={world_size!r} is out of range: valid range is 1..{MAX_WORKERS}")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend={backend!r} is unknown: valid values are ('gloo', 'nccl')")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s={timeout_s!r} must be > 0 seconds")
    # autograd imports this (and sympy) on the first backward with an explicit gradient; importing it once
    # here, before forking, saves every worker about a second
    importlib.import_module("torch.fx.experimental.symbolic_shapes")
    workdir = Path(tempfile.mkdtemp(prefix="workbench-dist-"))
    try:
        ctx = mp.start_processes(
            _worker, args=(fn, world_size, str(workdir), backend, timeout_s, args), nprocs=world_size,
            join=False, start_method="fork",
        )
        deadline = time.monotonic() + timeout_s
        try:
            while not ctx.join(timeout=0.02):
                if time.monotonic() > deadline:
                    for proc in ctx.processes:
                        if proc.is_alive():
                            proc.kill()
                    raise TimeoutError(f"distributed run with world_size={world_size} exceeded timeout_s={timeout_s}")
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as err:
            exc = _first_error(workdir)
            if exc is None:
                raise RuntimeError(f"a worker failed without recording an error: {err}") from err
            raise exc from None
        return [pickle.loads((workdir / f"result_{rank}.pkl").read_bytes()) for rank in range(world_size)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def init_from_env(backend: str | None = None, *, timeout_s: float = 600.0) -> Comm:
    """Join a ``torchrun`` job: read RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and return a world :class:`Comm`.

    ``backend`` None picks "nccl" when CUDA is available (then sets this rank's device from LOCAL_RANK),
    else "gloo". Raises ValueError naming any missing environment variable.
    """
    missing = [name for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if name not in os.environ]
    if missing:
        raise ValueError(
            f"environment variables {missing} are not set: start this program with torchrun "
            "(python -m torch.distributed.run --nproc-per-node N ...)"
        )
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if not dist.is_initialized():
        dist.init_process_group(backend, init_method="env://", timeout=timedelta(seconds=timeout_s))
    log.debug("joined torchrun job: rank %d of %d (%s)", dist.get_rank(), dist.get_world_size(), backend)
    return Comm()
