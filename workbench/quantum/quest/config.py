"""Parameters of ``workbench run quest``: generate the dataset, train the models, evaluate a checkpoint, or
predict one circuit's PST (OpenQASM 2/3 file + device)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.calibration import device_basis, device_names
from workbench.quantum.quest.encoding import ONE_QUBIT_GATES, TWO_QUBIT_GATES

MODES = ("generate", "train", "evaluate", "predict")


@functools.lru_cache(maxsize=1)
def quest_devices() -> tuple[str, ...]:
    """Device snapshots whose basis holds ``rz, sx, x`` and one two-qubit gate among ``cx``, ``ecr``, ``cz`` (the
    gates QuEst encodes; older ``u1/u2/u3`` snapshots, the one-qubit fake_armonk and fake_cairo, with both ``cx``
    and ``ecr``, are left out)."""

    def encodable(name: str) -> bool:
        basis = set(device_basis(name))
        return set(ONE_QUBIT_GATES) <= basis and len(basis & set(TWO_QUBIT_GATES)) == 1

    return tuple(n for n in device_names() if encodable(n))


@dataclass(frozen=True, kw_only=True)
class QuestConfig(Config):
    """``generate``: simulate and cache the dataset; ``train``: train QuEst and both baselines, save a checkpoint;
    ``evaluate``: a checkpoint's held-out metrics and its speed against simulation; ``predict``: one circuit."""

    mode: str = param("evaluate", choices=MODES, help="what to do")
    qasm: str = param("", help="predict: OpenQASM 2 or 3 file of the circuit")
    device: str = param(
        "fake_lima",
        choices=quest_devices(),
        help="predict: device snapshot whose gates are rz, sx, x and one of cx, ecr, cz",
    )
    noise_scale: float = param(1.0, lo=0.0, hi=64.0, help="predict: gate and readout errors x this (T1/T2 kept)")
    simulate: bool = param(False, help="predict: also simulate the PST with qiskit-aer")
    checkpoint: str = param(
        "",
        help="checkpoint file (default: the one shipped with the workbench); train "
        "writes it, default <cache>/quest/checkpoint-<dataset key>.pt",
    )
    random_samples: int = param(4000, lo=0, hi=200_000, unit="samples", help="random-circuit samples")
    algorithm_samples: int = param(
        1600, lo=0, hi=100_000, unit="samples", help="algorithm-circuit samples (GHZ, QFT, Grover, BV, QAOA, HEA)"
    )
    noise_draws: int = param(8, lo=1, hi=350, help="noise draws (levels) per algorithm circuit")
    scale_log2_max: float = param(3.0, lo=-3.0, hi=6.0, help="algorithm noise levels 2**U(-3, this)")
    duration_log2_max: float = param(
        6.0, lo=0.0, hi=8.0, help="half the noise draws stretch gate durations by 2**U(0, this) (0: never)"
    )
    fidelity_fraction: float = param(
        0.1, lo=0.0, hi=1.0, help="share of <=4-qubit samples that also get the density-matrix fidelity"
    )
    seed: int = param(42, lo=0, hi=2**31 - 1, help="dataset and split seed")
    workers: int = param(2, lo=1, hi=256, unit="processes", help="generate/train: simulation processes")
    epochs: int = param(300, lo=1, hi=10_000, help="train: most epochs (early stopping on validation RMSE)")
    patience: int = param(
        30, lo=1, hi=10_000, unit="epochs", help="train: stop after this many epochs without a better validation RMSE"
    )
    batch_size: int = param(128, lo=1, hi=100_000, unit="circuits", help="train: mini-batch size")
    lr: float = param(5e-4, lo=1e-6, hi=1.0, help="train: Adam learning rate")
    layers: int = param(2, lo=1, hi=6, help="train: TransformerConv layers")
    speed_circuits: int = param(
        64, lo=1, hi=10_000, unit="circuits", help="evaluate: circuits of the prediction-vs-simulation timing"
    )

    def check_combination(self) -> None:
        if self.random_samples + self.algorithm_samples == 0:
            raise ValueError("random_samples=0 and algorithm_samples=0: valid datasets have at least one sample")
        if self.mode == "predict" and not self.qasm:
            raise ValueError("qasm='' : predict mode needs --qasm FILE (OpenQASM 2 or 3)")
