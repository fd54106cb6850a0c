"""GreedySnake: offloaded training step time against plain in-memory training, and the disk bandwidth our state
store achieves against ``dd`` on the same disk.

Peers, in the same process on the same machine: ``reference.train_in_memory`` (the whole GPT in memory,
gradient accumulation, ``torch.optim.Adam``) for the step time; GNU ``dd`` (``conv=fdatasync`` for writes,
``iflag=direct`` for reads) writing and reading the same number of bytes in the same folder for the bandwidth.
The offloaded runs use ``sync="write"`` (every write ``fdatasync``-ed and its pages dropped), so every byte
reaches the disk.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, median
from workbench.data import cache_dir
from workbench.llm.gpt import GPTConfig
from workbench.llm.greedysnake.engine import OffloadedTrainer
from workbench.llm.greedysnake.reference import train_in_memory
from workbench.llm.greedysnake.schedule import SCHEDULES
from workbench.llm.greedysnake.store import ByteCounter, StateStore

log = logging.getLogger(__name__)

FULL = {"layers": 4, "hidden": 128, "seq": 64, "vocab": 512, "M": 4, "mbs": 2, "steps": 3, "io_mb": 256, "rounds": 3}
QUICK = {"layers": 1, "hidden": 16, "seq": 8, "vocab": 32, "M": 2, "mbs": 1, "steps": 1, "io_mb": 8, "rounds": 1}


def _folder() -> Path:
    base = cache_dir("greedysnake")
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="bench-", dir=base))


def step_time(plan: dict) -> Section:
    """Seconds per training iteration: each offloaded schedule vs in-memory training of the same GPT."""
    cfg = GPTConfig(layers=plan["layers"], hidden=plan["hidden"], heads=4, seq=plan["seq"], vocab=plan["vocab"],
                    dtype="float32")  # fmt: skip
    steps, rows, ratios = plan["steps"], [], {}
    mem = []
    train_in_memory(
        cfg, micro_batches=plan["M"], micro_batch_size=plan["mbs"], steps=1, lr=1e-3, data_seed=0
    )  # warm-up
    for _ in range(plan["rounds"]):
        t0 = time.perf_counter()
        train_in_memory(cfg, micro_batches=plan["M"], micro_batch_size=plan["mbs"], steps=steps, lr=1e-3, data_seed=0)
        mem.append((time.perf_counter() - t0) / steps)
    for name in SCHEDULES:
        times, bw = [], []
        for _ in range(plan["rounds"]):
            folder = _folder()
            try:
                t = OffloadedTrainer(cfg, folder, schedule=name, micro_batches=plan["M"], micro_batch_size=plan["mbs"],
                                     alpha=0.25, checkpoints="ssd", memory_budget=10**10, sync="write")  # fmt: skip
                t.train(steps)
                times.append(t.stats.wall_s / steps)
                c = t.counter
                moved = c.total("ssd", "read") + c.total("ssd", "written")
                bw.append(moved / max(c.seconds["read"] + c.seconds["written"], 1e-9))
                t.close()
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        ratios[name] = median(times) / median(mem)
        rows.append((name, fmt_ms(median(times)), fmt_ms(median(mem)), fmt_ratio(ratios[name]),
                     f"{median(bw) / 1e6:.0f} MB/s"))  # fmt: skip
    table = Table(headers=("schedule", "offloaded ms/step", "in-memory ms/step", "offloaded / in-memory",
                           "disk MB/s while training"), rows=tuple(rows))  # fmt: skip
    return Section(
        title="GreedySnake: offloaded step time vs in-memory training",
        intro=(f"A {plan['layers']}-block GPT (hidden {plan['hidden']}, seq {plan['seq']}, fp32), M = {plan['M']} "
               "micro-batches, checkpoints on SSD, every write fdatasync-ed: seconds per iteration of each schedule "
               "against the same training in memory (the ratio is the price of offloading on this machine's disk)."),
        tables=(table,),
        summary=tuple((f"GreedySnake {n} step / in-memory step", fmt_ratio(r)) for n, r in ratios.items()),
        data={"ratios": ratios},
    )  # fmt: skip


def _dd(args: list[str]) -> float:
    """Bytes per second ``dd`` reports (its last stderr line: '..., 1.2 s, 850 MB/s')."""
    proc = subprocess.run(["dd", *args], capture_output=True, text=True, check=True)
    line = proc.stderr.strip().splitlines()[-1]
    nbytes = int(line.split()[0])
    seconds = float(re.search(r"copied, ([0-9.e+-]+) s", line).group(1))
    return nbytes / seconds


def bandwidth(plan: dict) -> Section:
    """Our pwrite+fdatasync / pread (page cache dropped) of one large state file vs dd on the same folder."""
    size = plan["io_mb"] * 2**20
    folder = _folder()
    rows = []
    try:
        counter = ByteCounter()
        store = StateStore(folder, torch.float32, counter, sync_every_write=True)
        data = torch.ones(size // 4, dtype=torch.float32)
        ours_w, ours_r, dd_w, dd_r = [], [], [], []
        for _ in range(plan["rounds"]):
            t0 = time.perf_counter()
            store.write(folder / "state.bin", data, tier_class=("ssd", "optimizer"))
            ours_w.append(size / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            store.read(folder / "state.bin", data.numel(), tier_class=("ssd", "optimizer"))
            ours_r.append(size / (time.perf_counter() - t0))
            target = folder / "dd.bin"
            dd_w.append(_dd(["if=/dev/zero", f"of={target}", "bs=1M", f"count={plan['io_mb']}", "conv=fdatasync"]))
            try:
                dd_r.append(_dd([f"if={target}", "of=/dev/null", "bs=1M", "iflag=direct"]))
            except subprocess.CalledProcessError:  # a file system without O_DIRECT: drop the cache instead
                dd_r.append(_dd([f"if={target}", "of=/dev/null", "bs=1M", "iflag=nocache"]))
        store.close()
        for what, ours, peer in (("write", ours_w, dd_w), ("read", ours_r, dd_r)):
            rows.append((what, f"{median(ours) / 1e6:.0f} MB/s", f"{median(peer) / 1e6:.0f} MB/s",
                         fmt_ratio(median(ours) / median(peer))))  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = Table(headers=("direction", "ours (StateStore)", "dd, same folder", "ours / dd"), rows=tuple(rows))
    return Section(
        title="GreedySnake: state-store bandwidth vs dd",
        intro=(f"{plan['io_mb']} MiB written with os.pwrite + fdatasync and read with os.preadv after "
               "posix_fadvise(DONTNEED), against dd (conv=fdatasync; iflag=direct) in the same cache folder."),
        tables=(table,),
        summary=tuple((f"GreedySnake store {r[0]} / dd", r[3]) for r in rows),
    )  # fmt: skip


def run(*, quick: bool) -> list[Section]:
    """Both GreedySnake sections (quick: a tiny GPT, 8 MiB of I/O)."""
    plan = QUICK if quick else FULL
    log.info("greedysnake benchmarks (%s)", "quick" if quick else "full")
    return [step_time(plan), bandwidth(plan)]


if __name__ == "__main__":
    import sys

    for section in run(quick="--quick" in sys.argv):
        print(section.markdown(), end="\n\n")
