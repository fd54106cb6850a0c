"""Draft sources: SRT's per-prompt tree cache and the baselines (global suffix tree, prompt lookup, none).

Every drafter sees the same calls from the rollout engine (:mod:`workbench.llm.srt.decode`):
``begin_step(step)`` before a training step's rollouts (evicts what fell out of the history window),
``start(seq, key, prompt)`` when a rollout starts, ``observe(seq, tokens)`` with each group of tokens it emits
(inserted online, while the other samples of the group are still running, unless ``online=False``: then a
sequence enters the cache when it finishes, the "history-only" cache of RhymeRL-style systems the paper
contrasts), ``finish(seq)`` and ``propose(seq, context) -> Draft``.

- :class:`TreeCacheDrafter` with ``per_prompt=True`` is SRT: one :class:`SuffixTree` per prompt key (the
  authors' code keys trees by a hash of the prompt's tokens), holding the responses of the last ``history``
  steps (run-ahead ones included) and the running group; at most ``max_sequences`` per tree, oldest evicted first.
- ``per_prompt=False`` is the global-suffix-tree baseline (ArcticInference / vLLM ``method="suffix"`` with a
  global cache over all past responses, FIFO-bounded like its ``max_cached_requests``).
- :class:`PromptLookupDrafter` is prompt-lookup n-gram drafting (vLLM ``method="ngram"``,
  ``prompt_lookup_min/max``): the longest n-gram ending the context that occurred earlier in the same context
  proposes the tokens that followed it (the most recent occurrence).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

from workbench.llm.srt.suffix_tree import SCORINGS, Draft, SuffixTree

__all__ = ["DraftBudget", "Drafter", "NoDrafter", "TreeCacheDrafter", "PromptLookupDrafter", "make_drafter"]

DRAFTERS = ("none", "srt", "srt-tree", "global-suffix", "prompt-lookup")


@dataclass(frozen=True)
class DraftBudget:
    """How much to draft: at most ``max_spec`` tokens and ``spec_factor * q + spec_offset`` for a match of q
    tokens (ArcticInference's max_spec_factor; SRT's B(q)), stop below path probability ``min_prob``; the tree
    draft keeps ``tree_width`` children per node; ``scoring`` is the child score (``"authors"``: count / parent's
    count, their code; ``"paper"``: count / siblings' sum). Defaults are the authors' SRTSuffixConfig (24, 1.0, 0.1)."""

    max_spec: int = 24
    spec_factor: float = 1.0
    spec_offset: float = 0.0
    min_prob: float = 0.1
    tree_width: int = 0
    scoring: str = "authors"

    def __post_init__(self) -> None:
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring={self.scoring!r} is not allowed: valid values are {', '.join(SCORINGS)}")


class Drafter:
    """No drafts (plain decoding). Subclasses override what they need."""

    name = "none"

    def begin_step(self, step: int) -> None:  # noqa: B027 - optional hook
        pass

    def start(self, seq: Hashable, key: Hashable, prompt: Sequence[int], *, step: int = 0) -> None:  # noqa: B027
        pass

    def observe(self, seq: Hashable, tokens: Sequence[int]) -> None:  # noqa: B027
        pass

    def finish(self, seq: Hashable) -> None:  # noqa: B027
        pass

    def propose(self, seq: Hashable, context: Sequence[int], limit: int) -> Draft:
        return Draft()


NoDrafter = Drafter


class TreeCacheDrafter(Drafter):
    """SRT's per-prompt tree cache (``per_prompt=True``) or the global suffix tree (``per_prompt=False``)."""

    def __init__(
        self,
        *,
        per_prompt: bool = True,
        max_depth: int = 24,
        history: int = 4,
        max_sequences: int = 256,
        online: bool = True,
        budget: DraftBudget = DraftBudget(),  # noqa: B008 - frozen
    ) -> None:
        if history < 0:
            raise ValueError(f"history={history} is out of range: valid range is >= 0 (steps)")
        if max_sequences < 1:
            raise ValueError(f"max_sequences={max_sequences} is out of range: valid range is >= 1")
        self.per_prompt, self.history, self.max_sequences = per_prompt, history, max_sequences
        self.max_depth, self.online, self.budget = max_depth, online, budget
        self.name = ("srt-tree" if budget.tree_width else "srt") if per_prompt else "global-suffix"
        self.trees: dict[Hashable, SuffixTree] = {}
        self._seq_tree: dict[Hashable, Hashable] = {}
        self._seq_step: dict[Hashable, int] = {}
        self._pending: dict[Hashable, list[int]] = {}  # history-only mode: tokens held until finish

    def _tree(self, key: Hashable) -> SuffixTree:
        k = key if self.per_prompt else None
        if k not in self.trees:
            self.trees[k] = SuffixTree(self.max_depth)
        return self.trees[k]

    def begin_step(self, step: int) -> None:
        for seq, s in list(self._seq_step.items()):
            if s < step - self.history:
                self._evict(seq)

    def _evict(self, seq: Hashable) -> None:
        tree = self.trees[self._seq_tree.pop(seq)]
        del self._seq_step[seq]
        if seq in tree:
            tree.remove(seq)

    def start(self, seq: Hashable, key: Hashable, prompt: Sequence[int], *, step: int = 0) -> None:
        k = key if self.per_prompt else None
        tree = self._tree(k)
        self._seq_tree[seq], self._seq_step[seq] = k, step
        if self.online:
            tree.extend(seq, prompt)
        else:
            self._pending[seq] = list(prompt)
        while len(tree.sequences) > self.max_sequences:  # bounded: the oldest sequence of this tree goes
            self._evict(tree.sequences[0])

    def observe(self, seq: Hashable, tokens: Sequence[int]) -> None:
        if self.online:
            self.trees[self._seq_tree[seq]].extend(seq, tokens)
        else:
            self._pending[seq].extend(int(t) for t in tokens)

    def finish(self, seq: Hashable) -> None:
        if not self.online and seq in self._pending:
            self.trees[self._seq_tree[seq]].extend(seq, self._pending.pop(seq))

    def propose(self, seq: Hashable, context: Sequence[int], limit: int) -> Draft:
        b = self.budget
        tree = self.trees.get(self._seq_tree.get(seq, None))
        if tree is None or limit <= 0:
            return Draft()
        return tree.speculate(
            context,
            max_spec=min(b.max_spec, limit),
            spec_factor=b.spec_factor,
            spec_offset=b.spec_offset,
            min_prob=b.min_prob,
            tree_width=b.tree_width,
            scoring=b.scoring,  # type: ignore[arg-type]  # checked in DraftBudget
        )

    def node_count(self) -> int:
        return sum(t.node_count() for t in self.trees.values())


class PromptLookupDrafter(Drafter):
    """Prompt-lookup n-gram drafting from the sequence's own context (no cache across rollouts)."""

    name = "prompt-lookup"

    def __init__(self, *, min_n: int = 1, max_n: int = 4, max_spec: int = 8) -> None:
        if not 1 <= min_n <= max_n:
            raise ValueError(f"min_n={min_n}, max_n={max_n}: valid is 1 <= min_n <= max_n")
        self.min_n, self.max_n, self.max_spec = min_n, max_n, max_spec

    def propose(self, seq: Hashable, context: Sequence[int], limit: int) -> Draft:
        ctx = list(context)
        k = min(self.max_spec, limit)
        if k <= 0:
            return Draft()
        for n in range(min(self.max_n, len(ctx) - 1), self.min_n - 1, -1):
            pattern = ctx[-n:]
            for start in range(len(ctx) - n - 1, -1, -1):  # most recent earlier occurrence first
                if ctx[start : start + n] == pattern:
                    follow = ctx[start + n : start + n + k]
                    return Draft(tuple(follow), tuple(range(-1, len(follow) - 1)), (1.0,) * len(follow),
                                 float(len(follow)), n)  # fmt: skip
        return Draft()


def make_drafter(
    name: str,
    *,
    max_depth: int = 24,
    history: int = 4,
    max_sequences: int = 256,
    online: bool = True,
    budget: DraftBudget = DraftBudget(),  # noqa: B008 - frozen
) -> Drafter:
    """A drafter by name: none, srt, srt-tree (width from ``budget.tree_width``, default 2), global-suffix,
    prompt-lookup (n-grams 1..4, ``budget.max_spec`` tokens)."""
    if name == "none":
        return Drafter()
    if name in ("srt", "srt-tree", "global-suffix"):
        if name == "srt-tree" and not budget.tree_width:
            budget = replace(budget, tree_width=2)
        if name != "srt-tree" and budget.tree_width:
            budget = replace(budget, tree_width=0)
        return TreeCacheDrafter(
            per_prompt=name != "global-suffix", max_depth=max_depth, history=history,
            max_sequences=max_sequences, online=online, budget=budget,
        )  # fmt: skip
    if name == "prompt-lookup":
        return PromptLookupDrafter(max_spec=budget.max_spec)
    raise ValueError(f"drafter={name!r} is not allowed: valid values are {', '.join(DRAFTERS)}")
