"""Hand-written baselines: data parallelism only, and Megatron-style tensor parallelism (Shoeybi et al. 2019,
arXiv 1909.08053 v4, sec. 3: QKV and the first MLP matrix split by columns, the output projections by rows, one
all-reduce after each in forward and one in backward), with data parallelism on mesh axis 0 of a 2-D mesh.
"""

from __future__ import annotations

from workbench.llm.cfp.graph import Graph
from workbench.llm.cfp.problem import Problem

__all__ = ["data_parallel", "megatron", "assignment_of"]

#: the index Megatron splits, by operator name (GPT, LLaMA and the MoE experts' MLP)
_TP = {
    "qkv": "h", "attn": "h", "proj": "h", "wo": "h",
    "fc": "f", "gelu": "f", "out": "f", "gate": "f", "up": "f", "swiglu": "f", "down": "f",
}  # fmt: skip


def _batch_letter(op) -> str | None:
    for _, idx in (*op.inputs, (op.name, op.output)):
        for c in ("b", "g"):
            if c in idx:
                return c
    return None


def assignment_of(problem: Problem, strategies: list[tuple], name: str) -> list[int]:
    """Strategy indices of ``strategies`` (one tuple per operator); ValueError naming the plan when a sizes
    do not divide."""
    out = []
    for i, st in enumerate(strategies):
        if st not in problem.strats[i]:
            op = problem.graph.ops[i]
            raise ValueError(
                f"plan={name!r} is impossible on mesh={'x'.join(map(str, problem.mesh.shape))}: operator {op.name} "
                f"cannot split {st} (sizes {dict(op.sizes)})"
            )
        out.append(problem.strats[i].index(st))
    return out


def data_parallel(graph: Graph, ndim: int) -> list[tuple]:
    """Every operator splits its batch (or token-group) index on every mesh axis."""
    out = []
    for op in graph.ops:
        b = _batch_letter(op)
        out.append(tuple([b] * ndim))
    return out


def megatron(graph: Graph, ndim: int) -> list[tuple]:
    """Tensor parallelism on the last mesh axis (heads / MLP width), data parallelism on axis 0 of a 2-D mesh."""
    out = []
    for op in graph.ops:
        tp = _TP.get(op.name.split(".")[-1])
        if tp is not None and tp not in op.indices():
            tp = None
        if ndim == 1:
            out.append((tp,))
        else:
            b = _batch_letter(op)
            out.append((b, tp))
    return out
