"""Real multi-process runs: fork workers or join torchrun (``launch``), and a byte-counting ``Comm``."""

from workbench.distributed.comm import ByteCounter, Comm, Pending
from workbench.distributed.errors import WorkerFailed, WorkerTimeout
from workbench.distributed.launch import init_from_env, run_workers

__all__ = ["ByteCounter", "Comm", "Pending", "WorkerFailed", "WorkerTimeout", "init_from_env", "run_workers"]
