"""The Edgeworth law of large groups against the exact law at its threshold."""

import functools
import warnings

import numpy as np
import pytest

from sklearn_smallfair.metrics import get_metric
from sklearn_smallfair.stats import _large_n, _planning_fixed, match_power
from sklearn_smallfair.stats._large_n import (
    LARGE_VARIANCE,
    large,
    large_power,
    large_range,
)
from sklearn_smallfair.stats._planning_fixed import (
    _alternative_law,
    _exact_range,
    _null_value,
    null_range,
)

# These tests check the published law of the MATCH test (null="fixed-reference");
# tests/stats/test_match_two_sample.py checks the default two-sample law.
match_power = functools.partial(match_power, null="fixed-reference")

REFERENCES = {
    "compas": np.array([389.0, 347.0, 1597.0, 4121.0]),
    "rare": np.array([5.0, 1.0, 1.0, 93.0]),
    "even": np.array([10.0, 10.0, 10.0, 10.0]),
}
METRICS = ("tpr", "fpr", "ppv", "npv", "mb")


def _law(name, ref):
    """``(metric, p, variance of the counts per person, lattice span of a score
    per person)``."""
    m = get_metric(name)
    p = ref / ref.sum()
    a, b, _, joint = _large_n._units(m, p[None, :])
    unit = float((a * b / (a + b))[0]) if joint else float((a + b - (a - b) ** 2)[0])
    span = float(p[list(m.denominator)].sum()) if joint else 1.0
    return m, p, unit, span


def _sizes(unit):
    """The threshold, just above it and three times it."""
    n0 = int(np.ceil(LARGE_VARIANCE / unit))
    return np.array([n0, n0 + 1, int(1.1 * n0) + 7, 3 * n0 + 1], np.int64)


def test_threshold():
    m, p, unit, _ = _law("tpr", REFERENCES["compas"])
    n0 = int(np.ceil(LARGE_VARIANCE / unit))
    assert large(m, [n0 - 1, n0], p).tolist() == [False, True]
    assert not large(m, [10**12], np.array([0.5, 0.0, 0.2, 0.3])).any()
    assert not large(get_metric("acc"), [10**12], p).any()  # exact at any size
    # mb on FP and FN only: a lattice of span 2, kept on the exact law
    assert not large(get_metric("mb"), [10**12], np.array([0, 0.5, 0.5, 0])).any()
    assert large(get_metric("mb"), [10**12], np.array([0.1, 0.4, 0.4, 0.1])).all()


@pytest.mark.parametrize("ref", list(REFERENCES))
@pytest.mark.parametrize("name", METRICS)
def test_range_within_a_lattice_step(name, ref):
    m, p, unit, span = _law(name, REFERENCES[ref])
    n = _sizes(unit)[:3]
    step = 1.0 / (n * span)  # the scores' lattice step at the typical size
    for level in (0.025, 0.0005, 1e-9):
        lo, hi = _exact_range(m, n, np.tile(p, (n.size, 1)), level)
        a, b = large_range(m, n, np.tile(p, (n.size, 1)), level)
        assert np.isfinite(lo).all() and (lo < hi).all()
        # measured: at most 0.06 of a step at 0.025 and 0.0005, 0.13 at 1e-9 (0
        # for mb; the one-term expansion was off by a step at 1e-9)
        assert np.abs(a - lo).max() <= 0.25 * step.min(), (level, a - lo)
        assert np.abs(b - hi).max() <= 0.25 * step.min(), (level, b - hi)


@pytest.mark.parametrize("ref", ["compas", "rare"])
@pytest.mark.parametrize("name", ["tpr", "fpr", "mb"])
def test_power_matches_exact(name, ref):
    m, p, unit, span = _law(name, REFERENCES[ref])
    n = _sizes(unit)[:3]
    sd = np.sqrt(unit / n[0]) / span
    s0 = _null_value(m, p)
    sides = {"two-sided": ("lower", "upper"), "less": ("lower",)}
    for k in (-3.0, -1.0, 0.0, 2.0):
        p1 = _alternative_law(m, p, s0 + k * sd)
        for alternative in ("two-sided", "less", "greater"):
            if (alternative == "less" and k > 0) or (
                alternative == "greater" and k < 0
            ):
                continue
            level = 0.025 if alternative == "two-sided" else 0.05
            ours = large_power(m, n, p, p1, level, sides.get(alternative, ("upper",)))
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(_large_n, "LARGE_VARIANCE", np.inf)
                exact = _planning_fixed._power(m, p, p1, n, 0.05, alternative)
            # measured: 1.4e-5 at most
            assert np.abs(ours - exact).max() < 1e-4, (k, alternative, ours, exact)


def test_null_range_dispatch_keeps_small_groups():
    m, p, unit, _ = _law("tpr", REFERENCES["compas"])
    big = _sizes(unit)[1:3]
    small = np.array([5, 17, 150], np.int64)
    n = np.r_[small[:2], big[0], small[2], big[1]]
    ps = np.tile(p, (n.size, 1))
    lo, hi = null_range(m, n, ps, 0.025)
    at = np.array([0, 1, 3])
    e_lo, e_hi = _exact_range(m, small, ps[at], 0.025)
    np.testing.assert_array_equal(lo[at], e_lo)  # bit for bit
    np.testing.assert_array_equal(hi[at], e_hi)
    l_lo, l_hi = large_range(m, big, ps[[2, 4]], 0.025)
    np.testing.assert_array_equal(lo[[2, 4]], l_lo)
    np.testing.assert_array_equal(hi[[2, 4]], l_hi)


def test_large_groups_never_build_the_exact_law(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the exact law was built")

    monkeypatch.setattr(_planning_fixed, "_Law", refuse)
    m, p, _, _ = _law("tpr", REFERENCES["compas"])
    n = np.array([10**7, 10**9, 10**12], np.int64)
    lo, hi = null_range(m, n, np.tile(p, (3, 1)), 0.025)
    theta = p[0] / (p[0] + p[1])
    assert (lo < theta).all() and (theta < hi).all()
    assert (np.diff(hi - lo) < 0).all()
    power = match_power("tpr", REFERENCES["compas"], n, effect=-0.001)
    assert power[0] < power[1] <= power[2]


def test_exact_range_in_64_bit_overflow_regime():
    # n p_i p_j / q near 3 10^6 puts x K above 2^63 in the exact search
    m, p, _, span = _law("tpr", REFERENCES["rare"])
    n = np.array([36_000_001], np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        lo, hi = _exact_range(m, n, p[None, :], 0.025)
    a, b = large_range(m, n, p[None, :], 0.025)
    step = 1.0 / (n * span)
    assert abs(a[0] - lo[0]) <= step[0] and abs(b[0] - hi[0]) <= step[0]


def test_no_overflow_warnings_at_giant_n():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        power = match_power("tpr", REFERENCES["compas"], 10**12, effect=1e-5)
        range_ = null_range(
            get_metric("ppv"),
            np.array([10**12]),
            REFERENCES["compas"][None] / 6454,
            0.025,
        )
    assert 0 < power < 1 and range_[0][0] < range_[1][0]
