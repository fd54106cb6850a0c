"""QuEst: the shipped checkpoint's graph transformer against its two baselines on held-out circuits, and
prediction against the noisy simulation that labels a circuit, side by side in one process.

Three measurements: (1) the training run's held-out split as recorded in the checkpoint (train/val/test by
circuit); (2) a fresh held-out set generated here with another seed (circuits none of the models saw), scored
now; (3) seconds per circuit of prediction vs aer on fresh random circuits, like for like (batched vs batched,
one vs one) first, other pairings below (:func:`workbench.quantum.quest.speed.speed_comparison`). Run alone: ``python -m benchmarks.quest [--quick]``.
"""

from __future__ import annotations

import logging
import time

import torch

from benchmarks.common import Section, Table
from benchmarks.machine import load_average
from workbench.quantum.device import get_device
from workbench.quantum.quest.batching import NormalizedSet
from workbench.quantum.quest.checkpoint import SHIPPED, load_checkpoint
from workbench.quantum.quest.config import SPEED_DEVICE
from workbench.quantum.quest.dataset import DatasetSpec, QuestDataset, generate
from workbench.quantum.quest.experiment import fidelity_check, targets
from workbench.quantum.quest.speed import speed_comparison, width_sweep
from workbench.quantum.quest.train import metrics_by_device, metrics_by_kind, predict_indices

log = logging.getLogger(__name__)
PAPER = "paper (abstract): RMSE 0.04, R^2 0.99 random / 0.95 algorithm; >200x faster than simulation"
FRESH_SEED = 2026


def _f(x: float, fmt: str = ".4f") -> str:
    return "-" if x != x else format(x, fmt)


def _metric_rows(metric: dict, source: str) -> list[tuple[str, ...]]:
    rows = []
    for model, by_kind in metric.items():
        for kind in ("random", "algorithm", "all") + tuple(k for k in by_kind if "/" in k):
            m = by_kind[kind]
            rows.append((source, model, kind, str(m["n"]), _f(m["rmse"]), _f(m["mae"]), _f(m["r2"]), _f(m["spearman"])))
    return rows


def _fresh_set(ckpt, quick: bool) -> tuple[QuestDataset, dict, float]:
    """A fresh held-out set (another seed), every model's metrics on it, and its generation seconds."""
    spec = DatasetSpec(
        random_samples=16 if quick else 400,
        algorithm_samples=8 if quick else 240,
        noise_draws=ckpt.spec.noise_draws,
        scale_log2_max=ckpt.spec.scale_log2_max,
        fidelity_fraction=ckpt.spec.fidelity_fraction,
        seed=FRESH_SEED,
    )
    log.info("quest: fresh held-out set (%d samples)", spec.random_samples + spec.algorithm_samples)
    start = time.perf_counter()
    fresh = generate(spec, workers=1 if quick else 2)  # quick: 24 samples, not worth two processes
    gen_seconds = time.perf_counter() - start
    normed = NormalizedSet.build(fresh, ckpt.normalizer)
    every = torch.arange(len(fresh))
    measured = {}
    for name, model in ckpt.models.items():
        pred = predict_indices(model, normed, every)
        measured[name] = {**metrics_by_kind(pred, fresh, every), **metrics_by_device(pred, fresh, every)}
    return fresh, measured, gen_seconds


def _width_rows(ckpt, quick: bool) -> list[dict]:
    """Batched aer vs batched QuEst at fixed widths (:func:`~workbench.quantum.quest.speed.width_sweep`)."""
    plan = ((5, 2), (8, 2)) if quick else ((5, 4), (8, 4), (10, 2), (12, 1))
    rows = [width_sweep(ckpt, (w,), count=n, device=get_device("fake_guadalupe"))[0] for w, n in plan]
    encodable = [r for r in rows if r["predict"] is not None]
    for r in rows:  # past the encoding: QuEst's side is its cost at the widest width it encodes (projected)
        if r["predict"] is None:
            top = encodable[-1]
            r.update(projected_from=top["width"], speedup_projected=r["aer"] / top["predict"],
                     speedup_cpu_projected=r["aer_cpu"] / top["predict_cpu"])  # fmt: skip
    return rows


def _speedups(r: dict) -> tuple[str, str]:
    if r["speedup"] is not None:
        return f"{r['speedup']:.1f}x", f"{r['speedup_cpu']:.1f}x"
    note = f" (projected: QuEst at {r['projected_from']} qubits)"
    return f"{r['speedup_projected']:.1f}x{note}", f"{r['speedup_cpu_projected']:.1f}x{note}"


def _width_table(rows: list[dict]) -> Table:
    return Table(
        headers=("width (50 gates)", "circuits", "aer ms per circuit", "QuEst ms per circuit", "speed-up (wall)",
                 "speed-up (CPU)"),
        rows=tuple(
            (str(r["width"]), str(r["circuits"]), f"{r['aer'] * 1e3:.1f}",
             f"{r['predict'] * 1e3:.3f}" if r["predict"] is not None else "not encodable (> 10 qubits)",
             *_speedups(r))
            for r in rows
        ),
    )  # fmt: skip


def _speed_table(speed: dict) -> Table:
    """Every pairing, then every path's seconds per circuit."""
    per = speed["seconds_per_circuit"]
    names = {
        "aer_batched": f"aer batched: shared noise model, one run over the list ({speed['aer_method']})",
        "aer_batched_density_matrix": "aer batched, density matrix (exact), experiments in parallel",
        "aer_batched_density_matrix_serial": "aer batched, density matrix (exact), one after another",
        "aer_batched_statevector_shots": f"aer batched, statevector, {speed['shots']} shots",
        "aer_single": "aer one circuit per run (shared noise model)",
        "labelling_single": "aer labelling: noise model per circuit + one run each",
        "predict_batched": "QuEst: encode + transformer, batched",
        "predict_single": "QuEst: encode + transformer, one circuit at a time",
    }
    return Table(
        headers=("pairing (aer path / QuEst path)", "aer ms per circuit", "QuEst ms per circuit", "speed-up"),
        rows=tuple(
            (p["pairing"], f"{per[p['aer']] * 1e3:.3f}", f"{per[p['quest']] * 1e3:.3f}", f"{p['speedup']:.1f}x")
            for p in speed["pairings"]
        )
        + tuple(
            (
                f"path: {names[k]}",
                f"{per[k] * 1e3:.3f}" if k.startswith(("aer", "label")) else "",
                f"{per[k] * 1e3:.3f}" if k.startswith("predict") else "",
                "",
            )
            for k in names
        ),
    )


def _summary(recorded: dict, speed: dict, rank: dict) -> tuple[tuple[str, str], ...]:
    ratio = speed["speedup_like_for_like"]
    return (
        (
            "QuEst random circuits RMSE / R^2 (held out)",
            f"{_f(recorded['transformer']['random']['rmse'])} / {_f(recorded['transformer']['random']['r2'])}",
        ),
        ("QuEst algorithm circuits R^2 (held out)", _f(recorded["transformer"]["algorithm"]["r2"])),
        (
            "QuEst RMSE: transformer / global MLP / Liu MLP (held out, all)",
            " / ".join(_f(recorded[m]["all"]["rmse"]) for m in ("transformer", "global", "liu")),
        ),
        (
            "QuEst ablation: RMSE without the noise node features (held out, all)",
            _f(recorded["no-noise"]["all"]["rmse"]) if "no-noise" in recorded else "-",
        ),
        ("QuEst prediction speed-up vs aer, like for like (batched vs batched)", f"{ratio:.1f}x"),
        ("QuEst prediction speed-up vs aer, one vs one", f"{speed['speedup_one_vs_one']:.1f}x"),
        (
            "QuEst prediction speed-up vs aer in CPU seconds: batched / one vs one",
            f"{speed['speedup_like_for_like_cpu']:.1f}x / {speed['speedup_one_vs_one_cpu']:.1f}x",
        ),
        ("QuEst PST vs fidelity Spearman", _f(rank.get("spearman", float("nan")))),
    )


def run(*, quick: bool) -> Section:
    ckpt = load_checkpoint()
    recorded = ckpt.metrics
    fresh, measured, gen_seconds = _fresh_set(ckpt, quick)
    log.info("quest: speed")
    speed = speed_comparison(ckpt, count=8 if quick else 128, device=get_device(SPEED_DEVICE))
    log.info("quest: speed against width")
    widths = _width_rows(ckpt, quick)

    metric_table = Table(
        headers=("set", "model", "kind", "n", "RMSE", "MAE", "R^2", "Spearman"),
        rows=tuple(_metric_rows(recorded, "training run's test split") + _metric_rows(measured, "fresh set (now)")),
    )
    target_rows = [(t["target"], _f(t["value"]), "met" if t["met"] else "NOT met") for t in targets(recorded)]
    target_rows += [
        (f"{t['target']} (fresh set)", _f(t["value"]), "met" if t["met"] else "NOT met") for t in targets(measured)
    ]
    ratio = speed["speedup_like_for_like"]
    target_rows.append(
        (
            f"prediction >= {speed['goal']:.0f}x faster than aer, like for like (batched vs batched)",
            f"{ratio:.1f}x",
            "met" if speed["goal_met"] else "NOT met",
        )
    )
    target_table = Table(headers=("target (issue)", "value", "verdict"), rows=tuple(target_rows))
    speed_table = _speed_table(speed)
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
        f"Speed, like for like: {speed['circuits']} fresh random circuits (1-5 qubits, 10-500 gates) on one 5-qubit "
        f"piece of {speed['device']} under one shared noise draw; the headline pairs aer batched (one noise model, "
        f"one run over the list, the faster method) with QuEst batched: {ratio:.1f}x, one vs one "
        f"{speed['speedup_one_vs_one']:.1f}x; the >= {speed['goal']:.0f}x goal is "
        f"{'met' if speed['goal_met'] else 'NOT met'}. In CPU seconds (the process, all threads): "
        f"{speed['speedup_like_for_like_cpu']:.1f}x batched, {speed['speedup_one_vs_one_cpu']:.1f}x one vs one. "
        "The batch encoder and the module-call-free forward pass (issue 11), measured back to back against "
        "the code before them on a quiet machine (load 1, 128 circuits, ms per circuit, encoding version 2): "
        "QuEst batched 0.240 -> 0.123, one at a time 0.569 -> 0.518, against aer's 3.42 batched: 14x -> 28x "
        "batched, about 22x -> 25x one vs one; of the 0.12 ms the forward pass alone took 0.042, more than the "
        "0.034 ms that 100x would allow, so >= 100x is out of reach for this model on this CPU. Encoding version 3 "
        "adds each circuit's echo costs (rz angles read from qiskit, the ideal statevector simulated in a compiled "
        "loop): the price of the accuracy on slow-gate devices (wall ratios also move with the load: aer's "
        "density-matrix run slows down more than QuEst on a busy machine)."
        " The other pairings are listed below the first two rows of the "
        "speed table (the former 171x headline was the labelling path, a noise model built per circuit, against "
        f"batched prediction). RMSE of the batched predictions against the exact PST: "
        f"{speed['rmse_on_these_circuits']:.4f}.",
        "Speed against width: batched aer (density matrix, the labels' method; noise model built inside the "
        "timing) vs batched QuEst on circuits of exactly w qubits and 50 gates, one noise draw of a connected piece "
        "of fake_guadalupe: "
        + ", ".join(f"{r['width']} qubits " + "{} (CPU {})".format(*_speedups(r)) for r in widths)
        + ". aer's density matrix grows as 4^w while the predictor's cost follows the gate count; QuEst's encoding "
        "holds at most 10 qubits, so past it aer alone is timed and the ratio takes QuEst's cost at 10 qubits "
        "(projected, labelled).",
        f"Load average at the end: {load_average()} (2 shared cores).",
    )
    summary = _summary(recorded, speed, rank)
    return Section(
        title="QuEst: circuit reliability prediction vs baselines and vs simulation",
        intro=intro,
        tables=(target_table, metric_table, speed_table, _width_table(widths)),
        notes=notes,
        summary=summary,
        data={
            "recorded": recorded,
            "fresh": measured,
            "speed": speed,
            "width_sweep": widths,
            # the wall-clock figures the claims cite (workbench.quantum.quest.claims; recorded by a full run)
            "claims": {
                "quest.speedup_like_for_like": ratio,
                "quest.speedup_one_vs_one": speed["speedup_one_vs_one"],
                **{f"quest.speedup_width_{r['width']}": r["speedup"] for r in widths if r["speedup"] is not None},
                **{
                    f"quest.speedup_width_{r['width']}_projected": r["speedup_projected"]
                    for r in widths
                    if r["speedup"] is None
                },
            },
        },
    )


if __name__ == "__main__":
    import sys

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    print(run(quick="--quick" in sys.argv).markdown())
