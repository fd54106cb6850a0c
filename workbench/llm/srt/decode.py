"""Rollout engine: plain decoding and speculative decoding with lossless verification, over a KV cache.

A batch of rollout requests (prompts x group samples) advances in rounds, as a continuous-batching engine does:
each round drafts for every active sequence (from the drafter as it stands at the round's start), verifies all the
drafts (:class:`ModelVerifier`: one forward per sequence; :class:`~workbench.llm.srt.batched.BatchedVerifier`: one
forward for the whole batch), then gives every emitted token to the drafter, so the other samples of the same
prompt draft from it in the next round while they are still running (SRT's online update). Finished sequences
leave the batch.

One verification step (:meth:`ModelVerifier.step_one`): feed the pending token and the draft in ONE forward
(a chain: causal mask, consecutive positions; a token tree: :mod:`tree_attention`'s mask and branch positions),
then walk: at node u sample ``t ~ p(. | prefix(u))`` with the rollout's temperature / top-p / top-k
(:mod:`sampling`), emit t; if t is a draft child of u descend and repeat, else stop. Every emitted token is a
draw from the policy's processed distribution at its true prefix, so the rollout distribution is unchanged
(greedy: exact-match acceptance). A draft token's probability never enters the rule: the draft is model-free
(vLLM's rejection sampler for a model-free draft treats its probability as 1: accept x with probability p(x),
else sample from p with x removed, which draws the same distribution as this walk). Because a sequence owns its
uniforms (one per response token), plain decoding and SRT consume them identically and emit the same tokens.

:class:`ReplayVerifier` walks the same drafts against recorded responses instead of the model: with lossless
verification and aligned random numbers the accepted tokens are determined by the responses, so it counts the
forwards SRT would take (tested equal to the real run) and lets studies sweep drafters without a model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from workbench.llm.gpt import GPT, KVCache
from workbench.llm.srt.drafters import Drafter
from workbench.llm.srt.sampling import check_sampling, draw, draw_many, draw_rows, processed_probs
from workbench.llm.srt.suffix_tree import Draft
from workbench.llm.srt.tree_attention import tree_mask, tree_positions

__all__ = [
    "Sampling",
    "Request",
    "SeqState",
    "Verifier",
    "ModelVerifier",
    "ReplayVerifier",
    "RolloutStats",
    "rollout",
    "uniforms_for",
    "sample_batch",
    "verify_forward",
    "walk",
    "speculative_sample_many",
]


@dataclass(frozen=True)
class Sampling:
    """The rollout's sampling settings: temperature (0 = greedy), top_p, top_k (0 = all), max_new tokens, eos id."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new: int = 48
    eos: int = 1

    def __post_init__(self) -> None:
        check_sampling(self.temperature, self.top_p, self.top_k)
        if self.max_new < 1:
            raise ValueError(f"max_new={self.max_new} is out of range: valid range is >= 1 (tokens)")


def uniforms_for(seed: int, *ids: int, n: int) -> torch.Tensor:
    """The ``n`` uniforms a sequence owns, derived from ``seed`` and its ids (step, prompt, sample, kind)."""
    state = np.random.SeedSequence([seed, *ids]).generate_state(2)
    g = torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))
    return torch.rand(n, generator=g, dtype=torch.float64)


@dataclass
class Request:
    """One rollout: ``seq`` id, prompt ``key`` (which tree), prompt tokens, its uniforms or (replay) its response."""

    seq: Hashable
    key: Hashable
    prompt: list[int]
    uniforms: torch.Tensor | None = None
    known: list[int] | None = None


@dataclass
class SeqState:
    request: Request
    response: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    past: KVCache | None = None
    pending: int = -1
    done: bool = False
    forwards: int = 0  # verification (or decode) forwards, prefill excluded
    accepted: list[int] = field(default_factory=list)  # draft tokens accepted at each forward
    drafted: list[int] = field(default_factory=list)  # draft tokens proposed at each forward


def walk(draft: Draft, choose: Callable[[int, int], int], eos: int) -> tuple[list[int], list[int]]:
    """The acceptance walk: ``choose(node, i)`` gives the i-th emitted token at draft node ``node`` (-1 = root).

    Returns the emitted tokens and the draft nodes descended into (accepted). Stops after a token that is not a
    child of the current node, or after eos.
    """
    children: dict[int, dict[int, int]] = {}
    for j, (tok, par) in enumerate(zip(draft.tokens, draft.parents, strict=True)):
        children.setdefault(par, {}).setdefault(tok, j)
    node = -1
    emitted: list[int] = []
    path: list[int] = []
    while True:
        t = choose(node, len(emitted))
        emitted.append(t)
        nxt = children.get(node, {}).get(t)
        if t == eos or nxt is None:
            return emitted, path
        path.append(nxt)
        node = nxt


def verify_forward(model: GPT, past: KVCache | None, pending: int, draft: Draft) -> tuple[torch.Tensor, KVCache, int]:
    """One forward over ``[pending, *draft]``: logits ``(len(draft) + 1, vocab)``, the grown cache, cached length."""
    cached = 0 if past is None else past[0][0].shape[2]
    inputs = torch.tensor([[pending, *draft.tokens]], dtype=torch.long)  # (1, k + 1)
    if draft.is_chain:
        logits, past = model.forward_cached(inputs, past)  # causal mask, consecutive positions
    else:
        logits, past = model.forward_cached(
            inputs, past, positions=tree_positions(draft.parents, cached), mask=tree_mask(draft.parents, cached)
        )
    return logits[0], past, cached


def _keep(past: KVCache, cached: int, path: list[int], chain: bool) -> KVCache:
    """The cache of the prefix, the pending token and the accepted draft nodes (in path order)."""
    if chain:
        n = cached + 1 + len(path)
        return [(k[:, :, :n], v[:, :, :n]) for k, v in past]
    idx = torch.tensor([*range(cached + 1), *(cached + 1 + j for j in path)], dtype=torch.long)
    return [(k.index_select(2, idx), v.index_select(2, idx)) for k, v in past]


class Verifier(Protocol):
    """What the rollout engine drives: ``begin`` the sequences (prefill), then one ``step`` per round over the active
    ones with their drafts, returning each one's emitted tokens and accepted draft nodes."""

    sampling: Sampling

    def begin(self, states: Sequence[SeqState]) -> None: ...

    def step(self, states: Sequence[SeqState], drafts: Sequence[Draft]) -> list[tuple[list[int], list[int]]]: ...


def check_context(prompt: Sequence[int], sampling: Sampling, context: int) -> None:
    """ValueError when a prompt plus ``max_new`` tokens does not fit the policy's context."""
    if len(prompt) + sampling.max_new > context:
        raise ValueError(
            f"prompt of {len(prompt)} + max_new={sampling.max_new} tokens exceeds the policy's context of "
            f"{context} tokens"
        )


class ModelVerifier:
    """Verifies drafts with the policy ``model`` (no grad), one forward per sequence (batch 1), sampling with
    ``sampling``."""

    def __init__(self, model: GPT, sampling: Sampling) -> None:
        self.model, self.sampling = model, sampling
        self.context = model.shape.seq
        self.forwards = 0  # model forwards run by step (prefill excluded)

    def begin(self, states: Sequence[SeqState]) -> None:
        for state in states:
            self.begin_one(state)

    def begin_one(self, state: SeqState) -> None:
        prompt = state.request.prompt
        check_context(prompt, self.sampling, self.context)
        if state.request.uniforms is None and self.sampling.temperature > 0:
            raise ValueError("a sampled rollout needs its uniforms (Request.uniforms)")
        with torch.no_grad():
            if len(prompt) > 1:
                _, state.past = self.model.forward_cached(torch.tensor([prompt[:-1]], dtype=torch.long))
        state.pending = prompt[-1]

    def step(self, states: Sequence[SeqState], drafts: Sequence[Draft]) -> list[tuple[list[int], list[int]]]:
        return [self.step_one(st, d) for st, d in zip(states, drafts, strict=True)]

    def step_one(self, state: SeqState, draft: Draft) -> tuple[list[int], list[int]]:
        s = self.sampling
        with torch.no_grad():
            logits, past, cached = verify_forward(self.model, state.past, state.pending, draft)
        self.forwards += 1
        probs = processed_probs(logits, s.temperature, s.top_p, s.top_k)  # (k + 1, vocab) float64
        logp = torch.log_softmax(logits.double() / (s.temperature or 1.0), dim=-1)
        base = len(state.response)
        u = state.request.uniforms

        def choose(node: int, i: int) -> int:
            row = probs[node + 1]
            t = int(row.argmax()) if s.temperature == 0 else draw(row, float(u[base + i]))
            state.logprobs.append(float(logp[node + 1, t]))
            return t

        emitted, path = walk(draft, choose, s.eos)
        state.past = _keep(past, cached, path, draft.is_chain)
        state.pending = emitted[-1]
        return emitted, path


class ReplayVerifier:
    """Walks drafts against each request's recorded response (``Request.known``): no model, same counts."""

    def __init__(self, sampling: Sampling) -> None:
        self.sampling = sampling

    def begin(self, states: Sequence[SeqState]) -> None:
        for state in states:
            if state.request.known is None:
                raise ValueError("a replayed request needs its recorded response (Request.known)")

    def step(self, states: Sequence[SeqState], drafts: Sequence[Draft]) -> list[tuple[list[int], list[int]]]:
        out = []
        for state, draft in zip(states, drafts, strict=True):
            known, base = state.request.known, len(state.response)
            out.append(walk(draft, lambda node, i, k=known, b=base: k[b + i], self.sampling.eos))  # type: ignore[index,misc]  # known checked in begin
        return out


@dataclass
class RolloutStats:
    """Counts of one rollout batch: verification steps (one per sequence per round, prefill excluded), tokens,
    accepted draft tokens, drafted tokens, rounds (= batched forwards), per-sequence lengths and steps, seconds in
    the verifier (forwards + walk) and in drafting."""

    forwards: int
    tokens: int
    accepted: int
    drafted: int
    lengths: list[int]
    seq_forwards: list[int]
    verify_s: float
    draft_s: float
    rounds: int = 0

    @property
    def accepted_per_forward(self) -> float:
        """Mean tokens emitted per verification step of a sequence (1 + accepted draft tokens): 1 when plain."""
        return self.tokens / max(self.forwards, 1)

    @property
    def tokens_per_round(self) -> float:
        """Tokens emitted per round, i.e. per batched verification forward (the whole batch's)."""
        return self.tokens / max(self.rounds, 1)


def _draft_for(drafter: Drafter, st: SeqState, sampling: Sampling, context: int | None) -> Draft:
    """The draft of one active sequence, cut to what still fits (max_new, and the policy's context)."""
    r = st.request
    limit = sampling.max_new - len(st.response) - 1
    if context is not None:
        limit = min(limit, context - 1 - (len(r.prompt) + len(st.response) - 1))
    draft = drafter.propose(r.seq, r.prompt + st.response, limit) if limit > 0 else Draft()
    if len(draft) > max(limit, 0):
        draft = Draft(draft.tokens[:limit], draft.parents[:limit], draft.probs[:limit], draft.score, draft.match_len)
    return draft


def rollout(
    requests: Sequence[Request], drafter: Drafter, verifier: Verifier, *, step: int = 0
) -> tuple[list[SeqState], RolloutStats]:
    """Generate every request in rounds (draft for every active sequence, verify them all, feed the drafter) until
    each has emitted eos or ``max_new`` tokens. Returns the finished states (request order) and the counts."""
    s = verifier.sampling
    states = [SeqState(r) for r in requests]
    for st in states:
        drafter.start(st.request.seq, st.request.key, st.request.prompt, step=step)
    verifier.begin(states)
    context = getattr(verifier, "context", None)
    t_draft = t_verify = 0.0
    rounds = 0
    active = list(states)
    while active:
        t0 = time.perf_counter()
        drafts = [_draft_for(drafter, st, s, context) for st in active]
        t1 = time.perf_counter()
        results = verifier.step(active, drafts)
        t_draft += t1 - t0
        t_verify += time.perf_counter() - t1
        rounds += 1
        for st, draft, (emitted, path) in zip(active, drafts, results, strict=True):
            st.response.extend(emitted)
            st.forwards += 1
            st.accepted.append(len(path))
            st.drafted.append(len(draft))
            drafter.observe(st.request.seq, emitted)
            if emitted[-1] == s.eos or len(st.response) >= s.max_new:
                st.done = True
                drafter.finish(st.request.seq)
        active = [st for st in active if not st.done]
    stats = RolloutStats(
        forwards=sum(st.forwards for st in states),
        tokens=sum(len(st.response) for st in states),
        accepted=sum(sum(st.accepted) for st in states),
        drafted=sum(sum(st.drafted) for st in states),
        lengths=[len(st.response) for st in states],
        seq_forwards=[st.forwards for st in states],
        verify_s=t_verify,
        draft_s=t_draft,
        rounds=rounds,
    )
    return states, stats


def sample_batch(
    model: GPT, prompts: torch.Tensor, uniforms: torch.Tensor, sampling: Sampling
) -> tuple[list[list[int]], list[list[float]]]:
    """Plain batched decoding with a KV cache: the strongest plain baseline (one forward per round for the whole
    batch; finished rows leave it, their cache rows dropped, as a continuous-batching engine frees them).

    prompts ``(B, P)`` (equal lengths), uniforms ``(B, max_new)``. Same draws as per-sequence decoding, so the
    same tokens up to the rounding of batched matmuls (tested equal in float64). Returns responses cut after
    eos and their logprobs.
    """
    s = sampling
    b = prompts.shape[0]
    check_context(prompts[0].tolist(), s, model.shape.seq)
    out = torch.full((b, s.max_new), s.eos, dtype=torch.long)
    lps = torch.zeros(b, s.max_new, dtype=torch.float64)
    rows = torch.arange(b)  # the original index of each row still in the batch
    with torch.no_grad():
        past = model.forward_cached(prompts[:, :-1])[1] if prompts.shape[1] > 1 else None
        pending = prompts[:, -1:]
        for t in range(s.max_new):
            logits, past = model.forward_cached(pending, past)
            logits = logits[:, -1]  # (rows, vocab)
            probs = processed_probs(logits, s.temperature, s.top_p, s.top_k)
            tok = probs.argmax(-1) if s.temperature == 0 else draw_rows(probs, uniforms[rows, t])
            logp = torch.log_softmax(logits.double() / (s.temperature or 1.0), dim=-1)
            out[rows, t] = tok
            lps[rows, t] = logp.gather(1, tok[:, None])[:, 0]
            live = tok != s.eos
            if not bool(live.any()):
                break
            if not bool(live.all()):  # finished rows leave the batch
                keep = live.nonzero()[:, 0]
                rows, tok = rows[keep], tok[keep]
                past = [(k.index_select(0, keep), v.index_select(0, keep)) for k, v in past]
            pending = tok[:, None]
    responses, logprobs = [], []
    for i in range(b):
        row = out[i].tolist()
        n = row.index(s.eos) + 1 if s.eos in row else s.max_new
        responses.append(row[:n])
        logprobs.append(lps[i, :n].tolist())
    return responses, logprobs


def speculative_sample_many(
    model: GPT,
    prompt: Sequence[int],
    n: int,
    length: int,
    propose: Callable[[list[int], int], Draft],
    sampling: Sampling,
    generator: torch.Generator,
) -> tuple[list[tuple[int, ...]], int]:
    """``n`` independent speculative rollouts of exactly ``length`` tokens (eos ignored), vectorised by context.

    Each rollout owns ``length`` uniforms from ``generator`` (one per response token, as a :class:`Request`'s),
    and every step of it is the engine's: rows that share a context share one verification forward (the same
    :func:`verify_forward`), and each row then takes the engine's acceptance :func:`walk` through the draft, its
    i-th token at a node drawn from that node's processed distribution with the row's uniform of that token
    (:func:`~workbench.llm.srt.sampling.draw_many`, the vectorised :func:`~workbench.llm.srt.sampling.draw`, for
    all the rows at once). This is what the chi-square tests sample from. Returns the sequences and the number of
    verification forwards.
    """
    s = sampling
    uniforms = torch.rand(n, length, generator=generator, dtype=torch.float64)  # (n, length)
    rows: dict[tuple[int, ...], list[int]] = {(): list(range(n))}
    done: list[tuple[int, ...]] = [()] * n
    forwards = 0
    while rows:
        nxt: dict[tuple[int, ...], list[int]] = {}
        for ctx, members in rows.items():
            full = [*prompt, *ctx]
            limit = length - len(ctx) - 1
            draft = propose(full, limit) if limit > 0 else Draft()
            draft = Draft(draft.tokens[:limit], draft.parents[:limit]) if limit > 0 else Draft()
            with torch.no_grad():
                past = model.forward_cached(torch.tensor([full[:-1]]))[1] if len(full) > 1 else None
                logits, _, _ = verify_forward(model, past, full[-1], draft)
            forwards += 1
            probs = processed_probs(logits, s.temperature, s.top_p, s.top_k)  # (k + 1, vocab)
            idx = torch.tensor(members)
            draws: dict[tuple[int, int], list[int]] = {}  # (node, i) -> every member's i-th token at node

            def tokens(node: int, i: int) -> list[int]:
                if (node, i) not in draws:
                    row = probs[node + 1]
                    if s.temperature == 0:
                        toks = row.argmax().expand(len(members))
                    else:
                        toks = draw_many(row, uniforms[idx, len(ctx) + i])
                    draws[(node, i)] = toks.tolist()
                return draws[(node, i)]

            for at, r in enumerate(members):
                # the engine's walk; no token is -1, so eos is ignored
                emitted, _ = walk(draft, lambda node, i, at=at: tokens(node, i)[at], eos=-1)  # type: ignore[misc]  # mypy cannot infer a lambda with a default argument
                nxt.setdefault((*ctx, *emitted), []).append(r)
        rows = {}
        for ctx, members in nxt.items():
            if len(ctx) >= length:
                for r in members:
                    done[r] = ctx[:length]
            else:
                rows[ctx] = members
    return done, forwards
