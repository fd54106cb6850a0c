"""Read-before-update: the deferred optimizer part of unit u is slowed down (a sleep before its writes) and the
result still equals plain training, because unit u's forward waits for it. The same run with that wait removed
reads stale weights and differs, which shows the test can fail."""

import pytest
import torch
from gs_cases import run_dir, tiny, trainer

from workbench.llm.greedysnake.engine import OffloadedTrainer
from workbench.llm.greedysnake.reference import train_in_memory

pytestmark = pytest.mark.slow  # real offloaded training runs (seconds)


class _NoWait(OffloadedTrainer):
    def _wait_deferred(self, future):  # noqa: ANN001, ANN202 - the bug the race test must catch
        return None


def _run(cls, cfg):
    with run_dir() as d:
        t = cls(cfg, d, schedule="vertical-overlap", micro_batches=2, micro_batch_size=2, alpha=0.5,
                checkpoints="host", memory_budget=10**8, lr=1e-3, update_delay_s=0.03)  # fmt: skip
        t.train(3)
        out = t.parameters()
        t.close()
    return out


def test_slowed_deferred_update_is_waited_for():
    cfg = tiny(layers=2)
    ref = train_in_memory(cfg, micro_batches=2, micro_batch_size=2, steps=3, lr=1e-3, data_seed=0)
    for a, b in zip(_run(OffloadedTrainer, cfg), ref, strict=True):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for a, b in zip(_run(_NoWait, cfg), ref, strict=True))


def test_trainer_fixture_matches_the_defaults():
    with run_dir() as d:
        t = trainer(tiny(layers=1), d, "vertical-overlap", 2)
        assert t.split[1] == int(0.25 * t.sizes[1])  # a block (the flextrain layout steps embedding, head whole)
        assert t.split[0] == t.split[-1] == 0
        t.close()
