"""The fine-grained node graph DawnPiper partitions: a GPT traced with ``torch.export`` (a ``torch.fx`` graph of
ATen ops), grouped into *units* of one compute op each, and profiled for real.

A unit is one compute op (embedding, add, layer_norm, linear, attention, gelu, cross-entropy) together with the
view ops (split, getitem, reshape, transpose) that feed it; every position between two units is a legal cut,
because only tensors cross it. A GPT of L blocks has ``10 L + 6`` units (3 embedding, 10 per block, 3 head/loss).

Memory is described by *values*: a value is one storage that backward needs, identified by the fx node that
created it (a view shares its root's storage), a graph input (tokens, targets) or an op's private buffer
(LayerNorm mean/rstd, attention log-sum-exp). Its *savers* are the units whose autograd nodes save it
(``torch.autograd.graph.saved_tensors_hooks`` during a real forward). A stage [a, b) holds, per micro-batch in
flight, every value with a saver in [a, b): a value produced in one stage and saved in the next is held by
both (the receiver keeps its own copy). Parameters are not values (they are the stage's static memory).

Times: each unit's forward is timed in place (the interpreter over the real tensors) and its backward by
``torch.autograd.grad`` of the unit alone from leaf copies of its inputs (median of ``repeats``).
"""

from __future__ import annotations

import operator
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import fx

from workbench.data import cache_dir
from workbench.llm.gpt import GPTConfig, build_gpt, lm_loss, random_tokens

__all__ = [
    "NodeGraph", "TracedGPT", "trace_gpt", "profile", "layer_cuts", "activation_table", "static_bytes", "VIEW_OPS",
]  # fmt: skip

#: ops that make views or split tuples; they join the unit of the compute op they feed
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
class NodeGraph:
    """A sequence of n units with per-unit costs and the values their backward needs (numpy arrays).

    Units: ``names`` (n), ``layer`` (block index; -1 embedding, L head and loss), ``fwd_s``/``bwd_s`` (seconds per
    micro-batch), ``param_bytes``/``param_count`` (parameters owned by the unit). Values: ``value_names``,
    ``value_bytes``, ``value_producer`` (unit index; -1 a graph input), ``value_savers`` (sorted unit indices),
    ``value_inputs`` (value ids a recompute of the value needs, or None when it cannot be recomputed: an op's
    private buffer, a graph input, or an op fed through views). Cuts: ``crossing_bytes[i]`` bytes that cross
    the cut after unit i (values made at or before i and used after it; graph inputs are not sent).
    ``micro_batch`` samples per micro-batch; ``source`` "traced" or "generated"; ``param_elem_bytes`` bytes per
    parameter element of the weights as stored (8 fp64, 4 fp32, 2 fp16); ``pack_sequence[i]`` the value id of
    every tensor unit i's autograd nodes save, in the order they save them (-1 a parameter; traced graphs only:
    the pipeline uses it to know which value a saved tensor is); ``optimizer_bytes[i]`` Adam's state of unit i's
    parameters as measured after a real ``torch.optim.Adam`` step (traced graphs; None: priced per parameter).
    """

    names: tuple[str, ...]
    layer: np.ndarray
    fwd_s: np.ndarray
    bwd_s: np.ndarray
    param_bytes: np.ndarray
    param_count: np.ndarray
    value_names: tuple[str, ...]
    value_bytes: np.ndarray
    value_producer: np.ndarray
    value_savers: tuple[tuple[int, ...], ...]
    value_inputs: tuple[tuple[int, ...] | None, ...]
    crossing_bytes: np.ndarray
    micro_batch: int
    source: str
    param_elem_bytes: int
    pack_sequence: tuple[tuple[int, ...], ...] = ()
    optimizer_bytes: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def compute_s(self) -> np.ndarray:
        """Forward + backward seconds per unit and micro-batch."""
        return self.fwd_s + self.bwd_s

    def scaled(self, micro_batch: int) -> NodeGraph:
        """The same graph at another micro-batch size: activation bytes and times scale linearly (parameters
        do not). Exact for bytes (every activation has the batch as a factor); a model for times."""
        if micro_batch < 1:
            raise ValueError(f"micro_batch={micro_batch} is out of range: valid range is >= 1 (samples)")
        f = micro_batch / self.micro_batch
        return NodeGraph(
            names=self.names,
            layer=self.layer,
            fwd_s=self.fwd_s * f,
            bwd_s=self.bwd_s * f,
            param_bytes=self.param_bytes,
            param_count=self.param_count,
            value_names=self.value_names,
            value_bytes=np.round(self.value_bytes * f).astype(np.int64),
            value_producer=self.value_producer,
            value_savers=self.value_savers,
            value_inputs=self.value_inputs,
            crossing_bytes=np.round(self.crossing_bytes * f).astype(np.int64),
            micro_batch=micro_batch,
            source=self.source,
            param_elem_bytes=self.param_elem_bytes,
            pack_sequence=self.pack_sequence,
            optimizer_bytes=self.optimizer_bytes,
        )

    def saved_in(self, a: int, b: int) -> np.ndarray:
        """Ids of the values a stage of units [a, b) holds per micro-batch (a saver inside)."""
        key = ("saved", a, b)
        if key not in self._cache:
            first = self._next_saver()
            self._cache[key] = np.nonzero(first[a] < b)[0]
        return self._cache[key]

    def _next_saver(self) -> np.ndarray:
        """``next[a, v]``: the first saver of value v at or after unit a (n when none); (n+1, V) int32."""
        if "next" not in self._cache:
            n, V = self.n, len(self.value_names)
            nxt = np.full((n + 1, V), n, dtype=np.int32)
            for v, savers in enumerate(self.value_savers):
                col = nxt[:, v]
                for s in reversed(savers):
                    col[: s + 1] = s
            self._cache["next"] = nxt
        return self._cache["next"]


def activation_table(graph: NodeGraph) -> np.ndarray:
    """``A[i, j]``: activation bytes per micro-batch of a stage of units [i, j) (values with a saver inside).

    A value counts once if any of its savers s_1 < ... < s_m lies in [i, j): the savers inside form a run of the
    sorted list, so ``[run non-empty] = #savers inside - #adjacent pairs inside`` and the table is a 1-D prefix
    sum minus a 2-D dominance sum over adjacent saver pairs. (n+1, n+1) float64.
    """
    if "A" in graph._cache:
        return graph._cache["A"]
    n = graph.n
    points = np.zeros(n + 1)
    pairs = np.zeros((n + 1, n + 1))
    for v, savers in enumerate(graph.value_savers):
        w = float(graph.value_bytes[v])
        for s in savers:
            points[s] += w
        for s, t in zip(savers, savers[1:], strict=False):
            pairs[s, t] += w
    prefix = np.concatenate([[0.0], np.cumsum(points[:n])])
    # dominance: D[i, j] = sum of pairs (s, t) with s >= i and t < j
    d = np.cumsum(pairs[::-1], axis=0)[::-1]  # rows: s >= i
    d = np.concatenate([np.zeros((n + 1, 1)), np.cumsum(d, axis=1)[:, :n]], axis=1)  # cols: t < j
    table = prefix[None, :] - prefix[:, None] - d
    graph._cache["A"] = table
    return table


def static_bytes(graph: NodeGraph, state_bytes_per_param: float) -> np.ndarray:
    """Static memory per unit: weights + gradients + optimizer state. Measured optimizer state when the graph has
    it (``2 * param_bytes + optimizer_bytes``), else ``params * state_bytes_per_param``."""
    if graph.optimizer_bytes is not None:
        return 2.0 * graph.param_bytes + graph.optimizer_bytes
    return graph.param_bytes / graph.param_elem_bytes * state_bytes_per_param


def layer_cuts(graph: NodeGraph) -> np.ndarray:
    """Cut positions (cut after unit i) that fall between layers: layer granularity, as PipeDream and vPipe."""
    return np.nonzero(graph.layer[1:] != graph.layer[:-1])[0]


# ----------------------------------------------------------------------------------------------- tracing
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
        for p in owned:
            if p.startswith("blocks."):
                current_layer = int(p.split(".")[1])
            elif p.startswith("head."):
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


def _storage_key(t: torch.Tensor) -> int:
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
    gm, units = traced.gm, traced.units
    tokens, targets = random_tokens(traced.config, traced.micro_batch, seed=seed)
    env: dict[str, Any] = {traced.inputs[0]: tokens, traced.inputs[1]: targets}
    param_keys = {_storage_key(p) for p in gm.parameters()}
    # value bookkeeping: storage -> value id; value id -> (name, bytes, producer unit, savers)
    value_of: dict[int, int] = {}
    names: list[str] = []
    nbytes: list[int] = []
    producer: list[int] = []
    savers: list[set[int]] = []
    root_node: list[str | None] = []
    node_value: dict[str, int] = {}  # fx node name -> the value of its storage (for views too)

    def new_value(name: str, t: torch.Tensor, unit: int, node: str | None) -> int:
        value_of[_storage_key(t)] = len(names)
        names.append(name)
        nbytes.append(int(t.untyped_storage().nbytes()))
        producer.append(unit)
        savers.append(set())
        root_node.append(node)
        return len(names) - 1

    for name in traced.inputs:
        node_value[name] = new_value(name, env[name], -1, None)
    current = [0]
    private_count = [0]
    sequence: list[list[int]] = [[] for _ in units]

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = _storage_key(t)
        if key in param_keys:
            sequence[current[0]].append(-1)
            return t
        if key not in value_of:
            private_count[0] += 1
            new_value(f"{traced.unit_names[current[0]]}:buf{private_count[0]}", t, current[0], None)
        savers[value_of[key]].add(current[0])
        sequence[current[0]].append(value_of[key])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for u, nodes in enumerate(units):
            current[0] = u
            private_count[0] = 0
            for node in nodes:
                before = len(names)
                run_nodes([node], env, gm)
                for t in _tensors(env[node.name])[:1]:
                    key = _storage_key(t)
                    if key not in value_of and key not in param_keys:
                        new_value(node.name, t, u, node.name)
                    elif value_of.get(key, -1) >= before:  # the op saved its own output: a root, not private
                        v = value_of[key]
                        names[v], root_node[v] = node.name, node.name
                        private_count[0] -= 1
                    if key in value_of:
                        node_value[node.name] = value_of[key]
    loss = env[units[-1][-1].name]
    loss.backward()  # frees the saved tensors (and checks the trace is differentiable end to end)
    gm.zero_grad(set_to_none=True)

    n = len(units)
    node_unit = traced.node_unit()
    # recompute inputs: a value made by a compute op whose tensor arguments are all root values (not views)
    inputs_of: list[tuple[int, ...] | None] = []
    for v, node_name in enumerate(root_node):
        if node_name is None:
            inputs_of.append(None)
            continue
        node = next(nd for nd in units[producer[v]] if nd.name == node_name)
        ok, ids = node.target not in VIEW_OPS, []
        for arg in node.all_input_nodes:
            if arg.op == "get_attr":
                continue
            w = node_value.get(arg.name)
            if w is None or root_node[w] != arg.name and arg.op != "placeholder":
                ok = False
                break
            ids.append(w)
        inputs_of.append(tuple(ids) if ok else None)
    # bytes crossing each cut: fx values made in units <= i and used in units > i (graph inputs excluded)
    crossing = np.zeros(max(n - 1, 0), dtype=np.int64)
    for nodes in units:
        for node in nodes:
            u = node_unit[node.name]
            last = max((node_unit[user.name] for user in node.users if user.name in node_unit), default=u)
            if last > u:
                size = sum(t.numel() * t.element_size() for t in _tensors(env[node.name]))
                crossing[u:last] += size
    # parameters per unit
    pbytes = np.array(
        [sum(gm.get_parameter(p).numel() * gm.get_parameter(p).element_size() for p in ps) for ps in traced.unit_params]
    )
    pcount = np.array([sum(gm.get_parameter(p).numel() for p in ps) for ps in traced.unit_params])
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
        param_bytes=pbytes.astype(np.int64),
        param_count=pcount.astype(np.int64),
        value_names=tuple(names),
        value_bytes=np.array(nbytes, dtype=np.int64),
        value_producer=np.array(producer),
        value_savers=tuple(tuple(sorted(s)) for s in savers),
        value_inputs=tuple(inputs_of),
        crossing_bytes=crossing,
        micro_batch=traced.micro_batch,
        source="traced",
        param_elem_bytes=traced.config.torch_dtype.itemsize,
        pack_sequence=tuple(tuple(seq) for seq in sequence),
        optimizer_bytes=_adam_state_bytes(traced),
    )


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
