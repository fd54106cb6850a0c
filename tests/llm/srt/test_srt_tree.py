"""The suffix tree against brute force (substring counts of the cached sequences), eviction, and the drafting
rule (child score = count / siblings' counts, product along the path, budget from the match length)."""

import collections
import random

import pytest

from workbench.llm.srt.drafters import DraftBudget, PromptLookupDrafter, TreeCacheDrafter, make_drafter
from workbench.llm.srt.suffix_tree import SuffixTree


def _counts(tree: SuffixTree) -> dict[tuple[int, ...], int]:
    out, stack = {}, [((), tree.root)]
    while stack:
        path, node = stack.pop()
        assert node.total == sum(c.count for c in node.children.values())  # cached denominators stay right
        if node.best is not None:  # a cached best child is the most counted, lowest token on ties
            assert node.best == min(node.children.items(), key=lambda kv: (-kv[1].count, kv[0]))[0]
        for t, child in node.children.items():
            out[(*path, t)] = child.count
            stack.append(((*path, t), child))
    return out


def _brute(seqs, depth):
    c = collections.Counter()
    for s in seqs:
        for i in range(len(s)):
            for j in range(i + 1, min(len(s), i + depth) + 1):
                c[tuple(s[i:j])] += 1
    return dict(c)


@pytest.mark.parametrize("depth", [1, 3, 7])
def test_counts_equal_substring_occurrences_under_online_extension_and_eviction(depth):
    rng = random.Random(depth)
    seqs = {i: [rng.randrange(4) for _ in range(rng.randrange(1, 23))] for i in range(9)}
    tree = SuffixTree(depth)
    for i, s in seqs.items():  # inserted in pieces, interleaved, as running rollouts are
        cut = rng.randrange(len(s) + 1)
        tree.extend(i, s[:cut])
    for i, s in seqs.items():
        cut = len(tree._seqs[i].tokens) if i in tree else 0
        tree.extend(i, s[cut:])
    assert _counts(tree) == _brute(seqs.values(), depth)
    for i in (0, 4, 7):
        tree.remove(i)
        del seqs[i]
        assert _counts(tree) == _brute(seqs.values(), depth)
    assert tree.root.count == sum(len(s) for s in seqs.values())


def test_chain_draft_follows_the_highest_count_child_with_the_product_score():
    tree = SuffixTree(16)
    for i, s in enumerate([[5, 1, 2, 3], [5, 1, 2, 3], [5, 1, 2, 4], [5, 1, 9]]):
        tree.extend(i, s)
    d = tree.speculate([7, 5, 1], max_spec=8, spec_factor=4.0, min_prob=0.0)
    # after "5 1": children 2 (3) and 9 (1) -> 2 with 3/4; after "5 1 2": 3 (2) and 4 (1) -> 3 with 3/4 * 2/3
    assert d.tokens == (2, 3) and d.match_len == 2 and d.is_chain
    assert d.probs == pytest.approx((0.75, 0.5))
    # min_prob stops the chain below it
    assert tree.speculate([7, 5, 1], max_spec=8, spec_factor=4.0, min_prob=0.6).tokens == (2,)
    # the budget grows with the match length: q = 2 and factor 0.5 give 1 token
    assert tree.speculate([7, 5, 1], max_spec=8, spec_factor=0.5, min_prob=0.0).tokens == (2,)
    assert tree.speculate([8, 8], max_spec=8).tokens == ()


def test_tree_draft_expands_best_first_with_branches():
    tree = SuffixTree(16)
    for i, s in enumerate([[5, 1, 2, 3], [5, 1, 2, 3], [5, 1, 2, 4], [5, 1, 9]]):
        tree.extend(i, s)
    d = tree.speculate([5, 1], max_spec=4, spec_factor=4.0, min_prob=0.0, tree_width=2)
    assert d.tokens == (2, 3, 9, 4) and d.parents == (-1, 0, -1, 0)
    assert d.probs == pytest.approx((0.75, 0.5, 0.25, 0.25))


def test_per_prompt_history_window_and_bound_evict_old_rollouts():
    d = TreeCacheDrafter(history=1, max_sequences=3, max_depth=8)
    d.begin_step(0)
    d.start("a0", "p", [1, 2], step=0)
    d.observe("a0", [3, 4])  # contexts below start with 0 (never cached): q = 1, 2 match "2", "1 2"
    d.start("b0", "q", [1, 2], step=0)
    d.observe("b0", [7, 7])
    assert d.propose("a0", [0, 1, 2], 4).tokens == (3, 4)  # the other prompt's tree is separate
    d.begin_step(2)  # epoch 0 falls out of a 1-epoch window
    d.start("a2", "p", [1, 2], step=2)
    assert d.propose("a2", [0, 1, 2], 4).tokens == ()
    for i in range(5):
        d.start(f"x{i}", "p", [1, 2], step=2)
    assert len(d.trees["p"].sequences) == 3


def test_history_only_cache_inserts_a_rollout_when_it_finishes():
    d = TreeCacheDrafter(online=False, max_depth=8)
    d.start("a", "p", [1, 2])
    d.observe("a", [3, 4])
    assert d.propose("a", [0, 1, 2], 4).tokens == ()
    d.finish("a")
    assert d.propose("a", [0, 1, 2], 4).tokens == (3, 4)


def test_global_tree_mixes_prompts_and_prompt_lookup_uses_the_own_context():
    g = make_drafter("global-suffix", budget=DraftBudget(min_prob=0.0))
    g.start("a", "p", [1, 2])
    g.observe("a", [3])
    g.start("b", "q", [1, 2])
    assert g.propose("b", [1, 2], 4).tokens == (3,)
    lookup = PromptLookupDrafter(max_spec=3)
    assert lookup.propose("s", [4, 5, 6, 9, 4, 5], 8).tokens == (6, 9, 4)
    assert lookup.propose("s", [1, 2, 3], 8).tokens == ()


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="max_depth=0 is out of range"):
        SuffixTree(0)
    with pytest.raises(ValueError, match="history=-1 is out of range"):
        TreeCacheDrafter(history=-1)
    with pytest.raises(ValueError, match="drafter='nope' is not allowed"):
        make_drafter("nope")


def test_authors_scoring_divides_by_the_parent_count_and_the_papers_by_the_siblings_sum():
    """Reference: substring counts by brute force. "1 2" occurs 3 times, once at a sequence's end: the authors'
    C(3) = count("1 2 3") / count("1 2") = 2/3, the paper's 2 / (2 + 0) = 1 (3 is the only continuation)."""
    seqs = [[1, 2, 3, 4], [1, 2, 3, 5], [9, 1, 2]]
    tree = SuffixTree(8)
    for i, s in enumerate(seqs):
        tree.extend(i, s)
    c = _brute(seqs, 8)
    authors = tree.speculate([7, 1, 2], max_spec=4, spec_factor=4.0, min_prob=0.0)
    paper = tree.speculate([7, 1, 2], max_spec=4, spec_factor=4.0, min_prob=0.0, scoring="paper")
    assert authors.tokens == paper.tokens == (3, 4)
    p3 = c[(1, 2, 3)] / c[(1, 2)]
    assert authors.probs == pytest.approx((p3, p3 * c[(1, 2, 3, 4)] / c[(1, 2, 3)]))
    assert paper.probs == pytest.approx((1.0, 0.5))
    # min_prob cuts the authors' chain earlier (2/3 * 1/2 = 1/3 < 0.4), not the paper's (1/2 >= 0.4)
    assert tree.speculate([7, 1, 2], max_spec=4, spec_factor=4.0, min_prob=0.4).tokens == (3,)
    assert tree.speculate([7, 1, 2], max_spec=4, spec_factor=4.0, min_prob=0.4, scoring="paper").tokens == (3, 4)
    with pytest.raises(ValueError, match="scoring='x' is not allowed"):
        tree.speculate([1, 2], max_spec=4, scoring="x")


def test_match_lengths_stop_short_of_the_whole_cut_context_as_the_authors_code():
    tree = SuffixTree(3)
    tree.extend(0, [1, 2, 3, 4])
    # the context is cut to its last 3 tokens (2 3 ...) and matched with q = 1, 2 (never all 3)
    d = tree.speculate([1, 2, 3], max_spec=8, spec_factor=1.0, min_prob=0.0)
    assert d.match_len == 2 and d.tokens == (4,)
    assert tree.speculate([3], max_spec=8, spec_factor=1.0, min_prob=0.0).tokens == ()  # q < len = 1: none
