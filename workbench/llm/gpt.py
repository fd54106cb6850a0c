"""A small GPT family in torch, shared by the LLM techniques (GreedySnake, DawnPiper, CFP, SRT).

Decoder-only, pre-LayerNorm, learned position embeddings, causal multi-head attention, a GELU MLP of width
``ffn_mult * hidden`` and an untied output head. Everything is deterministic from ``seed`` (weights are drawn
from a private ``torch.Generator``: normal(0, 0.02), zeros for biases, ones for LayerNorm gains), in fp32 or
fp64. A model is built layer by layer so that techniques can hold, move or offload one block at a time:
``GPT.embed`` -> ``GPT.blocks[i]`` -> ``GPT.head``; ``GPT.forward`` chains them.

Shapes: tokens ``(batch, seq)`` int64 in ``[0, vocab)``; hidden states ``(batch, seq, hidden)``; logits
``(batch, seq, vocab)``.

Paper-scale shapes (:data:`PAPER_SHAPES`) are published architectures, used by the models, never built here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from workbench.config import Config, param

__all__ = [
    "GPTConfig",
    "GPTShape",
    "PAPER_SHAPES",
    "GPT",
    "Block",
    "build_gpt",
    "block_param_count",
    "param_count",
    "flops_per_token",
    "random_tokens",
    "lm_loss",
    "KVCache",
]

#: per-layer (key, value) tensors ``(batch, heads, cached, head_dim)``: what :meth:`GPT.forward_cached` keeps
KVCache = list[tuple[torch.Tensor, torch.Tensor]]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True, kw_only=True)
class GPTConfig(Config):
    """A GPT built here (small enough to train on a CPU)."""

    layers: int = param(2, lo=1, hi=256, unit="layers", label="layers", help="transformer blocks")
    hidden: int = param(64, lo=4, hi=16384, unit="", label="hidden size", help="model width d")
    heads: int = param(4, lo=1, hi=256, unit="", label="heads", help="attention heads (must divide hidden)")
    seq: int = param(32, lo=1, hi=65536, unit="tokens", label="sequence", help="tokens per sample")
    vocab: int = param(128, lo=2, hi=1_000_000, unit="tokens", label="vocabulary", help="vocabulary size")
    ffn_mult: int = param(4, lo=1, hi=16, unit="x", label="MLP width", help="MLP width as a multiple of hidden")
    dtype: str = param("float32", choices=("float32", "float64"), label="precision", help="parameter dtype")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="seed", help="seed of the weights")

    def check_combination(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(
                f"heads={self.heads} must divide hidden={self.hidden}: valid heads are the divisors of {self.hidden}"
            )

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    @property
    def shape(self) -> GPTShape:
        return GPTShape(
            layers=self.layers, hidden=self.hidden, heads=self.heads, seq=self.seq, vocab=self.vocab,
            ffn_mult=self.ffn_mult,
        )  # fmt: skip


@dataclass(frozen=True)
class GPTShape:
    """The architecture alone (no dtype or seed): what the byte and FLOP formulas need."""

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    ffn_mult: int = 4


#: published shapes used at paper scale (sources in the comments; sequence is the training context)
PAPER_SHAPES: dict[str, GPTShape] = {
    # GPT-3 paper (Brown et al. 2020, arXiv 2005.14165 v4, Table 2.1): 175B = 96 layers, d 12288, 96 heads, 2048.
    "gpt-175b": GPTShape(layers=96, hidden=12288, heads=96, seq=2048, vocab=50257),
    # GPT-3 13B row of the same table: 40 layers, d 5140 (5120 in practice), 40 heads.
    "gpt-13b": GPTShape(layers=40, hidden=5120, heads=40, seq=2048, vocab=50257),
    # A 65B GPT as in LLaMA-65B's width/depth (Touvron et al. 2023, arXiv 2302.13971 v1, Table 2): 80 x 8192, 64 heads.
    "gpt-65b": GPTShape(layers=80, hidden=8192, heads=64, seq=2048, vocab=50257),
    # GPT-3 6.7B: 32 layers, d 4096, 32 heads.
    "gpt-6.7b": GPTShape(layers=32, hidden=4096, heads=32, seq=2048, vocab=50257),
    # GPT-3 1.3B: 24 layers, d 2048, 16 heads (heads 24 in the table with d_head 128; 16 x 128 = 2048).
    "gpt-1.3b": GPTShape(layers=24, hidden=2048, heads=16, seq=2048, vocab=50257),
}


def block_param_count(shape: GPTShape) -> int:
    """Parameters of one transformer block: two LayerNorms, QKV + output projection, the MLP (with biases)."""
    d, f = shape.hidden, shape.ffn_mult * shape.hidden
    return 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)


def param_count(shape: GPTShape) -> int:
    """All parameters: embeddings (token + position), blocks, final LayerNorm, untied head."""
    d = shape.hidden
    return shape.vocab * d + shape.seq * d + shape.layers * block_param_count(shape) + 2 * d + d * shape.vocab


def flops_per_token(shape: GPTShape, *, backward: bool = True) -> float:
    """Matmul FLOPs per token (2 per multiply-add): 2 x parameters of the matmuls + causal attention scores.

    Forward only: ``2 N + 2 L s d`` (attention QK^T and PV over the causal half, ``2 * 2 * s/2 * d`` per layer);
    forward + backward: three times that (the usual 6N rule plus attention).
    """
    d, f, L = shape.hidden, shape.ffn_mult * shape.hidden, shape.layers
    matmul_params = L * (4 * d * d + 2 * d * f) + d * shape.vocab
    fwd = 2 * matmul_params + 2 * L * shape.seq * d
    return 3 * fwd if backward else fwd


class Block(nn.Module):
    """One pre-LN transformer block: ``x + attn(ln1(x))`` then ``x + mlp(ln2(x))``."""

    def __init__(self, shape: GPTShape, dtype: torch.dtype) -> None:
        super().__init__()
        d, f = shape.hidden, shape.ffn_mult * shape.hidden
        self.heads = shape.heads
        self.ln1 = nn.LayerNorm(d, dtype=dtype)
        self.qkv = nn.Linear(d, 3 * d, dtype=dtype)
        self.proj = nn.Linear(d, d, dtype=dtype)
        self.ln2 = nn.LayerNorm(d, dtype=dtype)
        self.fc = nn.Linear(d, f, dtype=dtype)
        self.out = nn.Linear(f, d, dtype=dtype)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, d))

    def attention_cached(
        self,
        x: torch.Tensor,
        past: tuple[torch.Tensor, torch.Tensor] | None,
        mask: torch.Tensor | None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Attention of the new positions ``x (b, s, d)`` over the cached keys/values followed by their own.

        ``mask`` ``(s, cached + s)`` bool (True = may attend) replaces the default, which lets every new position
        see the whole cache and the new positions up to itself (causal). Returns the output and the grown cache.
        """
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))  # (b,h,s,dh)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)  # (b, h, cached + s, dh)
            v = torch.cat([past[1], v], dim=2)
        if mask is None:
            cached = k.shape[2] - s
            mask = torch.ones(s, cached + s, dtype=torch.bool, device=x.device).tril(diagonal=cached)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(b, s, d)), (k, v)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.gelu(self.fc(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Embedding(nn.Module):
    """Token + learned position embedding: tokens ``(b, s)`` -> ``(b, s, hidden)``."""

    def __init__(self, shape: GPTShape, dtype: torch.dtype) -> None:
        super().__init__()
        self.tok = nn.Embedding(shape.vocab, shape.hidden, dtype=dtype)
        self.pos = nn.Embedding(shape.seq, shape.hidden, dtype=dtype)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.tok(tokens) + self.pos(positions)


class Head(nn.Module):
    """Final LayerNorm and the untied output projection: ``(b, s, hidden)`` -> logits ``(b, s, vocab)``."""

    def __init__(self, shape: GPTShape, dtype: torch.dtype) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(shape.hidden, dtype=dtype)
        self.lm = nn.Linear(shape.hidden, shape.vocab, bias=False, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lm(self.ln(x))


class GPT(nn.Module):
    """``embed`` -> ``blocks`` -> ``head``; ``forward(tokens)`` returns logits ``(b, s, vocab)``."""

    def __init__(self, shape: GPTShape, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.shape = shape
        self.embed = Embedding(shape, dtype)
        self.blocks = nn.ModuleList(Block(shape, dtype) for _ in range(shape.layers))
        self.head = Head(shape, dtype)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dim() != 2 or tokens.shape[1] > self.shape.seq:
            raise ValueError(
                f"tokens must have shape (batch, seq) with seq <= {self.shape.seq}, got {tuple(tokens.shape)}"
            )
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)

    def forward_cached(
        self,
        tokens: torch.Tensor,
        past: KVCache | None = None,
        *,
        positions: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, KVCache]:
        """Incremental forward with a key/value cache (additive; ``forward`` is unchanged).

        tokens ``(b, s)`` are the new positions; ``past`` the cache of the earlier ones (None: empty).
        positions ``(s,)`` their position ids, or ``(b, s)`` one row per sequence (default: ``cached .. cached + s -
        1``; a token tree passes its branch depths); mask ``(s, cached + s)`` bool, or ``(b, 1, s, cached + s)`` one
        per sequence (a padded batch of trees), True where a new position may attend (default causal).
        Returns logits ``(b, s, vocab)`` and the cache with the new positions appended (the caller truncates or
        gathers it to keep only accepted positions). With the defaults, feeding a sequence in pieces gives the
        logits of :meth:`forward` on the whole sequence (tested to rounding).
        """
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (batch, seq), got {tuple(tokens.shape)}")
        cached = 0 if past is None else past[0][0].shape[2]
        s = tokens.shape[1]
        if positions is None:
            positions = torch.arange(cached, cached + s, device=tokens.device)
        if int(positions.max()) >= self.shape.seq:
            raise ValueError(f"position {int(positions.max())} is past the context of {self.shape.seq} tokens")
        x = self.embed.tok(tokens) + self.embed.pos(positions)
        new: KVCache = []
        for i, block in enumerate(self.blocks):
            a, kv = block.attention_cached(block.ln1(x), None if past is None else past[i], mask)
            x = x + a
            x = x + block.mlp(block.ln2(x))
            new.append(kv)
        return self.head(x), new


def _init_(model: nn.Module, generator: torch.Generator) -> None:
    """GPT-2 style init, deterministic: every weight matrix/embedding N(0, 0.02), biases 0, LayerNorm gains 1.

    Parameters are visited in ``named_parameters`` order, so the draw does not depend on anything but the shape.
    """
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() == 1:  # LayerNorm weight
                p.fill_(1.0)
            else:
                noise = torch.randn(p.shape, generator=generator, dtype=torch.float64)
                std = 0.02 / math.sqrt(2 * len(getattr(model, "blocks", [None]))) if name.endswith(
                    ("proj.weight", "out.weight")
                ) else 0.02  # fmt: skip
                p.copy_(noise * std)


def build_gpt(config: GPTConfig) -> GPT:
    """The GPT of ``config``, initialised from ``config.seed`` (same weights on every machine and run)."""
    model = GPT(config.shape, config.torch_dtype)
    generator = torch.Generator().manual_seed(config.seed)
    _init_(model, generator)
    return model


def random_tokens(config: GPTConfig, batch: int, *, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of ``batch`` random token sequences and their next-token targets, both ``(batch, seq)`` int64."""
    if batch < 1:
        raise ValueError(f"batch={batch} is out of range: valid range is >= 1 (samples)")
    g = torch.Generator().manual_seed(seed)
    data = torch.randint(0, config.vocab, (batch, config.seq + 1), generator=g)
    return data[:, :-1].contiguous(), data[:, 1:].contiguous()


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of logits ``(b, s, vocab)`` against targets ``(b, s)``."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
