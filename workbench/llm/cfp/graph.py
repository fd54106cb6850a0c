"""The operator graph CFP searches over: einsum-shaped operators with named indices (a hand-built IR).

Every tensor is described by an index string (``"bsd"``: batch, sequence, hidden) and every operator by the
index strings of its activation inputs, its parameters and its output, plus the sizes of the indices. That is
enough to enumerate sharding strategies (which mesh axis splits which index), to price them and to execute them
(``execute.py``). The GPT graph mirrors :class:`workbench.llm.gpt.Block` operator by operator (its ``qkv``
Linear, SDPA, ``proj``, the GELU MLP, both residual adds, both LayerNorms); LLaMA and an MoE layer are built
from published shapes (sources beside :data:`PAPER_MODELS`) for the cost model only.

Index letters: b batch, s sequence, d hidden, t the q/k/v triple, h heads, e head dim, f MLP width, g token
groups (MoE), x experts, c expert capacity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from workbench.llm.gpt import GPTShape

__all__ = ["Op", "Graph", "gpt_graph", "llama_graph", "moe_graph", "PAPER_MODELS", "ModelShape", "graph_for"]

#: operator kinds: einsum (a contraction with parameters), norm (LayerNorm/RMSNorm over the last index),
#: attn (causal attention over (b, s, t, h, e) -> (b, s, h, e)), gelu / silu_mul / add (elementwise),
#: router (top-k gating weights, model only) and input (the graph input: any layout, no cost)
KINDS = ("einsum", "norm", "attn", "gelu", "silu_mul", "add", "router", "input")
#: FLOPs per output element of the cheap operators (forward), an estimate: they are memory-bound on a GPU
EW_FLOPS = {"norm": 8, "gelu": 8, "silu_mul": 6, "add": 1, "router": 10, "input": 0}


@dataclass(frozen=True)
class Op:
    """One operator. ``inputs``: (tensor name, index string) of activations; ``params``: (name, index string);
    ``output``: index string of the output tensor, named ``name``; ``sizes``: index -> size; ``bias``: the last
    param is a bias over output indices (added once when a contraction is split)."""

    name: str
    kind: str
    inputs: tuple[tuple[str, str], ...]
    output: str
    sizes: tuple[tuple[str, int], ...]
    params: tuple[tuple[str, str], ...] = ()
    bias: bool = False
    layer: int = -1

    @property
    def size(self) -> dict[str, int]:
        return dict(self.sizes)

    def indices(self) -> list[str]:
        """All index letters of the operator, in first-seen order."""
        seen: list[str] = []
        for _, idx in (*self.inputs, *self.params, (self.name, self.output)):
            for ch in idx:
                if ch not in seen:
                    seen.append(ch)
        return seen

    def splittable(self) -> list[str]:
        """Indices a strategy may split with no communication inside the operator's own forward."""
        if self.kind == "input" or self.kind in ("einsum", "gelu", "silu_mul", "add"):
            return self.indices()
        if self.kind == "norm":
            return [c for c in self.output[:-1]]
        if self.kind == "attn":
            return ["b", "h"]
        if self.kind == "router":
            return ["g"]
        raise ValueError(f"kind={self.kind!r} is unknown: valid kinds are {KINDS}")

    def numel(self, idx: str) -> int:
        s = self.size
        return math.prod(s[c] for c in idx)

    def forward_flops(self) -> float:
        """FLOPs of the forward pass (2 per multiply-add); attention counts the causal half of QK^T and PV."""
        s = self.size
        if self.kind == "einsum":
            return 2.0 * math.prod(s[c] for c in self.indices())
        if self.kind == "attn":
            return 2.0 * 2.0 * s["b"] * s["h"] * s["s"] * s["s"] * s["e"] / 2.0
        return float(EW_FLOPS[self.kind] * self.numel(self.output))


@dataclass(frozen=True)
class Graph:
    """Operators in topological order (a DAG through tensor names); ``name`` says what it is."""

    name: str
    ops: tuple[Op, ...]
    layers: int
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def producers(self) -> dict[str, int]:
        return {op.name: i for i, op in enumerate(self.ops)}

    def edges(self) -> list[tuple[int, int, int]]:
        """(producer op, consumer op, input slot of the consumer)."""
        prod = self.producers()
        out = []
        for j, op in enumerate(self.ops):
            for slot, (tensor, _) in enumerate(op.inputs):
                if tensor not in prod:
                    raise ValueError(f"operator {op.name} reads {tensor!r}, which no earlier operator produces")
                out.append((prod[tensor], j, slot))
        return out

    def consumers(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {i: [] for i in range(len(self.ops))}
        for p, c, _ in self.edges():
            out[p].append(c)
        return out


def _sizes(**kw: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(kw.items()))


def gpt_graph(shape: GPTShape, *, batch: int, layers: int | None = None) -> Graph:
    """The transformer stack of a GPT (``layers`` blocks of :class:`workbench.llm.gpt.Block`, 10 operators each).

    Embedding and head are left out: CFP's search is over the repeated body; they add one fixed segment.
    """
    L = shape.layers if layers is None else layers
    d, h = shape.hidden, shape.heads
    sz = _sizes(b=batch, s=shape.seq, d=d, t=3, h=h, e=d // h, f=shape.ffn_mult * d)
    ops = [Op("x", "input", (), "bsd", sz)]
    x = "x"
    for i in range(L):
        p = f"l{i}."
        ops += [
            Op(p + "ln1", "norm", ((x, "bsd"),), "bsd", sz, params=((p + "ln1.w", "d"), (p + "ln1.b", "d")), layer=i),
            Op(p + "qkv", "einsum", ((p + "ln1", "bsd"),), "bsthe", sz,
               params=((p + "qkv.w", "dthe"), (p + "qkv.b", "the")), bias=True, layer=i),
            Op(p + "attn", "attn", ((p + "qkv", "bsthe"),), "bshe", sz, layer=i),
            Op(p + "proj", "einsum", ((p + "attn", "bshe"),), "bsd", sz,
               params=((p + "proj.w", "hed"), (p + "proj.b", "d")), bias=True, layer=i),
            Op(p + "add1", "add", ((x, "bsd"), (p + "proj", "bsd")), "bsd", sz, layer=i),
            Op(p + "ln2", "norm", ((p + "add1", "bsd"),), "bsd", sz,
               params=((p + "ln2.w", "d"), (p + "ln2.b", "d")), layer=i),
            Op(p + "fc", "einsum", ((p + "ln2", "bsd"),), "bsf", sz,
               params=((p + "fc.w", "df"), (p + "fc.b", "f")), bias=True, layer=i),
            Op(p + "gelu", "gelu", ((p + "fc", "bsf"),), "bsf", sz, layer=i),
            Op(p + "out", "einsum", ((p + "gelu", "bsf"),), "bsd", sz,
               params=((p + "out.w", "fd"), (p + "out.b", "d")), bias=True, layer=i),
            Op(p + "add2", "add", ((p + "add1", "bsd"), (p + "out", "bsd")), "bsd", sz, layer=i),
        ]  # fmt: skip
        x = p + "add2"
    return Graph(f"gpt-L{L}-d{d}", tuple(ops), L, {"family": "gpt", "batch": batch})


def llama_graph(shape: ModelShape, *, batch: int, layers: int | None = None) -> Graph:
    """LLaMA blocks: RMSNorm, QKV without bias, attention (rotary is elementwise, folded into attn), output
    projection, residual; RMSNorm, SwiGLU (gate and up projections, silu(gate) * up, down), residual."""
    L = shape.layers if layers is None else layers
    d, h = shape.hidden, shape.heads
    sz = _sizes(b=batch, s=shape.seq, d=d, t=3, h=h, e=d // h, f=shape.ffn)
    ops = [Op("x", "input", (), "bsd", sz)]
    x = "x"
    for i in range(L):
        p = f"l{i}."
        ops += [
            Op(p + "rms1", "norm", ((x, "bsd"),), "bsd", sz, params=((p + "rms1.w", "d"),), layer=i),
            Op(p + "qkv", "einsum", ((p + "rms1", "bsd"),), "bsthe", sz, params=((p + "qkv.w", "dthe"),), layer=i),
            Op(p + "attn", "attn", ((p + "qkv", "bsthe"),), "bshe", sz, layer=i),
            Op(p + "wo", "einsum", ((p + "attn", "bshe"),), "bsd", sz, params=((p + "wo.w", "hed"),), layer=i),
            Op(p + "add1", "add", ((x, "bsd"), (p + "wo", "bsd")), "bsd", sz, layer=i),
            Op(p + "rms2", "norm", ((p + "add1", "bsd"),), "bsd", sz, params=((p + "rms2.w", "d"),), layer=i),
            Op(p + "gate", "einsum", ((p + "rms2", "bsd"),), "bsf", sz, params=((p + "gate.w", "df"),), layer=i),
            Op(p + "up", "einsum", ((p + "rms2", "bsd"),), "bsf", sz, params=((p + "up.w", "df"),), layer=i),
            Op(p + "swiglu", "silu_mul", ((p + "gate", "bsf"), (p + "up", "bsf")), "bsf", sz, layer=i),
            Op(p + "down", "einsum", ((p + "swiglu", "bsf"),), "bsd", sz, params=((p + "down.w", "fd"),), layer=i),
            Op(p + "add2", "add", ((p + "add1", "bsd"), (p + "down", "bsd")), "bsd", sz, layer=i),
        ]  # fmt: skip
        x = p + "add2"
    return Graph(f"llama-L{L}-d{d}", tuple(ops), L, {"family": "llama", "batch": batch})


def moe_graph(shape: ModelShape, *, batch: int, layers: int | None = None) -> Graph:
    """GShard-style MoE transformer layers: attention as in GPT, then a top-k routed expert MLP written as
    einsums (router ``gsd,dx->gsx``, gating, dispatch ``gsd,gsxc->xgcd``, experts ``xgcd,xdf->xgcf``, GELU,
    ``xgcf,xfd->xgcd``, combine ``xgcd,gsxc->gsd``). Tokens are grouped as ``g`` groups of ``s`` tokens
    (one group per sequence); capacity ``c = capacity_factor * top_k * s / experts``."""
    L = shape.layers if layers is None else layers
    d, h = shape.hidden, shape.heads
    cap = max(1, int(round(shape.capacity_factor * shape.top_k * shape.seq / shape.experts)))
    sz = _sizes(b=batch, g=batch, s=shape.seq, d=d, t=3, h=h, e=d // h, f=shape.ffn, x=shape.experts, c=cap)
    ops = [Op("x", "input", (), "bsd", sz)]
    x = "x"
    for i in range(L):
        p = f"l{i}."
        ops += [
            Op(p + "ln1", "norm", ((x, "bsd"),), "bsd", sz, params=((p + "ln1.w", "d"),), layer=i),
            Op(p + "qkv", "einsum", ((p + "ln1", "bsd"),), "bsthe", sz, params=((p + "qkv.w", "dthe"),), layer=i),
            Op(p + "attn", "attn", ((p + "qkv", "bsthe"),), "bshe", sz, layer=i),
            Op(p + "proj", "einsum", ((p + "attn", "bshe"),), "bsd", sz, params=((p + "proj.w", "hed"),), layer=i),
            Op(p + "add1", "add", ((x, "bsd"), (p + "proj", "bsd")), "bsd", sz, layer=i),
            Op(p + "ln2", "norm", ((p + "add1", "bsd"),), "bsd", sz, params=((p + "ln2.w", "d"),), layer=i),
            # the same tensor read with g for b: one group per sequence
            Op(p + "logits", "einsum", ((p + "ln2", "gsd"),), "gsx", sz, params=((p + "router.w", "dx"),), layer=i),
            Op(p + "gates", "router", ((p + "logits", "gsx"),), "gsxc", sz, layer=i),
            Op(p + "dispatch", "einsum", ((p + "ln2", "gsd"), (p + "gates", "gsxc")), "xgcd", sz, layer=i),
            Op(p + "fc", "einsum", ((p + "dispatch", "xgcd"),), "xgcf", sz, params=((p + "fc.w", "xdf"),), layer=i),
            Op(p + "gelu", "gelu", ((p + "fc", "xgcf"),), "xgcf", sz, layer=i),
            Op(p + "out", "einsum", ((p + "gelu", "xgcf"),), "xgcd", sz, params=((p + "out.w", "xfd"),), layer=i),
            Op(p + "combine", "einsum", ((p + "out", "xgcd"), (p + "gates", "gsxc")), "gsd", sz, layer=i),
            Op(p + "add2", "add", ((p + "add1", "bsd"), (p + "combine", "bsd")), "bsd", sz, layer=i),
        ]  # fmt: skip
        x = p + "add2"
    return Graph(f"moe-L{L}-d{d}-x{shape.experts}", tuple(ops), L, {"family": "moe", "batch": batch})


@dataclass(frozen=True)
class ModelShape:
    """A paper-scale architecture: GPT (GELU MLP, 4d), LLaMA (SwiGLU, ``ffn``) or MoE (``experts``, top-k)."""

    family: str
    layers: int
    hidden: int
    heads: int
    seq: int
    ffn: int
    experts: int = 1
    top_k: int = 1
    capacity_factor: float = 1.0
    source: str = ""


#: paper-scale models (CFP v1 evaluates GPT, LLaMA and an MoE model; its exact sizes are not readable here, so
#: these are the published shapes of the same families, each with its source)
PAPER_MODELS: dict[str, ModelShape] = {
    # GPT-3 paper (Brown et al. 2020, arXiv 2005.14165 v4, Table 2.1), 1.3B and 6.7B rows (workbench.llm.gpt)
    "gpt-1.3b": ModelShape("gpt", 24, 2048, 16, 2048, 4 * 2048, source="GPT-3, arXiv 2005.14165 v4, Table 2.1"),
    "gpt-6.7b": ModelShape("gpt", 32, 4096, 32, 2048, 4 * 4096, source="GPT-3, arXiv 2005.14165 v4, Table 2.1"),
    # LLaMA-7B: 32 layers, d 4096, 32 heads, context 2048 (Touvron et al. 2023, arXiv 2302.13971 v1, Table 2);
    # SwiGLU width 2/3 * 4d rounded to a multiple of 256 = 11008 (the released params.json / HF config)
    "llama-7b": ModelShape("llama", 32, 4096, 32, 2048, 11008, source="LLaMA, arXiv 2302.13971 v1, Table 2"),
    # GShard-style MoE layer as in Switch/GShard: experts per layer, top-2, capacity factor 1.25; sized here as a
    # GPT-1.3B body with 16 experts of width 4d (GShard arXiv 2006.16668 v1 sec. 2: top-2 gating, capacity
    # factor; the count 16 is ours: CFP v1's MoE size is not readable)
    "moe-16e": ModelShape("moe", 24, 2048, 16, 2048, 4 * 2048, experts=16, top_k=2, capacity_factor=1.25,
                          source="GShard top-2 routing (arXiv 2006.16668 v1); size ours"),
}  # fmt: skip


def graph_for(name: str, *, batch: int, layers: int | None = None) -> Graph:
    """The graph of a paper-scale model by name (:data:`PAPER_MODELS`)."""
    if name not in PAPER_MODELS:
        raise ValueError(f"model={name!r} is unknown: valid models are {tuple(PAPER_MODELS)}")
    m = PAPER_MODELS[name]
    if m.family == "gpt":
        shape = GPTShape(
            layers=m.layers, hidden=m.hidden, heads=m.heads, seq=m.seq, vocab=2, ffn_mult=m.ffn // m.hidden
        )
        return gpt_graph(shape, batch=batch, layers=layers)
    if m.family == "llama":
        return llama_graph(m, batch=batch, layers=layers)
    return moe_graph(m, batch=batch, layers=layers)
