"""The offloaded trainer: a GPT trained unit by unit from files on disk, under a device-memory budget.

Per iteration the engine walks the task list of :mod:`.schedule` (horizontal or the vertical snake) over the
units of a layout (:func:`~.schedule.unit_entries`): ``flextrain`` (the default, as the authors' FlexTrain) keeps
the embedding and head parameters resident on the device, runs the embedding inside unit 0 and fuses the last
block with head and loss; ``offloaded`` loads the embedding and the head from disk as units of their own.

Mixed precision (``compute_dtype`` bf16 or fp16): forward and backward run on a compute copy in that dtype (the
``weights`` files, inter-layer tensors, resident parameters), gradients accumulate in the master dtype
(fp32/fp64) on the device, Adam updates fp32/fp64 master weights and states on disk and writes the new compute
copy (``master.to(compute_dtype)``); fp16 multiplies the loss by a static ``loss_scale`` and divides the gradient
by it before Adam (a non-finite gradient stops the run naming loss_scale: the snake steps unit u before unit 0's
gradient exists, so an overflow cannot skip the iteration as dynamic loss scaling would).

- **weights**: a unit is read from its files (``os.pread``) when a run of consecutive tasks on it begins and
  dropped when the run ends; only the resident unit's tensors are on the device;
- **gradients** accumulate on the device while the unit is resident; when a run ends with backward tasks of
  that unit still to come (horizontal) the sum goes to ``u.gradacc`` and is read back at the next run;
- **inter-layer tensors** (unit inputs, kept as activation checkpoints, and activation gradients) stay on the
  device only when the very next task consumes them; otherwise they go to the checkpoint tier (``host``
  memory or the ``ssd`` file) and come back when needed;
- **optimizer**: Adam on the master weights and states read from disk, written to the other slot, and the new
  compute copy written beside them (a resident entry's goes to the device instead). FlexTrain updates the
  resident parameters with a GPU optimizer; here their master and Adam states stay on disk with the others, so
  every commit record names a complete state. Horizontal (ZeRO-Infinity) steps every unit after the last backward;
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
from workbench.llm.greedysnake.schedule import (
    LAYOUTS,
    SCHEDULES,
    micro_batch_tokens,
    resident_entries,
    tasks_for,
    tensor_consumers,
    unit_entries,
)
from workbench.llm.greedysnake.store import ByteCounter, StateStore

__all__ = ["DeviceMemory", "OffloadedTrainer", "TrainStats", "unit_sizes", "activation_bytes", "min_budget_bytes",
           "COMPUTE_DTYPES", "compute_dtype_of"]  # fmt: skip

BETAS = (0.9, 0.999)
EPS = 1e-8

#: compute-copy dtypes: ``same`` (the model's dtype: no mixed precision), bf16, fp16
COMPUTE_DTYPES = ("same", "bfloat16", "float16")


def compute_dtype_of(cfg: GPTConfig, compute_dtype: str) -> torch.dtype:
    """The torch dtype of the compute copy; ValueError naming compute_dtype for an unknown name."""
    if compute_dtype not in COMPUTE_DTYPES:
        raise ValueError(
            f"compute_dtype={compute_dtype!r} is not supported: valid values are {', '.join(COMPUTE_DTYPES)}"
        )
    return cfg.torch_dtype if compute_dtype == "same" else getattr(torch, compute_dtype)


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


def _entry_modules(cfg: GPTConfig, dtype: torch.dtype) -> tuple[Embedding, Block, Head]:
    shape = cfg.shape
    return Embedding(shape, dtype), Block(shape, dtype), Head(shape, dtype)


def unit_sizes(cfg: GPTConfig) -> list[int]:
    """Elements of each entry: embedding, L blocks, head (closed form from the shape)."""
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


def activation_bytes(cfg: GPTConfig, micro_batch_size: int, dtype: torch.dtype | None = None) -> list[int]:
    """Bytes autograd saves for one micro-batch's backward of each entry, computing in ``dtype`` (default the
    model's; measured by saved-tensor hooks)."""
    dtype = dtype or cfg.torch_dtype
    embed, block, head = _entry_modules(cfg, dtype)
    tokens = torch.zeros(micro_batch_size, cfg.seq, dtype=torch.long)
    x = torch.zeros(micro_batch_size, cfg.seq, cfg.hidden, dtype=dtype, requires_grad=True)
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


def min_budget_bytes(cfg: GPTConfig, micro_batch_size: int, *, layout: str = "flextrain",
                     compute_dtype: str = "same") -> int:  # fmt: skip
    """The least device memory a schedule can run in: the resident entries' compute copies and gradients, plus
    the largest unit's loaded weights and gradient and one micro-batch's saved activations through it, plus
    three inter-layer tensors (input, output, gradient)."""
    cd = compute_dtype_of(cfg, compute_dtype)
    wi, gi = cd.itemsize, cfg.torch_dtype.itemsize
    inter = micro_batch_size * cfg.seq * cfg.hidden * wi
    acts, sizes = activation_bytes(cfg, micro_batch_size, cd), unit_sizes(cfg)
    resident = sum((wi + gi) * sizes[e] for e in resident_entries(cfg.layers, layout))
    unit = max((wi + gi) * sizes[off] + sum(acts[e] for e in entries)
               for entries, off in unit_entries(cfg.layers, layout))  # fmt: skip
    return resident + unit + 3 * inter


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


@dataclass
class _Pass:
    """The state of one iteration: versions, the data, inter-layer tensors (on the device, in host memory),
    gradient accumulators per entry and the optimizer work in flight."""

    step: int
    ver_a: list[int]
    ver_b: list[int]
    batches: list[tuple[torch.Tensor, torch.Tensor]]
    consumers: dict[tuple, list[int]]
    slots: dict[tuple, int]
    remaining_bwd: list[int]
    futures_a: dict[int, Future] = field(default_factory=dict)
    futures_b: list[Future] = field(default_factory=list)
    host: dict[tuple, torch.Tensor] = field(default_factory=dict)
    resident: dict[tuple, tuple[torch.Tensor, int]] = field(default_factory=dict)
    acc: dict[int, torch.Tensor] = field(default_factory=dict)
    acc_on_disk: set[int] = field(default_factory=set)
    current: int | None = None


class OffloadedTrainer:
    """Train ``cfg``'s GPT from files in ``workdir`` with one of :data:`~.schedule.SCHEDULES`.

    Parameters:
        cfg: the GPT (dtype float32 or float64 is the dtype of master weights, gradients and Adam states).
        schedule: ``horizontal`` | ``vertical`` | ``vertical-overlap``.
        micro_batches, micro_batch_size: M and samples per micro-batch.
        alpha: deferred fraction of every loaded entry's optimizer step (vertical-overlap only), 0 <= alpha < 1.
        checkpoints: ``host`` or ``ssd``: where inter-layer tensors go.
        memory_budget: device bytes; below :func:`min_budget_bytes` raises ValueError naming memory_budget_mb.
        lr: Adam learning rate. data_seed: seed of the token stream.
        layout: ``flextrain`` (embedding and head resident, last block fused with head and loss) or ``offloaded``.
        compute_dtype: ``same`` | ``bfloat16`` | ``float16``: the compute copy (mixed precision unless same).
        loss_scale: static loss scale of float16 compute (1 otherwise), > 0.
        on_write: hook ``(path, nbytes)`` before every disk write (fault injection in tests).
        update_delay_s: sleep inside every optimizer step before its writes (the race test's slowed update).
        sync: ``write`` (fdatasync + drop the pages after every write: every byte reaches the disk) or ``step``
            (fdatasync every written file once, before the commit record: crash-consistent, faster; scratch
            data written and read back within one iteration may then come from the page cache).

    Raises:
        ValueError: a bad schedule, alpha, checkpoints, layout, compute dtype, loss scale, budget, or a run folder
        of another configuration.
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
        layout: str = "flextrain",
        compute_dtype: str = "same",
        loss_scale: float = 1024.0,
        on_write: Callable[[Path, int], None] | None = None,
        update_delay_s: float = 0.0,
        sync: str = "step",
    ) -> None:
        self._validate(schedule, alpha, sync, checkpoints, layout, loss_scale)
        self.cd, self.md = compute_dtype_of(cfg, compute_dtype), cfg.torch_dtype
        need = min_budget_bytes(cfg, micro_batch_size, layout=layout, compute_dtype=compute_dtype)
        if memory_budget < need:
            raise ValueError(
                f"memory_budget_mb={memory_budget / 1e6:.6g} is below what one unit and one micro-batch need: "
                f"valid range is >= {need / 1e6:.6g} MB for this model and micro-batch size"
            )
        self.cfg, self.schedule, self.M, self.mbs = cfg, schedule, micro_batches, micro_batch_size
        self.layout, self.compute_dtype = layout, compute_dtype
        self.loss_scale = float(loss_scale) if self.cd == torch.float16 else 1.0
        self.alpha = alpha if schedule == "vertical-overlap" else 0.0
        self.checkpoints, self.lr, self.data_seed, self.device = checkpoints, lr, data_seed, torch.device(device)
        self.update_delay_s = update_delay_s
        self.sizes = unit_sizes(cfg)
        self.E = len(self.sizes)
        self.plan = unit_entries(cfg.layers, layout)
        self.U = len(self.plan)
        self.resident_set = set(resident_entries(cfg.layers, layout))
        self.unit_of = {e: u for u, (entries, _) in enumerate(self.plan) for e in entries}
        # part a = [0, split), part b = [split, n); resident entries are stepped whole
        self.split = [0 if e in self.resident_set else int(self.alpha * n) for e, n in enumerate(self.sizes)]
        self.wi, self.gi = self.cd.itemsize, self.md.itemsize
        self.inter_bytes = micro_batch_size * cfg.seq * cfg.hidden * self.wi
        self.counter = ByteCounter()
        self.store = StateStore(workdir, self.md, self.counter, on_write=on_write, sync_every_write=sync == "write")
        self.memory = DeviceMemory(memory_budget)
        self.modules = _entry_modules(cfg, self.cd)
        self._shapes = [[p.shape for p in module.parameters()] for module in self.modules]
        for module in self.modules:
            for p in module.parameters():
                p.data = torch.empty(0, dtype=self.cd, device=self.device)
        self.stats = TrainStats()
        self.tasks = tasks_for(schedule, self.U, micro_batches)
        self._worker = ThreadPoolExecutor(max_workers=1) if schedule == "vertical-overlap" else None
        self._record = self._init_or_resume()
        self._resident_flat: dict[int, torch.Tensor] = {}
        self._load_resident()

    @staticmethod
    def _validate(schedule: str, alpha: float, sync: str, checkpoints: str, layout: str, loss_scale: float) -> None:
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule={schedule!r} is not supported: valid values are {', '.join(SCHEDULES)}")
        if not 0.0 <= alpha < 1.0:
            raise ValueError(f"alpha={alpha} is out of range: valid range is 0..1 (exclusive)")
        if sync not in ("write", "step"):
            raise ValueError(f"sync={sync!r} is not supported: valid values are write, step")
        if checkpoints not in ("host", "ssd"):
            raise ValueError(f"checkpoints={checkpoints!r} is not supported: valid values are host, ssd")
        if layout not in LAYOUTS:
            raise ValueError(f"layout={layout!r} is not supported: valid values are {', '.join(LAYOUTS)}")
        if not loss_scale > 0:
            raise ValueError(f"loss_scale={loss_scale} is out of range: valid range is > 0")

    # ---- state ------------------------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        return {"gpt": self.cfg.to_dict() if hasattr(self.cfg, "to_dict") else repr(self.cfg),
                "schedule": self.schedule, "alpha": self.alpha, "sizes": self.sizes, "layout": self.layout,
                "compute_dtype": self.compute_dtype, "loss_scale": self.loss_scale}  # fmt: skip

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
        for e, params in enumerate(unit_parameters(model)):
            flat = torch.cat([p.detach().reshape(-1) for p in params])
            for part, lo, hi in self._parts(e):
                if hi > lo:
                    if e not in self.resident_set:
                        self.store.write(self.store.path(e, part, 0, "weights"), flat[lo:hi].to(self.cd),
                                         tier_class=("ssd", "weights"))  # fmt: skip
                    optim = torch.cat([flat[lo:hi], torch.zeros(2 * (hi - lo), dtype=flat.dtype)])
                    self.store.write(self.store.path(e, part, 0, "optim"), optim, tier_class=("ssd", "optimizer"))
        self.store.sync()
        record = {"identity": self._identity(), "step": 0, "ver_a": [0] * self.E, "ver_b": [0] * self.E,
                  "pending": False}  # fmt: skip
        self.store.write_commit(record)
        self.init_counts = self.counter.snapshot()
        return record

    def _parts(self, e: int) -> list[tuple[str, int, int]]:
        return [("a", 0, self.split[e]), ("b", self.split[e], self.sizes[e])]

    @property
    def step(self) -> int:
        return int(self._record["step"])

    def _masters(self, e: int, rec: dict[str, Any]) -> torch.Tensor:
        """Entry ``e``'s committed master weights (read uncounted: set-up and results, not training traffic)."""
        counter, self.store.counter = self.store.counter, ByteCounter()
        try:
            pieces = []
            for part, lo, hi in self._parts(e):
                if hi > lo:
                    slot = (rec["ver_a"] if part == "a" else rec["ver_b"])[e] % 2
                    pieces.append(self.store.read(self.store.path(e, part, slot, "optim"), hi - lo,
                                                  tier_class=("ssd", "optimizer")))  # fmt: skip
            return torch.cat(pieces)
        finally:
            self.store.counter = counter

    def _load_resident(self) -> None:
        """Place the resident entries' compute copies (``master.to(compute dtype)``) on the device for good."""
        for e in sorted(self.resident_set):
            flat = self._masters(e, self._record).to(self.device, self.cd)
            self.memory.alloc(flat.numel() * self.wi, f"resident weights of entry {e}")
            self._resident_flat[e] = flat
            self._bind(e, flat)

    def _bind(self, e: int, flat: torch.Tensor) -> None:
        offset = 0
        for p, shape in zip(self._module(e).parameters(), self._shapes[self._kind(e)], strict=True):
            n = shape.numel()
            p.data = flat[offset : offset + n].view(shape)
            offset += n

    # ---- optimizer ----------------------------------------------------------------------------------------
    def _optim_step(self, e: int, part: str, grad: torch.Tensor, ver: list[int]) -> None:
        """Adam on part ``part`` of entry ``e``: read slot ver % 2, write slot (ver+1) % 2 (optim and weights; a
        resident entry's new compute copy goes to the device). ``grad``: the master-dtype sum, loss-scaled."""
        k, v0 = grad.numel(), ver[e]
        src, dst = v0 % 2, (v0 + 1) % 2
        state = self.store.read(self.store.path(e, part, src, "optim"), 3 * k, tier_class=("ssd", "optimizer"))
        master, m, v = state[:k], state[k : 2 * k], state[2 * k :]
        t0 = time.perf_counter()
        grad = grad.to("cpu", state.dtype)
        if self.loss_scale != 1.0:
            if not bool(torch.isfinite(grad).all()):
                raise ValueError(
                    f"loss_scale={self.loss_scale:g} overflowed the float16 gradients of entry {e}: valid values "
                    "are smaller"
                )
            grad = grad / self.loss_scale
        adam_step(master, m, v, grad, v0 + 1, self.lr)
        self.stats.optimizer_s += time.perf_counter() - t0
        if self.update_delay_s:
            time.sleep(self.update_delay_s)
        self.store.write(self.store.path(e, part, dst, "optim"), state, tier_class=("ssd", "optimizer"))
        if e in self.resident_set:
            self._resident_flat[e].copy_(master.to(self.cd))
        else:
            self.store.write(self.store.path(e, part, dst, "weights"), master.to(self.cd),
                             tier_class=("ssd", "weights"))  # fmt: skip
        ver[e] = v0 + 1

    def _deferred_step(self, e: int, slot: int, ver_a: list[int]) -> None:
        k = self.split[e]
        grad = self.store.read(self.store.path(e, "a", slot, "grad"), k, tier_class=("ssd", "gradients"))
        self._optim_step(e, "a", grad, ver_a)

    # ---- weights on the device ------------------------------------------------------------------------------
    def _kind(self, e: int) -> int:
        return 0 if e == 0 else 2 if e == self.E - 1 else 1

    def _module(self, e: int) -> torch.nn.Module:
        return self.modules[self._kind(e)]

    def _load(self, u: int, ver_a: list[int], ver_b: list[int]) -> None:
        """Read unit ``u``'s loaded entry (its compute copy) from disk onto the device."""
        e = self.plan[u][1]
        pieces = []
        for part, lo, hi in self._parts(e):
            if hi > lo:
                slot = (ver_a if part == "a" else ver_b)[e] % 2
                path = self.store.path(e, part, slot, "weights")
                pieces.append(self.store.read(path, hi - lo, tier_class=("ssd", "weights"), dtype=self.cd))
        flat = torch.cat(pieces).to(self.device)
        self.memory.alloc(flat.numel() * self.wi, f"weights of unit {u}")
        self._bind(e, flat)

    def _evict(self, u: int) -> None:
        e = self.plan[u][1]
        for p in self._module(e).parameters():
            p.data = torch.empty(0, dtype=self.cd, device=self.device)
            p.grad = None
        self.memory.free(self.sizes[e] * self.wi)

    def _take_grad(self, e: int) -> torch.Tensor:
        """Entry ``e``'s gradient of the last backward, flattened (compute dtype); the parameters' .grad cleared."""
        params = list(self._module(e).parameters())
        g = torch.cat([p.grad.reshape(-1) for p in params])  # type: ignore[union-attr]
        for p in params:
            p.grad = None
        return g

    # ---- one iteration ----------------------------------------------------------------------------------------
    def train(self, steps: int) -> None:
        """Run iterations until the committed step is ``steps``, then apply the deferred parts (flush)."""
        t0 = time.perf_counter()
        while self.step < steps:
            self.iteration()
        self.flush()
        self.stats.wall_s += time.perf_counter() - t0

    def flush(self) -> None:
        """Apply the pending deferred optimizer parts now (what the next forward would do), and commit."""
        rec = self._record
        if not rec["pending"]:
            return
        ver_a = list(rec["ver_a"])
        for e in range(self.E):
            if self.split[e]:
                self._deferred_step(e, rec["step"] % 2, ver_a)
        self._commit({**rec, "ver_a": ver_a, "pending": False})

    def _commit(self, record: dict[str, Any]) -> None:
        self.store.sync()
        self.store.write_commit(record)
        self._record = record

    def iteration(self) -> None:
        """One training iteration (every task of the schedule, the optimizer), committed at its end; deferred
        parts stay pending for the next iteration (or :meth:`flush`)."""
        p = self._begin()
        for i, task in enumerate(self.tasks):
            if p.current != task.unit:
                self._switch(p, task.unit)
            t0 = time.perf_counter()
            if task.kind == "fwd":
                self._forward(p, i, task.unit, task.mb)
            else:
                self._backward(p, i, task.unit, task.mb, last=task.kind == "last")
            self.stats.compute_s += time.perf_counter() - t0
            for key in [k for k, (_, free_at) in p.resident.items() if free_at == i]:
                del p.resident[key]
                self.memory.free(self.inter_bytes)
        self._finish(p)

    def _begin(self) -> _Pass:
        """The iteration's state; the deferred parts of the last iteration start ahead of each unit's forward."""
        rec = self._record
        c = rec["step"]
        p = _Pass(
            step=c, ver_a=list(rec["ver_a"]), ver_b=list(rec["ver_b"]),
            batches=[micro_batch_tokens(self.cfg, self.mbs, seed=self.data_seed, step=c, mb=m) for m in range(self.M)],
            consumers=tensor_consumers(self.tasks), slots={},
            remaining_bwd=[sum(t.unit == u and t.kind != "fwd" for t in self.tasks) for u in range(self.U)],
        )  # fmt: skip
        p.slots = {key: i for i, key in enumerate(p.consumers)}
        if rec["pending"]:
            assert self._worker is not None
            for e in range(self.E):
                if self.split[e]:
                    p.futures_a[e] = self._worker.submit(self._deferred_step, e, c % 2, p.ver_a)
        return p

    def _switch(self, p: _Pass, u: int) -> None:
        """The run on ``p.current`` ends; unit ``u``'s loaded entry comes in (after its deferred part)."""
        if p.current is not None:
            self._end_run(p, p.current)
        e = self.plan[u][1]
        if e in p.futures_a:
            t0 = time.perf_counter()
            self._wait_deferred(p.futures_a.pop(e))  # unit u's forward waits only for its deferred part
            self.stats.wait_s += time.perf_counter() - t0
        self._load(u, p.ver_a, p.ver_b)
        p.current = u

    def _run_unit(self, u: int, x: torch.Tensor | None, tokens: torch.Tensor, targets: torch.Tensor | None
                  ) -> torch.Tensor:  # fmt: skip
        """Unit ``u``'s entries in order: the embedding from tokens, blocks, and (``targets`` given) head and loss
        (``loss / M``, times the loss scale)."""
        h = x
        for e in self.plan[u][0]:
            kind = self._kind(e)
            if kind == 0:
                h = self._module(e)(tokens.to(self.device))
            elif kind == 1:
                h = self._module(e)(h)
            elif targets is not None:
                h = lm_loss(self._module(e)(h), targets.to(self.device)) / self.M
                if self.loss_scale != 1.0:
                    h = h * self.loss_scale
        assert h is not None
        return h

    def _forward(self, p: _Pass, i: int, u: int, m: int) -> None:
        tokens, _ = p.batches[m]
        with torch.no_grad():
            y = self._run_unit(u, None if u == 0 else self._get(p, ("x", u, m), i), tokens, None)
        self.memory.alloc(self.inter_bytes, "unit output")
        self._put(p, ("x", u + 1, m), y, i)

    def _backward(self, p: _Pass, i: int, u: int, m: int, *, last: bool) -> None:
        """Recompute unit ``u``'s forward (the fused last unit: forward, head, loss) and run its backward; add each
        entry's gradient to its accumulator; the input gradient goes on to unit ``u - 1``."""
        tokens, targets = p.batches[m]
        params = {q.untyped_storage().data_ptr() for e in self.plan[u][0] for q in self._module(e).parameters()}
        probe = _SavedBytes(self.memory, params)
        x = None if u == 0 else self._get(p, ("x", u, m), i).detach().requires_grad_(True)
        with torch.enable_grad(), probe.hooks():
            out = self._run_unit(u, x, tokens, targets if last else None)
        if last:
            torch.autograd.backward(out)
        else:
            torch.autograd.backward(out, self._get(p, ("dy", u, m), i))
        self.memory.free(probe.nbytes)
        for e in self.plan[u][0]:
            self._accumulate(p, e, self._take_grad(e))
        p.remaining_bwd[u] -= 1
        if x is not None:
            self.memory.alloc(self.inter_bytes, "input gradient")
            self._put(p, ("dy", u - 1, m), x.grad, i)  # type: ignore[arg-type]

    def _accumulate(self, p: _Pass, e: int, g: torch.Tensor) -> None:
        """Add ``g`` to entry ``e``'s master-dtype accumulator on the device (read back from disk if parked)."""
        if e not in p.acc and e in p.acc_on_disk:
            p.acc[e] = self.store.read(self.store.root / f"u{e}.gradacc", self.sizes[e],
                                       tier_class=("ssd", "gradients")).to(self.device)  # fmt: skip
            self.memory.alloc(self.sizes[e] * self.gi, f"gradient of entry {e}")
            p.acc_on_disk.discard(e)
        if e in p.acc:
            p.acc[e] += g.to(self.md)
        else:
            p.acc[e] = g.to(self.md)
            self.memory.alloc(self.sizes[e] * self.gi, f"gradient of entry {e}")

    # ---- inter-layer tensors ------------------------------------------------------------------------------
    def _put(self, p: _Pass, key: tuple, tensor: torch.Tensor, i: int) -> None:
        """``tensor`` (already allocated) stays on the device for task i+1 or is freed after saving."""
        later = [j for j in p.consumers.get(key, []) if j > i]
        if i + 1 in later:
            p.resident[key] = (tensor, i + 1)
        else:
            self.memory.free(self.inter_bytes)
        if any(j > i + 1 for j in later):
            if self.checkpoints == "host":
                p.host[key] = tensor.to("cpu", copy=True)
                self.counter.add("host", "checkpoints", "written", self.inter_bytes)
            else:
                self.store.write(self.store.root / "checkpoints", tensor.reshape(-1),
                                 offset=p.slots[key] * tensor.numel(), tier_class=("ssd", "checkpoints"))  # fmt: skip

    def _get(self, p: _Pass, key: tuple, i: int) -> torch.Tensor:
        if key in p.resident:
            return p.resident[key][0]
        numel = self.inter_bytes // self.wi
        if self.checkpoints == "host":
            t = p.host[key].to(self.device)
            self.counter.add("host", "checkpoints", "read", self.inter_bytes)
            if max(p.consumers[key]) == i:
                del p.host[key]
        else:
            t = self.store.read(self.store.root / "checkpoints", numel, offset=p.slots[key] * numel,
                                tier_class=("ssd", "checkpoints"), dtype=self.cd).to(self.device)  # fmt: skip
        t = t.view(self.mbs, self.cfg.seq, self.cfg.hidden)
        self.memory.alloc(self.inter_bytes, "inter-layer tensor")
        p.resident[("read", i, key)] = (t, i)
        return t

    # ---- gradients and the optimizer at the end of a run, of the iteration ------------------------------------
    def _wait_deferred(self, future: Future) -> None:
        future.result()

    def _end_run(self, p: _Pass, u: int) -> None:
        """A run of tasks on unit ``u`` ends: park or apply its entries' gradients, drop its loaded weights."""
        complete = p.remaining_bwd[u] == 0
        for e in self.plan[u][0]:
            if e not in p.acc:
                continue
            if e in self.resident_set and (self.schedule == "horizontal" or not complete):
                continue  # a resident entry's gradient stays on the device until its step
            acc = p.acc.pop(e)
            if not complete or self.schedule == "horizontal":
                self.store.write(self.store.root / f"u{e}.gradacc", acc, tier_class=("ssd", "gradients"))
                p.acc_on_disk.add(e)
            elif self.schedule == "vertical":
                self._optim_step(e, "b", acc, p.ver_b)
            else:  # vertical-overlap: park the alpha part's gradient, step the rest in the background
                k = self.split[e]
                if k:
                    self.store.write(self.store.path(e, "a", (p.step + 1) % 2, "grad"), acc[:k],
                                     tier_class=("ssd", "gradients"))  # fmt: skip
                assert self._worker is not None
                p.futures_b.append(self._worker.submit(self._optim_step, e, "b", acc[k:].to("cpu", copy=True),
                                                       p.ver_b))  # fmt: skip
            self.memory.free(self.sizes[e] * self.gi)
        self._evict(u)

    def _finish(self, p: _Pass) -> None:
        """The last run ends; horizontal (ZeRO-Infinity) steps every entry now; wait for the background steps;
        commit the new state."""
        assert p.current is not None
        self._end_run(p, p.current)
        if self.schedule == "horizontal":
            for e in range(self.E):
                if e in p.acc:  # resident: on the device
                    self._optim_step(e, "b", p.acc.pop(e), p.ver_b)
                    self.memory.free(self.sizes[e] * self.gi)
                else:
                    grad = self.store.read(self.store.root / f"u{e}.gradacc", self.sizes[e],
                                           tier_class=("ssd", "gradients"))  # fmt: skip
                    self._optim_step(e, "b", grad, p.ver_b)
        t0 = time.perf_counter()
        for f in list(p.futures_a.values()) + p.futures_b:
            f.result()
        self.stats.wait_s += time.perf_counter() - t0
        self.stats.iterations += 1
        self._commit({**self._record, "step": p.step + 1, "ver_a": p.ver_a, "ver_b": p.ver_b,
                      "pending": self.alpha > 0})  # fmt: skip

    # ---- results ------------------------------------------------------------------------------------------
    def parameters(self) -> list[torch.Tensor]:
        """Each entry's committed master parameters (fp32/fp64), flattened; not counted as traffic. Without mixed
        precision these equal the compute copy."""
        return [self._masters(e, self._record) for e in range(self.E)]

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True)
        self.store.close()
