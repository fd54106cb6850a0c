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

__all__ = ["generate_graph"]


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
    statistics and attention log-sum-exp ``stat_bytes``; token ids int64).

    Raises ValueError for a micro-batch below 1.
    """
    if micro_batch < 1:
        raise ValueError(f"micro_batch={micro_batch} is out of range: valid range is >= 1 (samples)")
    b, s, d, h, V = micro_batch, shape.seq, shape.hidden, shape.heads, shape.vocab
    f = shape.ffn_mult * d
    e, st = elem_bytes, stat_bytes
    tok = b * s * 8
    act = b * s * d * e
    units: list[dict] = []
    values: list[dict] = []

    def unit(name: str, layer: int, params: int, fwd: float, bwd: float) -> int:
        units.append(dict(name=name, layer=layer, params=params, fwd=fwd, bwd=bwd))
        return len(units) - 1

    def value(name: str, nbytes: int, producer: int, savers=(), users=(), inputs=None) -> int:
        values.append(dict(name=name, bytes=nbytes, producer=producer, savers=list(savers), users=list(users),
                           inputs=inputs))  # fmt: skip
        return len(values) - 1

    def mm(m: int, k: int, n: int) -> tuple[float, float]:
        t = 2.0 * m * k * n / flops_per_s
        return t, 2 * t

    def mem(nbytes: float) -> tuple[float, float]:
        t = nbytes / hbm_bytes_per_s
        return t, 2 * t

    tokens = value("tokens", tok, -1)
    targets = value("targets", tok, -1)
    u0 = unit("emb.emb", -1, V * d, *mem(tok + 2 * act))
    values[tokens]["savers"].append(u0)
    arange = value("arange", s * 8, u0)
    emb = value("embedding", act, u0, inputs=(tokens,))
    u1 = unit("emb.emb1", -1, s * d, *mem(2 * s * d * e))
    values[arange]["savers"].append(u1)
    values[arange]["users"].append(u1)
    emb1 = value("embedding_1", s * d * e, u1, inputs=(arange,))
    u2 = unit("emb.add", -1, 0, *mem(3 * act))
    values[emb]["users"].append(u2)
    values[emb1]["users"].append(u2)
    x = value("add", act, u2, inputs=(emb, emb1))
    names = {"ln": 0, "linear": 0, "attn": 0, "add": 1}

    def nm(base: str) -> str:
        k = names.get(base, 0)
        names[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    for layer in range(shape.layers):
        p = f"L{layer}"
        # ln1
        u = unit(f"{p}.ln", layer, 2 * d, *mem(2 * act))
        values[x]["savers"].append(u)
        values[x]["users"].append(u)
        value(f"{p}.ln:buf1", b * s * st, u, savers=[u])
        value(f"{p}.ln:buf2", b * s * st, u, savers=[u])
        ln = value(nm("layer_norm"), act, u, inputs=(x,))
        # qkv
        u = unit(f"{p}.linear", layer, 3 * d * d + 3 * d, *mm(b * s, d, 3 * d))
        values[ln]["savers"].append(u)
        values[ln]["users"].append(u)
        qkv = value(nm("linear"), 3 * act, u, inputs=(ln,))
        # attention
        fa = 2.0 * b * s * s * d / flops_per_s
        u = unit(f"{p}.attn", layer, 0, fa, 2.5 * fa)
        values[qkv]["savers"].append(u)
        values[qkv]["users"].append(u)
        value(f"{p}.attn:buf1", b * h * s * st, u, savers=[u])
        att = value(nm("scaled_dot_product_attention"), act, u, savers=[u])
        # proj
        u = unit(f"{p}.linear1", layer, d * d + d, *mm(b * s, d, d))
        values[att]["savers"].append(u)
        values[att]["users"].append(u)
        proj = value(nm("linear"), act, u)
        # residual add
        u = unit(f"{p}.add", layer, 0, *mem(3 * act))
        values[proj]["users"].append(u)
        values[x]["users"].append(u)
        x1 = value(nm("add"), act, u, inputs=(x, proj))
        values[proj]["inputs"] = None  # the projection reads the attention output through a view
        # ln2
        u = unit(f"{p}.ln1", layer, 2 * d, *mem(2 * act))
        values[x1]["savers"].append(u)
        values[x1]["users"].append(u)
        value(f"{p}.ln1:buf1", b * s * st, u, savers=[u])
        value(f"{p}.ln1:buf2", b * s * st, u, savers=[u])
        ln2 = value(nm("layer_norm"), act, u, inputs=(x1,))
        # fc, gelu, out
        u = unit(f"{p}.linear2", layer, d * f + f, *mm(b * s, d, f))
        values[ln2]["savers"].append(u)
        values[ln2]["users"].append(u)
        fc = value(nm("linear"), b * s * f * e, u, inputs=(ln2,))
        u = unit(f"{p}.gelu", layer, 0, *mem(2 * b * s * f * e))
        values[fc]["savers"].append(u)
        values[fc]["users"].append(u)
        ge = value(nm("gelu"), b * s * f * e, u, inputs=(fc,))
        u = unit(f"{p}.linear3", layer, f * d + d, *mm(b * s, f, d))
        values[ge]["savers"].append(u)
        values[ge]["users"].append(u)
        out = value(nm("linear"), act, u, inputs=(ge,))
        u = unit(f"{p}.add1", layer, 0, *mem(3 * act))
        values[out]["users"].append(u)
        values[x1]["users"].append(u)
        x = value(nm("add"), act, u, inputs=(x1, out))
    L = shape.layers
    u = unit("head.ln", L, 2 * d, *mem(2 * act))
    values[x]["savers"].append(u)
    values[x]["users"].append(u)
    value("head.ln:buf1", b * s * st, u, savers=[u])
    value("head.ln:buf2", b * s * st, u, savers=[u])
    ln = value(nm("layer_norm"), act, u, inputs=(x,))
    u = unit("head.linear", L, d * V, *mm(b * s, d, V))
    values[ln]["savers"].append(u)
    values[ln]["users"].append(u)
    logits = value(nm("linear"), b * s * V * e, u, inputs=(ln,))
    u = unit("head.loss", L, 0, *mem(3 * b * s * V * e))
    values[logits]["users"].append(u)
    values[targets]["savers"].append(u)
    value("head.loss:buf1", b * s * V * e, u, savers=[u])
    value("head.loss:buf2", e, u, savers=[u])
    value("cross_entropy_loss", e, u)
    n = len(units)
    crossing = np.zeros(n - 1, dtype=np.int64)
    for v in values:
        if v["producer"] >= 0 and v["users"]:
            last = max(v["users"])
            crossing[v["producer"] : last] += v["bytes"]
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
        micro_batch=micro_batch,
        source="generated",
        param_elem_bytes=param_elem_bytes,
        value_last_use=np.array([max([v["producer"], *v["users"], *v["savers"]]) for v in values]),
    )
