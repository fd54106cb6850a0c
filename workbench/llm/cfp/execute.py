"""Real execution of a plan: the GPT graph sharded per operator on P gloo processes, checked against the
unsharded :class:`workbench.llm.gpt.Block` stack.

Each rank holds its shards of the input, the weights and every activation (placements from the plan), runs the
operators locally and reshards between them with the primitives of :mod:`collectives` (the exact steps that
:func:`~workbench.llm.cfp.sharding.reshard_steps` prices); autograd gives the backward, whose collectives are the
primitives' backward. The check compares, on every rank, the output shard, the input-gradient shard and every
parameter-gradient shard with the same slices of the unsharded model's (fp64), and the bytes each rank's
:class:`~workbench.distributed.comm.Comm` counted with the cost model's bytes of the plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from workbench.distributed import run_workers
from workbench.distributed.comm import Comm
from workbench.llm.cfp.collectives import apply_step, grad_allreduce
from workbench.llm.cfp.graph import Graph, gpt_graph
from workbench.llm.cfp.sharding import (
    Mesh,
    grad_allreduce_axes,
    input_placement,
    output_placement,
    placement,
    reshard_steps,
)
from workbench.llm.gpt import GPTConfig, build_gpt

__all__ = ["CheckSpec", "CheckResult", "reference_run", "run_check", "local_slice", "gpt_params"]


def local_slice(t: torch.Tensor, pl: tuple, mesh: Mesh, coords: tuple[int, ...]) -> torch.Tensor:
    """The shard of global tensor ``t`` that placement ``pl`` gives the rank at ``coords`` (axis 0 outer)."""
    out = t
    for m, p in enumerate(pl):
        if isinstance(p, int):
            out = out.chunk(mesh.shape[m], dim=p)[coords[m]]
    return out.contiguous()


def gpt_params(config: GPTConfig) -> dict[str, torch.Tensor]:
    """The weights of ``build_gpt(config)``'s blocks in the graph's einsum layouts (``l{i}.qkv.w``: d,t,h,e)."""
    model = build_gpt(config)
    d, h = config.hidden, config.heads
    out = {}
    for i, blk in enumerate(model.blocks):
        p = f"l{i}."
        out[p + "ln1.w"], out[p + "ln1.b"] = blk.ln1.weight, blk.ln1.bias
        out[p + "qkv.w"] = blk.qkv.weight.T.reshape(d, 3, h, d // h)
        out[p + "qkv.b"] = blk.qkv.bias.reshape(3, h, d // h)
        out[p + "proj.w"] = blk.proj.weight.T.reshape(h, d // h, d)
        out[p + "proj.b"] = blk.proj.bias
        out[p + "ln2.w"], out[p + "ln2.b"] = blk.ln2.weight, blk.ln2.bias
        out[p + "fc.w"], out[p + "fc.b"] = blk.fc.weight.T, blk.fc.bias
        out[p + "out.w"], out[p + "out.b"] = blk.out.weight.T, blk.out.bias
    return {k: v.detach().clone().contiguous() for k, v in out.items()}


@dataclass(frozen=True)
class CheckSpec:
    """What travels to the workers: the GPT config, batch, mesh shape and the per-operator strategies."""

    gpt: GPTConfig
    batch: int
    mesh: tuple[int, ...]
    strategies: tuple[tuple, ...]
    seed: int = 0

    @property
    def graph(self) -> Graph:
        return gpt_graph(self.gpt.shape, batch=self.batch)


def _inputs(spec: CheckSpec) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(spec.seed + 1)
    shape = (spec.batch, spec.gpt.seq, spec.gpt.hidden)
    x = torch.randn(shape, generator=g, dtype=torch.float64).to(spec.gpt.torch_dtype)
    up = torch.randn(shape, generator=g, dtype=torch.float64).to(spec.gpt.torch_dtype)
    return x, up


def reference_run(spec: CheckSpec) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
    """Unsharded: output of the block stack, d(sum(out * up))/dx and the parameter gradients (einsum layout)."""
    model = build_gpt(spec.gpt)
    x, up = _inputs(spec)
    x = x.clone().requires_grad_(True)
    y = x
    for blk in model.blocks:
        y = blk(y)
    (y * up).sum().backward()
    d, h = spec.gpt.hidden, spec.gpt.heads
    grads = {}
    for i, blk in enumerate(model.blocks):
        p = f"l{i}."
        grads[p + "ln1.w"], grads[p + "ln1.b"] = blk.ln1.weight.grad, blk.ln1.bias.grad
        grads[p + "qkv.w"] = blk.qkv.weight.grad.T.reshape(d, 3, h, d // h)
        grads[p + "qkv.b"] = blk.qkv.bias.grad.reshape(3, h, d // h)
        grads[p + "proj.w"] = blk.proj.weight.grad.T.reshape(h, d // h, d)
        grads[p + "proj.b"] = blk.proj.bias.grad
        grads[p + "ln2.w"], grads[p + "ln2.b"] = blk.ln2.weight.grad, blk.ln2.bias.grad
        grads[p + "fc.w"], grads[p + "fc.b"] = blk.fc.weight.grad.T, blk.fc.bias.grad
        grads[p + "out.w"], grads[p + "out.b"] = blk.out.weight.grad.T, blk.out.bias.grad
    return y.detach(), x.grad.detach(), {k: v.contiguous() for k, v in grads.items()}


def axis_comms(comm: Comm, mesh: Mesh) -> list[Comm]:
    """One communicator per mesh axis (this rank's group along it; member index = coordinate)."""
    if mesh.ndim == 1:
        return [comm]
    return [comm.split(mesh.groups(a)) for a in range(mesh.ndim)]


def run_op(op, strategy, inputs: list[torch.Tensor], params: list[torch.Tensor], comms, coords) -> torch.Tensor:
    """One operator on local shards (inputs already resharded to what ``strategy`` reads)."""
    inputs = list(inputs)
    for k, (_, idx) in enumerate(op.inputs):
        for m in grad_allreduce_axes(strategy, idx):
            inputs[k] = grad_allreduce(inputs[k], comms[m])
    params = list(params)
    for k, (_, idx) in enumerate(op.params):
        for m in grad_allreduce_axes(strategy, idx):
            params[k] = grad_allreduce(params[k], comms[m])
    if op.kind == "norm":  # LayerNorm over the last index (never split)
        x = inputs[0]
        return F.layer_norm(x, (x.shape[-1],), params[0], params[1] if len(params) > 1 else None, eps=1e-5)
    if op.kind == "einsum":
        weights = params[:-1] if op.bias else params
        spec = ",".join([i for _, i in op.inputs] + [i for _, i in op.params[: len(weights)]]) + "->" + op.output
        y = torch.einsum(spec, *inputs, *weights)  # (local shapes)
        if op.bias:
            # add the bias once: on the first rank of every axis that splits a contracted index (else zero x bias,
            # so that every rank's autograd graph, and its collectives, are the same)
            first = all(coords[m] == 0 for m, c in enumerate(strategy) if c is not None and c not in op.output)
            y = y + params[-1] * (1.0 if first else 0.0)
        return y
    if op.kind == "attn":  # (b, s, 3, h, e) -> (b, s, h, e), causal
        q, k, v = (inputs[0][:, :, i].transpose(1, 2) for i in range(3))  # (b, h, s, e)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
    if op.kind == "gelu":
        return F.gelu(inputs[0])
    if op.kind == "add":
        return inputs[0] + inputs[1]
    raise ValueError(f"operator kind {op.kind!r} is not executable here (model only)")


def _worker(rank: int, world: int, comm: Comm, spec: CheckSpec, params: dict, x: torch.Tensor, up: torch.Tensor):
    mesh = Mesh(spec.mesh)
    coords = mesh.coords(rank)
    comms = axis_comms(comm, mesh)
    comm.reset_counters()
    graph = spec.graph
    live: dict[str, tuple[torch.Tensor, tuple]] = {}
    leaves: dict[str, torch.Tensor] = {}
    xleaf = None
    for op, st in zip(graph.ops, spec.strategies):
        if op.kind == "input":
            pl = output_placement(op, st)
            xleaf = local_slice(x, pl, mesh, coords).requires_grad_(True)
            live[op.name] = (xleaf, pl)
            continue
        ins = []
        for slot, (tensor, idx) in enumerate(op.inputs):
            t, src = live[tensor]
            dst = input_placement(op, st, slot)
            shape = tuple(op.size[c] for c in idx)
            for step in reshard_steps(src, dst, shape, mesh):
                t = apply_step(t, step, comms)
            ins.append(t)
        ps = []
        for name, idx in op.params:
            leaf = local_slice(params[name], placement(st, idx), mesh, coords).requires_grad_(True)
            leaves[name] = leaf
            ps.append(leaf)
        y = run_op(op, st, ins, ps, comms, coords)
        live[op.name] = (y, output_placement(op, st))
    last = graph.ops[-1]
    y, pl = live[last.name]
    y.backward(local_slice(up, pl, mesh, coords))
    return {
        "out": y.detach(),
        "out_pl": pl,
        "x_grad": xleaf.grad.detach(),
        "x_pl": live["x"][1],
        "grads": {k: v.grad.detach() for k, v in leaves.items()},
        "sent": comm.counter.sent,
        "recv": comm.counter.recv,
    }


@dataclass(frozen=True)
class CheckResult:
    """Max absolute errors over every rank's shards, bytes each rank sent, the cost model's bytes per rank."""

    max_abs_err_out: float
    max_abs_err_grad: float
    max_abs_err_param_grad: float
    bytes_per_rank: list[int]
    model_bytes_per_rank: int


def run_check(spec: CheckSpec, model_bytes: int, *, timeout_s: float = 120.0) -> CheckResult:
    """Run the plan on ``prod(spec.mesh)`` gloo processes and compare with :func:`reference_run`."""
    mesh = Mesh(spec.mesh)
    params = gpt_params(spec.gpt)
    x, up = _inputs(spec)
    ref_out, ref_dx, ref_grads = reference_run(spec)
    res = run_workers(
        _worker, mesh.size, spec, params, x, up, timeout_s=timeout_s,
        oom_hint="try a smaller setting (fewer gpus, smaller hidden/seq/batch)",
    )  # fmt: skip
    graph = spec.graph
    param_pl = {}
    for op, st in zip(graph.ops, spec.strategies):
        for name, idx in op.params:
            param_pl[name] = placement(st, idx)
    e_out = e_dx = e_p = 0.0
    for rank, r in enumerate(res):
        c = mesh.coords(rank)
        e_out = max(e_out, float((r["out"] - local_slice(ref_out, r["out_pl"], mesh, c)).abs().max()))
        e_dx = max(e_dx, float((r["x_grad"] - local_slice(ref_dx, r["x_pl"], mesh, c)).abs().max()))
        for name, g in r["grads"].items():
            want = local_slice(ref_grads[name], param_pl[name], mesh, c)
            e_p = max(e_p, float((g - want).abs().max()))
    return CheckResult(e_out, e_dx, e_p, [int(r["sent"]) for r in res], int(model_bytes))
