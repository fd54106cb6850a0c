"""QuEst: the shipped checkpoint's graph transformer against its two baselines on held-out circuits, and
prediction against the noisy simulation that labels a circuit, side by side in one process.

Three measurements: (1) the training run's held-out split as recorded in the checkpoint (train/val/test by
circuit); (2) a fresh held-out set generated here with another seed (circuits none of the models saw), scored
now; (3) seconds per circuit of prediction vs aer labelling on fresh random circuits
(:func:`workbench.quantum.quest.speed.speed_comparison`). Run alone: ``python -m benchmarks.quest [--quick]``.
"""

from __future__ import annotations

import logging
import time

import torch

from benchmarks.common import Section, Table
from benchmarks.machine import load_average
from workbench.quantum.quest.batching import NormalizedSet
from workbench.quantum.quest.checkpoint import SHIPPED, load_checkpoint
from workbench.quantum.quest.dataset import DatasetSpec, generate
from workbench.quantum.quest.speed import speed_comparison
from workbench.quantum.quest.train import metrics_by_kind, predict_indices
from workbench.quantum.quest.study import fidelity_check, targets

log = logging.getLogger(__name__)
PAPER = "paper (abstract): RMSE 0.04, R^2 0.99 random / 0.95 algorithm; >200x faster than simulation"
FRESH_SEED = 2026


def _f(x: float, fmt: str = ".4f") -> str:
    return "-" if x != x else format(x, fmt)


def _metric_rows(metric: dict, source: str) -> list[tuple[str, ...]]:
    rows = []
    for model, by_kind in metric.items():
        for kind in ("random", "algorithm", "all"):
            m = by_kind[kind]
            rows.append((source, model, kind, str(m["n"]), _f(m["rmse"]), _f(m["mae"]), _f(m["r2"]),
                         _f(m["spearman"])))
    return rows


def run(*, quick: bool) -> Section:
    ckpt = load_checkpoint()
    recorded = ckpt.metrics
    spec = DatasetSpec(random_samples=16 if quick else 400, algorithm_samples=8 if quick else 240,
                       noise_draws=ckpt.spec.noise_draws, scale_log2_max=ckpt.spec.scale_log2_max,
                       fidelity_fraction=ckpt.spec.fidelity_fraction, seed=FRESH_SEED)
    log.info("quest: fresh held-out set (%d samples)", spec.random_samples + spec.algorithm_samples)
    start = time.perf_counter()
    fresh = generate(spec, workers=2)
    gen_seconds = time.perf_counter() - start
    normed = NormalizedSet.build(fresh, ckpt.normalizer)
    every = torch.arange(len(fresh))
    measured = {name: metrics_by_kind(predict_indices(model, normed, every), fresh, every)
                for name, model in ckpt.models.items()}
    log.info("quest: speed")
    speed = speed_comparison(ckpt, count=8 if quick else 128)
    per = speed["seconds_per_circuit"]

    metric_table = Table(
        headers=("set", "model", "kind", "n", "RMSE", "MAE", "R^2", "Spearman"),
        rows=tuple(_metric_rows(recorded, "training run's test split") + _metric_rows(measured, "fresh set (now)")))
    target_rows = [(t["target"], _f(t["value"]), "met" if t["met"] else "NOT met") for t in targets(recorded)]
    target_rows += [(f"{t['target']} (fresh set)", _f(t["value"]), "met" if t["met"] else "NOT met")
                    for t in targets(measured)]
    ratio = speed["speedup_batched_vs_simulate"]
    target_rows.append(("prediction >= 100x faster than the labelling simulation", f"{ratio:.0f}x",
                        "met" if ratio >= 100 else "NOT met"))
    target_table = Table(headers=("target (issue)", "value", "verdict"), rows=tuple(target_rows))
    sim = per["simulate"]
    speed_table = Table(
        headers=("path", "ms per circuit", "labelling time / this path's time"),
        rows=(("aer labelling: noise model + echo circuit + density-matrix run", f"{sim * 1e3:.2f}", "1x"),
              ("aer density-matrix run alone (model and circuit prepared)", f"{per['aer_run'] * 1e3:.2f}",
               f"{sim / per['aer_run']:.1f}x"),
              ("QuEst: encode + transformer, batched", f"{per['predict_batched'] * 1e3:.3f}", f"{ratio:.0f}x"),
              ("QuEst: encode + transformer, one circuit at a time", f"{per['predict_single'] * 1e3:.3f}",
               f"{speed['speedup_single_vs_simulate']:.0f}x")))
    rank = ckpt.dataset.get("fidelity_check", {})
    fresh_rank = fidelity_check(fresh)
    intro = (
        f"Checkpoint `{SHIPPED.relative_to(SHIPPED.parents[4])}` (trained by `{ckpt.command}` on "
        f"{ckpt.dataset.get('samples', '?')} samples: {ckpt.dataset.get('by_kind')}). Models: QuEst's graph "
        "transformer (2 TransformerConv layers, mean pool, global-feature MLP) and the baselines of the paper "
        "(MLP on the 6 global features; Liu's MLP on per-qubit / per-pair gate counts + globals), and the ablation "
        "`no-noise` (the transformer with its T1/T2, gate-error and readout node features zeroed). Labels: PST "
        "(circuit + inverse, all-zero probability) from qiskit-aer's density matrix under each sample's randomised "
        f"device noise. The fresh set ({len(fresh)} samples, seed {FRESH_SEED}, generated in {gen_seconds:.0f} s "
        f"on 2 processes) has circuits none of the models saw. {PAPER}; our dataset is ~8x smaller than the "
        "paper's 45k samples."
    )
    notes = (
        f"PST vs density-matrix state fidelity, Spearman rank correlation: {_f(rank.get('spearman', float('nan')))} over "
        f"{rank.get('n', 0)} training-set samples with <= 4 qubits; {_f(fresh_rank['spearman'])} over "
        f"{fresh_rank['n']} fresh ones (goal >= 0.95; PST is an echo-return probability, not fidelity).",
        f"Speed: {speed['circuits']} fresh random circuits (1-5 qubits, 10-500 gates) on {speed['device']}, each "
        "with its own noise draw; RMSE of the batched predictions against the simulated PST on them: "
        f"{speed['rmse_on_these_circuits']:.4f}.",
        f"Load average at the end: {load_average()} (2 shared cores).",
    )
    summary = (
        ("QuEst random circuits RMSE / R^2 (held out)", f"{_f(recorded['transformer']['random']['rmse'])} / "
                                                        f"{_f(recorded['transformer']['random']['r2'])}"),
        ("QuEst algorithm circuits R^2 (held out)", _f(recorded["transformer"]["algorithm"]["r2"])),
        ("QuEst RMSE: transformer / global MLP / Liu MLP (held out, all)",
         " / ".join(_f(recorded[m]["all"]["rmse"]) for m in ("transformer", "global", "liu"))),
        ("QuEst ablation: RMSE without the noise node features (held out, all)",
         _f(recorded["no-noise"]["all"]["rmse"]) if "no-noise" in recorded else "-"),
        ("QuEst prediction speed-up vs aer labelling (batched)", f"{ratio:.0f}x"),
        ("QuEst PST vs fidelity Spearman", _f(rank.get("spearman", float("nan")))),
    )
    return Section(title="QuEst: circuit reliability prediction vs baselines and vs simulation", intro=intro,
                   tables=(target_table, metric_table, speed_table), notes=notes, summary=summary,
                   data={"recorded": recorded, "fresh": measured, "speed": speed})


if __name__ == "__main__":
    import sys

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    print(run(quick="--quick" in sys.argv).markdown())
