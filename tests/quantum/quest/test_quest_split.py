"""The QuEst split by structure and noise draw (``train.split_by_group``): no test sample shares a logical
circuit, a device circuit (gate for gate, noise columns aside) or a noise draw with a training sample, and
devices kept out of training give no training or validation sample. Reference: brute-force comparison of every
test sample with every training sample."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.quantum.quest.dataset import FAMILIES, DatasetSpec, generate
from workbench.quantum.quest.encoding import PHYSICAL_COLUMN
from workbench.quantum.quest.train import skeleton_keys, split_by_group

# 36 algorithm circuits cycle through the 34 (family, width) pairs: GHZ-2 and GHZ-3 come twice, and the
# deterministic families (GHZ) repeat gate for gate; unseen devices on a third of the jobs
SPEC = DatasetSpec(
    random_samples=24, algorithm_samples=72, noise_draws=2, fidelity_fraction=0.0, unseen_fraction=0.3, seed=8
)


pytestmark = pytest.mark.slow  # its module fixture generates a dataset (~14 s): the slow lane (CI) runs it


@pytest.fixture(scope="module")
def data():
    data = generate(SPEC)
    data.meta["skeleton"] = torch.from_numpy(skeleton_keys(data))
    return data


def _circuit_key(data, i: int) -> bytes:
    """The device circuit without its noise: gate types, wires and edges."""
    g = data.graph(i)
    return g.x[:, :PHYSICAL_COLUMN].tobytes() + g.edges.tobytes()


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_no_test_circuit_was_seen_in_training(data, seed):
    split = split_by_group(data, seed)
    train, test = split.train.tolist(), split.test.tolist()
    assert len(train) and len(test)
    for column in ("structure", "noise", "group", "skeleton"):
        seen = set(data.meta[column][split.train].tolist()) | set(data.meta[column][split.val].tolist())
        assert not seen & set(data.meta[column][split.test].tolist()), column
    trained = {_circuit_key(data, i) for i in train}
    assert not any(_circuit_key(data, i) in trained for i in test)


def test_repeated_circuits_exist_and_stay_together(data):
    """The check above is not vacuous: the dataset holds gate-for-gate repeats of logical circuits."""
    structure = data.meta["structure"]
    assert len(torch.unique(structure)) < len(structure)
    ghz = FAMILIES.index("ghz")
    split = split_by_group(data, 0)
    part = torch.full((len(data),), -1)
    for k, idx in enumerate((split.train, split.val, split.test)):
        part[idx] = k
    for s in torch.unique(structure[data.meta["family"] == ghz]):
        sides = set(part[(structure == s) & (part >= 0)].tolist())
        assert len(sides) <= 1


def test_unseen_devices_only_in_test(data):
    split = split_by_group(data, 0)
    unseen = data.meta["unseen"].bool()
    assert unseen.any()
    assert not unseen[split.train].any() and not unseen[split.val].any()
    assert unseen[split.test].any()
    every = torch.cat([split.train, split.val, split.test, split.excluded]).sort().values
    assert torch.equal(every, torch.arange(len(data)))
    assert unseen[split.excluded].all()
    # random-circuit noise draws on unseen devices are whole test groups: none is left out
    random = data.meta["kind"] == 0
    assert not (random[split.excluded]).any()
    assert np.isin(np.flatnonzero((unseen & random).numpy()), split.test.numpy()).all()
