"""Parameters of ``workbench run quest``: generate the dataset, train the models, evaluate a checkpoint, or
predict one circuit's PST (OpenQASM 2/3 file + device)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.calibration import device_basis, device_names
from workbench.quantum.device import Device, OnDevice, get_device
from workbench.quantum.quest.dataset import FAMILIES, FAMILY_WIDTHS, GATE_COUNTS
from workbench.quantum.quest.encoding import ONE_QUBIT_GATES, TWO_QUBIT_GATES

__all__ = [
    "MODES",
    "quest_devices",
    "check_device",
    "QuestConfig",
    "NOISE_MODELS",
    "SCALES",
    "MAX_WIDTH",
    "MIRROR_REPS",
    "QUBIT_COLORS",
    "width_range",
    "QuestViewConfig",
    "SPEED_DEVICE",
]

MODES = ("generate", "train", "evaluate", "predict")
#: evaluate: the device of the prediction-vs-simulation timing (5 qubits, in the data set; fixed)
SPEED_DEVICE = "fake_lima"


@functools.lru_cache(maxsize=1)
def quest_devices() -> tuple[str, ...]:
    """Device snapshots whose basis holds ``rz, sx, x`` and one two-qubit gate among ``cx``, ``ecr``, ``cz`` (the
    gates QuEst encodes; older ``u1/u2/u3`` snapshots, the one-qubit fake_armonk and fake_cairo, with both ``cx``
    and ``ecr``, are left out)."""

    def encodable(name: str) -> bool:
        basis = set(device_basis(name))
        return set(ONE_QUBIT_GATES) <= basis and len(basis & set(TWO_QUBIT_GATES)) == 1

    return tuple(n for n in device_names() if encodable(n))


def check_device(device: str) -> None:
    """Raise ValueError unless ``device`` is a snapshot whose basis holds ``rz, sx, x`` and exactly one two-qubit
    gate among ``cx, ecr, cz`` (the gates QuEst encodes)."""
    basis = device_basis(device)  # ValueError naming the valid devices for an unknown name
    missing = [g for g in ONE_QUBIT_GATES if g not in basis]
    two = [g for g in TWO_QUBIT_GATES if g in basis]
    if missing or len(two) != 1:
        shown = ", ".join(sorted(set(basis) - {"measure", "reset", "delay"}))
        why = f"no {', '.join(missing)}" if missing else f"{len(two)} of {', '.join(TWO_QUBIT_GATES)}"
        raise ValueError(
            f"device={device!r} has {why} among its basis gates ({shown}): QuEst encodes devices "
            f"with {', '.join(ONE_QUBIT_GATES)} and one of {', '.join(TWO_QUBIT_GATES)}, e.g. "
            "fake_lima (cx), fake_brisbane (ecr), fake_fez (cz)"
        )


@dataclass(frozen=True, kw_only=True)
class QuestConfig(OnDevice, Config):
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

    def speed_device(self) -> Device:
        """evaluate: the :class:`Device` of the speed comparison (:data:`SPEED_DEVICE`)."""
        return get_device(SPEED_DEVICE)

    def check_combination(self) -> None:
        if self.random_samples + self.algorithm_samples == 0:
            raise ValueError("random_samples=0 and algorithm_samples=0: valid datasets have at least one sample")
        if self.mode == "predict" and not self.qasm:
            raise ValueError("qasm='' : predict mode needs --qasm FILE (OpenQASM 2 or 3)")


# ---- the panel's view (the study's parameters) ----------------------------------------------------------------
NOISE_MODELS = ("calibrated", "randomized")
SCALES = (0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)  # the dataset's levels span 2**-3..2**3
#: the dataset's widest circuits (algorithms on the 7-qubit devices)
MAX_WIDTH = max(max(widths) for widths in FAMILY_WIDTHS.values())
MIRROR_REPS = (1, 2, 3, 4, 5, 6)
#: what the coupling map's qubits are coloured by (a display choice: it does not enter the view)
QUBIT_COLORS = ("readout error", "T1")


def width_range(family: str, num_qubits: int) -> tuple[int, int]:
    """Valid widths of ``family`` on a device of ``num_qubits`` qubits (capped at :data:`MAX_WIDTH`)."""
    lo, hi = (1, MAX_WIDTH) if family == "random" else (min(FAMILY_WIDTHS[family]), max(FAMILY_WIDTHS[family]))
    return lo, min(hi, num_qubits, MAX_WIDTH)


@dataclass(frozen=True, kw_only=True)
class QuestViewConfig(OnDevice, Config):
    """The view's parameters (the panel's controls); ``QuestConfig`` is the CLI's (generate / train / evaluate /
    predict)."""

    device: str = param(
        "fake_lima", choices=device_names(), label="device", help="device snapshot (cx, ecr or cz basis)"
    )
    noise_model: str = param(
        "calibrated",
        choices=NOISE_MODELS,
        label="noise",
        help="calibrated: the snapshot as it is; randomized: one QuEst noise draw of the "
        "device (every T1, T2, gate and readout error x U(0.5, 1.5), from the seed)",
    )
    noise_scale: float = param(
        1.0,
        lo=SCALES[0],
        hi=SCALES[-1],
        unit="x errors",
        label="noise scale",
        help="gate and readout errors x this (T1/T2 kept)",
    )
    family: str = param("qft", choices=FAMILIES, label="circuit family", help="random device circuit or an algorithm")
    width: int = param(3, lo=1, hi=MAX_WIDTH, unit="qubits", label="width", help="circuit width")
    depth: int = param(
        1,
        lo=1,
        hi=max(GATE_COUNTS),
        label="depth",
        help="random: number of gates; algorithms: mirror repetitions U (U^dag U)^(depth-1)",
    )
    seed: int = param(
        0, lo=0, hi=99, label="seed", help="random circuit / algorithm choices, transpiler and noise draw"
    )
    qubit_color: str = param(
        "readout error", choices=QUBIT_COLORS, label="colour qubits by", help="coupling map: colour qubits by"
    )
    checkpoint: str = param("", label="checkpoint", help="checkpoint file (default: the shipped one)")

    def check_combination(self) -> None:
        check_device(self.device)
        cal = self.resolved_device().calibration
        lo, hi = width_range(self.family, cal.num_qubits)
        if not lo <= self.width <= hi:
            why = (
                "Grover's multi-controlled gates grow too fast past 5 qubits"
                if self.family == "grover" and self.width <= cal.num_qubits
                else f"{self.device} has {cal.num_qubits} qubits"
            )
            raise ValueError(
                f"width={self.width} is out of range for family={self.family!r} on {self.device}: "
                f"valid widths are {lo}..{hi} ({why})"
            )
        if self.family != "random" and self.depth > max(MIRROR_REPS):
            raise ValueError(
                f"depth={self.depth} is out of range for family={self.family!r}: valid mirror "
                f"repetitions are 1..{max(MIRROR_REPS)} (depth counts gates only for random circuits)"
            )
