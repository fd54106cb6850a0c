"""Schedules: waveforms played on drive and control channels at given start times.

Channels: ``"d<q>"`` drives qubit ``q`` at its own frequency; ``"u<c>-<t>"`` is the cross-resonance control
channel: it drives control qubit ``c`` at target ``t``'s frequency. A :class:`Play` may shift its carrier by
``detuning`` (rad/ns; a trainable frequency). Times are in samples of the device's ``dt``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from workbench.quantum.common.pulse.device import MAX_AMP, PulseDevice
from workbench.quantum.common.pulse.waveforms import Number, as_tensor

__all__ = ["Play", "Channel", "parse_channel", "Schedule"]

_CHANNEL = re.compile(r"^(?:d(\d+)|u(\d+)-(\d+))$")


@dataclass(frozen=True)
class Channel:
    """``qubit``: the transmon the channel's operator acts on; ``frame``: the qubit whose frequency it carries."""

    name: str
    qubit: int
    frame: int


def parse_channel(name: str, num_qubits: int) -> Channel:
    m = _CHANNEL.match(name)
    if not m:
        raise ValueError(f"channel={name!r} is not a channel: valid channels are d<q> and u<control>-<target>")
    qubit, frame = (int(m[1]), int(m[1])) if m[1] is not None else (int(m[2]), int(m[3]))
    for q in (qubit, frame):
        if not 0 <= q < num_qubits:
            raise ValueError(f"channel={name!r} names qubit {q}: valid qubits are 0..{num_qubits - 1}")
    if m[1] is None and qubit == frame:
        raise ValueError(f"channel={name!r} needs two different qubits")
    return Channel(name, qubit, frame)


@dataclass(frozen=True)
class Play:
    """``samples`` (complex, one per dt) on ``channel`` from sample ``start``, carrier shifted by ``detuning``."""

    channel: str
    samples: torch.Tensor
    start: int = 0
    detuning: Number = 0.0

    @property
    def stop(self) -> int:
        return self.start + int(self.samples.numel())


@dataclass(frozen=True)
class Schedule:
    """An ordered set of plays; ``duration`` (samples) is the end of the last play unless set longer."""

    plays: tuple[Play, ...] = ()
    min_duration: int = 0

    @staticmethod
    def of(plays: Iterable[Play], min_duration: int = 0) -> Schedule:
        return Schedule(tuple(plays), min_duration)

    @property
    def duration(self) -> int:
        return max([self.min_duration, *(p.stop for p in self.plays)])

    def then(self, other: Schedule) -> Schedule:
        """This schedule followed by ``other`` (shifted to start at this one's end)."""
        t = self.duration
        shifted = (Play(p.channel, p.samples, p.start + t, p.detuning) for p in other.plays)
        return Schedule((*self.plays, *shifted), t + other.min_duration)

    def validate(self, device: PulseDevice) -> None:
        """Raise ValueError naming the problem: an unknown channel, a negative start, |amplitude| > 1."""
        for p in self.plays:
            parse_channel(p.channel, device.num_qubits)
            if p.start < 0:
                raise ValueError(f"start={p.start} is out of range: valid range is >= 0 (samples)")
            peak = float(p.samples.detach().abs().max()) if p.samples.numel() else 0.0
            if peak > MAX_AMP + 1e-12:
                raise ValueError(
                    f"amplitude={peak:.4g} on channel {p.channel} is above the device's limit: valid range is "
                    f"0..{MAX_AMP} (dimensionless)"
                )

    def envelopes(self, device: PulseDevice, substeps: int = 1) -> dict[str, tuple[Channel, torch.Tensor]]:
        """Per channel: (channel, complex envelope at every sub-step midpoint, ``duration * substeps``).

        A play's sample is held over its ``dt``; its detuning turns it by ``exp(-i delta (t - start))``, the phase
        counted from the play's own start (a calibrated gate keeps its frequency correction wherever it is
        played)."""
        self.validate(device)
        n = self.duration * substeps
        step = device.dt / substeps
        out: dict[str, tuple[Channel, torch.Tensor]] = {}
        for p in self.plays:
            ch = parse_channel(p.channel, device.num_qubits)
            env = out.get(p.channel, (ch, torch.zeros(n, dtype=torch.complex128)))[1]
            held = p.samples.to(torch.complex128).repeat_interleave(substeps)
            local = (torch.arange(held.numel(), dtype=torch.float64) + 0.5) * step  # time since the play's start
            turned = held * torch.exp(-1j * (as_tensor(p.detuning) * local).to(torch.complex128))
            env = env + torch.nn.functional.pad(turned, (p.start * substeps, n - p.stop * substeps))
            out[p.channel] = (ch, env)
        return out
