"""Node graphs of paper-scale GPTs generated from layer shapes (MODEL): the same units, values and savers the
trace of :mod:`graph` finds, with sizes from the shape and times from FLOPs and memory traffic.

At a small shape with fp64 bytes (``elem_bytes = stat_bytes = 8``) the generated graph equals the traced one in
every unit name, value size, saver and crossing byte (tested), so the structure at paper scale is the traced one;
only the sizes are extrapolated. Times: matmuls at the cluster's effective FLOP rate (forward ``2 m n k``,
backward twice that); causal attention ``2 b s^2 d`` forward, 2.5x that backward (FlashAttention-2's ratio);
LayerNorm, GELU, adds, embeddings and the loss are memory-bound, bytes read and written at ``hbm_bytes_per_s``
(backward twice the forward's traffic).
"""

from __future__ import annotations

import numpy as np

from workbench.llm.dawnpiper.graph import NodeGraph
from workbench.llm.gpt import GPTShape

__all__ = ["generate_graph", "random_graph"]


def generate_graph(
    shape: GPTShape,
    micro_batch: int,
    *,
    flops_per_s: float,
    hbm_bytes_per_s: float,
    elem_bytes: int = 2,
    stat_bytes: int = 4,
    param_elem_bytes: int = 2,
) -> NodeGraph:
    """The node graph of ``shape`` at ``micro_batch`` samples (activations ``elem_bytes`` per element; LayerNorm
    statistics and attention log-sum-exp ``stat_bytes``; token ids int64): the embedding's three units, ten per
    block, the head's three (``10 L + 6`` units).

    Raises ValueError for a micro-batch below 1.

    Example: ``generate_graph(PAPER_SHAPES["gpt-1.3b"], 8, flops_per_s=150e12, hbm_bytes_per_s=1.555e12).n == 246``
    """
    if micro_batch < 1:
        raise ValueError(f"micro_batch={micro_batch} is out of range: valid range is >= 1 (samples)")
    b = _Builder(shape, micro_batch, flops_per_s, hbm_bytes_per_s, elem_bytes, stat_bytes)
    x, targets = b.embedding()
    for layer in range(shape.layers):
        x = b.block(layer, x)
    b.head(x, targets)
    return b.graph(param_elem_bytes)


class _Builder:
    """Units and values of a generated graph, appended in execution order (the trace's order and names)."""

    def __init__(self, shape: GPTShape, micro_batch: int, flops_per_s: float, hbm_bytes_per_s: float,
                 elem_bytes: int, stat_bytes: int) -> None:  # fmt: skip
        self.shape, self.b = shape, micro_batch
        self.flops_per_s, self.hbm_bytes_per_s = flops_per_s, hbm_bytes_per_s
        self.e, self.st = elem_bytes, stat_bytes
        self.act = micro_batch * shape.seq * shape.hidden * elem_bytes  # one (b, s, d) activation
        self.units: list[dict] = []
        self.values: list[dict] = []
        self.counts = {"ln": 0, "linear": 0, "attn": 0, "add": 1}  # fx's name counters ("add" is the embedding's)

    def unit(self, name: str, layer: int, params: int, times: tuple[float, float]) -> int:
        self.units.append(dict(name=name, layer=layer, params=params, fwd=times[0], bwd=times[1]))
        return len(self.units) - 1

    def value(self, name: str, nbytes: int, producer: int, savers=(), inputs=None) -> int:
        self.values.append(dict(name=name, bytes=nbytes, producer=producer, savers=list(savers), users=[],
                                inputs=inputs))  # fmt: skip
        return len(self.values) - 1

    def reads(self, unit: int, *values: int, saved: bool = True) -> None:
        """Unit ``unit`` reads ``values`` (and saves them for its backward when ``saved``)."""
        for v in values:
            self.values[v]["users"].append(unit)
            if saved:
                self.values[v]["savers"].append(unit)

    def mm(self, m: int, k: int, n: int) -> tuple[float, float]:
        """Forward and backward seconds of an (m, k) x (k, n) matmul: ``2 m k n`` FLOPs, backward twice that."""
        t = 2.0 * m * k * n / self.flops_per_s
        return t, 2 * t

    def mem(self, nbytes: float) -> tuple[float, float]:
        """Forward and backward seconds of a memory-bound op moving ``nbytes`` (backward twice the traffic)."""
        t = nbytes / self.hbm_bytes_per_s
        return t, 2 * t

    def nm(self, base: str) -> str:
        """fx's name for the next node of kind ``base`` ("linear", "linear_1", ...)."""
        k = self.counts.get(base, 0)
        self.counts[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def embedding(self) -> tuple[int, int]:
        """Token and position embeddings and their sum; returns the sum's value id and the targets'."""
        s, d, V, act = self.shape.seq, self.shape.hidden, self.shape.vocab, self.act
        tok = self.b * s * 8
        tokens = self.value("tokens", tok, -1)
        targets = self.value("targets", tok, -1)
        u0 = self.unit("emb.emb", -1, V * d, self.mem(tok + 2 * act))
        self.values[tokens]["savers"].append(u0)
        arange = self.value("arange", s * 8, u0)
        emb = self.value("embedding", act, u0, inputs=(tokens,))
        u1 = self.unit("emb.emb1", -1, s * d, self.mem(2 * s * d * self.e))
        self.reads(u1, arange)
        emb1 = self.value("embedding_1", s * d * self.e, u1, inputs=(arange,))
        u2 = self.unit("emb.add", -1, 0, self.mem(3 * act))
        self.reads(u2, emb, emb1, saved=False)
        return self.value("add", act, u2, inputs=(emb, emb1)), targets

    def layer_norm(self, name: str, layer: int, x: int) -> int:
        """A LayerNorm unit over ``x`` (saves it, its mean and rstd); returns its output."""
        d, act = self.shape.hidden, self.act
        u = self.unit(name, layer, 2 * d, self.mem(2 * act))
        self.reads(u, x)
        self.value(f"{name}:buf1", self.b * self.shape.seq * self.st, u, savers=[u])
        self.value(f"{name}:buf2", self.b * self.shape.seq * self.st, u, savers=[u])
        return self.value(self.nm("layer_norm"), act, u, inputs=(x,))

    def linear(self, name: str, layer: int, x: int, k: int, n: int, out_bytes: int, recomputable: bool = True) -> int:
        """A linear unit (k -> n features, with bias) over ``x`` (saved); returns its output of ``out_bytes``."""
        u = self.unit(name, layer, k * n + n, self.mm(self.b * self.shape.seq, k, n))
        self.reads(u, x)
        return self.value(self.nm("linear"), out_bytes, u, inputs=(x,) if recomputable else None)

    def add(self, name: str, layer: int, x: int, y: int) -> int:
        """A residual add of ``x`` and ``y`` (nothing saved); returns the sum."""
        u = self.unit(name, layer, 0, self.mem(3 * self.act))
        self.reads(u, y, x, saved=False)
        return self.value(self.nm("add"), self.act, u, inputs=(x, y))

    def block(self, layer: int, x: int) -> int:
        """One transformer block (pre-LN attention and MLP, ten units); returns its output."""
        d, h, s, act = self.shape.hidden, self.shape.heads, self.shape.seq, self.act
        f = self.shape.ffn_mult * d
        p = f"L{layer}"
        ln = self.layer_norm(f"{p}.ln", layer, x)
        qkv = self.linear(f"{p}.linear", layer, ln, d, 3 * d, 3 * act)
        fa = 2.0 * self.b * s * s * d / self.flops_per_s  # causal attention; backward 2.5x (FlashAttention-2)
        u = self.unit(f"{p}.attn", layer, 0, (fa, 2.5 * fa))
        self.reads(u, qkv)
        self.value(f"{p}.attn:buf1", self.b * h * s * self.st, u, savers=[u])
        att = self.value(self.nm("scaled_dot_product_attention"), act, u, savers=[u])
        # the projection reads the attention output through a view, so it cannot be recomputed from it
        proj = self.linear(f"{p}.linear1", layer, att, d, d, act, recomputable=False)
        x1 = self.add(f"{p}.add", layer, x, proj)
        ln2 = self.layer_norm(f"{p}.ln1", layer, x1)
        fc = self.linear(f"{p}.linear2", layer, ln2, d, f, self.b * s * f * self.e)
        u = self.unit(f"{p}.gelu", layer, 0, self.mem(2 * self.b * s * f * self.e))
        self.reads(u, fc)
        ge = self.value(self.nm("gelu"), self.b * s * f * self.e, u, inputs=(fc,))
        out = self.linear(f"{p}.linear3", layer, ge, f, d, act)
        return self.add(f"{p}.add1", layer, x1, out)

    def head(self, x: int, targets: int) -> None:
        """The final LayerNorm, the LM head (logits: read by the loss, saved by nobody) and the loss."""
        L, V, s, e = self.shape.layers, self.shape.vocab, self.shape.seq, self.e
        ln = self.layer_norm("head.ln", L, x)
        logits = self.linear("head.linear", L, ln, self.shape.hidden, V, self.b * s * V * e)
        self.units[-1]["params"] -= V  # the LM head has no bias
        u = self.unit("head.loss", L, 0, self.mem(3 * self.b * s * V * e))
        self.reads(u, logits, saved=False)
        self.values[targets]["savers"].append(u)
        self.value("head.loss:buf1", self.b * s * V * e, u, savers=[u])
        self.value("head.loss:buf2", e, u, savers=[u])
        self.value("cross_entropy_loss", e, u)

    def graph(self, param_elem_bytes: int) -> NodeGraph:
        """The :class:`NodeGraph` of what was built (crossing bytes and last uses from the readers)."""
        units, values = self.units, self.values
        n = len(units)
        crossing = np.zeros(n - 1, dtype=np.int64)
        for v in values:
            if v["producer"] >= 0 and v["users"]:
                crossing[v["producer"] : max(v["users"])] += v["bytes"]
        return NodeGraph(
            names=tuple(x["name"] for x in units),
            layer=np.array([x["layer"] for x in units]),
            fwd_s=np.array([x["fwd"] for x in units]),
            bwd_s=np.array([x["bwd"] for x in units]),
            param_bytes=np.array([x["params"] * param_elem_bytes for x in units], dtype=np.int64),
            param_count=np.array([x["params"] for x in units], dtype=np.int64),
            value_names=tuple(v["name"] for v in values),
            value_bytes=np.array([v["bytes"] for v in values], dtype=np.int64),
            value_producer=np.array([v["producer"] for v in values]),
            value_savers=tuple(tuple(sorted(v["savers"])) for v in values),
            value_inputs=tuple(v["inputs"] for v in values),
            crossing_bytes=crossing,
            micro_batch=self.b,
            source="generated",
            param_elem_bytes=param_elem_bytes,
            value_last_use=np.array([max([v["producer"], *v["users"], *v["savers"]]) for v in values]),
        )


def random_graph(seed: int, units: int = 12, *, values_per_unit: int = 2) -> NodeGraph:
    """A small random node graph (seeded): ``units`` units with random forward/backward seconds (1-10 ms, the
    backward 1-3x the forward) and parameters (0-400 elements of 8 bytes, a third of the units none), each making
    ``values_per_unit`` values of 100-2,000 bytes saved by its producer and/or one or two of the next three units,
    read by up to three units ahead, recomputable from the producer's saved inputs with probability 1/2; one graph
    input saved by unit 0. The family the partition search is checked on against the exhaustive oracle.

    Raises ValueError for fewer than 2 units.
    """
    if units < 2:
        raise ValueError(f"units={units} is out of range: valid range is >= 2")
    rng = np.random.default_rng(seed)
    n = units
    fwd = rng.uniform(1e-3, 1e-2, n)
    params = np.where(rng.random(n) < 1 / 3, 0, rng.integers(0, 400, n))
    names, nbytes, producer, savers, inputs, last = ["input"], [int(rng.integers(100, 2000))], [-1], [(0,)], [None], [0]
    reads: list[list[int]] = [[0] if u == 0 else [] for u in range(n)]  # values each unit reads
    for u in range(n):
        for k in range(values_per_unit):
            ahead = list(range(u + 1, min(n, u + 4)))
            chosen = sorted(rng.choice(ahead, size=min(len(ahead), int(rng.integers(0, 3))), replace=False).tolist())
            own = [u] if (rng.random() < 0.5 or not chosen) else []
            users = sorted(set(chosen) | set(rng.choice(ahead, size=min(len(ahead), 1)).tolist() if ahead else []))
            v = len(names)
            recomputable = bool(rng.random() < 0.5) and all(w in _saved_by(savers, u) for w in reads[u])
            names.append(f"u{u}.v{k}")
            nbytes.append(int(rng.integers(100, 2000)))
            producer.append(u)
            savers.append(tuple(sorted(set(own) | set(chosen))))
            inputs.append(tuple(reads[u]) if recomputable else None)
            last.append(max([u, *users, *savers[-1]]))
            for t in users:
                reads[t].append(v)
    crossing = np.zeros(n - 1, dtype=np.int64)
    for v in range(len(names)):
        if producer[v] >= 0:
            crossing[producer[v] : last[v]] += nbytes[v]
    return NodeGraph(
        names=tuple(f"u{u}" for u in range(n)),
        layer=np.arange(n) // 3,
        fwd_s=fwd,
        bwd_s=fwd * rng.uniform(1.0, 3.0, n),
        param_bytes=params.astype(np.int64) * 8,
        param_count=params.astype(np.int64),
        value_names=tuple(names),
        value_bytes=np.array(nbytes, dtype=np.int64),
        value_producer=np.array(producer),
        value_savers=tuple(savers),
        value_inputs=tuple(inputs),
        crossing_bytes=crossing,
        micro_batch=1,
        source="generated",
        param_elem_bytes=8,
        value_last_use=np.array(last),
    )


def _saved_by(savers: list[tuple[int, ...]], u: int) -> set[int]:
    """Ids of the values unit ``u`` saves (so a recompute at u finds them held)."""
    return {v for v, s in enumerate(savers) if u in s}
