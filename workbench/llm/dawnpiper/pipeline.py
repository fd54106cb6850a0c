"""Real pipeline execution of a partition over P gloo processes: each rank runs its stage's fx nodes (the stage
code generated from the partition), GPipe or 1F1B, with the chosen tensors really swapped to host or recomputed.

Per micro-batch a stage receives the values crossing its first cut (graph inputs come from the data, not the
previous stage), runs its units under ``saved_tensors_hooks`` and sends the values crossing its last cut; backward
receives their gradients and sends those of its inputs. Values used two or more stages later are relayed.

Accounting (the measured memory, parameters excluded): every tensor an autograd node saves is held by a small
*holder*; the ledger counts the bytes of the distinct storages that live holders keep on the device (its peak is
compared with the model's ``k_x * act_x``), and, separately, of every storage the stage keeps a reference to: the
saved ones, the forward working set (each value, received ones included, is dropped after its last reader in the
stage, so the logits live beside the loss's buffer and then go), and a swapped or recomputed value's storage from
when backward brings it back (``_Slot.back``) until its last holder (or a recompute reading it) is done. The stage
frees what backward does not read, as a pipeline on a device must: a received value's storage after its last
reader, a sent value's once its send is complete (the end of the micro-batch's forward), the loss's after it is
read (:func:`_free` keeps each as an autograd root or leaf of no storage). Gradients are not counted (autograd
makes and frees them inside backward), nor the gradients received and sent in backward.

- swap: the saved storage is copied to a host buffer when it is saved and copied back the first time backward
  unpacks it (``Tensor.to``; on this CPU-only machine "host" and "device" are the same RAM, so the copies are real
  but the tiers are bookkeeping; on a GPU the same code moves to host memory and back);
- recompute: the holder keeps the producer's inputs (already held by the stage, so they add no bytes) and the
  first unpack reruns the producing op without autograd.
Gradient accumulation is in micro-batch order 0..M-1 on every stage, as in the single-process reference.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx

from workbench.distributed.comm import Comm
from workbench.llm.dawnpiper.graph import NodeGraph
from workbench.llm.dawnpiper.trace import TracedGPT, run_nodes, storage_key
from workbench.llm.gpt import random_tokens

__all__ = ["PipeSpec", "Ledger", "stage_values", "pipeline_worker", "schedule_order", "allocation_peak"]

PIPE_SCHEDULES = ("gpipe", "1f1b")


@dataclass(frozen=True)
class PipeSpec:
    """What every rank runs: the cuts, the schedule, micro-batches, the data seed, and per stage the value ids
    to swap and to recompute; ``torch_memory``: also count the stage's allocations with torch's profiler."""

    cuts: tuple[int, ...]
    schedule: str
    micro_batches: int
    data_seed: int
    swap: tuple[tuple[int, ...], ...]
    recompute: tuple[tuple[int, ...], ...]
    torch_memory: bool = False


class Ledger:
    """Bytes of the distinct storages live on the device, with peaks: ``bytes``/``peak`` count those that live
    holders of saved tensors keep (the saved-tensor ledger); ``live_bytes``/``live_peak`` every storage this
    stage keeps a reference to (saved tensors, the forward working set with the received and sent values, tensors
    swapped back in or recomputed). Also host bytes and swap/recompute counters."""

    def __init__(self) -> None:
        self.refs: dict[int, list[int]] = {}  # storage key -> [saved refs, other refs, bytes]
        self.bytes = self.peak = 0
        self.live_bytes = self.live_peak = 0
        self.host_bytes = self.host_peak = 0
        self.swapped_out = self.swapped_in = 0
        self.recomputed = 0

    def hold(self, t: torch.Tensor, saved: bool = True) -> int:
        """Count ``t``'s storage (as a saved tensor, or only as live); returns its key for :meth:`release`."""
        return self.hold_storage(storage_key(t), int(t.untyped_storage().nbytes()), saved)

    def hold_storage(self, key: int, nbytes: int, saved: bool = True) -> int:
        entry = self.refs.get(key)
        if entry is None:
            entry = self.refs[key] = [0, 0, nbytes]
            self.live_bytes += nbytes
            self.live_peak = max(self.live_peak, self.live_bytes)
        if saved and entry[0] == 0:
            self.bytes += entry[2]
            self.peak = max(self.peak, self.bytes)
        entry[0 if saved else 1] += 1
        return key

    def release(self, key: int, saved: bool = True) -> None:
        entry = self.refs[key]
        entry[0 if saved else 1] -= 1
        if saved and entry[0] == 0:
            self.bytes -= entry[2]
        if entry[0] == entry[1] == 0:
            self.live_bytes -= entry[2]
            del self.refs[key]


class _Held:
    """A saved tensor kept on the device (counted while alive)."""

    __slots__ = ("ledger", "key", "tensor")

    def __init__(self, ledger: Ledger, t: torch.Tensor) -> None:
        # its own tensor object on the storage: freeing a sent or received value (:func:`_free`) leaves it intact
        self.ledger, self.tensor = ledger, t.detach()
        self.key = ledger.hold(t)

    def get(self) -> torch.Tensor:
        return self.tensor

    def __del__(self) -> None:
        self.ledger.release(self.key)


class _Slot:
    """One swapped or recomputed value of one micro-batch, shared by every holder of its storage."""

    def __init__(self, ledger: Ledger, nbytes: int) -> None:
        self.ledger, self.nbytes = ledger, nbytes
        self.host: torch.UntypedStorage | None = None
        self.back: torch.UntypedStorage | None = None
        self.recipe: tuple[fx.Node, list[Any], dict] | None = None
        self.back_key: int | None = None

    device: torch.device = torch.device("cpu")
    shape: tuple = ()
    dtype: torch.dtype = torch.float32

    def swap_out(self, t: torch.Tensor) -> None:
        self.host = t.untyped_storage().cpu() if t.is_cuda else t.untyped_storage().clone()
        self.ledger.swapped_out += self.nbytes
        self.ledger.host_bytes += self.nbytes
        self.ledger.host_peak = max(self.ledger.host_peak, self.ledger.host_bytes)

    def storage(self, device: torch.device) -> torch.UntypedStorage:
        if self.back is None:
            self._bring_back(device)
            assert self.back is not None
            self.back_key = self.ledger.hold_storage(self.back.data_ptr(), int(self.back.nbytes()), saved=False)
        return self.back

    def _bring_back(self, device: torch.device) -> None:
        """Swap the storage back in, or recompute it from the held inputs."""
        if self.back is None:
            if self.host is not None:
                self.back = self.host.to(device=device) if device.type != "cpu" else self.host.clone()
                self.ledger.swapped_in += self.nbytes
            else:
                assert self.recipe is not None, "a slot neither swapped nor recomputable is never dropped"
                node, inputs, kwargs = self.recipe
                with torch.no_grad():
                    args = [
                        a.get() if isinstance(a, _Held) else _whole(a) if isinstance(a, _Slot) else a for a in inputs
                    ]
                    self.back = node.target(*args, **kwargs).untyped_storage()
                self.ledger.recomputed += 1

    def __del__(self) -> None:
        if self.host is not None:
            self.ledger.host_bytes -= self.nbytes
        if self.back_key is not None:
            self.ledger.release(self.back_key, saved=False)


def _whole(slot: _Slot) -> torch.Tensor:
    """A swapped or recomputed input as the whole (contiguous) root tensor it was."""
    storage = slot.storage(slot.device)
    return torch.empty(0, dtype=slot.dtype, device=slot.device).set_(storage, 0, slot.shape)  # type: ignore[call-overload]  # torch's stub has no set_(UntypedStorage, offset, size) overload


class _Lazy:
    """A holder that rebuilds its view from a slot's storage (swap back in or recompute) when unpacked."""

    __slots__ = ("slot", "dtype", "size", "stride", "offset", "device")

    def __init__(self, slot: _Slot, t: torch.Tensor) -> None:
        self.slot, self.dtype, self.device = slot, t.dtype, t.device
        self.size, self.stride, self.offset = t.size(), t.stride(), t.storage_offset()

    def get(self) -> torch.Tensor:
        out = torch.empty(0, dtype=self.dtype, device=self.device)
        return out.set_(self.slot.storage(self.device), self.offset, self.size, self.stride)


def stage_values(traced: TracedGPT, cuts: Sequence[int], stage: int) -> tuple[list[fx.Node], list[fx.Node]]:
    """The fx nodes whose values stage ``stage`` receives (crossing its first cut) and sends (its last cut)."""
    node_unit = traced.node_unit()
    bounds = [0, *cuts, len(traced.units)]

    def crossing(cut: int) -> list[fx.Node]:
        if cut <= 0 or cut >= len(traced.units):
            return []
        out = []
        for nodes in traced.units[:cut]:
            for node in nodes:
                if any(node_unit.get(u.name, -1) >= cut for u in node.users):
                    out.append(node)
        return out

    return crossing(bounds[stage]), crossing(bounds[stage + 1])


def schedule_order(schedule: str, stage: int, stages: int, micro_batches: int) -> list[tuple[str, int]]:
    """The ("F"|"B", micro-batch) order of one stage: GPipe (all forwards, then backwards 0..M-1) or 1F1B
    (``min(S - x - 1, M)`` warm-up forwards, then one forward one backward, then the remaining backwards)."""
    if schedule not in PIPE_SCHEDULES:
        raise ValueError(f"schedule={schedule!r} cannot run: valid pipeline schedules are {PIPE_SCHEDULES}")
    M = micro_batches
    if schedule == "gpipe":
        return [("F", j) for j in range(M)] + [("B", j) for j in range(M)]
    warm = min(stages - stage - 1, M)
    order = [("F", j) for j in range(warm)]
    for j in range(warm, M):
        order += [("F", j), ("B", j - warm)]
    order += [("B", j) for j in range(M - warm, M)]
    return order


def _meta(node: fx.Node) -> tuple[torch.Size, torch.dtype]:
    val = node.meta["val"]
    return val.shape, val.dtype


def _empty(node: fx.Node) -> torch.Tensor:
    shape, dtype = _meta(node)
    return torch.empty(shape, dtype=dtype)


def pipeline_worker(rank: int, world: int, comm: Comm, traced: TracedGPT, graph: NodeGraph, spec: PipeSpec) -> dict:
    """One stage of the pipeline (rank = stage): runs the schedule and returns its measurements and gradients:
    ``peak_bytes`` (saved tensors), ``live_peak_bytes`` (every storage the stage keeps, see :class:`Ledger`),
    host and swap counters, the last stage's losses, the stage's parameter gradients, bytes sent, step seconds;
    with ``spec.torch_memory`` also ``torch_peak_bytes``, the peak of the bytes torch allocated from the stage's
    set-up on (its profiler's memory events: everything the ledger counts, and also gradients, the parameters'
    ``.grad``, communication buffers and the ops' temporaries)."""
    if not spec.torch_memory:
        return _StageRun(rank, world, comm, traced, graph, spec).run()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        out = _StageRun(rank, world, comm, traced, graph, spec).run()
    return {**out, "torch_peak_bytes": allocation_peak(prof)}


def allocation_peak(prof: torch.profiler.profile) -> int:
    """The largest sum of the bytes allocated minus freed, in time order, over ``prof``'s memory events (bytes)."""
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    total = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        total += int(e.nbytes())
        peak = max(peak, total)
    return peak


class _StageRun:
    """The state of one stage's run: its fx nodes, the data, the ledger, and the micro-batches in flight."""

    def __init__(self, rank: int, world: int, comm: Comm, traced: TracedGPT, graph: NodeGraph, spec: PipeSpec):
        self.rank, self.world, self.comm, self.traced, self.graph, self.spec = rank, world, comm, traced, graph, spec
        self.gm = traced.gm
        bounds = [0, *spec.cuts, len(traced.units)]
        self.start, self.stop = bounds[rank], bounds[rank + 1]
        self.nodes = [nd for unit in traced.units[self.start : self.stop] for nd in unit]
        self.recv_nodes, self.send_nodes = stage_values(traced, spec.cuts, rank)
        M = spec.micro_batches
        tokens, targets = random_tokens(traced.config, traced.micro_batch * M, seed=spec.data_seed)
        # one tensor per micro-batch (as a loader delivers them), so no two micro-batches share a storage
        self.tokens, self.targets = [t.clone() for t in tokens.chunk(M)], [t.clone() for t in targets.chunk(M)]
        self.param_keys = {storage_key(p) for p in self.gm.parameters()}
        self.swap, self.recompute = set(spec.swap[rank]), set(spec.recompute[rank])
        self.by_name = {nd.name: nd for unit in traced.units for nd in unit}
        # kept in the forward's env: what is sent on, and the kept inputs a recompute reruns its op from
        moved = self.swap | self.recompute
        inputs_of = {w for v in self.recompute for w in graph.value_inputs[v] or () if w not in moved}
        keep = {nd.name for nd in self.send_nodes} | {graph.value_names[w] for w in inputs_of}
        self.drop_after = _drop_after(traced, self.start, self.stop, keep)
        self.ledger = Ledger()
        self.state: dict[int, tuple[dict, list, Any]] = {}
        self.pending_sends: list = []
        self.losses: list[float] = []

    def pack(self, t: torch.Tensor, value: int, env: dict[str, Any], slots: dict[int, _Slot]) -> Any:
        """The holder of saved tensor ``t`` (graph value ``value``): kept, or a slot to swap or recompute."""
        graph = self.graph
        if storage_key(t) in self.param_keys or value < 0:
            return t
        if value not in self.swap and value not in self.recompute:
            return _Held(self.ledger, t)
        slot = slots.get(value)
        if slot is None:
            slot = slots[value] = _Slot(self.ledger, int(t.untyped_storage().nbytes()))
            root = env.get(graph.value_names[value])
            if isinstance(root, torch.Tensor):
                slot.shape, slot.dtype, slot.device = tuple(root.shape), root.dtype, root.device
            if value in self.swap:
                slot.swap_out(t)
            else:
                node = self.by_name[graph.value_names[value]]
                held = []
                for w in graph.value_inputs[value]:
                    # an input that is itself swapped or recomputed is reached through its slot
                    held.append(slots[w] if w in slots else _Held(self.ledger, env[graph.value_names[w]]))
                params = [
                    self.gm.get_parameter(str(a.target))
                    for a in node.args
                    if isinstance(a, fx.Node) and a.op == "get_attr"
                ]
                slot.recipe = (node, _merge_args(node, held, params), dict(node.kwargs))
        return _Lazy(slot, t)

    def forward(self, j: int) -> None:
        traced, ledger = self.traced, self.ledger
        env: dict[str, Any] = {traced.inputs[0]: self.tokens[j], traced.inputs[1]: self.targets[j]}
        inputs = {}
        if self.recv_nodes:
            bufs = [_empty(nd) for nd in self.recv_nodes]
            self.comm.p2p(recvs=[(b, self.rank - 1) for b in bufs]).wait()
        slots: dict[int, _Slot] = {}
        cursor = [0, 0]  # unit, pack index within it
        working: dict[str, int] = {}  # env name -> live key of the value it holds (the forward working set)
        if self.recv_nodes:
            for nd, b in zip(self.recv_nodes, bufs, strict=True):
                env[nd.name] = inputs[nd.name] = b.requires_grad_(b.is_floating_point())
                working[nd.name] = ledger.hold(b, saved=False)

        def pack(t: torch.Tensor) -> Any:
            value = self.graph.pack_sequence[cursor[0]][cursor[1]]
            cursor[1] += 1
            return self.pack(t, value, env, slots)

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda h: h if isinstance(h, torch.Tensor) else h.get()):
            for u in range(self.start, self.stop):
                cursor[0], cursor[1] = u, 0
                run_nodes(traced.units[u], env, self.gm)
                for nd in traced.units[u]:
                    out = env[nd.name]
                    if isinstance(out, torch.Tensor) and storage_key(out) not in self.param_keys:
                        working[nd.name] = ledger.hold(out, saved=False)
                for name in self.drop_after.get(u, ()):  # the last reader in this stage has run
                    value = env.pop(name, None)
                    if name in inputs:  # a received value: backward needs only its autograd leaf
                        _free(value)
                    if name in working:
                        ledger.release(working.pop(name), saved=False)
        outs = [env[nd.name] for nd in self.send_nodes]
        if self.send_nodes:
            # the send completes before the stage goes on (its buffer is the output's storage); backward needs
            # only the outputs' autograd nodes, so their storage is freed then (what the next stage receives)
            self.comm.p2p(sends=[(o.detach().contiguous(), self.rank + 1) for o in outs]).wait()
            self.state[j] = (inputs, outs, None)
        else:
            loss = env[self.nodes[-1].name]
            self.losses.append(float(loss.detach()))
            self.state[j] = (inputs, [], loss)
        for o in [*outs, *([] if self.send_nodes else [loss])]:
            _free(o)
        for key in working.values():
            ledger.release(key, saved=False)
        # autograd keeps the pack hook (this closure) with every saved tensor until its backward: empty what it
        # reaches, so a slot lives only as long as its holders (and the recomputes that read it) need it
        env.clear()
        slots.clear()

    def backward(self, j: int) -> None:
        inputs, outs, loss = self.state.pop(j)
        if loss is not None:
            (loss / self.spec.micro_batches).backward()
        else:
            live = [(o, nd) for o, nd in zip(outs, self.send_nodes, strict=True) if o.is_floating_point()]
            grads = [_empty(nd) for _, nd in live]
            self.comm.p2p(recvs=[(g, self.rank + 1) for g in grads]).wait()
            roots = [(o, g) for (o, _), g in zip(live, grads, strict=True) if o.requires_grad]
            torch.autograd.backward([o for o, _ in roots], [g for _, g in roots])
        if self.recv_nodes:
            back = [inputs[nd.name] for nd in self.recv_nodes if inputs[nd.name].is_floating_point()]
            sends = [(t.grad if t.grad is not None else torch.zeros_like(t)).contiguous() for t in back]
            self.pending_sends.append((self.comm.p2p(sends=[(g, self.rank - 1) for g in sends]), sends))

    def run(self) -> dict:
        self.comm.barrier()  # every stage starts the timed step together
        step_start = time.perf_counter()
        for kind, j in schedule_order(self.spec.schedule, self.rank, self.world, self.spec.micro_batches):
            self.forward(j) if kind == "F" else self.backward(j)
        for pending, _ in self.pending_sends:
            pending.wait()
        step_seconds = time.perf_counter() - step_start
        ledger = self.ledger
        return {
            "stage": self.rank,
            "peak_bytes": ledger.peak,
            "live_peak_bytes": ledger.live_peak,
            "end_bytes": ledger.bytes,
            "host_peak_bytes": ledger.host_peak,
            "swapped_out_bytes": ledger.swapped_out,
            "swapped_in_bytes": ledger.swapped_in,
            "recomputed": ledger.recomputed,
            "losses": self.losses,
            "grads": self.gradients(),
            "bytes_sent": self.comm.bytes_sent,
            "step_seconds": step_seconds,
        }

    def gradients(self) -> dict[str, torch.Tensor]:
        grads = {}
        for nd in self.nodes:
            for a in nd.all_input_nodes:
                if a.op == "get_attr":
                    p = self.gm.get_parameter(str(a.target))
                    grads[str(a.target)] = p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
        return grads


def _drop_after(traced: TracedGPT, start: int, stop: int, keep: set[str]) -> dict[int, list[str]]:
    """Per unit u of the stage [start, stop): the names (fx nodes run here or received) whose last reader in the
    stage is u, except those in ``keep``: forward drops them after u."""
    node_unit = traced.node_unit()
    out: dict[int, list[str]] = {}
    for unit in traced.units[:stop]:
        for nd in unit:
            if nd.name in keep:
                continue
            readers = [node_unit[r.name] for r in nd.users if r.name in node_unit]
            here = [u for u in readers if start <= u < stop]
            if not here or any(u >= stop for u in readers):
                continue
            out.setdefault(max(here), []).append(nd.name)
    return out


def _free(t: Any) -> None:
    """Free a tensor's storage but keep its autograd identity (shape, dtype, ``grad_fn`` or leaf): its data
    becomes a stride-0 view of a shared one-element placeholder, so a sent output can still be a backward root
    and a received input still collects ``.grad`` (holders of saved tensors keep their own tensor objects)."""
    if isinstance(t, torch.Tensor):
        t.data = _placeholder(t.dtype, t.device).expand(t.shape)


_PLACEHOLDERS: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}


def _placeholder(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    key = (dtype, device)
    if key not in _PLACEHOLDERS:
        _PLACEHOLDERS[key] = torch.zeros((), dtype=dtype, device=device)
    return _PLACEHOLDERS[key]


def _merge_args(node: fx.Node, held: list[_Held], params: list[torch.Tensor]) -> list[Any]:
    """The producing op's positional arguments: held tensors for values, parameters, constants as traced."""
    out: list[Any] = []
    held_iter, param_iter = iter(held), iter(params)
    for a in node.args:
        if isinstance(a, fx.Node):
            out.append(next(param_iter) if a.op == "get_attr" else next(held_iter))
        else:
            out.append(a)
    return out
