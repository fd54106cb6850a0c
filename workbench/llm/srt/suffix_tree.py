"""A bounded-depth suffix trie with counts: SRT's per-prompt token tree (and the global baseline's tree).

What we took from the authors' code (``shadowpa0327/verl_srt``, ``recipe/srt/srt_plugin/suffix_cache/csrc/
suffix_tree.cc``, itself ArcticInference's suffix tree): every suffix of every cached sequence is inserted up
to ``max_depth`` tokens, a node's count is the number of suffix occurrences that pass through it, a sequence is
extended token by token while it is being generated (its "active nodes" are the ends of its open suffixes) and
can be removed again (eviction). ``speculate`` tries every match length ``q = 1, 2, ...`` of the context's tail
(stopping at the first that fails: a trie of all suffixes holds every suffix of a matched string), drafts from
each matched node with a budget ``min(max_spec, q * spec_factor + spec_offset)`` and keeps the draft with the
highest score (sum of the path probabilities; longer match on ties). We write it in Python with
uncompressed edges (one token per node); the C++ compresses chains, which changes speed, not answers.

Scores (``scoring``): ``"authors"`` (the default) is the code's: a child ``v`` of ``u`` has
``C(v) = count(v) / count(u)``, where ``count(u)`` also counts the suffixes that end at ``u`` (a sequence's tail,
the running rollout's own included, or the depth limit), so a node where sequences stop drafts less eagerly;
``"paper"`` is the SRT paper's wording (arXiv 2601.09083v1, section 3): ``C(v) = count(v) / sum of count over
u's children``. A node's probability is the product of ``C`` along the path from the matched node. Match lengths
are the code's too: the context is cut to its last ``max_depth`` tokens and ``q`` runs over ``1 .. len - 1``
(never the whole cut context). The chain draft follows the highest-count child while the path probability stays
at least ``min_prob`` (the code's ``min_token_prob``); the tree draft (the workbench's extension,
ArcticInference's ``_speculate_tree``) expands best-first by path probability, keeping at most ``width`` children
per node.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

__all__ = ["Node", "Draft", "SuffixTree", "Scoring", "SCORINGS"]

Scoring = Literal["authors", "paper"]
SCORINGS: tuple[str, ...] = ("authors", "paper")


class Node:
    """One token of the trie: ``children`` by token id, ``count`` = suffix occurrences through it."""

    __slots__ = ("children", "count", "depth", "path", "total", "best")

    def __init__(self, path: tuple[int, ...]) -> None:
        self.children: dict[int, Node] = {}
        self.count = 0
        self.total = 0  # sum of the children's counts (the denominator of C(child))
        self.best: int | None = None  # the most-counted child's token (lowest id on ties); None = recompute
        self.path = path  # the tokens from the root (the node's key in SuffixTree._index)
        self.depth = len(path)


@dataclass(frozen=True)
class Draft:
    """Drafted tokens with their parent index in the draft (-1 = the last context token): a chain when each
    parent is the previous index. probs: path probability of each token; score: their sum; match_len: q."""

    tokens: tuple[int, ...] = ()
    parents: tuple[int, ...] = ()
    probs: tuple[float, ...] = ()
    score: float = 0.0
    match_len: int = 0

    def __len__(self) -> int:
        return len(self.tokens)

    @cached_property
    def is_chain(self) -> bool:
        return all(p == i - 1 for i, p in enumerate(self.parents))


@dataclass
class _Seq:
    tokens: list[int] = field(default_factory=list)
    active: list[Node] = field(default_factory=list)  # ends of the open suffixes (depth < max_depth)


class SuffixTree:
    """All suffixes (up to ``max_depth`` tokens) of the cached sequences, with counts.

    >>> t = SuffixTree(8); t.extend("a", [1, 2, 3, 1, 2, 4])
    >>> t.speculate([9, 1, 2], max_spec=4).tokens   # "1 2" -> 3 or 4 (tie -> 3); budget = q = 2 tokens
    (3, 1)
    """

    def __init__(self, max_depth: int) -> None:
        if max_depth < 1:
            raise ValueError(f"max_depth={max_depth} is out of range: valid range is >= 1 (tokens)")
        self.max_depth = max_depth
        self.root = Node(())
        self._seqs: dict[Hashable, _Seq] = {}
        self._index: dict[tuple[int, ...], Node] = {(): self.root}  # path -> node: O(1) suffix lookups

    # ------------------------------------------------------------------ building
    def __contains__(self, seq_id: Hashable) -> bool:
        return seq_id in self._seqs

    @property
    def sequences(self) -> list[Hashable]:
        """Cached sequence ids in insertion order."""
        return list(self._seqs)

    def extend(self, seq_id: Hashable, tokens: Sequence[int]) -> None:
        """Append ``tokens`` to sequence ``seq_id`` (created when new): O(max_depth) per token."""
        seq = self._seqs.setdefault(seq_id, _Seq())
        for t in tokens:
            t = int(t)
            seq.tokens.append(t)
            self.root.count += 1
            grown = []
            for node in (*seq.active, self.root):
                child = node.children.get(t)
                if child is None:
                    child = node.children[t] = Node((*node.path, t))
                    self._index[child.path] = child
                child.count += 1
                node.total += 1
                if len(node.children) == 1:
                    node.best = t
                elif node.best is not None and node.best != t:
                    b = node.children[node.best].count
                    if child.count > b or (child.count == b and t < node.best):
                        node.best = t
                if child.depth < self.max_depth:
                    grown.append(child)
            seq.active = grown

    def remove(self, seq_id: Hashable) -> None:
        """Evict sequence ``seq_id``: every count its suffixes added is taken back; empty nodes are deleted."""
        seq = self._seqs.pop(seq_id)
        toks = seq.tokens
        for start in range(len(toks)):
            self.root.count -= 1
            node = self.root
            for t in toks[start : start + self.max_depth]:
                child = node.children[t]
                child.count -= 1
                node.total -= 1
                node.best = None  # counts fell: the best child is recomputed when next asked
                if child.count == 0:
                    del node.children[t]  # nothing below it can still be counted: drop the whole subtree
                    stack = [child]
                    while stack:
                        dead = stack.pop()
                        del self._index[dead.path]
                        stack.extend(dead.children.values())
                    break
                node = child

    def node_count(self) -> int:
        """Nodes below the root (the memory the tree holds)."""
        stack, n = [self.root], 0
        while stack:
            node = stack.pop()
            n += len(node.children)
            stack.extend(node.children.values())
        return n

    # ------------------------------------------------------------------ lookup and drafting
    def match(self, pattern: Sequence[int]) -> Node | None:
        """The node reached by walking ``pattern`` from the root, or None (one lookup in the path index)."""
        return self._index.get(tuple(int(t) for t in pattern))

    def speculate(
        self,
        context: Sequence[int],
        *,
        max_spec: int,
        spec_factor: float = 1.0,
        spec_offset: float = 0.0,
        min_prob: float = 0.1,
        tree_width: int = 0,
        scoring: Scoring = "authors",
    ) -> Draft:
        """The best draft for ``context`` (its last ``max_depth`` tokens, matched by ``q = 1 .. len - 1``).

        tree_width 0: a chain (SRT); ``k > 0``: a token tree keeping the ``k`` most-counted children per node.
        scoring: ``"authors"`` (child count / parent count) or ``"paper"`` (child count / siblings' sum).
        Returns an empty :class:`Draft` when no suffix of length >= 1 is in the tree or the budget is 0.
        """
        if scoring not in SCORINGS:
            raise ValueError(f"scoring={scoring!r} is not allowed: valid values are {', '.join(SCORINGS)}")
        paper = scoring == "paper"
        best = Draft()
        tail = tuple(int(t) for t in context[-self.max_depth :])
        for q in range(1, len(tail)):
            node = self._index.get(tail[len(tail) - q :])
            if node is None:
                break
            budget = max(0, min(max_spec, int(q * spec_factor + spec_offset + 1e-6)))
            if tree_width:
                toks, parents, probs = _draft_tree(node, budget, min_prob, tree_width, paper)
            else:
                toks, parents, probs = _draft_chain(node, budget, min_prob, paper)
            score = sum(probs)
            if toks and score >= best.score:
                best = Draft(tuple(toks), tuple(parents), tuple(probs), score, q)
        return best


def _ranked(node: Node) -> list[tuple[int, Node]]:
    """Children by count, highest first (lowest token id on ties, so drafts are deterministic)."""
    return sorted(node.children.items(), key=lambda kv: (-kv[1].count, kv[0]))


def _draft_chain(node: Node, budget: int, min_prob: float, paper: bool) -> tuple[list[int], list[int], list[float]]:
    toks: list[int] = []
    probs: list[float] = []
    prob = 1.0
    while len(toks) < budget and node.children:
        if node.best is None:
            node.best = min(node.children.items(), key=lambda kv: (-kv[1].count, kv[0]))[0]
        token = node.best
        child = node.children[token]
        # C(v) = count(v) / count(u) (the code) or / the sum of u's children's counts (the paper), times the path's
        p = prob * child.count / (node.total if paper else node.count)
        if p < min_prob:
            break
        toks.append(token)
        probs.append(p)
        prob, node = p, child
    return toks, list(range(-1, len(toks) - 1)), probs


def _draft_tree(
    node: Node, budget: int, min_prob: float, width: int, paper: bool
) -> tuple[list[int], list[int], list[float]]:
    toks: list[int] = []
    parents: list[int] = []
    probs: list[float] = []
    heap: list[tuple[float, int, int, int, Node]] = []  # (-prob, tie, token, parent index, node)
    tie = 0

    def push_children(u: Node, prob: float, parent: int) -> None:
        nonlocal tie
        total = u.total if paper else u.count
        for token, child in _ranked(u)[:width]:
            p = prob * child.count / total
            if p >= min_prob:
                heapq.heappush(heap, (-p, tie, token, parent, child))
                tie += 1

    push_children(node, 1.0, -1)
    while heap and len(toks) < budget:
        neg_p, _, token, parent, child = heapq.heappop(heap)
        toks.append(token)
        parents.append(parent)
        probs.append(-neg_p)
        push_children(child, -neg_p, len(toks) - 1)
    return toks, parents, probs
