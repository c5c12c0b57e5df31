"""Exact power, sample size and minimum detectable effect of the MATCH test."""

import functools
import warnings

import numpy as np
import pytest

from sklearn_smallfair._enumeration import enumerate_confusion_matrices
from sklearn_smallfair._pmf import multinomial_logpmf
from sklearn_smallfair.metrics import get_metric
from sklearn_smallfair.stats import (
    match_min_detectable_effect,
    match_power,
    match_sample_size,
    match_test,
)
from sklearn_smallfair.stats._planning import SAMPLE_SIZE_WINDOW
from sklearn_smallfair.stats._planning_fixed import (
    _alternative_law,
    _null_value,
    _proportions,
)

# These tests check the published law of the MATCH test (null="fixed-reference");
# tests/stats/test_match_two_sample.py checks the default two-sample law.
match_test = functools.partial(match_test, null="fixed-reference")
match_power = functools.partial(match_power, null="fixed-reference")
match_sample_size = functools.partial(match_sample_size, null="fixed-reference")
match_min_detectable_effect = functools.partial(
    match_min_detectable_effect, null="fixed-reference"
)

REF = np.array([40, 10, 20, 30])
COMPAS = np.array([389, 347, 1597, 4121])


def _pvalues(counts, metric, alternative):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = match_test(
            counts=counts,
            reference=REF,
            metric=metric,
            method="exact",
            alternative=alternative,
            confidence_level=None,
        )
    return np.asarray(result.frame["p_value"], dtype=float)


def _alt_law(metric, effect):
    m = get_metric(metric)
    p0 = _proportions(REF)
    return _alternative_law(m, p0, _null_value(m, p0) + effect)


@pytest.mark.parametrize(
    "metric, effect, alternative",
    [
        ("tpr", -0.25, "two-sided"),
        ("tpr", 0.1, "greater"),
        ("fpr", 0.2, "two-sided"),
        ("ppv", -0.3, "less"),
        ("acc", 0.15, "two-sided"),
        ("mb", -0.1, "two-sided"),
        ("tpr", 0.0, "two-sided"),
        ("mb", 0.0, "greater"),
    ],
)
def test_power_equals_enumeration(metric, effect, alternative):
    """Power by summing the alternative pmf over every matrix that match_test
    (method="exact") rejects, conditional on the metric being defined."""
    n = 12
    cms = enumerate_confusion_matrices(n)
    p1 = _alt_law(metric, effect)
    pmf = np.exp(multinomial_logpmf(cms, p1))
    pv = _pvalues(cms, metric, alternative)
    defined = ~np.isnan(pv)
    expected = pmf[defined & (pv <= 0.05)].sum() / pmf[defined].sum()
    got = match_power(metric, REF, n, effect=effect, alternative=alternative)
    assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    "metric, n, effect", [("tpr", 40, -0.2), ("acc", 60, 0.1), ("mb", 50, 0.08)]
)
def test_power_against_simulation(metric, n, effect):
    draws = 20_000
    rng = np.random.default_rng(12345)
    counts = rng.multinomial(n, _alt_law(metric, effect), size=draws)
    pv = _pvalues(counts, metric, "two-sided")
    defined = ~np.isnan(pv)
    rate = (pv[defined] <= 0.05).mean()
    power = match_power(metric, REF, n, effect=effect)
    se = np.sqrt(power * (1 - power) / defined.sum())
    assert abs(rate - power) <= 4 * se + 1e-12


@pytest.mark.parametrize("metric", ["tpr", "fnr", "npv", "prev", "mb"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_size_at_effect_zero(metric, alternative):
    n = np.array([5, 13, 40, 150])
    size = match_power(metric, REF, n, effect=0.0, alternative=alternative)
    assert size.shape == (4,)
    assert (size <= 0.05 + 1e-12).all()
    assert (size >= 0).all()


def test_vectorized_equals_scalar():
    n = np.array([7, 30, 91])
    vec = match_power("tpr", COMPAS, n, effect=-0.1)
    one = [match_power("tpr", COMPAS, int(k), effect=-0.1) for k in n]
    np.testing.assert_allclose(vec, one, rtol=1e-12)


def test_target_equals_effect():
    s0 = 389 / (389 + 347)
    a = match_power("tpr", COMPAS, 120, target=s0 - 0.2)
    b = match_power("tpr", COMPAS, 120, effect=-0.2)
    assert a == pytest.approx(b, rel=1e-12)


def _brute_sample_size(metric, ref, effect, goal, max_n, alternative="two-sided"):
    sizes = np.arange(1, max_n + 1)
    ok = match_power(metric, ref, sizes, effect=effect, alternative=alternative) >= goal
    for k in range(sizes.size):
        end = min(k + SAMPLE_SIZE_WINDOW, sizes.size - 1)
        if ok[k : end + 1].all():
            return int(sizes[k])
    return None


@pytest.mark.parametrize(
    "metric, effect, alternative",
    [
        ("tpr", -0.3, "two-sided"),
        ("tpr", 0.2, "greater"),
        ("acc", -0.2, "two-sided"),
        ("mb", 0.15, "two-sided"),
    ],
)
def test_sample_size_against_scan(metric, effect, alternative):
    n = match_sample_size(metric, REF, effect=effect, alternative=alternative)
    brute = _brute_sample_size(metric, REF, effect, 0.8, n + 400, alternative)
    assert n == brute
    powers = match_power(
        metric, REF, np.arange(n, n + 200), effect=effect, alternative=alternative
    )
    assert (powers >= 0.8).all()


def test_sample_size_unreachable():
    with pytest.raises(ValueError, match="largest power"):
        match_sample_size("tpr", COMPAS, effect=-0.01, max_n=500)


def test_min_detectable_effect_consistent():
    for alternative in ("less", "greater", "two-sided"):
        mde = match_min_detectable_effect("tpr", REF, 60, alternative=alternative)
        assert match_power("tpr", REF, 60, effect=mde, alternative=alternative) >= 0.8
        smaller = mde * (1 - 1e-3)
        assert (
            match_power("tpr", REF, 60, effect=smaller, alternative=alternative) < 0.8
        )
    assert match_min_detectable_effect("tpr", REF, 60, alternative="less") < 0
    assert match_min_detectable_effect("tpr", REF, 60, alternative="greater") > 0


def test_min_detectable_effect_against_simulation():
    n = 80
    mde = match_min_detectable_effect("fpr", REF, n, alternative="greater")
    draws = 20_000
    rng = np.random.default_rng(7)
    counts = rng.multinomial(n, _alt_law("fpr", mde), size=draws)
    pv = _pvalues(counts, "fpr", "greater")
    defined = ~np.isnan(pv)
    rate = (pv[defined] <= 0.05).mean()
    se = np.sqrt(0.8 * 0.2 / defined.sum())
    # power at the MDE is 0.8 up to the saw-tooth of the exact power in the effect
    assert rate >= 0.8 - 4 * se


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"effect": -0.1, "alternative": "greater"}, "effect"),
        ({"effect": 0.1, "alternative": "less"}, "effect"),
        ({"target": 1.5}, "target"),
        ({"effect": 0.9}, "effect"),
        ({}, "exactly one of effect"),
        ({"effect": 0.1, "target": 0.5}, "exactly one of effect"),
    ],
)
def test_bad_effect_or_target(kwargs, match):
    with pytest.raises(ValueError, match=match):
        match_power("tpr", REF, 50, **kwargs)


def test_bad_power_and_metric():
    with pytest.raises(ValueError, match="power"):
        match_sample_size("tpr", REF, effect=0.1, power=1.0)
    with pytest.raises(ValueError, match="power"):
        match_min_detectable_effect("tpr", REF, 50, power=0.0)
    with pytest.raises(ValueError, match="supports"):
        match_power("mcc", REF, 50, effect=0.1)
    with pytest.raises(ValueError, match="reference"):
        match_power("tpr", np.array([1, 2, 3]), 50, effect=0.1)
    with pytest.raises(ValueError, match="reference"):
        match_power("tpr", np.array([0, 0, 3, 4]), 50, effect=0.1)
    with pytest.raises((ValueError, TypeError), match="n"):
        match_power("tpr", REF, [0, 5], effect=0.1)


def _bisection_critical(law, level, side):
    """Critical values by plain bisection on the whole grid (the definition)."""

    def largest(f, lo, hi):
        L, H = lo - 1, hi + 1
        while (H - L > 1).any():
            active = H - L > 1
            mid = np.where(active, (L + H) // 2, lo)
            ok = f(mid) <= level
            L, H = np.where(active & ok, mid, L), np.where(active & ~ok, mid, H)
        return L

    if side == "lower":
        return largest(law.lower, law.lo, law.hi)
    return -largest(lambda y: law.upper(-y), -law.hi, -law.lo)


def _check_critical_search(metric, sizes, monkeypatch):
    from sklearn_smallfair.stats import _planning_fixed

    m = get_metric(metric)
    p0 = _proportions(COMPAS)
    effect = 0.02 if metric in ("acc", "mb") else -0.03
    p1 = _alternative_law(m, p0, _null_value(m, p0) + effect)
    for alternative in ("two-sided", "less", "greater"):
        if alternative == "greater":
            p1 = _alternative_law(m, p0, _null_value(m, p0) - effect)
        fast = _planning_fixed._power(m, p0, p1, sizes, 0.05, alternative)
        with monkeypatch.context() as patch:
            patch.setattr(_planning_fixed, "_critical", _bisection_critical)
            slow = _planning_fixed._power(m, p0, p1, sizes, 0.05, alternative)
        np.testing.assert_array_equal(fast, slow)
        assert (fast > 0).any() and (fast < 1).any()


@pytest.mark.parametrize("metric", ["tpr", "ppv", "acc", "mb"])
def test_critical_search_equals_bisection(metric, monkeypatch):
    """The probit-scale search with runs of equal thresholds gives the rejection
    region of a plain bisection: the same power at every size."""
    sizes = np.array([1, 2, 3, 7, 19, 64, 150, 401, 2_000])
    _check_critical_search(metric, sizes, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["fnr", "ppv", "mb"])
def test_critical_search_equals_bisection_large(metric, monkeypatch):
    _check_critical_search(metric, np.array([35_000, 99_991]), monkeypatch)
