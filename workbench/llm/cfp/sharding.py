"""Sharding strategies, placements, resharding plans and their costs on a 1-D or 2-D device mesh.

A *strategy* of an operator assigns each mesh axis an index letter to split, or ``None`` (the axis replicates
the operator's work): ``("b", "h")`` on a 2 x 4 mesh splits the batch 2 ways and the heads 4 ways. From it
follow the *placements* (DTensor's words) of every tensor, one entry per mesh axis: ``R`` (replicate),
``P`` (partial sums: the axis split a contracted index) or an integer tensor dimension (``Shard(dim)``). When
two axes split the same dimension, axis 0 is the outer one (DTensor's ``[Shard(0), Shard(0)]``).

Communication (per rank, forward + backward, each as a ring on the axis's group):

- inside an operator: an input (or parameter) replicated over an axis the operator splits gets a partial
  gradient, all-reduced in backward (Megatron's ``f``; data parallelism's gradient all-reduce);
- between operators: :func:`reshard_steps` turns a producer's placement into the one the consumer reads:
  ``P -> R`` all-reduce (backward: nothing), ``P -> S`` reduce-scatter (backward all-gather), ``S -> R``
  all-gather (backward: a local slice), ``R -> S`` a local slice (backward all-gather), ``S(d) -> S(d')`` on
  one axis an all-to-all (backward the inverse all-to-all).

Bytes per rank are the ones :class:`workbench.distributed.comm.Comm` counts: all-reduce ``2 (p-1) n / p``,
all-gather ``(p-1) n_shard``, reduce-scatter and all-to-all ``(p-1) n / p``. Seconds use the alpha-beta model
on the axis's link (NVLink when the axis's group sits in one node, the network otherwise).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from workbench.cluster import ClusterSpec
from workbench.llm.cfp.graph import Op

__all__ = [
    "Mesh",
    "parse_mesh",
    "Step",
    "op_strategies",
    "placement",
    "input_placement",
    "reshard_steps",
    "step_bytes",
    "CostModel",
]

Placement = tuple  # per mesh axis: "R", "P" or an int dim
Strategy = tuple  # per mesh axis: an index letter or None


@dataclass(frozen=True)
class Mesh:
    """A logical device mesh ``shape`` (1-D or 2-D); rank ``r`` has coordinates ``divmod(r, shape[1])``."""

    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def coords(self, rank: int) -> tuple[int, ...]:
        out = []
        for n in reversed(self.shape):
            out.append(rank % n)
            rank //= n
        return tuple(reversed(out))

    def rank(self, coords: tuple[int, ...]) -> int:
        r = 0
        for c, n in zip(coords, self.shape):
            r = r * n + c
        return r

    def groups(self, axis: int) -> list[list[int]]:
        """The rank groups along ``axis`` (each ordered by the coordinate on ``axis``)."""
        out: dict[tuple, list[int]] = {}
        for r in range(self.size):
            c = self.coords(r)
            out.setdefault(c[:axis] + c[axis + 1 :], []).append(r)
        return list(out.values())

    def axis_inter_node(self, axis: int, cluster: ClusterSpec) -> bool:
        """True when a group along ``axis`` spans more than one node (its collectives use the network)."""
        g = self.groups(axis)[0]
        return len({r // cluster.gpus_per_node for r in g}) > 1


def parse_mesh(text: str, devices: int | None = None) -> Mesh:
    """``"4"`` or ``"2x4"`` -> :class:`Mesh`; raises ValueError naming ``mesh`` when malformed or when its
    product differs from ``devices``."""
    parts = str(text).lower().replace("*", "x").split("x")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"mesh={text!r} is invalid: write A or AxB with positive integers (e.g. 2x4)") from None
    if not 1 <= len(shape) <= 2 or min(shape) < 1:
        raise ValueError(f"mesh={text!r} is invalid: valid meshes are 1-D (A) or 2-D (AxB) with sizes >= 1")
    mesh = Mesh(shape)
    if devices is not None and mesh.size != devices:
        raise ValueError(
            f"mesh={text!r} does not match gpus={devices}: the mesh's {mesh.size} devices must equal the GPU count"
        )
    return mesh


def op_strategies(op: Op, mesh: Mesh, *, allow_replicated_compute: bool = True) -> list[Strategy]:
    """Every strategy of ``op``: each axis splits one splittable index or none, sizes divisible.

    ``allow_replicated_compute=False`` drops einsum strategies that leave a mesh axis unsplit (Alpa disallows
    duplicated computation of heavy operators)."""
    size = op.size
    letters = op.splittable()
    out = []
    for combo in itertools.product([None, *letters], repeat=mesh.ndim):
        ok = True
        for c in set(combo) - {None}:
            ways = math.prod(n for a, n in zip(combo, mesh.shape) if a == c)
            if size[c] % ways:
                ok = False
        if ok and not allow_replicated_compute and op.kind == "einsum" and None in combo and mesh.size > 1:
            # an axis of size 1 replicates nothing
            if any(a is None and n > 1 for a, n in zip(combo, mesh.shape)):
                ok = False
        if ok:
            out.append(tuple(combo))
    return out


def placement(strategy: Strategy, idx: str, *, output: bool = False) -> Placement:
    """Placement of a tensor with index string ``idx`` under ``strategy``: S(dim) where the axis splits an index of
    the tensor; P for an output whose split index was contracted; R otherwise."""
    out = []
    for letter in strategy:
        if letter is not None and letter in idx:
            out.append(idx.index(letter))
        elif letter is not None and output:
            out.append("P")
        else:
            out.append("R")
    return tuple(out)


def input_placement(op: Op, strategy: Strategy, slot: int) -> Placement:
    return placement(strategy, op.inputs[slot][1])


def output_placement(op: Op, strategy: Strategy) -> Placement:
    if op.kind in ("attn", "norm", "gelu", "silu_mul", "add", "router", "input"):
        return placement(strategy, op.output)  # no contracted index among the splittable ones
    return placement(strategy, op.output, output=True)


def grad_allreduce_axes(strategy: Strategy, idx: str) -> list[int]:
    """Axes over which a tensor read with ``idx`` gets partial gradients (the op splits an index it lacks)."""
    return [m for m, letter in enumerate(strategy) if letter is not None and letter not in idx]


def local_shape(shape: tuple[int, ...], pl: Placement, mesh: Mesh) -> tuple[int, ...]:
    out = list(shape)
    for m, p in enumerate(pl):
        if isinstance(p, int):
            out[p] //= mesh.shape[m]
    return tuple(out)


@dataclass(frozen=True)
class Step:
    """One resharding primitive on ``axis``: kind in allreduce / reducescatter / allgather / slice / alltoall;
    ``dim`` (and ``dim2`` for all-to-all: from ``dim`` to ``dim2``); ``shape``: the local shape it reads."""

    kind: str
    axis: int
    dim: int
    dim2: int
    shape: tuple[int, ...]


def _axes_of(pl: list, d: int) -> list[int]:
    return [m for m, p in enumerate(pl) if p == d]


def reshard_steps(src: Placement, dst: Placement, shape: tuple[int, ...], mesh: Mesh) -> list[Step]:
    """The primitives that turn a tensor of global ``shape`` from placement ``src`` into ``dst`` (``dst`` has no
    P). Rule per dimension: keep the longest common prefix of the axes sharding it, gather the rest innermost
    first, slice the missing ones outermost first; P resolves first (reduce-scatter when it lands exactly
    where ``dst`` wants the axis, else all-reduce); a lone S(d) -> S(d') on one axis is an all-to-all."""
    if "P" in dst:
        raise ValueError(f"dst={dst!r} is invalid: a consumer never reads partial sums")
    cur = list(src)
    steps: list[Step] = []

    def here() -> tuple[int, ...]:
        return local_shape(shape, tuple(cur), mesh)

    for m, p in enumerate(cur):
        if p != "P":
            continue
        d = dst[m]
        if isinstance(d, int) and _axes_of(list(dst), d) == _axes_of(cur, d) + [m]:
            steps.append(Step("reducescatter", m, d, -1, here()))
            cur[m] = d
        else:
            steps.append(Step("allreduce", m, -1, -1, here()))
            cur[m] = "R"
    for m in range(len(cur)):
        d, d2 = cur[m], dst[m]
        if isinstance(d, int) and isinstance(d2, int) and d != d2:
            if _axes_of(cur, d) == [m] and _axes_of(list(dst), d) == [] and _axes_of(cur, d2) == []:
                if _axes_of(list(dst), d2) == [m]:
                    steps.append(Step("alltoall", m, d, d2, here()))
                    cur[m] = d2
    for d in range(len(shape)):
        have, want = _axes_of(cur, d), _axes_of(list(dst), d)
        k = 0
        while k < min(len(have), len(want)) and have[k] == want[k]:
            k += 1
        for m in reversed(have[k:]):
            steps.append(Step("allgather", m, d, -1, here()))
            cur[m] = "R"
    for m in range(len(cur)):
        if cur[m] == "R" and isinstance(dst[m], int):
            steps.append(Step("slice", m, dst[m], -1, here()))
            cur[m] = dst[m]
    if tuple(cur) != tuple(dst):  # pragma: no cover - the rules above always land on dst
        raise AssertionError(f"reshard {src} -> {dst} ended at {cur}")
    return steps


def step_bytes(step: Step, mesh: Mesh, itemsize: int) -> tuple[int, int]:
    """(forward, backward) bytes one rank sends for ``step`` (Comm's counting rules)."""
    p = mesh.shape[step.axis]
    n = math.prod(step.shape) * itemsize
    if p == 1:
        return 0, 0
    if step.kind == "allreduce":
        return 2 * (p - 1) * n // p, 0
    if step.kind == "reducescatter":
        return (p - 1) * (n // p), (p - 1) * (n // p)
    if step.kind == "allgather":
        return (p - 1) * n, 0
    if step.kind == "slice":
        return 0, (p - 1) * (n // p)
    if step.kind == "alltoall":
        return (p - 1) * (n // p), (p - 1) * (n // p)
    raise ValueError(f"step kind {step.kind!r} is unknown")


def allreduce_bytes(n: int, p: int) -> int:
    return 2 * (p - 1) * n // p if p > 1 else 0


#: collective rounds (latency terms) of a ring on p ranks
def _rounds(kind: str, p: int) -> int:
    return {"allreduce": 2 * (p - 1), "slice": 0}.get(kind, p - 1)


class CostModel:
    """Seconds and bytes of operator strategies and reshardings of one graph on one mesh and cluster.

    ``itemsize``: bytes per element of activations and weights (2 = bf16 at paper scale, 8 = fp64 checks);
    ``state_bytes_per_param``: memory per parameter element for weights, gradient and optimizer state (16 for
    mixed-precision Adam: bf16 weight and gradient, fp32 master, two moments); ``compute``: False drops compute
    time from the objective (Alpa's ILP objective has no compute term for split heavy operators).
    """

    def __init__(
        self,
        mesh: Mesh,
        cluster: ClusterSpec,
        *,
        itemsize: int = 2,
        state_bytes_per_param: int = 16,
        compute: bool = True,
    ) -> None:
        self.mesh, self.cluster, self.itemsize = mesh, cluster, itemsize
        self.state_bytes = state_bytes_per_param
        self.compute = compute
        self._inter = [mesh.axis_inter_node(a, cluster) for a in range(mesh.ndim)]

    def collective_seconds(self, kind: str, axis: int, nbytes: int) -> float:
        p = self.mesh.shape[axis]
        if p == 1 or nbytes == 0:
            return 0.0
        inter = self._inter[axis]
        bw = self.cluster.inter_node_bytes_per_second if inter else self.cluster.intra_node_bytes_per_second
        lat = self.cluster.inter_node_latency_s if inter else self.cluster.intra_node_latency_s
        return nbytes / bw + _rounds(kind, p) * lat

    def split_ways(self, strategy: Strategy) -> int:
        return math.prod(n for a, n in zip(strategy, self.mesh.shape) if a is not None)

    def op_compute_seconds(self, op: Op, strategy: Strategy) -> float:
        return 3.0 * op.forward_flops() / self.split_ways(strategy) / self.cluster.flops_per_second

    def op_comm(self, op: Op, strategy: Strategy) -> list[tuple[str, int, int]]:
        """In-operator collectives ``(kind, axis, bytes per rank)``: backward all-reduce of partial gradients of
        activation inputs and parameters."""
        out = []
        for _, idx in (*op.inputs, *op.params):
            shape = tuple(op.size[c] for c in idx)
            local = math.prod(local_shape(shape, placement(strategy, idx), self.mesh)) * self.itemsize
            for m in grad_allreduce_axes(strategy, idx):
                out.append(("allreduce", m, allreduce_bytes(local, self.mesh.shape[m])))
        return out

    def op_bytes(self, op: Op, strategy: Strategy) -> int:
        return sum(b for _, _, b in self.op_comm(op, strategy))

    def op_seconds(self, op: Op, strategy: Strategy) -> float:
        comm = sum(self.collective_seconds(k, a, b) for k, a, b in self.op_comm(op, strategy))
        return (self.op_compute_seconds(op, strategy) if self.compute else 0.0) + comm

    def op_memory(self, op: Op, strategy: Strategy) -> int:
        """Bytes one rank holds for ``op``: its parameter shards with gradients and optimizer state, and its
        output shard (saved for backward)."""
        mem = 0
        for _, idx in op.params:
            shape = tuple(op.size[c] for c in idx)
            mem += math.prod(local_shape(shape, placement(strategy, idx), self.mesh)) * self.state_bytes
        if op.kind != "input":
            shape = tuple(op.size[c] for c in op.output)
            mem += math.prod(local_shape(shape, placement(strategy, op.output), self.mesh)) * self.itemsize
        return mem

    def reshard(self, src: Placement, dst: Placement, shape: tuple[int, ...]) -> tuple[float, int]:
        """(seconds, bytes per rank) of resharding a tensor of global ``shape`` from ``src`` to ``dst``."""
        secs, total = 0.0, 0
        for st in reshard_steps(src, dst, shape, self.mesh):
            fwd, bwd = step_bytes(st, self.mesh, self.itemsize)
            bwd_kind = {"reducescatter": "allgather", "slice": "allgather", "alltoall": "alltoall"}.get(st.kind, "")
            secs += self.collective_seconds(st.kind, st.axis, fwd) + self.collective_seconds(bwd_kind, st.axis, bwd)
            total += fwd + bwd
        return secs, total
