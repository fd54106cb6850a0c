"""ParallelBlocks by communication-free propagation, and repeated segments by structural hashing.

ParallelBlock (CFP v1 abstract: "the partition of its input tensor can propagate through all operators to its
output tensor without introducing communication"). Construction here (derived; the paper's procedure is not
readable): walk the operators in topological order; an operator *follows* its producer into the producer's block
when it has one activation input, no parameters, and the producer has no other consumer (operators whose
consumers could disagree are never merged). A block's strategies are its root's strategies whose placement
propagates through every follower with no communication (each follower's input placement equals its producer's
output placement); the followers' strategies are inferred, not enumerated. Root strategies that would need a
collective inside the block are left out: that is CFP's claim ("avoidable communication"), which the per-operator
ILP checks.

Segments: each block gets a structural hash (its operators' signatures and, for each input edge, the distance
back to its producer block and the slot); the block-hash sequence is cut into the longest run of a repeating
period (the layers); distinct periods are the unique segments that need profiling.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from workbench.llm.cfp.problem import Problem, op_signature
from workbench.llm.cfp.sharding import input_placement, output_placement

__all__ = ["Blocks", "build_blocks", "segments", "Segments"]


@dataclass
class Blocks:
    """``ops[k]``: op indices of block k (root first, a chain); ``strats[k]``: list of per-op strategy indices
    (one tuple per block strategy); ``cost``/``mem``: per block strategy; ``in_edges[k]``: (producer block,
    edge index into problem.edges, reshard matrix [producer block strategy, block strategy]); ``hashes[k]``."""

    ops: list[list[int]]
    strats: list[list[tuple[int, ...]]]
    cost: list[np.ndarray]
    mem: list[np.ndarray]
    in_edges: list[list[tuple[int, int, np.ndarray]]]
    consumers: list[list[int]]
    hashes: list[str]

    @property
    def combinations_log10(self) -> float:
        return float(sum(math.log10(len(s)) for s in self.strats))

    def expand(self, choice: list[int], n_ops: int) -> list[int]:
        """Per-operator strategy indices from one strategy index per block."""
        out = [-1] * n_ops
        for k, c in enumerate(choice):
            for op, s in zip(self.ops[k], self.strats[k][c]):
                out[op] = s
        return out


def build_blocks(problem: Problem, *, group: bool = True) -> Blocks:
    """ParallelBlocks of ``problem`` (``group=False``: one block per operator, the ungrouped space)."""
    g = problem.graph
    ops = g.ops
    cons = g.consumers()
    edges_by_consumer: dict[int, list[tuple[int, int, int]]] = {}
    for k, (p, c, slot) in enumerate(problem.edges):
        edges_by_consumer.setdefault(c, []).append((k, p, slot))
    block_of: dict[int, int] = {}
    members: list[list[int]] = []
    for i, op in enumerate(ops):
        ins = edges_by_consumer.get(i, [])
        follows = (
            group
            and len(op.inputs) == 1
            and not op.params
            and len(ins) == 1
            and len(cons[ins[0][1]]) == 1
            and members[block_of[ins[0][1]]][-1] == ins[0][1]
        )
        if follows:
            k = block_of[ins[0][1]]
            members[k].append(i)
        else:
            k = len(members)
            members.append([i])
        block_of[i] = k
    strats, cost, mem = [], [], []
    sig_cache: dict = {}
    for mem_ops in members:
        key = tuple(op_signature(ops[i]) for i in mem_ops)
        if key not in sig_cache:
            root = mem_ops[0]
            found = []
            for s0 in range(len(problem.strats[root])):
                chain = [s0]
                ok = True
                for prev, nxt in zip(mem_ops, mem_ops[1:]):
                    want = output_placement(ops[prev], problem.strats[prev][chain[-1]])
                    match = [t for t, st in enumerate(problem.strats[nxt]) if input_placement(ops[nxt], st, 0) == want]
                    if not match:
                        ok = False
                        break
                    chain.append(match[0])
                if ok:
                    found.append(tuple(chain))
            c = np.array([sum(problem.cost[i][s] for i, s in zip(mem_ops, ch)) for ch in found])
            m = np.array([sum(int(problem.mem[i][s]) for i, s in zip(mem_ops, ch)) for ch in found], dtype=np.int64)
            sig_cache[key] = (found, c, m)
        f, c, m = sig_cache[key]
        strats.append(f)
        cost.append(c)
        mem.append(m)
    in_edges: list[list] = [[] for _ in members]
    consumers: list[list[int]] = [[] for _ in members]
    for k, (p, c, _slot) in enumerate(problem.edges):
        bp, bc = block_of[p], block_of[c]
        if bp == bc:
            continue
        pos_p = members[bp].index(p)
        pos_c = members[bc].index(c)
        rows = [ch[pos_p] for ch in strats[bp]]
        cols = [ch[pos_c] for ch in strats[bc]]
        R = problem.reshard[k][np.ix_(rows, cols)]
        in_edges[bc].append((bp, k, R))
        consumers[bp].append(bc)
    hashes = []
    for kb, mem_ops in enumerate(members):
        text = repr(
            (
                tuple(op_signature(ops[i]) for i in mem_ops),
                tuple((kb - bp, problem.edges[k][2]) for bp, k, _ in in_edges[kb]),
            )
        )
        hashes.append(hashlib.sha1(text.encode()).hexdigest()[:12])
    return Blocks(members, strats, cost, mem, in_edges, consumers, hashes)


@dataclass
class Segments:
    """``period``: blocks per repeated segment; ``start``: first block of the run; ``repeats``: how many;
    ``unique``: distinct segments (hash tuples) over the whole block sequence, incl. the unrepeated parts;
    ``unique_blocks``: distinct block hashes (what profiling must run)."""

    period: int
    start: int
    repeats: int
    unique: int
    unique_blocks: int


def segments(blocks: Blocks) -> Segments:
    """Find the longest run of a repeating block-hash period (the transformer layers)."""
    h = blocks.hashes
    n = len(h)
    best = (n, 0, 1)  # (period, start, repeats), scored by covered blocks then shorter period; no repeat: one segment
    for start in range(min(4, n)):
        for period in range(1, (n - start) // 2 + 1):
            reps = 1
            while (
                start + (reps + 1) * period <= n
                and h[start + reps * period : start + (reps + 1) * period] == h[start : start + period]
            ):
                reps += 1
            if reps >= 2 and (best[2] == 1 or (reps * period, -period) > (best[2] * best[0], -best[0])):
                best = (period, start, reps)
    period, start, reps = best
    parts = [tuple(h[:start])] if start else []
    parts += [tuple(h[start + i * period : start + (i + 1) * period]) for i in range(reps)]
    tail = tuple(h[start + reps * period :])
    if tail:
        parts.append(tail)
    return Segments(period, start, reps, len(set(parts)), len(set(h)))
