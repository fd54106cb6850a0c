"""Child process of the crash tests: train in FOLDER, dying or hitting a file-size limit on the way.

python gs_crash_child.py FOLDER STEPS kill-at-write K   # SIGKILL itself in its K-th optimizer-state write
python gs_crash_child.py FOLDER STEPS fsize BYTES       # RLIMIT_FSIZE = BYTES (SIGXFSZ ignored -> EFBIG)
python gs_crash_child.py FOLDER STEPS run               # train (the parent may SIGKILL it at any time)
"""

import os
import resource
import signal
import sys

from gs_cases import tiny, trainer

from workbench.atomic import WriteError

CFG = tiny(layers=2)
SCHEDULE, M = "vertical-overlap", 3


def main() -> int:
    folder, steps, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    hook = None
    if mode == "kill-at-write":
        target, seen = int(sys.argv[4]), [0]

        def hook(path, nbytes):  # noqa: ANN001, ANN202
            if not str(path).endswith(".optim"):
                return
            seen[0] += 1
            if seen[0] == target:  # a torn write: half of the bytes (garbage) land, then the process dies
                fd = os.open(path, os.O_WRONLY | os.O_CREAT)
                os.pwrite(fd, b"\xff" * (nbytes // 2), 0)
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "fsize":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = int(sys.argv[4])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        t = trainer(CFG, folder, SCHEDULE, M, checkpoints="ssd", on_write=hook)  # writes the initial state
    except WriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    try:
        t.train(steps)
    except WriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    finally:
        t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
