"""Parameters of QGAS (``workbench run qgas ...``): problem, proposer, iterations, budget, training, noise."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import Device, get_device
from workbench.quantum.qgas.prompt import GUIDELINES

PROBLEM_CHOICES = ("lih", "h2", "maxcut", "portfolio")
#: local (default, deterministic), replay (a logged transcript), endpoint (an OpenAI-compatible chat URL),
#: and the two baselines run through the same loop: random and evolutionary search
PROPOSERS = ("local", "replay", "endpoint", "random", "evolutionary")
#: the study's default search settings (the notebook and the panel): small enough for a laptop
STUDY = dict(iterations=12, train_steps=20, restarts=2, device="fake_jakarta")
SEARCHERS = ("local", "random", "evolutionary")


@dataclass(frozen=True, kw_only=True)
class QgasConfig(Config):
    """One ansatz search: ``iterations`` proposals, each parsed, validated, trained and scored."""

    problem: str = param("lih", choices=PROBLEM_CHOICES, help="problem: LiH or H2 ground state, MaxCut, portfolio")
    bond_length: float = param(
        0.0,
        lo=0.0,
        hi=5.0,
        unit="angstrom",
        help="lih/h2 bond length, one of the shipped ones (0 = default: lih 1.595, h2 0.735)",
    )
    proposer: str = param(
        "local",
        choices=PROPOSERS,
        help="who proposes ansaetze: local (grammar mutations from the feedback), replay (a logged transcript), "
        "endpoint (an OpenAI-compatible chat URL), random or evolutionary (baselines)",
    )
    iterations: int = param(12, lo=1, hi=200, unit="proposals", help="number of proposals (loop iterations)")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the proposer and of training restarts")
    guideline: str = param("none", choices=tuple(GUIDELINES), help="scripted human guideline added to every prompt")
    max_depth: int = param(40, lo=1, hi=400, unit="layers", label="max depth", help="validation: circuit depth budget")
    max_cnots: int = param(
        24, lo=0, hi=400, unit="CNOTs", label="max CNOTs", help="validation: CNOT-equivalent budget (swap = 3, cr* = 2)"
    )
    max_params: int = param(
        32, lo=1, hi=256, unit="params", label="max parameters", help="validation: parameter budget"
    )
    train_steps: int = param(30, lo=1, hi=500, unit="L-BFGS steps", help="training: L-BFGS outer iterations per ansatz")
    restarts: int = param(3, lo=1, hi=16, help="training: parameter restarts per ansatz (restart 0 at zero)")
    device: str = param(
        "none",
        help="device snapshot whose calibrated noise every valid proposal is also scored under "
        "(e.g. fake_jakarta; none: noiseless only)",
    )
    shots: int = param(
        0,
        lo=0,
        hi=10**7,
        unit="shots",
        help="noisy score (with a device): shots per Pauli measurement setting, sampled and counted on the "
        "device machine; 0 = the exact expectation",
    )
    replay: str = param("", help="proposer replay: path of the transcript JSON to re-run")
    transcript: str = param("", help="where to write the transcript JSON ('' = the qgas cache folder)")
    endpoint_url: str = param(
        "", help="proposer endpoint: base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1"
    )
    endpoint_model: str = param("gpt-4", help="proposer endpoint: model name")
    api_key_env: str = param("OPENAI_API_KEY", help="proposer endpoint: environment variable holding the API key")
    timeout_s: float = param(60.0, lo=0.1, hi=600.0, unit="s", help="proposer endpoint: timeout per request")

    def check_combination(self) -> None:
        if self.bond_length:
            from workbench.quantum.molecules import bond_lengths

            if self.problem not in ("lih", "h2"):
                raise ValueError(
                    f"bond_length={self.bond_length:g} applies to lih and h2 only: use 0 for {self.problem}"
                )
            valid = bond_lengths(self.problem)
            if not any(abs(self.bond_length - b) < 1e-9 for b in valid):
                raise ValueError(
                    f"bond_length={self.bond_length:g} is not allowed for {self.problem}: valid values are 0, "
                    + ", ".join(f"{b:g}" for b in valid)
                )
        if self.proposer == "replay" and not self.replay:
            raise ValueError("proposer='replay' needs replay=PATH: the transcript JSON to re-run")
        if self.proposer == "endpoint" and not self.endpoint_url:
            raise ValueError("proposer='endpoint' needs endpoint_url=URL (an OpenAI-compatible base URL)")
        if self.shots and self.device == "none":
            raise ValueError(f"shots={self.shots} applies with a device only: use 0 with device='none'")
        if self.device != "none":
            from workbench.quantum.calibration import device_names

            names = device_names()
            if self.device not in names:
                raise ValueError(f"device={self.device!r} is not allowed: valid values are none, {', '.join(names)}")

    def resolved_device(self) -> Device:
        """The :class:`Device` scoring proposals (ValueError for ``device='none'``: noiseless, no device)."""
        dev = scored_device(self.device)
        if dev is None:
            raise ValueError("device='none' has no device: the noisy score needs a device snapshot")
        return dev


def scored_device(device: str) -> Device | None:
    """The :class:`Device` whose calibrated noise scores proposals, None for ``device='none'`` (noiseless only):
    the config boundary of the study's entries, which take the device's name as :class:`QgasConfig` does."""
    return None if device == "none" else get_device(device)


@dataclass(frozen=True, kw_only=True)
class QgasViewConfig(Config):
    """The panel's controls: which problem, which searcher is highlighted, which iteration is inspected."""

    problem: str = param("lih", choices=("lih", "h2", "maxcut", "portfolio"), help="problem")
    proposer: str = param("local", choices=SEARCHERS, help="the search to highlight (all are drawn)")
    iteration: int = param(
        12, lo=1, hi=200, unit="proposals", help="inspect the proposal made at this iteration and the best up to it"
    )
    iterations: int = param(STUDY["iterations"], lo=1, hi=200, unit="proposals", help="length of each search")

    def check_combination(self) -> None:
        if self.iteration > self.iterations:
            raise ValueError(
                f"iteration={self.iteration} is out of range: valid range is 1..{self.iterations} (the search length)"
            )
