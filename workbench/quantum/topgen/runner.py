"""Headless runner of TopGen.

``workbench run topgen --task digits-4 --qubits Q --device D --json`` -> ``{"accuracy", "depth", "cx_count",
"baselines": {"hea": {...}, "quantumnas": {...}}, ...}``: TopGen's ansatz generated on D's topology, trained
with growth on our simulator, evaluated under ``snapshots`` device-noise snapshots (``accuracy`` is the mean
over them), beside a hardware-efficient ansatz and a QuantumNAS-style searched one.

``workbench run expressibility --circuit sim-1|sim-2|sim-9|QASM|FILE --qubits 4 --json`` (the alias; any
``--circuit`` does it) -> ``{"expressibility_kl", "meyer_wallach", ...}`` (Sim et al.'s descriptors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.qasm import looks_like_qasm
from workbench.quantum.topgen.config import TopgenConfig
from workbench.quantum.topgen.experiment import (
    MethodOutcome,
    TaskOutcome,
    accuracy_gain,
    circuit_descriptors,
    ratios,
    run_task,
)
from workbench.quantum.topgen.expressibility import idle_kl
from workbench.registry import Technique
from workbench.results import Result, fmt, to_plain

__all__ = ["ExpressibilityResult", "MethodOutcome", "TopgenResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class ExpressibilityResult(Result):
    """A circuit's descriptors: KL to Haar (nats, lower = more expressive; ``idle_kl`` is the upper end) and
    the mean (and spread) of the Meyer-Wallach measure, with the sample sizes."""

    expressibility_kl: float
    meyer_wallach: float
    meyer_wallach_std: float
    circuit: str
    qubits: int
    layers: int
    num_parameters: int
    pairs: int
    bins: int
    seed: int
    idle_kl: float


@dataclass(frozen=True, kw_only=True)
class TopgenResult(Result):
    """The task run: the experiment's :class:`~workbench.quantum.topgen.experiment.TaskOutcome` (``outcome``, the
    object the study and the panel show too) for ``task`` on ``qubits`` qubits of ``device``.

    :meth:`to_json` is what ``--json`` prints, a flat view of it: TopGen's accuracy under noise (mean over
    ``snapshots``), noiseless, per device; its depth and CNOTs on ``device`` (``cx_model``: the closed-form
    count, MODEL), SWAPs routing added (0), parameters, blocks, gradient variance; the baselines (each method's
    whole outcome), the snapshots, region/fragments/stitches/templates and growth events, and the figures the
    paper's claims compare (``ratios``: per baseline, depth and CNOT ratio baseline / TopGen and whether TopGen is
    within 0.03 of its accuracy; ``accuracy_gain``: TopGen minus the baselines' mean; the claims and their
    computed verdicts: ``workbench claims topgen``)."""

    technique: str = "topgen"
    task: str
    qubits: int
    device: str
    outcome: TaskOutcome

    def to_json(self) -> dict[str, Any]:
        rest = to_plain(self.outcome)  # TaskOutcome's fields in order, the methods' outcomes as their JSON
        own, cx_model = rest.pop("topgen"), rest.pop("cx_model")
        del rest["growth_check"], own["name"], own["val_curve"]
        out = {"technique": self.technique, "task": self.task, "qubits": self.qubits, "device": self.device}
        for key, value in own.items():  # TopGen's own figures at the top level
            out[key] = value
            if key == "cx_count":
                out["cx_model"] = cx_model  # the closed-form count (MODEL) beside the transpiled one
        out.update(rest)  # baselines, snapshots, region, fragments, stitches, templates, grown_at, removed_at
        out["ratios"] = to_plain(ratios(self.outcome))
        out["accuracy_gain"] = float(accuracy_gain(self.outcome))
        return out


def run(config: TopgenConfig) -> ExpressibilityResult | TopgenResult:
    """The task run, or with ``config.circuit`` set the circuit's descriptors. Raises ValueError for an
    unknown circuit, bad QASM, or a device narrower than ``qubits`` / ``fragment_size``."""
    if config.circuit.strip():
        d = circuit_descriptors(config.circuit, config.qubits, config.layers, config.pairs, config.bins, config.seed)
        return ExpressibilityResult(
            expressibility_kl=d.expressibility_kl,
            meyer_wallach=d.meyer_wallach,
            meyer_wallach_std=d.mw_std,
            circuit="qasm" if looks_like_qasm(config.circuit) else config.circuit.strip(),
            qubits=d.num_qubits,
            layers=config.layers,
            num_parameters=d.num_parameters,
            pairs=d.pairs,
            bins=d.bins,
            seed=d.seed,
            idle_kl=idle_kl(d.num_qubits, d.bins),
        )
    return TopgenResult(task=config.task, qubits=config.qubits, device=config.device, outcome=run_task(config))


def format_table(d: dict[str, Any]) -> str:
    """A text table of either result."""
    if "expressibility_kl" in d:
        return "\n".join(
            [
                f"circuit {d['circuit']} on {d['qubits']} qubits (L={d['layers']}, {d['num_parameters']} parameters)",
                f"  expressibility KL to Haar : {fmt(d['expressibility_kl'])} nats ({d['pairs']} pairs, {d['bins']} bins; "
                f"idle circuit {fmt(d['idle_kl'])})",
                f"  Meyer-Wallach             : {fmt(d['meyer_wallach'])} +- {fmt(d['meyer_wallach_std'])}",
            ]
        )
    rows = [("topgen", d)] + list(d["baselines"].items())
    lines = [
        f"{d['task']} on {d['qubits']} qubits of {d['device']}; noise snapshots: {', '.join(d['snapshots'])}",
        f"{'method':<12}{'acc(noisy)':>11}{'acc(ideal)':>11}{'depth':>7}{'CNOTs':>7}{'SWAPs':>7}{'params':>8}{'grad var':>10}",
    ]
    for name, m in rows:
        lines.append(
            f"{name:<12}{fmt(m['accuracy'], 3):>11}{fmt(m['accuracy_noiseless'], 3):>11}{m['depth']:>7}"
            f"{m['cx_count']:>7}{m['swaps']:>7}{m['num_parameters']:>8}{fmt(m['gradient_variance'], 3):>10}"
        )
    for name, r in d.get("ratios", {}).items():
        lines.append(
            f"  vs {name}: depth {fmt(r['depth_ratio'], 3)}x, CNOTs {fmt(r['cx_ratio'], 3)}x "
            f"({'at' if r['equal'] else 'not at'} equal accuracy, within 0.03)"
        )
    if "accuracy_gain" in d:
        lines.append(f"  accuracy over the baselines' mean: {d['accuracy_gain']:+.3f}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="topgen",
    config=TopgenConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.topgen:TopgenPanel",
    notebook="notebooks/quantum/topgen.ipynb",
    smoke={
        "qubits": 4,
        "device": "fake_lima",
        "epochs": 2,
        "max_train": 40,
        "max_test": 16,
        "candidates": 2,
        "score_pairs": 100,
        "search_epochs": 1,
        "snapshots": 3,
    },
    processes=False,
)
