"""NAPA: shipped Hamiltonians vs FCI and the brief's coefficients, term-by-term measurement vs qiskit (and the
tutorial's parity bug), the ansatz's parameterisation, gradients, optimisers, a small VQE and bad input."""

import numpy as np
import pytest
from qiskit.quantum_info import DensityMatrix, SparsePauliOp, random_statevector

from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.device import get_device
from workbench.quantum.napa.ansatz import DROP_AMP, PulseAnsatz, cr_duration
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.energy import energy, energy_and_gradient, fold_leakage, term_expectation
from workbench.quantum.napa.hamiltonians import bond_lengths, load
from workbench.quantum.napa.train import Trace, multistart, optimise, progressive


@pytest.fixture(scope="module")
def natives():
    return calibrated_natives(get_device("fake_jakarta"), 0, 1, 3)


def test_hamiltonians_match_fci_and_the_codes_h2_coefficients():
    h2 = load("H2", 0.735)
    assert h2.exact == pytest.approx(-1.137306, abs=1e-6) and h2.exact == pytest.approx(h2.fci, abs=1e-9)
    heh = load("HeH+", 1.0)
    assert heh.exact == pytest.approx(heh.fci, abs=1e-9)
    # the authors' parity-mapped H2 (electronic; II + nuclear repulsion 0.7199689944 Ha) has the same spectrum
    code = {"II": -1.0523732 + 0.7199689944, "IZ": 0.39793742, "ZI": -0.3979374, "ZZ": -0.0112801, "XX": 0.18093119}
    theirs = np.linalg.eigvalsh(SparsePauliOp.from_list(list(code.items())).to_matrix())
    assert np.allclose(np.linalg.eigvalsh(h2.matrix()), theirs, atol=2e-6)
    for length in bond_lengths("H2"):
        h = load("H2", length)
        assert h.exact == pytest.approx(h.fci, abs=1e-8)
    with pytest.raises(ValueError, match="bond_length=0.74 is not shipped for H2"):
        load("H2", 0.74)
    lih = load("LiH", 1.5)  # (2e, 2o) active space: exact in it, ~19 mHa above the full FCI
    assert lih.exact == pytest.approx(lih.fci, abs=1e-9) and 0.01 < lih.exact - lih.full_fci < 0.03


def test_each_term_is_measured_at_its_own_positions():
    h = load("HeH+", 1.0)
    psi = random_statevector(4, seed=3)
    rho = DensityMatrix(psi).data
    for _, label in h.terms:
        if label != "II":
            assert term_expectation(rho, label) == pytest.approx(
                psi.expectation_value(SparsePauliOp(label)).real, abs=1e-12
            )
    # the tutorial's bug: parity over every bit turns IZ into ZZ, which differs on this state
    assert abs(term_expectation(rho, "ZZ") - psi.expectation_value(SparsePauliOp("IZ")).real) > 1e-3


def test_readout_error_and_shots():
    rho = np.zeros((4, 4), complex)
    rho[0, 0] = 1
    flip = [np.array([[0.9, 0.2], [0.1, 0.8]])] * 2  # P(read 1 | 0) = 0.1
    assert term_expectation(rho, "IZ", flip) == pytest.approx(0.8)
    sampled = term_expectation(rho, "IZ", flip, shots=20000, rng=np.random.default_rng(1))
    assert sampled == pytest.approx(0.8, abs=0.02)


def test_leakage_folds_into_one_and_keeps_trace():
    rho = np.zeros((9, 9), complex)
    rho[0, 0], rho[2, 2], rho[0, 2], rho[2, 0] = 0.5, 0.5, 0.5, 0.5  # |00> + |02>: qubit 1 leaked
    q = fold_leakage(rho, 3)
    assert q[1, 1].real == pytest.approx(0.5) and q[0, 0].real == pytest.approx(0.5)
    assert q[0, 1] == 0 and np.trace(q).real == pytest.approx(1.0)


def test_ansatz_parameterisation_drops_tiny_plays(natives):
    a = PulseAnsatz(natives, 2, trainable_frequency=True)
    assert a.num_params == 18 and PulseAnsatz(natives, 1).num_params == 7  # 5n - 3 for n = 2
    assert cr_duration(0) == 256 and cr_duration(1) == 1024 and cr_duration(0.5) % 16 == 0
    zero = np.zeros(a.num_params)
    zero[7::9] = zero[8::9] = 0.5
    s = a.schedule(zero)
    assert not s.plays  # every amplitude at 0: no pulse at all (the identity)
    x = a.initial(1)
    x[4] = DROP_AMP / 2  # layer 1's CR below the threshold: it and its echo are gone
    plays = a.schedule(x).plays
    assert sum(p.channel == "u0-1" for p in plays) == 2  # only layer 2's CR halves


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_gradient_through_the_simulator_matches_finite_differences(natives):
    dev = natives.device.noiseless()
    a = PulseAnsatz(natives, 1)
    h = load("H2", 0.735)
    x = a.initial(0, scale=0.3)
    e, g = energy_and_gradient(dev, a.schedule, x, h.matrix())
    assert e == pytest.approx(energy(dev, a.schedule(x), h.terms, readout=False), abs=1e-12)
    for k in (0, 3, 4):
        step = np.zeros_like(x)
        step[k] = 1e-5
        fd = (energy(dev, a.schedule(x + step), h.terms, readout=False)
              - energy(dev, a.schedule(x - step), h.terms, readout=False)) / 2e-5  # fmt: skip
        assert g[k] == pytest.approx(fd, rel=1e-4, abs=1e-7)


@pytest.mark.parametrize("method", ["cobyla", "nelder-mead", "spsa"])
def test_optimisers_respect_the_budget_and_the_box(method):
    target = np.array([0.2, 0.7, 0.4])
    trace = Trace()
    x = optimise(lambda z: float(np.sum((z - target) ** 2)), np.full(3, 0.5), 60, method, trace)
    assert trace.evaluations <= 60 and np.all((0 <= x) & (x <= 1))
    assert trace.best[-1] < 0.75 * trace.energies[0]
    with pytest.raises(ValueError, match="optimizer='adam' is unknown"):
        optimise(lambda z: 0.0, np.zeros(1), 5, "adam", Trace())


@pytest.mark.parametrize("method", ["cobyla", "nelder-mead", "spsa"])
def test_a_budget_below_cobylas_minimum_is_kept_without_a_warning(method):
    """COBYLA needs d + 2 evaluations to start; a smaller budget still stops at the budget, and scipy does not warn
    (the CLI's smoke run, budget 4, printed "Invalid MAXFUN")."""
    import warnings

    trace = Trace()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimise(lambda z: float(np.sum(z**2)), np.full(10, 0.5), 4, method, trace)
    assert trace.evaluations == 4


def _layered(calls=None):
    """A toy layered energy: layer l's two parameters pull towards 0.3; an identity layer (zeros) adds nothing."""

    def make_f(layers):
        def f(x):
            if calls is not None:
                calls.append((layers, x.copy()))
            return float(np.sum((x[x != 0] - 0.3) ** 2) - np.count_nonzero(x) * 0.01)

        return f

    return make_f


def test_progressive_moves_only_the_newest_layer():
    calls = []
    trace = Trace()
    x = progressive(_layered(calls), 2, 3, lambda layer, k: np.full(2, 0.5), np.zeros(2), 30, "cobyla", trace)
    assert len(x) == 6 and trace.evaluations <= 30
    second = [c for layers, c in calls if layers == 2]
    assert all(np.array_equal(c[:2], second[0][:2]) for c in second)  # layer 1 frozen during stage 2


def test_progressive_returns_the_schedule_of_its_best_energy():
    """The bug of #26: the best energy came from stage 1 while the parameters were the last stage's. Here stage 2
    can only make things worse (its layer starts far off and gets 3 evaluations): the returned full vector must
    still give the best energy recorded, with an identity layer where stage 2 did not help."""

    def make_f(layers):
        return lambda x: float(np.sum((x[:2] - 0.3) ** 2) + (np.sum((x[2:] - 0.0) ** 2) if layers > 1 else 0.0))

    trace = Trace()
    inits = {0: np.full(2, 0.3), 1: np.full(2, 0.9)}
    x = progressive(make_f, 2, 2, lambda layer, k: inits[layer], np.zeros(2), 6, "cobyla", trace)
    assert len(x) == 4 and trace.evaluations == 6
    assert make_f(2)(x) == pytest.approx(trace.energy, abs=1e-15)  # one schedule: energy, parameters
    assert np.array_equal(x[2:], np.zeros(2))  # stage 2 never improved: its layer is the identity
    assert trace.energy == min(trace.energies)


def test_multistart_shares_the_budget_and_keeps_the_best_start():
    starts = [np.full(2, 0.9), np.full(2, 0.5), np.full(2, 0.1)]
    trace = Trace()
    x = multistart(lambda z: float(np.sum((z - 0.12) ** 2)), starts, 30, "nelder-mead", trace)
    assert trace.evaluations <= 30
    assert np.sum((x - 0.12) ** 2) == pytest.approx(trace.energy, abs=1e-15)
    assert np.array_equal(trace.best_x, x)
    with pytest.raises(ValueError, match="optimizer='gradient' needs a differentiable energy"):
        optimise(lambda z: 0.0, np.zeros(1), 5, "gradient", Trace())


def test_gradient_optimiser_with_the_exact_gradient():
    target = np.array([0.2, 0.7, 0.4])
    trace = Trace()
    x = optimise(lambda z: float(np.sum((z - target) ** 2)), np.full(3, 0.5), 20, "gradient", trace,
                 grad=lambda z: (float(np.sum((z - target) ** 2)), 2 * (z - target)))  # fmt: skip
    assert np.allclose(x, target, atol=1e-6) and trace.evaluations < 20  # converges, then stops


def test_bad_settings_name_the_parameter():
    with pytest.raises(ValueError, match="bond_length=0.745 is not shipped for H2"):
        NapaConfig(bond_length=0.745)
    with pytest.raises(ValueError, match="target=3 is not coupled to control=0 on fake_jakarta"):
        NapaConfig(target=3)
    with pytest.raises(ValueError, match="molecule='H2O' is not allowed"):
        NapaConfig.from_dict({"molecule": "H2O"})
    with pytest.raises(ValueError, match="shots=100 with optimizer='gradient'"):
        NapaConfig(shots=100)
    NapaConfig(shots=100, optimizer="cobyla")  # gradient-free optimisers take shots


def test_panel_shows_the_noise_scale_only_for_device_noise():
    """The noise-scale slider acts on device noise only; with ``noise="none"`` it is hidden (a slider that moves
    nothing), and it appears when the noise control picks the device."""
    from widgets.quantum.napa import NapaPanel

    panel = NapaPanel(static=False)
    assert panel.controls["noise"].value == "none" and panel.controls["noise_scale"].layout.display == "none"
    panel.controls["noise"].value = "device"
    assert panel.controls["noise_scale"].layout.display is None and panel.error is None
    before = panel.figures[2].layout.title.text
    panel.controls["noise_scale"].value = 10.0
    assert panel.figures[2].layout.title.text != before and "x10" in panel.figures[2].layout.title.text
    panel.controls["noise"].value = "none"
    assert panel.controls["noise_scale"].layout.display == "none"
