"""Size of a srt run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Check: the policy (P = 12 L H^2 + (V + T) H parameters) with Adam for the two GRPO trainings (plain and SRT
rollouts) and the SFT warm-up, one step's activations over batch_prompts x group sequences of T tokens, and the
per-prompt suffix trees; the seconds count the decode forwards and the training flops at an effective CPU rate.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.llm.srt.config import SrtConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings (lazy imports, scipy's chi-square, the trees)
BASE_BYTES = 100 * MB
#: effective rate of the CPU policy (flop/s) and Python's cost per decoded token and layer (s)
FLOPS, TOKEN_LAYER_S = 1e9, 3e-5


def estimate(config: SrtConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run srt`` with ``config``."""
    if config.mode != "check":
        return Estimate(BASE_BYTES / 2, 1.0)
    from workbench.llm.srt.task import MAX_COUNT, PROMPT_LEN, VOCAB

    e = 8 if config.dtype == "float64" else 4
    seq = PROMPT_LEN + 5 * MAX_COUNT + 2
    h, layers = config.hidden, config.layers
    params = 12 * layers * h**2 + (VOCAB + seq) * h
    seqs = config.batch_prompts * config.group
    acts = layers * seqs * seq * (16 * h + 2 * config.heads * seq) * e
    kept = min(config.max_sequences, config.group * (config.history + 1))
    trees = config.prompts * kept * seq * 64 * max(1, config.tree_width // 2)
    need = BASE_BYTES + 3 * 4 * params * e + 2 * acts + trees
    tokens = config.steps * seqs * seq
    flops = 2 * (2 * params * tokens + 6 * params * tokens) + 6 * params * config.sft_steps * seqs * seq
    python = 4 * tokens * layers * TOKEN_LAYER_S  # plain and SRT rollouts, the replay and the timed step
    return Estimate(need, 2.0 + flops / FLOPS + python)
