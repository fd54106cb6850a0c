"""What the NAPA panel and notebook show: the panel's view of one setting (:func:`panel_view`: energy curve, cached
runs, the ansatz's schedule envelopes) and the recorded ground-state scan (:func:`scan_view`: NAPA's error per
molecule and bond length with the evaluations it took, and the schedule each ansatz needs for chemical accuracy).

The runs themselves are :mod:`workbench.quantum.napa.experiment`'s (:func:`vqe`, :func:`baseline`, memoised and
cached on disk), re-exported here for the panel and the notebook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.experiment import VqeRun, baseline, cached, clear_caches, vqe
from workbench.quantum.napa.hamiltonians import bond_lengths, load

__all__ = [
    "NapaView",
    "KINDS",
    "SCAN_DATA",
    "VqeRun",
    "bond_lengths",
    "panel_view",
    "scan_view",
    "vqe",
    "baseline",
    "cached",
    "clear_caches",
]

KINDS = ("napa", "hea", "uccsd")  # NAPA and its two gate baselines
SCAN_DATA = "napa_scan.json"  # written by python -m workbench.quantum.napa.scan


@dataclass(frozen=True)
class NapaView:
    """What the NAPA panel draws at one setting: the molecule's exact ground energy along its shipped bond
    lengths and at the chosen one, the runs computed so far (None: not optimised yet), and the NAPA schedule's
    |envelope| per channel, one value per sample of ``dt_ns`` (``envelopes[channel][k]`` at ``times_ns[k]``): of
    the trained parameters when NAPA has run, else of the seeded initial ones."""

    config: NapaConfig
    bond_lengths: tuple[float, ...]
    curve: tuple[float, ...]
    exact: float
    runs: dict[str, VqeRun | None]
    samples: int
    dt_ns: float
    envelopes: dict[str, np.ndarray]

    @property
    def trained(self) -> bool:
        return self.runs["napa"] is not None

    @property
    def times_ns(self) -> np.ndarray:
        return np.arange(self.samples) * self.dt_ns

    @property
    def duration_ns(self) -> float:
        return self.samples * self.dt_ns

    def envelope(self, channel: str) -> np.ndarray:
        """|envelope| on ``channel`` (zeros where the schedule plays nothing on it)."""
        return self.envelopes.get(channel, np.zeros(self.samples))


def panel_view(config: NapaConfig) -> NapaView:
    """The NAPA panel's view of ``config`` (reads the run caches only: :func:`vqe` and :func:`baseline` compute)."""
    lengths = bond_lengths(config.molecule)
    runs = {kind: cached(kind, config) for kind in KINDS}
    natives = calibrated_natives(config.resolved_device(), config.control, config.target, 3)
    ansatz = PulseAnsatz(natives, config.layers, config.trainable_frequency)
    napa = runs["napa"]
    x = np.array(napa.params) if napa is not None else ansatz.initial(config.seed, scale=0.5)
    schedule = ansatz.schedule(x)
    n = schedule.duration
    envelopes: dict[str, np.ndarray] = {}
    for p in schedule.plays:
        env = envelopes.setdefault(p.channel, np.zeros(n))
        env[p.start : p.stop] += np.abs(p.samples.detach().numpy())
    return NapaView(
        config=config,
        bond_lengths=tuple(lengths),
        curve=tuple(load(config.molecule, b).exact for b in lengths),
        exact=load(config.molecule, config.bond_length).exact,
        runs=runs,
        samples=n,
        dt_ns=float(natives.device.dt),
        envelopes=envelopes,
    )


def scan_view() -> dict[str, Any]:
    """The recorded ground-state scan shipped with the package (``python -m workbench.quantum.napa.scan`` wrote
    it): ``{"command", "config", "rows": [{molecule, bond_length, error_mha, hf_error_mha, correlation, accuracy,
    evaluations, to_chemical_accuracy, duration_ns}, ...], "reach": {...}}``."""
    return json.loads(resources.files("workbench.quantum.napa").joinpath(SCAN_DATA).read_text())
