"""The closed-form byte model: bytes read and written per iteration by tensor class, for any L, M and sizes.

Entries ``e`` of ``n_e`` elements (embedding, L blocks, head; :func:`~.schedule.unit_entries`), of which ``a_e``
are deferred (alpha part, vertical-overlap, loaded entries only). Units ``u = 0..U-1`` load entry ``e(u)`` of
``b_u`` elements from disk: in the ``offloaded`` layout every entry (U = L + 2), in ``flextrain`` the blocks
(U = L; embedding and head resident on the device, ``R = n_0 + n_{L+1}``). ``M`` micro-batches, one inter-layer
tensor (micro-batch x sequence x hidden, compute dtype) of ``X`` bytes, ``S = sum_{u<U-1} b_u``, ``B = sum b_u``.
Widths per element: ``w`` (compute copy), ``g`` (gradient accumulator), ``o`` (master weights + Adam m + v).
Per iteration:

- weights read: horizontal ``w (M (2 S + b_{U-1}) - (M-1) b_0)`` (every micro-batch reads every unit twice,
  the fused last unit once; unit 0 stays loaded from one micro-batch's backward to the next's forward);
  vertical ``w (2 S + b_{U-1})``, independent of M.
- optimizer: read ``o sum n_e``, written ``o sum n_e`` plus the new compute copy of the loaded entries ``w B``
  (weights class; a resident entry's goes to the device).
- gradients: horizontal ``g M B`` written and read (partial sums of the loaded entries swapped per micro-batch,
  read back by the optimizer; ``g B`` when U = 1: one run holds every task; resident entries accumulate on the
  device); vertical none; vertical-overlap ``g sum a_e`` written (the deferred part's gradient) and read by the
  next iteration (or the final flush).
- checkpoints (inter-layer tensors written to the checkpoint tier only when not consumed by the very next task):
  horizontal ``M (U-2) X`` written and read; vertical written ``((U-2) M + (M-1) + (U-1)(M-1)) X``, read
  ``((U-2) M + 2 (U-1)(M-1)) X`` (layer inputs for the next unit and the recompute, the last unit's input, and
  activation gradients; the snake keeps one of each per unit boundary on the device); none when U = 1.

The engine's counters equal these numbers exactly (tests/llm/greedysnake/test_greedysnake_bytes.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.llm.greedysnake.schedule import resident_entries, unit_entries

__all__ = ["iteration_bytes", "run_bytes", "init_bytes"]


def _key(tier: str, cls: str, d: str) -> tuple[str, str, str]:
    return (tier, cls, d)


def iteration_bytes(
    sizes: Sequence[int],
    *,
    micro_batches: int,
    schedule: str,
    inter_bytes: int,
    w: int,
    g: int,
    o: int,
    deferred: Sequence[int] | None = None,
    checkpoints: str = "host",
    pending_in: bool = False,
    layout: str = "offloaded",
) -> dict[tuple[str, str, str], int]:
    """Bytes of one iteration by (tier, class, direction); ``sizes``: the entries' (embedding, blocks, head);
    ``pending_in``: a deferred part is applied in it.

    Optimizer bytes of the deferred part are counted where the step runs: in the next iteration
    (``pending_in``) or the final flush (:func:`run_bytes`).
    """
    if len(sizes) < 3 or micro_batches < 1:
        raise ValueError(
            f"entries={len(sizes)}, micro_batches={micro_batches} are out of range: valid ranges are >= 3 and >= 1"
        )
    loaded = [sizes[off] for _, off in unit_entries(len(sizes) - 2, layout)]
    resident = resident_entries(len(sizes) - 2, layout)
    U, M = len(loaded), micro_batches
    n_total, S, B = sum(sizes), sum(loaded[:-1]), sum(loaded)
    a = list(deferred) if deferred is not None and schedule == "vertical-overlap" else [0] * len(sizes)
    a_total = sum(a)
    out = {_key(t, c, d): 0 for t in ("ssd", "host") for c in ("weights", "gradients", "optimizer", "checkpoints")
           for d in ("read", "written")}  # fmt: skip
    if schedule == "horizontal":
        out[_key("ssd", "weights", "read")] = w * (M * (2 * S + loaded[-1]) - (M - 1) * loaded[0])
        out[_key("ssd", "gradients", "written")] = g * (M if U > 1 else 1) * B
        out[_key("ssd", "gradients", "read")] = g * (M if U > 1 else 1) * B
        ck_w = ck_r = M * max(U - 2, 0) * inter_bytes
    elif schedule in ("vertical", "vertical-overlap"):
        out[_key("ssd", "weights", "read")] = w * (2 * S + loaded[-1])
        out[_key("ssd", "gradients", "written")] = g * a_total
        ck_w = ((U - 2) * M + (M - 1) + (U - 1) * (M - 1)) * inter_bytes if U > 1 else 0
        ck_r = ((U - 2) * M + 2 * (U - 1) * (M - 1)) * inter_bytes if U > 1 else 0
    else:
        raise ValueError(
            f"schedule={schedule!r} is not supported: valid values are horizontal, vertical, vertical-overlap"
        )
    stepped = n_total - a_total + (a_total if pending_in else 0)
    out[_key("ssd", "optimizer", "read")] = o * stepped
    out[_key("ssd", "optimizer", "written")] = o * stepped
    out[_key("ssd", "weights", "written")] = w * (stepped - sum(sizes[e] for e in resident))
    if pending_in:
        out[_key("ssd", "gradients", "read")] += g * a_total
    out[_key(checkpoints, "checkpoints", "written")] = ck_w
    out[_key(checkpoints, "checkpoints", "read")] = ck_r
    return out


def run_bytes(
    sizes: Sequence[int],
    *,
    steps: int,
    micro_batches: int,
    schedule: str,
    inter_bytes: int,
    w: int,
    g: int,
    o: int,
    deferred: Sequence[int] | None = None,
    checkpoints: str = "host",
    layout: str = "offloaded",
) -> dict[tuple[str, str, str], int]:
    """Bytes of ``steps`` iterations from a fresh state plus the final flush of the deferred parts."""
    total: dict[tuple[str, str, str], int] = {}
    has_deferred = schedule == "vertical-overlap" and deferred is not None and sum(deferred) > 0
    for i in range(steps):
        it = iteration_bytes(
            sizes, micro_batches=micro_batches, schedule=schedule, inter_bytes=inter_bytes, w=w, g=g, o=o,
            deferred=deferred, checkpoints=checkpoints, pending_in=has_deferred and i > 0, layout=layout,
        )  # fmt: skip
        for k, v in it.items():
            total[k] = total.get(k, 0) + v
    if has_deferred and steps > 0:  # the flush: the last iteration's deferred parts
        a_total = sum(deferred)
        total[_key("ssd", "gradients", "read")] += g * a_total
        total[_key("ssd", "optimizer", "read")] += o * a_total
        total[_key("ssd", "optimizer", "written")] += o * a_total
        total[_key("ssd", "weights", "written")] += w * a_total
    return total


def init_bytes(sizes: Sequence[int], *, w: int, o: int, layout: str = "offloaded") -> dict[tuple[str, str, str], int]:
    """Bytes written when a run's state is created: the compute copy of every loaded entry and (master, m = 0,
    v = 0) of every entry."""
    n = sum(sizes)
    loaded = n - sum(sizes[e] for e in resident_entries(len(sizes) - 2, layout))
    return {("ssd", "weights", "written"): w * loaded, ("ssd", "optimizer", "written"): o * n}
