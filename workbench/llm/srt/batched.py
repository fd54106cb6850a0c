"""Batched speculative verification: every active rollout's draft verified in ONE forward of the shared GPT.

A continuous-batching engine (vLLM, which the paper's SRT runs in) verifies the drafts of all running sequences
together. Here the batch is padded: row ``i`` feeds its pending token and its draft (``1 + k_i`` tokens) and is
padded to ``s = 1 + max_i k_i``; its KV cache holds ``c_i`` valid positions of a padded ``(B, heads, L, head_dim)``
cache (``L = max_i c_i``, left-aligned, the rest masked). The attention mask of one forward is ``(B, 1, s, L + s)``:

    query j of row i may see  cached key m      if m < c_i
                              new key n         if n is an ancestor of j in row i's draft tree, or n == j

(a chain draft's block is causal; a padded query sees what the tree rules give it and itself, so no row of the
mask is empty and no NaN can reach a kept key). Position ids are ``c_i + depth``. After the forward each row walks
its draft exactly as the batch-1 engine does (:func:`~workbench.llm.srt.decode.walk`, the token at draft node
``u`` drawn with the row's uniform number ``depth(u)`` past what it has emitted, so all candidate tokens of the
batch are drawn in one vectorised :func:`~workbench.llm.srt.sampling.draw_rows`), and the cache is compacted to
the prefix, the pending token and the accepted nodes (one ``gather`` per layer). Rows that finish leave the batch
(their cache rows are dropped).

Lossless as the batch-1 engine: with the same per-sequence uniforms it emits the same tokens as plain batched
decoding (:func:`~workbench.llm.srt.decode.sample_batch`) and as target-only decoding (tested in float64 under
greedy, T = 1, top-p and top-k, odd batch sizes, uneven prompt and response lengths).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.llm.gpt import GPT, KVCache
from workbench.llm.srt.decode import Sampling, SeqState, check_context, walk
from workbench.llm.srt.sampling import draw_rows, processed_probs
from workbench.llm.srt.suffix_tree import Draft
from workbench.llm.srt.tree_attention import ancestors

__all__ = ["BatchedVerifier", "batch_inputs"]


def batch_inputs(
    pending: Sequence[int], drafts: Sequence[Draft], lengths: torch.Tensor, width: int, context: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The padded verification inputs of a batch.

    pending: each row's last emitted token; drafts: each row's draft; lengths ``(B,)``: valid cached positions
    per row; width: the padded cache's length L; context: the policy's context (positions are clamped below it).
    Returns tokens ``(B, s)``, positions ``(B, s)``, mask ``(B, 1, s, L + s)`` bool and depths ``(B, s)`` (each
    input's depth in its draft tree: root 0; padding 0).
    """
    b = len(drafts)
    s = 1 + max((len(d) for d in drafts), default=0)
    tokens = torch.tensor([[p, *d.tokens, *[0] * (s - 1 - len(d))] for p, d in zip(pending, drafts, strict=True)])
    n = torch.tensor([len(d) + 1 for d in drafts])  # (B,) real inputs per row
    col = torch.arange(s)
    real = col[None, :] < n[:, None]  # (B, s)
    depth = torch.where(real, col[None, :], 0)  # a chain: input j at depth j; padding 0
    new = torch.ones(s, s, dtype=torch.bool).tril()[None] & real[:, None, :]  # (B, s, s) chain rows: causal
    for i, d in enumerate(drafts):
        if not d.is_chain:  # a token tree: ancestors only, branch depths
            paths = ancestors(d.parents)
            new[i, : len(paths)] = False
            for j, path in enumerate(paths):
                new[i, j, path] = True
                depth[i, j] = len(path) - 1
    new |= torch.eye(s, dtype=torch.bool)[None]  # every query sees itself: no empty row, no NaN
    cached = torch.arange(int(width))[None, None, :] < lengths[:, None, None]  # (B, 1, L)
    mask = torch.cat([cached.expand(b, s, int(width)), new], dim=2)[:, None]  # (B, 1, s, L + s)
    positions = (lengths[:, None] + depth).clamp(max=context - 1)
    return tokens, positions, mask, depth


def _compact(past: KVCache, lengths: torch.Tensor, kept: list[list[int]], width: int) -> tuple[KVCache, torch.Tensor]:
    """Each row's cache reduced to its ``lengths[i]`` cached positions followed by the new inputs ``kept[i]``
    (indices into the forward's inputs, which sit at columns ``width + j``), left-aligned (one gather per layer).
    Returns the cache and the new lengths."""
    lens = lengths.tolist()
    new_len = [c + len(k) for c, k in zip(lens, kept, strict=True)]
    out_w = max(new_len)
    # (B, out_w): the kept columns of each row, then (past its new length) filler that stays masked
    idx = torch.tensor([[*range(c), *(width + j for j in k), *[0] * (out_w - c - len(k))]
                        for c, k in zip(lens, kept, strict=True)])  # fmt: skip
    out: KVCache = []
    for k, v in past:
        g = idx[:, None, :, None].expand(k.shape[0], k.shape[1], out_w, k.shape[3])  # (B, heads, out_w, head_dim)
        out.append((k.gather(2, g), v.gather(2, g)))
    return out, torch.tensor(new_len, dtype=torch.long)


class BatchedVerifier:
    """Verifies all active sequences' drafts in one forward of ``model`` (no grad), sampling with ``sampling``.

    Holds the padded cache of the active rows (``past``, ``lengths``) and which sequence each row is; the engine
    passes the active states each round, in the order they started, and rows of finished states are dropped.
    ``forwards`` counts batched forwards (prefill excluded); ``fed`` the inputs they processed, padding included,
    and ``real`` those that were a pending token or a draft token.
    """

    def __init__(self, model: GPT, sampling: Sampling) -> None:
        self.model, self.sampling = model, sampling
        self.context = model.shape.seq
        self.past: KVCache | None = None
        self.lengths = torch.zeros(0, dtype=torch.long)
        self.rows: list[SeqState] = []
        self.uniforms = torch.zeros(0, sampling.max_new, dtype=torch.float64)  # (rows, max_new)
        self.forwards = self.fed = self.real = 0
        self.rows_per_forward: list[int] = []  # the batch each forward verified (finished rows have left it)

    def begin(self, states: Sequence[SeqState]) -> None:
        """Prefill every prompt but its last token in one padded forward (prompts may differ in length)."""
        for st in states:
            check_context(st.request.prompt, self.sampling, self.context)
            if st.request.uniforms is None and self.sampling.temperature > 0:
                raise ValueError("a sampled rollout needs its uniforms (Request.uniforms)")
            st.pending = st.request.prompt[-1]
        self.rows = list(states)
        if self.sampling.temperature > 0 and states:
            self.uniforms = torch.stack([st.request.uniforms[: self.sampling.max_new] for st in states])  # type: ignore[index]
        lengths = torch.tensor([len(st.request.prompt) - 1 for st in states], dtype=torch.long)
        p = int(lengths.max()) if len(states) else 0
        self.lengths, self.past = lengths, None
        if p == 0:
            return
        tokens = torch.zeros(len(states), p, dtype=torch.long)
        for i, st in enumerate(states):
            tokens[i, : int(lengths[i])] = torch.tensor(st.request.prompt[:-1], dtype=torch.long)
        col = torch.arange(p)
        mask = (torch.ones(p, p, dtype=torch.bool).tril()[None] & (col[None, None, :] < lengths[:, None, None])) | (
            torch.eye(p, dtype=torch.bool)[None]
        )  # (B, p, p): causal within each prompt, padding sees itself
        positions = col.repeat(len(states), 1).clamp(max=self.context - 1)
        with torch.no_grad():
            _, self.past = self.model.forward_cached(tokens, None, positions=positions, mask=mask[:, None])

    def _select(self, states: Sequence[SeqState]) -> None:
        """Drop the cache rows of sequences that left the batch."""
        if len(states) == len(self.rows):
            return
        where = {id(st): i for i, st in enumerate(self.rows)}
        keep = torch.tensor([where[id(st)] for st in states], dtype=torch.long)
        self.rows = list(states)
        self.lengths = self.lengths.index_select(0, keep)
        if self.sampling.temperature > 0:
            self.uniforms = self.uniforms.index_select(0, keep)
        if self.past is not None:
            self.past = [(k.index_select(0, keep), v.index_select(0, keep)) for k, v in self.past]

    def step(self, states: Sequence[SeqState], drafts: Sequence[Draft]) -> list[tuple[list[int], list[int]]]:
        """One batched verification forward and each row's acceptance walk; returns (emitted, accepted nodes)."""
        s = self.sampling
        self._select(states)
        width = 0 if self.past is None else self.past[0][0].shape[2]
        tokens, positions, mask, depth = batch_inputs(
            [st.pending for st in states], drafts, self.lengths, width, self.context
        )
        with torch.no_grad():
            logits, past = self.model.forward_cached(tokens, self.past, positions=positions, mask=mask)
        self.forwards += 1
        self.rows_per_forward.append(len(states))
        self.fed += tokens.numel()
        self.real += sum(1 + len(d) for d in drafts)
        tok, logp = self._candidates(states, logits, depth)
        out, kept = [], []
        for st, draft, row_tok, row_lp in zip(states, drafts, tok.tolist(), logp.tolist(), strict=True):

            def choose(node: int, _i: int, st: SeqState = st, t: list = row_tok, lp: list = row_lp) -> int:
                st.logprobs.append(lp[node + 1])
                return t[node + 1]

            emitted, path = walk(draft, choose, s.eos)
            st.pending = emitted[-1]
            kept.append([0, *(1 + j for j in path)])
            out.append((emitted, path))
        self.past, self.lengths = _compact(past, self.lengths, kept, width)
        return out

    def _candidates(
        self, states: Sequence[SeqState], logits: torch.Tensor, depth: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The token each row would emit at each of its inputs (``(B, s)``: at draft node u it is the row's
        ``len(response) + depth(u)``-th token, drawn with that uniform) and its logprob (``(B, s)`` float64)."""
        s = self.sampling
        probs = processed_probs(logits, s.temperature, s.top_p, s.top_k)  # (B, s, vocab) float64
        if s.temperature == 0:
            tok = probs.argmax(-1)  # (B, s)
        else:
            base = torch.tensor([len(st.response) for st in states], dtype=torch.long)
            at = (base[:, None] + depth).clamp(max=s.max_new - 1)  # (B, s) the uniform each input would use
            tok = draw_rows(probs, self.uniforms.gather(1, at))
        logp = torch.log_softmax(logits.double() / (s.temperature or 1.0), dim=-1)
        return tok, logp.gather(2, tok[..., None])[..., 0]
