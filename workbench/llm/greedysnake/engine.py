"""The offloaded trainer: a GPT trained unit by unit from files on disk, under a device-memory budget.

Per iteration the engine walks the task list of :mod:`.schedule` (horizontal or the vertical snake):

- **weights**: a unit is read from its files (``os.pread``) when a run of consecutive tasks on it begins and
  dropped when the run ends; only the resident unit's tensors are on the device;
- **gradients** accumulate on the device while the unit is resident; when a run ends with backward tasks of
  that unit still to come (horizontal) the sum goes to ``u.gradacc`` and is read back at the next run;
- **inter-layer tensors** (unit inputs, kept as activation checkpoints, and activation gradients) stay on the
  device only when the very next task consumes them; otherwise they go to the checkpoint tier (``host``
  memory or the ``ssd`` file) and come back when needed;
- **optimizer**: Adam on the master weights and states read from disk, written to the other slot, and the new
  compute copy written beside them. Horizontal (ZeRO-Infinity) steps every unit after the last backward;
  vertical steps unit ``u`` as soon as its gradient is complete; vertical-overlap steps the ``1 - alpha`` part
  of unit ``u`` on a background thread during the backward of the units below, writes the gradient of the
  ``alpha`` part to disk, and steps that part in the *next* iteration's forward, on the background thread,
  ahead of the unit: unit ``u``'s forward waits only for unit ``u``'s deferred part (the authors' FlexTrain:
  ``opts_coordinator.pre_micro_batch_forward``; synchronous semantics, no staleness).

After the last task every written file has been ``fdatasync``-ed and the commit record names the new state
(see :mod:`.store`), so a run killed anywhere resumes from the last complete iteration.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from workbench.llm.gpt import Block, Embedding, GPTConfig, Head, build_gpt, lm_loss
from workbench.llm.greedysnake.reference import unit_parameters
from workbench.llm.greedysnake.schedule import SCHEDULES, micro_batch_tokens, tasks_for, tensor_consumers
from workbench.llm.greedysnake.store import ByteCounter, StateStore

__all__ = ["DeviceMemory", "OffloadedTrainer", "TrainStats", "unit_sizes", "activation_bytes", "min_budget_bytes"]

BETAS = (0.9, 0.999)
EPS = 1e-8


class DeviceMemory:
    """The device-memory budget: every tensor the scheduler places on the device is allocated here.

    Raises MemoryError when an allocation would pass the budget (the up-front check of
    :func:`min_budget_bytes` makes that a bug, never a user error).
    """

    def __init__(self, budget: int) -> None:
        self.budget, self.used, self.peak = int(budget), 0, 0

    def alloc(self, nbytes: int, what: str) -> None:
        if self.used + nbytes > self.budget:
            raise MemoryError(f"device budget {self.budget} bytes exceeded by {what} ({self.used} + {nbytes})")
        self.used += int(nbytes)
        self.peak = max(self.peak, self.used)

    def free(self, nbytes: int) -> None:
        self.used -= int(nbytes)


def _unit_modules(cfg: GPTConfig) -> tuple[Embedding, Block, Head]:
    shape, dtype = cfg.shape, cfg.torch_dtype
    return Embedding(shape, dtype), Block(shape, dtype), Head(shape, dtype)


def unit_sizes(cfg: GPTConfig) -> list[int]:
    """Elements of each unit: embedding, L blocks, head (closed form from the shape)."""
    d, s, v, f = cfg.hidden, cfg.seq, cfg.vocab, cfg.ffn_mult * cfg.hidden
    block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * f + f + f * d + d
    return [v * d + s * d] + [block] * cfg.layers + [2 * d + d * v]


class _SavedBytes:
    """saved_tensors_hooks that allocate what autograd keeps for backward (parameters excluded: counted)."""

    def __init__(self, memory: DeviceMemory | None, param_ptrs: set[int]) -> None:
        self.memory, self.param_ptrs, self.nbytes = memory, param_ptrs, 0
        self.seen: set[int] = set()

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in self.param_ptrs and ptr not in self.seen:
            self.seen.add(ptr)
            n = t.untyped_storage().nbytes()
            self.nbytes += n
            if self.memory is not None:
                self.memory.alloc(n, "saved activations")
        return t

    def hooks(self) -> Any:
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)


def activation_bytes(cfg: GPTConfig, micro_batch_size: int) -> list[int]:
    """Bytes autograd saves for one micro-batch's backward of each unit (measured by saved-tensor hooks)."""
    embed, block, head = _unit_modules(cfg)
    tokens = torch.zeros(micro_batch_size, cfg.seq, dtype=torch.long)
    x = torch.zeros(micro_batch_size, cfg.seq, cfg.hidden, dtype=cfg.torch_dtype, requires_grad=True)
    out = []
    for module, run in (
        (embed, lambda: embed(tokens)),
        (block, lambda: block(x)),
        (head, lambda: lm_loss(head(x), tokens)),
    ):
        probe = _SavedBytes(None, {p.untyped_storage().data_ptr() for p in module.parameters()})
        with torch.enable_grad(), probe.hooks():
            run()
        out.append(probe.nbytes)
    return [out[0]] + [out[1]] * cfg.layers + [out[2]]


def min_budget_bytes(cfg: GPTConfig, micro_batch_size: int) -> int:
    """The least device memory a schedule can run in: the largest unit's weights and gradient plus one
    micro-batch's saved activations through it, plus three inter-layer tensors (input, output, gradient)."""
    item = cfg.torch_dtype.itemsize
    inter = micro_batch_size * cfg.seq * cfg.hidden * item
    acts = activation_bytes(cfg, micro_batch_size)
    return max(2 * n * item + a for n, a in zip(unit_sizes(cfg), acts, strict=True)) + 3 * inter


def adam_step(master: torch.Tensor, m: torch.Tensor, v: torch.Tensor, grad: torch.Tensor, step: int, lr: float) -> None:
    """One Adam step in place, the operations of ``torch.optim.adam._single_tensor_adam`` (no weight decay)."""
    beta1, beta2 = BETAS
    m.lerp_(grad, 1 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    denom = (v.sqrt() / bias_correction2**0.5).add_(EPS)
    master.addcdiv_(m, denom, value=-step_size)


@dataclass
class TrainStats:
    """Measured seconds of one run: wall, compute, disk I/O (read, write), optimizer arithmetic, waits."""

    wall_s: float = 0.0
    compute_s: float = 0.0
    optimizer_s: float = 0.0
    wait_s: float = 0.0
    flops: float = 0.0
    iterations: int = 0
    extra: dict[str, float] = field(default_factory=dict)


class OffloadedTrainer:
    """Train ``cfg``'s GPT from files in ``workdir`` with one of :data:`~.schedule.SCHEDULES`.

    Parameters:
        cfg: the GPT (dtype float32 or float64 is the dtype of weights, master weights and Adam states).
        schedule: ``horizontal`` | ``vertical`` | ``vertical-overlap``.
        micro_batches, micro_batch_size: M and samples per micro-batch.
        alpha: deferred fraction of every unit's optimizer step (vertical-overlap only), 0 <= alpha < 1.
        checkpoints: ``host`` or ``ssd``: where inter-layer tensors go.
        memory_budget: device bytes; below :func:`min_budget_bytes` raises ValueError naming memory_budget_mb.
        lr: Adam learning rate. data_seed: seed of the token stream.
        on_write: hook ``(path, nbytes)`` before every disk write (fault injection in tests).
        update_delay_s: sleep inside every optimizer step before its writes (the race test's slowed update).
        sync: ``write`` (fdatasync + drop the pages after every write: every byte reaches the disk) or ``step``
            (fdatasync every written file once, before the commit record: crash-consistent, faster; scratch
            data written and read back within one iteration may then come from the page cache).

    Raises:
        ValueError: a bad schedule, alpha, checkpoints, budget, or a run folder of another configuration.
    """

    def __init__(
        self,
        cfg: GPTConfig,
        workdir: str | Path,
        *,
        schedule: str,
        micro_batches: int,
        micro_batch_size: int,
        alpha: float = 0.0,
        checkpoints: str = "host",
        memory_budget: int,
        lr: float = 1e-3,
        data_seed: int = 0,
        device: str = "cpu",
        on_write: Callable[[Path, int], None] | None = None,
        update_delay_s: float = 0.0,
        sync: str = "step",
    ) -> None:
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not supported: valid values are {', '.join(SCHEDULES)}")
        if not 0.0 <= alpha < 1.0:
            raise ValueError(f"alpha={alpha} is out of range: valid range is 0..1 (exclusive)")
        if sync not in ("write", "step"):
            raise ValueError(f"sync={sync!r} is not supported: valid values are write, step")
        if checkpoints not in ("host", "ssd"):
            raise ValueError(f"checkpoints={checkpoints!r} is not supported: valid values are host, ssd")
        need = min_budget_bytes(cfg, micro_batch_size)
        if memory_budget < need:
            raise ValueError(
                f"memory_budget_mb={memory_budget / 1e6:.6g} is below what one unit and one micro-batch need: "
                f"valid range is >= {need / 1e6:.6g} MB for this model and micro-batch size"
            )
        self.cfg, self.schedule, self.M, self.mbs = cfg, schedule, micro_batches, micro_batch_size
        self.alpha = alpha if schedule == "vertical-overlap" else 0.0
        self.checkpoints, self.lr, self.data_seed, self.device = checkpoints, lr, data_seed, torch.device(device)
        self.update_delay_s = update_delay_s
        self.sizes = unit_sizes(cfg)
        self.U = len(self.sizes)
        self.split = [int(self.alpha * n) for n in self.sizes]  # part a = [0, split), part b = [split, n)
        self.counter = ByteCounter()
        self.store = StateStore(
            workdir, cfg.torch_dtype, self.counter, on_write=on_write, sync_every_write=sync == "write"
        )
        self.memory = DeviceMemory(memory_budget)
        self.item = self.store.itemsize
        self.modules = _unit_modules(cfg)
        self._shapes = [[p.shape for p in module.parameters()] for module in self.modules]
        for module in self.modules:
            for p in module.parameters():
                p.data = torch.empty(0, dtype=cfg.torch_dtype, device=self.device)
        self.stats = TrainStats()
        self.tasks = tasks_for(schedule, self.U, micro_batches)
        self._worker = ThreadPoolExecutor(max_workers=1) if self.alpha > 0 or schedule == "vertical-overlap" else None
        self._record = self._init_or_resume()

    # ---- state ------------------------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        return {"gpt": self.cfg.to_dict() if hasattr(self.cfg, "to_dict") else repr(self.cfg),
                "schedule": self.schedule, "alpha": self.alpha, "sizes": self.sizes}  # fmt: skip

    def _init_or_resume(self) -> dict[str, Any]:
        record = self.store.read_commit()
        if record is not None:
            if record["identity"] != self._identity():
                raise ValueError(
                    f"workdir={str(self.store.root)!r} holds a run of another configuration: "
                    "valid values are an empty folder or the folder of this configuration"
                )
            self.init_counts = self.counter.snapshot()
            return record
        model = build_gpt(self.cfg)
        for u, params in enumerate(unit_parameters(model)):
            flat = torch.cat([p.detach().reshape(-1) for p in params])
            for part, lo, hi in self._parts(u):
                if hi > lo:
                    self.store.write(self.store.path(u, part, 0, "weights"), flat[lo:hi], tier_class=("ssd", "weights"))
                    optim = torch.cat([flat[lo:hi], torch.zeros(2 * (hi - lo), dtype=flat.dtype)])
                    self.store.write(self.store.path(u, part, 0, "optim"), optim, tier_class=("ssd", "optimizer"))
        self.store.sync()
        record = {"identity": self._identity(), "step": 0, "ver_a": [0] * self.U, "ver_b": [0] * self.U,
                  "pending": False}  # fmt: skip
        self.store.write_commit(record)
        self.init_counts = self.counter.snapshot()
        return record

    def _parts(self, u: int) -> list[tuple[str, int, int]]:
        return [("a", 0, self.split[u]), ("b", self.split[u], self.sizes[u])]

    @property
    def step(self) -> int:
        return int(self._record["step"])

    # ---- optimizer ----------------------------------------------------------------------------------------
    def _optim_step(self, u: int, part: str, grad: torch.Tensor, ver: list[int]) -> None:
        """Adam on part ``part`` of unit ``u``: read slot ver % 2, write slot (ver+1) % 2 (optim and weights)."""
        k, v0 = grad.numel(), ver[u]
        src, dst = v0 % 2, (v0 + 1) % 2
        state = self.store.read(self.store.path(u, part, src, "optim"), 3 * k, tier_class=("ssd", "optimizer"))
        master, m, v = state[:k], state[k : 2 * k], state[2 * k :]
        t0 = time.perf_counter()
        adam_step(master, m, v, grad.to("cpu", state.dtype), v0 + 1, self.lr)
        self.stats.optimizer_s += time.perf_counter() - t0
        if self.update_delay_s:
            time.sleep(self.update_delay_s)
        self.store.write(self.store.path(u, part, dst, "optim"), state, tier_class=("ssd", "optimizer"))
        self.store.write(self.store.path(u, part, dst, "weights"), master, tier_class=("ssd", "weights"))
        ver[u] = v0 + 1

    def _deferred_step(self, u: int, slot: int, ver_a: list[int]) -> None:
        k = self.split[u]
        grad = self.store.read(self.store.path(u, "a", slot, "grad"), k, tier_class=("ssd", "gradients"))
        self._optim_step(u, "a", grad, ver_a)

    # ---- weights on the device ------------------------------------------------------------------------------
    def _kind(self, u: int) -> int:
        return 0 if u == 0 else 2 if u == self.U - 1 else 1

    def _module(self, u: int) -> torch.nn.Module:
        return self.modules[self._kind(u)]

    def _load(self, u: int, ver_a: list[int], ver_b: list[int]) -> None:
        pieces = []
        for part, lo, hi in self._parts(u):
            if hi > lo:
                slot = (ver_a if part == "a" else ver_b)[u] % 2
                path = self.store.path(u, part, slot, "weights")
                pieces.append(self.store.read(path, hi - lo, tier_class=("ssd", "weights")))
        flat = torch.cat(pieces).to(self.device)
        self.memory.alloc(flat.numel() * self.item, f"weights of unit {u}")
        offset = 0
        for p, shape in zip(self._module(u).parameters(), self._shapes[self._kind(u)], strict=True):
            n = shape.numel()
            p.data = flat[offset : offset + n].view(shape)
            offset += n

    def _evict(self, u: int) -> None:
        for p in self._module(u).parameters():
            p.data = torch.empty(0, dtype=self.cfg.torch_dtype, device=self.device)
            p.grad = None
        self.memory.free(self.sizes[u] * self.item)

    def _flat_grad(self, u: int) -> torch.Tensor:
        return torch.cat([p.grad.reshape(-1) for p in self._module(u).parameters()])

    # ---- one iteration ----------------------------------------------------------------------------------------
    def train(self, steps: int) -> None:
        """Run iterations until the committed step is ``steps``, then apply the deferred parts (flush)."""
        t0 = time.perf_counter()
        while self.step < steps:
            self._iteration()
        self.flush()
        self.stats.wall_s += time.perf_counter() - t0

    def flush(self) -> None:
        """Apply the pending deferred optimizer parts now (what the next forward would do), and commit."""
        rec = self._record
        if not rec["pending"]:
            return
        ver_a = list(rec["ver_a"])
        for u in range(self.U):
            if self.split[u]:
                self._deferred_step(u, rec["step"] % 2, ver_a)
        self._commit({**rec, "ver_a": ver_a, "pending": False})

    def _commit(self, record: dict[str, Any]) -> None:
        self.store.sync()
        self.store.write_commit(record)
        self._record = record

    def _iteration(self) -> None:
        rec, U, M = self._record, self.U, self.M
        c = rec["step"]
        ver_a, ver_b = list(rec["ver_a"]), list(rec["ver_b"])
        futures_a: dict[int, Future] = {}
        futures_b: list[Future] = []
        if rec["pending"]:  # the deferred parts of the last iteration, ahead of each unit's forward, in order
            for u in range(U):
                if self.split[u]:
                    futures_a[u] = self._worker.submit(self._deferred_step, u, c % 2, ver_a)
        batches = [micro_batch_tokens(self.cfg, self.mbs, seed=self.data_seed, step=c, mb=m) for m in range(M)]
        consumers = tensor_consumers(self.tasks)
        host: dict[tuple, torch.Tensor] = {}
        resident: dict[tuple, torch.Tensor] = {}
        slots = {key: i for i, key in enumerate(consumers)}
        remaining_bwd = [sum(t.unit == u and t.kind != "fwd" for t in self.tasks) for u in range(U)]
        acc: torch.Tensor | None = None
        acc_on_disk = [False] * U
        current = None
        inter_bytes = self.mbs * self.cfg.seq * self.cfg.hidden * self.item

        def put(key: tuple, tensor: torch.Tensor, i: int) -> None:
            """``tensor`` (already allocated) stays on the device for task i+1 or is freed after saving."""
            later = [j for j in consumers.get(key, []) if j > i]
            if i + 1 in later:
                resident[key] = (tensor, i + 1)
            else:
                self.memory.free(inter_bytes)
            if any(j > i + 1 for j in later):
                if self.checkpoints == "host":
                    host[key] = tensor.to("cpu", copy=True)
                    self.counter.add("host", "checkpoints", "written", inter_bytes)
                else:
                    path = self.store.root / "checkpoints"
                    self.store.write(path, tensor.reshape(-1), offset=slots[key] * tensor.numel(),
                                     tier_class=("ssd", "checkpoints"))  # fmt: skip

        def get(key: tuple, i: int) -> torch.Tensor:
            if key in resident:
                return resident[key][0]
            numel = inter_bytes // self.item
            if self.checkpoints == "host":
                t = host[key].to(self.device)
                self.counter.add("host", "checkpoints", "read", inter_bytes)
                if max(consumers[key]) == i:
                    del host[key]
            else:
                path = self.store.root / "checkpoints"
                t = self.store.read(path, numel, offset=slots[key] * numel, tier_class=("ssd", "checkpoints"))
                t = t.to(self.device)
            t = t.view(self.mbs, self.cfg.seq, self.cfg.hidden)
            self.memory.alloc(inter_bytes, "inter-layer tensor")
            resident[("read", i, key)] = (t, i)
            return t

        for i, task in enumerate(self.tasks):
            u, m = task.unit, task.mb
            if current != u:
                if current is not None:
                    acc = self._end_run(current, acc, remaining_bwd, acc_on_disk, ver_b, futures_b, c)
                if u in futures_a:
                    t0 = time.perf_counter()
                    self._wait_deferred(futures_a.pop(u))  # unit u's forward waits only for its deferred part
                    self.stats.wait_s += time.perf_counter() - t0
                self._load(u, ver_a, ver_b)
                current = u
            tokens, targets = batches[m]
            t0 = time.perf_counter()
            module = self._module(u)
            params = {p.untyped_storage().data_ptr() for p in module.parameters()}
            probe = _SavedBytes(self.memory, params)
            if task.kind == "fwd":
                with torch.no_grad():
                    y = module(tokens.to(self.device)) if u == 0 else module(get(("x", u, m), i))
                self.memory.alloc(inter_bytes, "unit output")
                put(("x", u + 1, m), y, i)
            else:
                if acc is None and acc_on_disk[u]:
                    acc = self.store.read(self.store.root / f"u{u}.gradacc", self.sizes[u],
                                          tier_class=("ssd", "gradients")).to(self.device)  # fmt: skip
                    self.memory.alloc(self.sizes[u] * self.item, f"gradient of unit {u}")
                    acc_on_disk[u] = False
                x = None if u == 0 else get(("x", u, m), i).detach().requires_grad_(True)
                with torch.enable_grad(), probe.hooks():
                    if task.kind == "last":
                        out = lm_loss(module(x), targets.to(self.device)) / M
                    else:
                        out = module(tokens.to(self.device)) if u == 0 else module(x)
                if task.kind == "last":
                    torch.autograd.backward(out)
                else:
                    torch.autograd.backward(out, get(("dy", u, m), i))
                self.memory.free(probe.nbytes)
                g = self._flat_grad(u)
                for p in module.parameters():
                    p.grad = None
                if acc is None:
                    acc = g
                    self.memory.alloc(self.sizes[u] * self.item, f"gradient of unit {u}")
                else:
                    acc += g
                remaining_bwd[u] -= 1
                if u > 0:
                    self.memory.alloc(inter_bytes, "input gradient")
                    put(("dy", u - 1, m), x.grad, i)
            self.stats.compute_s += time.perf_counter() - t0
            for key in [k for k, (_, free_at) in resident.items() if free_at == i]:
                del resident[key]
                self.memory.free(inter_bytes)
        acc = self._end_run(current, acc, remaining_bwd, acc_on_disk, ver_b, futures_b, c)
        if self.schedule == "horizontal":  # ZeRO-Infinity: the optimizer after the last backward
            for u in range(U):
                grad = self.store.read(
                    self.store.root / f"u{u}.gradacc", self.sizes[u], tier_class=("ssd", "gradients")
                )
                self._optim_step(u, "b", grad, ver_b)
        t0 = time.perf_counter()
        for f in list(futures_a.values()) + futures_b:
            f.result()
        self.stats.wait_s += time.perf_counter() - t0
        self.stats.iterations += 1
        self._commit({**rec, "step": c + 1, "ver_a": ver_a, "ver_b": ver_b, "pending": self.alpha > 0})

    def _wait_deferred(self, future: Future) -> None:
        future.result()

    def _end_run(self, u, acc, remaining_bwd, acc_on_disk, ver_b, futures_b, c):  # noqa: ANN001, ANN202
        """A run of tasks on unit ``u`` ends: park or apply its gradient, drop its weights."""
        if acc is not None:
            if remaining_bwd[u] > 0 or self.schedule == "horizontal":
                self.store.write(self.store.root / f"u{u}.gradacc", acc, tier_class=("ssd", "gradients"))
                acc_on_disk[u] = True
            elif self.schedule == "vertical":
                self._optim_step(u, "b", acc, ver_b)
            else:  # vertical-overlap: park the alpha part's gradient, step the rest in the background
                k = self.split[u]
                if k:
                    self.store.write(self.store.path(u, "a", (c + 1) % 2, "grad"), acc[:k],
                                     tier_class=("ssd", "gradients"))  # fmt: skip
                futures_b.append(self._worker.submit(self._optim_step, u, "b", acc[k:].to("cpu", copy=True), ver_b))
            self.memory.free(self.sizes[u] * self.item)
        self._evict(u)
        return None

    # ---- results ------------------------------------------------------------------------------------------
    def parameters(self) -> list[torch.Tensor]:
        """Each unit's committed parameters (the compute copy on disk), flattened; not counted as traffic."""
        counter, self.store.counter = self.store.counter, ByteCounter()
        try:
            rec = self._record
            out = []
            for u in range(self.U):
                pieces = []
                for part, lo, hi in self._parts(u):
                    if hi > lo:
                        slot = (rec["ver_a"] if part == "a" else rec["ver_b"])[u] % 2
                        pieces.append(self.store.read(self.store.path(u, part, slot, "weights"), hi - lo,
                                                      tier_class=("ssd", "weights")))  # fmt: skip
                out.append(torch.cat(pieces))
            return out
        finally:
            self.store.counter = counter

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True)
        self.store.close()
