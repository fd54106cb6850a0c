"""The fine-grained node graph DawnPiper partitions: a sequence of units (one compute op each: embedding, add,
layer_norm, linear, attention, gelu, cross-entropy, with the view ops that feed it), their costs, and the values
their backward needs. Made by :mod:`~workbench.llm.dawnpiper.trace` (a traced GPT, profiled for real) or
:mod:`~workbench.llm.dawnpiper.generate` (paper-scale shapes, MODEL).

Memory is described by *values*: a value is one storage that backward needs, identified by the fx node that
created it (a view shares its root's storage), a graph input (tokens, targets) or an op's private buffer
(LayerNorm mean/rstd, attention log-sum-exp). Its *savers* are the units whose autograd nodes save it. A stage
[a, b) holds, per micro-batch in flight, every value with a saver in [a, b): a value produced in one stage and
saved in the next is held by both (the receiver keeps its own copy). Parameters are not values (they are the
stage's static memory, with gradients and optimizer state).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["NodeGraph", "layer_cuts", "activation_table", "static_bytes"]


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
    parameters as measured after a real ``torch.optim.Adam`` step (traced graphs; None: priced per parameter);
    ``value_last_use[v]`` the last unit whose forward reads or saves value v (its producer when nothing does; None:
    not recorded), which bounds the value's forward lifetime (see :mod:`~workbench.llm.dawnpiper.feasibility`).
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
    value_last_use: np.ndarray | None = None
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
            value_last_use=self.value_last_use,
        )

    def saved_in(self, a: int, b: int) -> np.ndarray:
        """Ids of the values a stage of units [a, b) holds per micro-batch (a saver inside)."""
        key = ("saved", a, b)
        if key not in self._cache:
            first = self.next_saver_table()
            self._cache[key] = np.nonzero(first[a] < b)[0]
        return self._cache[key]

    def next_saver_table(self) -> np.ndarray:
        """``next[a, v]``: the first saver of value v at or after unit a (n when none); (n+1, V) int32, built
        once per graph."""
        if "next" not in self._cache:
            n, V = self.n, len(self.value_names)
            nxt = np.full((n + 1, V), n, dtype=np.int32)
            for v, savers in enumerate(self.value_savers):
                col = nxt[:, v]
                for s in reversed(savers):
                    col[: s + 1] = s
            self._cache["next"] = nxt
        return self._cache["next"]

    def prev_saver_table(self) -> np.ndarray:
        """``prev[b, v]``: the last saver of value v before unit b (-1 when none); (n+1, V) int32, built once per
        graph."""
        if "prev" not in self._cache:
            n, V = self.n, len(self.value_names)
            prev = np.full((n + 1, V), -1, dtype=np.int32)
            for v, savers in enumerate(self.value_savers):
                col = prev[:, v]
                for s in savers:
                    col[s + 1 :] = s
            self._cache["prev"] = prev
        return self._cache["prev"]


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
