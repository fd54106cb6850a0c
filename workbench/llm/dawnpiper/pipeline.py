"""Real pipeline execution of a partition over P gloo processes: each rank runs its stage's fx nodes (the stage
code generated from the partition), GPipe or 1F1B, with the chosen tensors really swapped to host or recomputed.

Per micro-batch a stage receives the values crossing its first cut (graph inputs come from the data, not the
previous stage), runs its units under ``saved_tensors_hooks`` and sends the values crossing its last cut; backward
receives their gradients and sends those of its inputs. Values used two or more stages later are relayed.

Saved-tensor accounting (the measured memory): every tensor an autograd node saves is held by a small *holder*;
the ledger counts the bytes of the distinct storages that live holders keep on the device (parameters excluded),
and its peak is the stage's measured activation peak, compared with the model's ``k_x * act_x``.

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

__all__ = ["PipeSpec", "Ledger", "stage_values", "pipeline_worker", "schedule_order"]

PIPE_SCHEDULES = ("gpipe", "1f1b")


@dataclass(frozen=True)
class PipeSpec:
    """What every rank runs: the cuts, the schedule, micro-batches, the data seed, and per stage the value ids
    to swap and to recompute."""

    cuts: tuple[int, ...]
    schedule: str
    micro_batches: int
    data_seed: int
    swap: tuple[tuple[int, ...], ...]
    recompute: tuple[tuple[int, ...], ...]


class Ledger:
    """Bytes of the distinct storages that live holders keep on the device (and on the host), with peaks."""

    def __init__(self) -> None:
        self.refs: dict[int, list[int]] = {}
        self.bytes = self.peak = 0
        self.host_bytes = self.host_peak = 0
        self.swapped_out = self.swapped_in = 0
        self.recomputed = 0

    def hold(self, t: torch.Tensor) -> int:
        key = storage_key(t)
        entry = self.refs.get(key)
        if entry is None:
            entry = self.refs[key] = [0, int(t.untyped_storage().nbytes())]
            self.bytes += entry[1]
            self.peak = max(self.peak, self.bytes)
        entry[0] += 1
        return key

    def release(self, key: int) -> None:
        entry = self.refs[key]
        entry[0] -= 1
        if entry[0] == 0:
            self.bytes -= entry[1]
            del self.refs[key]


class _Held:
    """A saved tensor kept on the device (counted while alive)."""

    __slots__ = ("ledger", "key", "tensor")

    def __init__(self, ledger: Ledger, t: torch.Tensor) -> None:
        self.ledger, self.tensor = ledger, t
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
        return self.back

    def __del__(self) -> None:
        if self.host is not None:
            self.ledger.host_bytes -= self.nbytes


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
    """One stage of the pipeline (rank = stage): runs the schedule and returns its measurements and gradients."""
    gm = traced.gm
    bounds = [0, *spec.cuts, len(traced.units)]
    start, stop = bounds[rank], bounds[rank + 1]
    nodes = [nd for unit in traced.units[start:stop] for nd in unit]
    recv_nodes, send_nodes = stage_values(traced, spec.cuts, rank)
    M = spec.micro_batches
    config = traced.config
    tokens, targets = random_tokens(config, traced.micro_batch * M, seed=spec.data_seed)
    # one tensor per micro-batch (as a loader delivers them), so no two micro-batches share a storage
    tokens, targets = [t.clone() for t in tokens.chunk(M)], [t.clone() for t in targets.chunk(M)]
    param_keys = {storage_key(p) for p in gm.parameters()}
    swap, recompute = set(spec.swap[rank]), set(spec.recompute[rank])
    by_name = {nd.name: nd for unit in traced.units for nd in unit}
    ledger = Ledger()
    state: dict[int, tuple[dict, list, Any]] = {}
    pending_sends = []
    losses = []

    def forward(j: int) -> None:
        env: dict[str, Any] = {traced.inputs[0]: tokens[j], traced.inputs[1]: targets[j]}
        inputs = {}
        if recv_nodes:
            bufs = [_empty(nd) for nd in recv_nodes]
            comm.p2p(recvs=[(b, rank - 1) for b in bufs]).wait()
            for nd, b in zip(recv_nodes, bufs, strict=True):
                env[nd.name] = inputs[nd.name] = b.requires_grad_(b.is_floating_point())
        slots: dict[int, _Slot] = {}
        cursor = [0, 0]  # unit, pack index within it

        def pack(t: torch.Tensor) -> Any:
            value = graph.pack_sequence[cursor[0]][cursor[1]]
            cursor[1] += 1
            if storage_key(t) in param_keys or value < 0:
                return t
            if value in swap or value in recompute:
                slot = slots.get(value)
                if slot is None:
                    slot = slots[value] = _Slot(ledger, int(t.untyped_storage().nbytes()))
                    root = env.get(graph.value_names[value])
                    if isinstance(root, torch.Tensor):
                        slot.shape, slot.dtype, slot.device = tuple(root.shape), root.dtype, root.device
                    if value in swap:
                        slot.swap_out(t)
                    else:
                        node = by_name[graph.value_names[value]]
                        held = []
                        for w in graph.value_inputs[value]:
                            src = graph.value_names[w]
                            # an input that is itself swapped or recomputed is reached through its slot
                            held.append(slots[w] if w in slots else _Held(ledger, env[src]))
                        params = [
                            gm.get_parameter(str(a.target))
                            for a in node.args
                            if isinstance(a, fx.Node) and a.op == "get_attr"
                        ]
                        slot.recipe = (node, _merge_args(node, held, params), dict(node.kwargs))
                return _Lazy(slot, t)
            return _Held(ledger, t)

        def unpack(h: Any) -> torch.Tensor:
            return h if isinstance(h, torch.Tensor) else h.get()

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            for u in range(start, stop):
                cursor[0], cursor[1] = u, 0
                run_nodes(traced.units[u], env, gm)
        if send_nodes:
            outs = [env[nd.name] for nd in send_nodes]
            pending_sends.append((comm.p2p(sends=[(o.detach().contiguous(), rank + 1) for o in outs]), outs))
            state[j] = (inputs, outs, None)
        else:
            loss = env[nodes[-1].name]
            losses.append(float(loss.detach()))
            state[j] = (inputs, [], loss)

    def backward(j: int) -> None:
        inputs, outs, loss = state.pop(j)
        if loss is not None:
            (loss / M).backward()
        else:
            live = [(o, nd) for o, nd in zip(outs, send_nodes, strict=True) if o.is_floating_point()]
            grads = [_empty(nd) for _, nd in live]
            comm.p2p(recvs=[(g, rank + 1) for g in grads]).wait()
            roots = [(o, g) for (o, _), g in zip(live, grads, strict=True) if o.requires_grad]
            torch.autograd.backward([o for o, _ in roots], [g for _, g in roots])
        if recv_nodes:
            back = [inputs[nd.name] for nd in recv_nodes if inputs[nd.name].is_floating_point()]
            sends = [(t.grad if t.grad is not None else torch.zeros_like(t)).contiguous() for t in back]
            pending_sends.append((comm.p2p(sends=[(g, rank - 1) for g in sends]), sends))

    comm.barrier()  # every stage starts the timed step together
    step_start = time.perf_counter()
    for kind, j in schedule_order(spec.schedule, rank, world, M):
        forward(j) if kind == "F" else backward(j)
    for pending, _ in pending_sends:
        pending.wait()
    step_seconds = time.perf_counter() - step_start
    grads = {}
    for unit in traced.units[start:stop]:
        for nd in unit:
            for a in nd.all_input_nodes:
                if a.op == "get_attr":
                    p = gm.get_parameter(str(a.target))
                    grads[str(a.target)] = p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
    return {
        "stage": rank,
        "peak_bytes": ledger.peak,
        "end_bytes": ledger.bytes,
        "host_peak_bytes": ledger.host_peak,
        "swapped_out_bytes": ledger.swapped_out,
        "swapped_in_bytes": ledger.swapped_in,
        "recomputed": ledger.recomputed,
        "losses": losses,
        "grads": grads,
        "bytes_sent": comm.bytes_sent,
        "step_seconds": step_seconds,
    }


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
