"""The reversed schedule S^R, folding S (S^R S)^k and stretching (duration x c, amplitude / c).

For a schedule with ``H(t) = H_d + sum_k u_k(t) H_k`` on ``[0, T]`` the reversed schedule plays
``u_k^R(t) = -u_k(T - t)``: every play's samples in reverse order, negated (phase + pi), at the mirrored start
``T - stop``, on the same channel and the same carrier frequency (a play's ``detuning`` is a hardware frequency
shift: it is *not* negated, as hardware cannot negate a frequency offset). With ``H_d = 0`` and resonant plays,
``U(S^R) = U(S)^dagger`` exactly (also for our piecewise-constant steps: the mirrored steps carry ``-H_k``), so
``S`` then ``S^R`` is the identity to rounding; a detuning, the transmons' anharmonicity (3 levels) or the exchange
coupling are drift the reversal cannot undo, and the echo measures them (arXiv 2305.12597, abstract; the exact
rule is derived, not quoted: see the brief).

Folding (the paper's pulse ZNE, per a third-party summary): ``S (S^R S)^k`` scales the noise by ``lambda = 2k + 1``
and lasts ``(2k + 1) T``. Stretching (a second, labelled option): every sample held ``c`` times longer
(``hamiltonian_steps(..., time_scale=c)``) with the amplitude divided by ``c``, so a resonant pulse's rotation
area is unchanged and the exposure to T1/T2 grows by ``c``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from workbench.quantum.common.pulse.schedule import Play, Schedule

__all__ = ["reverse", "fold", "fold_factor", "stretch", "check_fold_factors", "check_stretch_factors"]

MAX_FOLD = 21  # lambda = 2k + 1 up to 21: 21x the duration


def reverse(schedule: Schedule) -> Schedule:
    """``S^R``: time-reversed, amplitude-negated plays over the same duration ``T`` (samples).

    Example: ``reverse(Schedule.of([Play("d0", drag(160, 0.1, 40, 1.0))]))`` plays ``-samples.flip(0)`` on d0.
    """
    t = schedule.duration
    plays = tuple(Play(p.channel, -p.samples.flip(0), t - p.stop, p.detuning) for p in schedule.plays)
    return Schedule(plays, t)


def fold_factor(value: int | float) -> int:
    """``k`` of an odd fold factor ``lambda = 2k + 1`` (ValueError naming ``lambda`` otherwise)."""
    if float(value) != int(value) or int(value) < 1 or int(value) % 2 == 0 or int(value) > MAX_FOLD:
        raise ValueError(
            f"scale_factor={value:g} is not an odd fold factor: valid values are odd integers 1..{MAX_FOLD} "
            "(folding S (S^R S)^k gives lambda = 2k + 1)"
        )
    return (int(value) - 1) // 2


def fold(schedule: Schedule, scale_factor: int) -> Schedule:
    """``S (S^R S)^k`` with ``scale_factor = 2k + 1`` (odd); its duration is ``scale_factor * T``."""
    k = fold_factor(scale_factor)
    t = schedule.duration
    base = Schedule(schedule.plays, t)  # pads S to its full duration so every copy starts at a multiple of T
    rev = reverse(base)
    out = base
    for _ in range(k):
        out = out.then(rev).then(base)
    return out


def stretch(schedule: Schedule, factor: float) -> tuple[Schedule, float]:
    """``(schedule with every amplitude / factor, time_scale = factor)``: pass the time scale to
    ``hamiltonian_steps``. DRAG quadratures are divided by ``factor`` with the rest of the envelope, so in physical
    time their derivative coefficient beta grows by ``factor`` (a coherent error that recalibration would remove;
    :func:`workbench.quantum.pulse_zne.zne.stretched_ansatz` rebuilds the ansatz with beta / factor instead)."""
    check_stretch_factors([factor])
    plays = tuple(Play(p.channel, p.samples / factor, p.start, p.detuning / factor) for p in schedule.plays)
    return Schedule(plays, schedule.min_duration), float(factor)


def check_fold_factors(values: Sequence[float]) -> tuple[int, ...]:
    """Distinct odd fold factors in increasing order, at least two (ValueError naming the bad one)."""
    out = tuple(int(v) for v in values if fold_factor(v) >= 0)
    _check_distinct(out)
    return out


def check_stretch_factors(values: Sequence[float]) -> tuple[float, ...]:
    """Stretch factors in 1..10 (``time_scale`` of the simulator)."""
    for v in values:
        if not (math.isfinite(float(v)) and 1.0 <= float(v) <= 10.0):
            raise ValueError(f"scale_factor={v:g} is out of range for stretching: valid range is 1..10")
    return tuple(float(v) for v in values)


def _check_distinct(values: Sequence[float]) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"scale_factors={','.join(f'{v:g}' for v in values)} repeats a value")


def envelope_samples(schedule: Schedule, channel: str) -> torch.Tensor:
    """The channel's summed samples over the schedule (complex, ``duration``), for plots."""
    out = torch.zeros(schedule.duration, dtype=torch.complex128)
    for p in schedule.plays:
        if p.channel == channel:
            out[p.start : p.stop] += p.samples.detach().to(torch.complex128)
    return out
