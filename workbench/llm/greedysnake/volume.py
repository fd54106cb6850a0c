"""The closed-form byte model: bytes read and written per iteration by tensor class, for any L, M and sizes.

Units ``u = 0..U-1`` of ``n_u`` elements (embedding, L blocks, head), of which ``a_u`` are deferred (alpha part,
vertical-overlap only), ``M`` micro-batches, one inter-layer tensor (micro-batch x sequence x hidden) of ``X``
bytes, ``S = sum_{u<U-1} n_u``. Widths per element: ``w`` (compute copy), ``g`` (gradient), ``o`` (master
weights + Adam m + v). Per iteration:

- weights read: horizontal ``w (M (2 S + n_{U-1}) - (M-1) n_0)`` (every micro-batch reads every unit twice,
  the fused last unit once; unit 0 stays loaded from one micro-batch's backward to the next's forward);
  vertical ``w (2 S + n_{U-1})``, independent of M.
- optimizer: read ``o sum n_u``, written ``o sum n_u`` plus the new compute copy ``w sum n_u`` (weights class).
- gradients: horizontal ``g M sum n_u`` written and read (partial sums swapped per micro-batch, read back by the
  optimizer); vertical none; vertical-overlap ``g sum a_u`` written (the deferred part's gradient) and read by
  the next iteration (or the final flush).
- checkpoints (inter-layer tensors written to the checkpoint tier only when not consumed by the very next task):
  horizontal ``M (U-2) X`` written and read; vertical written ``((U-2) M + (M-1) + (U-1)(M-1)) X``, read
  ``((U-2) M + 2 (U-1)(M-1)) X`` (layer inputs for the next unit and the recompute, the last unit's input, and
  activation gradients; the snake keeps one of each per unit boundary on the device).

The engine's counters equal these numbers exactly (tests/llm/greedysnake/test_greedysnake_bytes.py).
"""

from __future__ import annotations

from collections.abc import Sequence

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
) -> dict[tuple[str, str, str], int]:
    """Bytes of one iteration by (tier, class, direction); ``pending_in``: a deferred part is applied in it.

    Optimizer bytes of the deferred part are counted where the step runs: in the next iteration
    (``pending_in``) or the final flush (:func:`run_bytes`).
    """
    U, M = len(sizes), micro_batches
    if U < 2 or M < 1:
        raise ValueError(f"units={U}, micro_batches={M} are out of range: valid ranges are >= 2 and >= 1")
    n_total, S = sum(sizes), sum(sizes[:-1])
    a = list(deferred) if deferred is not None and schedule == "vertical-overlap" else [0] * U
    a_total = sum(a)
    out = {_key(t, c, d): 0 for t in ("ssd", "host") for c in ("weights", "gradients", "optimizer", "checkpoints")
           for d in ("read", "written")}  # fmt: skip
    if schedule == "horizontal":
        out[_key("ssd", "weights", "read")] = w * (M * (2 * S + sizes[-1]) - (M - 1) * sizes[0])
        out[_key("ssd", "gradients", "written")] = g * M * n_total
        out[_key("ssd", "gradients", "read")] = g * M * n_total
        ck_w = ck_r = M * (U - 2) * inter_bytes
    elif schedule in ("vertical", "vertical-overlap"):
        out[_key("ssd", "weights", "read")] = w * (2 * S + sizes[-1])
        out[_key("ssd", "gradients", "written")] = g * a_total
        ck_w = ((U - 2) * M + (M - 1) + (U - 1) * (M - 1)) * inter_bytes
        ck_r = ((U - 2) * M + 2 * (U - 1) * (M - 1)) * inter_bytes
    else:
        raise ValueError(
            f"schedule={schedule!r} is not supported: valid values are horizontal, vertical, vertical-overlap"
        )
    stepped = n_total - a_total + (a_total if pending_in else 0)
    out[_key("ssd", "optimizer", "read")] = o * stepped
    out[_key("ssd", "optimizer", "written")] = o * stepped
    out[_key("ssd", "weights", "written")] = w * stepped
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
) -> dict[tuple[str, str, str], int]:
    """Bytes of ``steps`` iterations from a fresh state plus the final flush of the deferred parts."""
    total: dict[tuple[str, str, str], int] = {}
    has_deferred = schedule == "vertical-overlap" and deferred is not None and sum(deferred) > 0
    for i in range(steps):
        it = iteration_bytes(
            sizes, micro_batches=micro_batches, schedule=schedule, inter_bytes=inter_bytes, w=w, g=g, o=o,
            deferred=deferred, checkpoints=checkpoints, pending_in=has_deferred and i > 0,
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


def init_bytes(sizes: Sequence[int], *, w: int, o: int) -> dict[tuple[str, str, str], int]:
    """Bytes written when a run's state is created: the compute copy and (master, m = 0, v = 0) of every unit."""
    n = sum(sizes)
    return {("ssd", "weights", "written"): w * n, ("ssd", "optimizer", "written"): o * n}
