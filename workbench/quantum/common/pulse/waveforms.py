"""Pulse envelopes sampled at ``dt``, as complex128 torch tensors (differentiable in every float parameter).

Shapes follow Qiskit Pulse's parametric pulses (the Gaussian centred at ``duration / 2`` and *lifted* so that it
starts and ends at zero, ``(f(t) - f(-1)) / (1 - f(-1))``), but **not its sampling instant**: sample ``k`` here is
the envelope at ``t = k`` (units of dt), while qiskit's ``get_waveform`` samples at ``t = k + 1/2``. The shift is
half a sample: on a 160-dt, sigma-40 Gaussian each sample differs by at most 0.9 % of the peak and the area by
2e-5 (relative); every technique uses pulses calibrated in this simulator, which absorb it, but samples compared
with a qiskit waveform differ by that much. DRAG adds ``i * beta * f'(t)``, GaussianSquare has Gaussian rise and
fall of ``sigma`` around a flat top of ``width`` samples. ``amp`` is dimensionless (|amp| <= 1 on IBM hardware) and
``phase`` (rad) rotates the envelope: ``amp * exp(i phase)``.
"""

from __future__ import annotations

import torch

__all__ = ["gaussian", "drag", "gaussian_square", "constant", "sampled", "as_tensor"]

Number = float | torch.Tensor


def as_tensor(x: Number) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.tensor(float(x), dtype=torch.float64)


def _check(duration: int, sigma: Number) -> None:
    if int(duration) != duration or duration < 1:
        raise ValueError(f"duration={duration} is out of range: valid range is >= 1 (samples of dt)")
    if float(sigma) <= 0:
        raise ValueError(f"sigma={float(sigma)} is out of range: valid range is > 0 (samples of dt)")


def _phase(amp: Number, phase: Number) -> torch.Tensor:
    return as_tensor(amp).to(torch.complex128) * torch.exp(1j * as_tensor(phase).to(torch.complex128))


def _lifted_gaussian(t: torch.Tensor, center: float, sigma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(lifted gaussian, its derivative in t) with value 0 at t = -1 and t = 2 * center + 1."""
    g = torch.exp(-((t - center) ** 2) / (2 * sigma**2))
    g0 = torch.exp(-((-1.0 - center) ** 2) / (2 * sigma**2))
    f = (g - g0) / (1 - g0)
    df = -(t - center) / sigma**2 * g / (1 - g0)
    return f, df


def gaussian(duration: int, amp: Number, sigma: Number, phase: Number = 0.0) -> torch.Tensor:
    """A lifted Gaussian of ``duration`` samples, peak ``amp`` at ``duration / 2``."""
    _check(duration, sigma)
    t = torch.arange(duration, dtype=torch.float64)
    f, _ = _lifted_gaussian(t, duration / 2, as_tensor(sigma))
    return _phase(amp, phase) * f.to(torch.complex128)


def drag(duration: int, amp: Number, sigma: Number, beta: Number, phase: Number = 0.0) -> torch.Tensor:
    """DRAG: ``amp (f(t) + i beta f'(t))`` with ``f`` the lifted Gaussian (beta in samples of dt)."""
    _check(duration, sigma)
    t = torch.arange(duration, dtype=torch.float64)
    f, df = _lifted_gaussian(t, duration / 2, as_tensor(sigma))
    shape = f.to(torch.complex128) + 1j * as_tensor(beta).to(torch.complex128) * df.to(torch.complex128)
    return _phase(amp, phase) * shape


def gaussian_square(duration: int, amp: Number, sigma: Number, width: Number, phase: Number = 0.0) -> torch.Tensor:
    """A flat top of ``width`` samples centred in ``duration``, with lifted Gaussian edges of ``sigma``."""
    _check(duration, sigma)
    w = as_tensor(width)
    if not 0 <= float(w.detach()) <= duration:
        raise ValueError(f"width={float(w.detach())} is out of range: valid range is 0..{duration} (samples of dt)")
    t = torch.arange(duration, dtype=torch.float64)
    s = as_tensor(sigma)
    rise = (duration - w) / 2
    left = torch.exp(-((t - rise) ** 2) / (2 * s**2))
    right = torch.exp(-((t - (rise + w)) ** 2) / (2 * s**2))
    g0 = torch.exp(-((-1.0 - rise) ** 2) / (2 * s**2))
    f = torch.where(t < rise, (left - g0) / (1 - g0), torch.where(t > rise + w, (right - g0) / (1 - g0), 1.0))
    return _phase(amp, phase) * f.to(torch.complex128)


def constant(duration: int, amp: Number, phase: Number = 0.0) -> torch.Tensor:
    """A square pulse of ``duration`` samples."""
    _check(duration, 1.0)
    return _phase(amp, phase) * torch.ones(duration, dtype=torch.complex128)


def sampled(samples: torch.Tensor | list[complex]) -> torch.Tensor:
    """An arbitrary waveform from its samples (complex; |sample| <= 1 is checked when played)."""
    x = torch.as_tensor(samples).to(torch.complex128)
    if x.dim() != 1 or x.numel() == 0:
        raise ValueError(f"samples must be a non-empty 1-D sequence, got shape {tuple(x.shape)}")
    return x


def area(samples: torch.Tensor) -> float:
    """The envelope's integral in samples (sum of the real part), e.g. for a Rabi rotation angle."""
    return float(samples.real.sum())


def gaussian_area(duration: int, sigma: float) -> float:
    """The area of a unit-amplitude lifted Gaussian (samples)."""
    return area(gaussian(duration, 1.0, sigma))
