"""Headless runner of Redox: ``workbench run redox --mode check --records N --chunk-kb C --resident K --workers P
--json``.

check: read the dataset at ``--root`` (or write it into a new folder), serve one cold epoch with Redox and with
every baseline (block shuffle at the same K chunks first) through a real ``DataLoader`` (bytes from
``/proc/self/io``), run the distributed protocol on P gloo processes, and check that every loader served each
record exactly once and that Redox read each chunk once. The storage model (MODEL), calibrated on this run's cold
reads, carries the epoch to the chosen storage kind. generate: write the dataset only (a progress bar for big
ones). pack: pack a folder of files into a dataset. A dataset is written only into a folder the command creates,
or into an existing ``--root`` with ``--generate`` (:mod:`workbench.llm.redox.experiment`).
"""

from __future__ import annotations

from typing import Any

from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.experiment import Progress, RedoxResult, execute
from workbench.registry import Technique
from workbench.results import fmt, fmt_bytes, fmt_seconds

__all__ = ["TECHNIQUE", "RedoxResult", "format_table", "run"]


def run(config: RedoxConfig, *, progress: Progress | None = None) -> RedoxResult:
    """Run ``config.mode`` (module docstring; :func:`workbench.llm.redox.experiment.execute`).
    ``progress(done, total, what)`` is called per loader (panels).

    Raises ValueError (bad parameters, an existing ``--root`` without a dataset and without ``--generate``, a
    dataset that disagrees with its index), FileNotFoundError (missing files), TruncatedFileError (a cut-short or
    damaged file), WorkerFailed/WorkerTimeout (a killed or stuck process).
    """
    return execute(config, progress)


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    d = result["dataset"]
    lines = [
        f"redox  {result['mode']}: {d['records']} records ({d['sizes']}, mean {fmt_bytes(d['mean_record_bytes'])}, "
        f"max {fmt_bytes(d['max_record_bytes'])}) in {d['chunks']} chunks of <= {fmt_bytes(d['chunk_bytes'])} "
        f"({fmt_bytes(d['total_bytes'])}) at {d['root']}",
        f"  {result['message']}",
    ]
    if result["loaders"]:
        lines.append(
            f"  K={result['resident']} resident chunks, batch {result['batch']}; bytes from {result['bytes_source']}"
        )
        lines.append(
            f"  {'loader':<18} {'read':>9} {'ampl.':>6} {'items/s':>9} {'1st batch':>9} {'KL':>6} "
            f"{'KL tail':>7} {'rho disk':>8}"
        )
        for r in result["loaders"]:
            lines.append(
                f"  {r['name']:<18} {fmt_bytes(r['bytes_read']):>9} {r['read_amplification']:>6.2f} "
                f"{fmt(r['items_per_s'], 3):>9} {fmt_seconds(r['time_to_first_batch_s']):>9} {r['label_kl']:>6.3f} "
                f"{r['label_kl_tail']:>7.3f} {r['disk_order_spearman']:>8.3f}"
            )
    dist = result.get("distributed")
    if dist:
        lines.append(
            f"  distributed: {dist['processes']} processes, {dist['steps']} steps, exactly once "
            f"{str(dist['exactly_once']).lower()}, chunks once {str(dist['chunks_read_once']).lower()}, "
            f"{dist['remote_records']} records served remotely ({fmt_bytes(dist['comm_bytes'])} over gloo)"
        )
    model = result.get("model")
    if model:
        lines.append(
            f"  MODEL on {model['storage']}: Redox I/O {model['speedup_redox_vs_random_files']:.2f}x faster than "
            f"random file reads, {model['speedup_redox_vs_block_shuffle']:.2f}x than block shuffle (this machine "
            f"fitted: {fmt_seconds(model['this_machine_latency_s'])} + "
            f"{fmt_bytes(model['this_machine_bandwidth_bytes_per_s'])}/s)"
        )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="redox",
    config=RedoxConfig,
    run=run,
    format_table=format_table,
    panel="widgets.llm.redox:RedoxPanel",
    notebook="notebooks/llm/redox.ipynb",
    smoke={"records": 240, "record_kb": 4.0, "chunk_kb": 48.0, "resident": 2, "workers": 2, "batch": 16},
    processes=True,
)
