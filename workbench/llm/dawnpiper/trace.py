"""Tracing and profiling: the GPT (plus its loss) traced with ``torch.export`` (a ``torch.fx`` graph of ATen
ops), grouped into units of one compute op each, and profiled for real into a :class:`NodeGraph`.

A unit is one compute op together with the view ops (split, getitem, reshape, transpose) that feed it; every
position between two units is a legal cut, because only tensors cross it. A GPT of L blocks has ``10 L + 6``
units (3 embedding, 10 per block, 3 head/loss).

Profiling: the values each unit's backward saves, from ``torch.autograd.graph.saved_tensors_hooks`` during a
real forward (storage, producer, savers, the inputs a recompute needs); bytes crossing each cut; parameters and
Adam's state per unit (a real optimizer step); forward time in place (the interpreter over the real tensors)
and backward time by ``torch.autograd.grad`` of the unit alone from leaf copies of its inputs (median of
``repeats``, one intra-op thread as the stage processes run).
"""

from __future__ import annotations

import operator
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import fx

from workbench.data import cache_dir
from workbench.llm.dawnpiper.graph import NodeGraph
from workbench.llm.gpt import GPTConfig, build_gpt, lm_loss, random_tokens

__all__ = ["TracedGPT", "trace_gpt", "profile", "run_nodes", "VIEW_OPS", "storage_key"]

VIEW_OPS = {
    operator.getitem,
    torch.ops.aten.split.Tensor,
    torch.ops.aten.reshape.default,
    torch.ops.aten.view.default,
    torch.ops.aten.transpose.int,
    torch.ops.aten.permute.default,
    torch.ops.aten.arange.default,
    torch.ops.aten.arange.start,
}
#: short names of the compute ops (unit names read "L0.qkv" etc.)
_SHORT = {
    "embedding": "emb",
    "add": "add",
    "layer_norm": "ln",
    "linear": "linear",
    "scaled_dot_product_attention": "attn",
    "gelu": "gelu",
    "cross_entropy_loss": "loss",
}


@dataclass(frozen=True, eq=False)
class TracedGPT:
    """A GPT traced to ATen ops, its units (lists of fx nodes) and the parameters each unit owns.

    ``gm`` is the exported module (its parameters are the trained tensors); ``units[i]`` the fx nodes of unit i
    in order; ``unit_params[i]`` the parameter names (``blocks.0.qkv.weight``) first used by unit i; ``inputs``
    the placeholder names (tokens, targets); ``config`` and ``micro_batch`` what was traced.
    """

    gm: fx.GraphModule
    units: tuple[tuple[fx.Node, ...], ...]
    unit_names: tuple[str, ...]
    unit_layer: tuple[int, ...]
    unit_params: tuple[tuple[str, ...], ...]
    inputs: tuple[str, str]
    config: GPTConfig
    micro_batch: int

    def node_unit(self) -> dict[str, int]:
        return {node.name: i for i, unit in enumerate(self.units) for node in unit}


class _WithLoss(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.embed, self.blocks, self.head = model.embed, model.blocks, model.head

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return lm_loss(self.head(x), targets)


def _op_name(node: fx.Node) -> str:
    target = node.target
    name = getattr(target, "__name__", str(target)).split(".")[0]
    return _SHORT.get(name, name)


def trace_gpt(config: GPTConfig, micro_batch: int) -> TracedGPT:
    """Trace ``build_gpt(config)`` plus its loss for micro-batches of ``micro_batch`` samples.

    The trace is ``torch.export`` (static shapes, so the micro-batch size is fixed); parameters stay module
    attributes (``get_attr``), initialised from ``config.seed`` exactly as :func:`build_gpt`.

    Raises ValueError for ``micro_batch`` < 1.
    """
    if micro_batch < 1:
        raise ValueError(f"micro_batch={micro_batch} is out of range: valid range is >= 1 (samples)")
    model = build_gpt(config)
    tokens, targets = random_tokens(config, micro_batch, seed=0)
    # torch.export imports Inductor's bisector, which creates Inductor's cache folder (under the temporary folder
    # unless TORCHINDUCTOR_CACHE_DIR names one, and then sets that variable itself); give it the workbench's cache
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache_dir("dawnpiper", "torchinductor")))
    gm = torch.export.export(_WithLoss(model), (tokens, targets)).module()
    # the exported module holds copies: load the seeded weights by name so gm and build_gpt(config) agree
    with torch.no_grad():
        for name, p in model.named_parameters():
            gm.get_parameter(name).copy_(p)
    units: list[list[fx.Node]] = [[]]
    names, layers, params = [], [], []
    attr_of = {n.name: n.target for n in gm.graph.nodes if n.op == "get_attr"}
    placeholders = tuple(n.name for n in gm.graph.nodes if n.op == "placeholder")
    counts: dict[tuple[int, str], int] = {}
    current_layer = -1
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        units[-1].append(node)
        if node.target in VIEW_OPS:
            continue
        owned = []
        for arg in node.all_input_nodes:
            if arg.op == "get_attr":
                owned.append(str(attr_of[arg.name]))
        for owner in owned:
            if owner.startswith("blocks."):
                current_layer = int(owner.split(".")[1])
            elif owner.startswith("head."):
                current_layer = config.layers
        op = _op_name(node)
        if op == "loss":
            current_layer = config.layers
        key = (current_layer, op)
        counts[key] = counts.get(key, 0) + 1
        prefix = "emb" if current_layer < 0 else ("head" if current_layer >= config.layers else f"L{current_layer}")
        names.append(f"{prefix}.{op}{counts[key] - 1 if counts[key] > 1 else ''}")
        layers.append(current_layer)
        params.append(tuple(owned))
        units.append([])
    if units[-1]:
        units[-2].extend(units[-1])
    units.pop()
    return TracedGPT(
        gm=gm,
        units=tuple(tuple(u) for u in units),
        unit_names=tuple(names),
        unit_layer=tuple(layers),
        unit_params=tuple(params),
        inputs=(placeholders[0], placeholders[1]),
        config=config,
        micro_batch=micro_batch,
    )


# ----------------------------------------------------------------------------------------------- executing
def run_nodes(nodes: Sequence[fx.Node], env: dict[str, Any], gm: fx.GraphModule) -> None:
    """Execute fx ``nodes`` in order, reading arguments from and writing outputs to ``env`` (by node name).

    Parameters come from ``gm`` (``get_attr`` is resolved on use), so gradients reach ``gm``'s parameters.
    """

    def load(arg: Any) -> Any:
        if isinstance(arg, fx.Node):
            if arg.op == "get_attr":
                return gm.get_parameter(str(arg.target))
            return env[arg.name]
        if isinstance(arg, (list, tuple)):
            return type(arg)(load(a) for a in arg)
        return arg

    for node in nodes:
        args = tuple(load(a) for a in node.args)
        kwargs = {k: load(v) for k, v in node.kwargs.items()}
        env[node.name] = node.target(*args, **kwargs)


def storage_key(t: torch.Tensor) -> int:
    """Identity of ``t``'s storage (views of one tensor share it)."""
    return t.untyped_storage().data_ptr()


def _tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _tensors(item)]
    return []


def _median_time(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm-up: the first call pays one-off costs (allocator, dispatch caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def profile(traced: TracedGPT, *, repeats: int = 5, seed: int = 0) -> NodeGraph:
    """Profile every unit of ``traced`` for real: the values its backward saves (saved-tensor hooks over one
    forward of the whole graph), their storage bytes, the bytes crossing each cut, the parameters it owns, and
    its forward and backward seconds (median of ``repeats``).

    Raises ValueError for ``repeats`` < 1.
    """
    if repeats < 1:
        raise ValueError(f"repeats={repeats} is out of range: valid range is >= 1")
    tokens, targets = random_tokens(traced.config, traced.micro_batch, seed=seed)
    env: dict[str, Any] = {traced.inputs[0]: tokens, traced.inputs[1]: targets}
    values = _record_forward(traced, env)
    pbytes, pcount = _param_sizes(traced)
    # one intra-op thread, as every pipeline stage process runs (and a busy machine makes more threads stall)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fwd, bwd = _time_units(traced, env, repeats)
    finally:
        torch.set_num_threads(threads)
    return NodeGraph(
        names=traced.unit_names,
        layer=np.array(traced.unit_layer),
        fwd_s=fwd,
        bwd_s=bwd,
        param_bytes=pbytes,
        param_count=pcount,
        value_names=tuple(values.names),
        value_bytes=np.array(values.nbytes, dtype=np.int64),
        value_producer=np.array(values.producer),
        value_savers=tuple(tuple(sorted(s)) for s in values.savers),
        value_inputs=_recompute_inputs(traced, values),
        crossing_bytes=_crossing_bytes(traced, env),
        micro_batch=traced.micro_batch,
        source="traced",
        param_elem_bytes=traced.config.torch_dtype.itemsize,
        pack_sequence=tuple(tuple(seq) for seq in values.sequence),
        optimizer_bytes=_adam_state_bytes(traced),
        value_last_use=_last_use(traced, values),
    )


class _Values:
    """The values of one profiled forward: per value id its name, storage bytes, producer unit (-1: a graph
    input), saving units and root fx node (None: an op's private buffer or a graph input); per storage its value
    (``value_of``), per fx node the value of its storage (``node_value``, views too), and per unit the value id
    of every tensor its autograd nodes save, in order (``sequence``; -1 a parameter)."""

    def __init__(self, units: int) -> None:
        self.value_of: dict[int, int] = {}
        self.names: list[str] = []
        self.nbytes: list[int] = []
        self.producer: list[int] = []
        self.savers: list[set[int]] = []
        self.root_node: list[str | None] = []
        self.node_value: dict[str, int] = {}
        self.sequence: list[list[int]] = [[] for _ in range(units)]

    def new(self, name: str, t: torch.Tensor, unit: int, node: str | None) -> int:
        """Register ``t``'s storage as a new value; returns its id."""
        self.value_of[storage_key(t)] = len(self.names)
        self.names.append(name)
        self.nbytes.append(int(t.untyped_storage().nbytes()))
        self.producer.append(unit)
        self.savers.append(set())
        self.root_node.append(node)
        return len(self.names) - 1


def _record_forward(traced: TracedGPT, env: dict[str, Any]) -> _Values:
    """One forward of the whole graph over ``env`` (the graph inputs; every fx node's output is left in it) under
    saved-tensor hooks: which storages each unit's backward saves, and which fx node made each. Runs backward
    once to free the saved tensors (and to check the trace is differentiable end to end)."""
    gm, units = traced.gm, traced.units
    param_keys = {storage_key(p) for p in gm.parameters()}
    values = _Values(len(units))
    for name in traced.inputs:
        values.node_value[name] = values.new(name, env[name], -1, None)
    current = [0, 0]  # unit, private buffers found in it

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = storage_key(t)
        if key in param_keys:
            values.sequence[current[0]].append(-1)
            return t
        if key not in values.value_of:
            current[1] += 1
            values.new(f"{traced.unit_names[current[0]]}:buf{current[1]}", t, current[0], None)
        values.savers[values.value_of[key]].add(current[0])
        values.sequence[current[0]].append(values.value_of[key])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for u, nodes in enumerate(units):
            current[0], current[1] = u, 0
            for node in nodes:
                before = len(values.names)
                run_nodes([node], env, gm)
                for t in _tensors(env[node.name])[:1]:
                    key = storage_key(t)
                    if key not in values.value_of and key not in param_keys:
                        values.new(node.name, t, u, node.name)
                    elif values.value_of.get(key, -1) >= before:  # the op saved its own output: a root, not private
                        v = values.value_of[key]
                        values.names[v], values.root_node[v] = node.name, node.name
                        current[1] -= 1
                    if key in values.value_of:
                        values.node_value[node.name] = values.value_of[key]
    env[units[-1][-1].name].backward()
    gm.zero_grad(set_to_none=True)
    return values


def _recompute_inputs(traced: TracedGPT, values: _Values) -> tuple[tuple[int, ...] | None, ...]:
    """Per value, the value ids a recompute reads: a value made by a compute op whose tensor arguments are all
    root values (not views) or graph inputs; None when it cannot be recomputed."""
    out: list[tuple[int, ...] | None] = []
    for v, node_name in enumerate(values.root_node):
        if node_name is None:
            out.append(None)
            continue
        node = next(nd for nd in traced.units[values.producer[v]] if nd.name == node_name)
        ok, ids = node.target not in VIEW_OPS, []
        for arg in node.all_input_nodes:
            if arg.op == "get_attr":
                continue
            w = values.node_value.get(arg.name)
            if w is None or values.root_node[w] != arg.name and arg.op != "placeholder":
                ok = False
                break
            ids.append(w)
        out.append(tuple(ids) if ok else None)
    return tuple(out)


def _crossing_bytes(traced: TracedGPT, env: dict[str, Any]) -> np.ndarray:
    """Bytes crossing each cut (int64, n - 1): fx values made in units <= i and used in units > i (graph inputs
    excluded), from the tensors of a forward left in ``env``."""
    node_unit = traced.node_unit()
    crossing = np.zeros(max(len(traced.units) - 1, 0), dtype=np.int64)
    for nodes in traced.units:
        for node in nodes:
            u = node_unit[node.name]
            last = max((node_unit[user.name] for user in node.users if user.name in node_unit), default=u)
            if last > u:
                crossing[u:last] += sum(t.numel() * t.element_size() for t in _tensors(env[node.name]))
    return crossing


def _last_use(traced: TracedGPT, values: _Values) -> np.ndarray:
    """Per value, the last unit whose forward reads or saves it: its producer, its savers, and the units of every
    fx node reading its storage."""
    node_unit = traced.node_unit()
    last_use = np.array([max([values.producer[v], *values.savers[v]]) for v in range(len(values.names))])
    for node in traced.gm.graph.nodes:
        v = values.node_value.get(node.name)
        if v is not None:
            last_use[v] = max([int(last_use[v]), *(node_unit[u.name] for u in node.users if u.name in node_unit)])
    return last_use


def _param_sizes(traced: TracedGPT) -> tuple[np.ndarray, np.ndarray]:
    """Bytes and elements (int64) of the parameters each unit owns."""
    gm = traced.gm
    pbytes = [sum(gm.get_parameter(p).numel() * gm.get_parameter(p).element_size() for p in ps)
              for ps in traced.unit_params]  # fmt: skip
    pcount = [sum(gm.get_parameter(p).numel() for p in ps) for ps in traced.unit_params]
    return np.array(pbytes, dtype=np.int64), np.array(pcount, dtype=np.int64)


def _adam_state_bytes(traced: TracedGPT) -> np.ndarray:
    """Bytes of Adam's state per unit, measured: one ``torch.optim.Adam`` step on copies of the unit's parameters
    (every state tensor counted: exp_avg, exp_avg_sq and the step counters)."""
    out = []
    for names in traced.unit_params:
        params = [torch.nn.Parameter(traced.gm.get_parameter(p).detach().clone()) for p in names]
        if not params:
            out.append(0)
            continue
        for p in params:
            p.grad = torch.zeros_like(p)
        opt = torch.optim.Adam(params)
        opt.step()
        out.append(sum(t.numel() * t.element_size() for st in opt.state.values() for t in st.values()
                       if isinstance(t, torch.Tensor)))  # fmt: skip
    return np.array(out, dtype=np.int64)


def _time_units(traced: TracedGPT, env: dict[str, Any], repeats: int) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward seconds of every unit, each run alone on leaf copies of its inputs."""
    gm = traced.gm
    names_in_unit = [{nd.name for nd in nodes} for nodes in traced.units]
    fwd, bwd = [], []
    for nodes, inside in zip(traced.units, names_in_unit, strict=True):
        outside = {a.name for nd in nodes for a in nd.all_input_nodes if a.name not in inside and a.op != "get_attr"}
        base = {}
        for name in outside:
            t = env[name]
            base[name] = t.detach().requires_grad_(t.is_floating_point())
        params = [gm.get_parameter(str(a.target)) for nd in nodes for a in nd.all_input_nodes if a.op == "get_attr"]

        def forward(base: dict = base, nodes: tuple = nodes) -> torch.Tensor:
            local = dict(base)
            run_nodes(nodes, local, gm)
            return local[nodes[-1].name]

        with torch.no_grad():
            fwd.append(_median_time(forward, repeats))
        leaves = [t for t in base.values() if t.requires_grad] + params
        out = forward()
        grad = torch.ones_like(out)

        def backward(out: torch.Tensor = out, grad: torch.Tensor = grad, leaves: list = leaves) -> None:
            torch.autograd.grad(out, leaves, grad, retain_graph=True, allow_unused=True)

        bwd.append(_median_time(backward, repeats) if leaves and out.requires_grad else 0.0)
    return np.array(fwd), np.array(bwd)
