"""The default law of the MATCH test: the group against a reference that is a sample.

Checked against brute-force definitions (the whole two-dimensional table space,
the supremum over a dense grid of common rates, the hypergeometric laws of the
permutation test) and, in the slow set, by simulation of the test's size and
power.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.stats import match_test
from sklearn_smallfair.stats._exact import score_statistic
from sklearn_smallfair.stats._permutation_law import permutation_law
from sklearn_smallfair.stats._two_sample import (
    GAMMA,
    acceptance_range,
    critical_values,
    region_probability,
    tails,
    two_sided,
)


def _brute_tails(xa, na, xb, nb, rates):
    """One-sided tails of the score statistic, maximized over ``rates``."""
    z0 = score_statistic(xa, na, xb, nb)
    X = np.arange(na + 1)[:, None]
    Y = np.arange(nb + 1)[None, :]
    z = score_statistic(X, na, Y, nb)
    tol = 1e-10 * abs(z0)
    lower = upper = 0.0
    for pi in rates:
        w = stats.binom.pmf(X, na, pi) * stats.binom.pmf(Y, nb, pi)
        lower = max(lower, w[z <= z0 + tol].sum())
        upper = max(upper, w[z >= z0 - tol].sum())
    return lower, upper


@pytest.mark.parametrize("seed", range(4))
def test_exact_tails_are_berger_boos_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    na, nb = int(rng.integers(2, 12)), int(rng.integers(2, 40))
    xa, xb = int(rng.integers(0, na + 1)), int(rng.integers(0, nb + 1))
    lower, upper, exact = tails([xa], [na], [xb], [nb])
    assert exact[0]
    s, N = xa + xb, na + nb
    lo = stats.beta.ppf(GAMMA / 2, s, N - s + 1) if s > 0 else 0.0
    hi = stats.beta.ppf(1 - GAMMA / 2, s + 1, N - s) if s < N else 1.0
    theta = np.linspace(np.arcsin(np.sqrt(lo)), np.arcsin(np.sqrt(hi)), 3001)
    b_lower, b_upper = _brute_tails(xa, na, xb, nb, np.sin(theta) ** 2)
    np.testing.assert_allclose(lower[0], min(1.0, b_lower + GAMMA), atol=2e-6)
    np.testing.assert_allclose(upper[0], min(1.0, b_upper + GAMMA), atol=2e-6)


def test_e_test_tails_are_the_law_at_the_pooled_rate():
    # large enough that the E test is used: the smaller sample's variance >= 100
    xa, na, xb, nb = 230, 500, 260, 600
    lower, upper, exact = tails([xa], [na], [xb], [nb])
    assert not exact[0]
    pi = (xa + xb) / (na + nb)
    b_lower, b_upper = _brute_tails(xa, na, xb, nb, [pi])
    np.testing.assert_allclose([lower[0], upper[0]], [b_lower, b_upper], rtol=1e-9)


def test_region_probability_by_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        na, nb = int(rng.integers(1, 30)), int(rng.integers(1, 200))
        t_hi, t_lo = rng.uniform(0, 3, 2)
        pa, pb = rng.uniform(0.02, 0.98, 2)
        up, down = region_probability(na, nb, t_hi, t_lo, pa, pb)
        X = np.arange(na + 1)[:, None]
        Y = np.arange(nb + 1)[None, :]
        z = score_statistic(X, na, Y, nb)
        w = stats.binom.pmf(X, na, pa) * stats.binom.pmf(Y, nb, pb)
        np.testing.assert_allclose(up[0], w[z >= t_hi].sum(), atol=1e-12)
        np.testing.assert_allclose(down[0], w[z <= -t_lo].sum(), atol=1e-12)


def test_critical_values_bound_the_tails():
    k, m, s, level = 40.0, 300.0, 100.0, 0.01
    c_hi, c_lo = critical_values(k, m, s, level)
    N = k + m
    exact_rates = np.linspace(0.2, 0.4, 7)
    for c, side in ((c_hi[0], 0), (c_lo[0], 1)):
        p_at = max(region_probability(k, m, c, c, r, r)[side][0] for r in exact_rates)
        p_in = max(region_probability(k, m, c * 0.97, c * 0.97, s / N, s / N)[side])
        assert p_at <= level + 1e-9 or p_in > level  # the search is tight


def test_acceptance_range_holds_the_reference_rate_and_excludes_rejections():
    k, y, m = (
        np.array([20, 80, 300]),
        np.array([70, 400, 1500]),
        np.array([100, 1000, 5000]),
    )
    low, high = acceptance_range(k, y, m, 0.05)
    assert (low <= y / m).all() and (y / m <= high).all()
    # a score two counts outside the range is rejected by the test itself
    for i in range(3):
        for x in (round(low[i] * k[i]) - 2, round(high[i] * k[i]) + 2):
            if 0 <= x <= k[i]:
                lower, upper, _ = tails([x], [k[i]], [y[i]], [m[i]])
                assert two_sided(lower, upper)[0] <= 0.05


def test_permutation_law_by_brute_force():
    cms = np.array([[6, 2, 3, 9]])
    refs = np.array([[30, 20, 10, 60]])
    law = permutation_law(
        _metric("f1"), cms, refs, 0.025, n_resamples=10, seed=None, labels=["g"]
    )
    lower, upper = law["lower"], law["upper"]
    assert law["method"][0] == "permutation" and np.isnan(law["se"][0])
    pos, neg = 8, 12
    tp = np.arange(pos + 1)[:, None]
    fp = np.arange(neg + 1)[None, :]
    w = stats.hypergeom.pmf(tp, 58, 36, pos) * stats.hypergeom.pmf(fp, 82, 13, neg)
    f1 = np.where(
        2 * tp + fp + (pos - tp) > 0, 2 * tp / (2 * tp + fp + (pos - tp)), np.nan
    )
    s = 2 * 6 / (12 + 3 + 2)
    ok = ~np.isnan(f1)
    mass = w[ok].sum()
    np.testing.assert_allclose(lower[0], w[ok & (f1 <= s + 1e-12)].sum() / mass)
    np.testing.assert_allclose(upper[0], w[ok & (f1 >= s - 1e-12)].sum() / mass)
    # the range: the 2.5 % quantile of each side of the same law
    vals, inv = np.unique(f1[ok], return_inverse=True)
    cdf = np.cumsum(np.bincount(inv, weights=w[ok])) / mass
    assert law["low"][0] == vals[np.searchsorted(cdf, 0.025, side="right")]
    sf = 1 - np.r_[0, cdf[:-1]]
    assert law["high"][0] == vals[np.flatnonzero(sf > 0.025)[-1]]


def _metric(name):
    from sklearn_smallfair.metrics import get_metric

    return get_metric(name)


def test_default_frame_and_methods():
    counts = {"a": [8, 2, 1, 9], "b": [300, 100, 200, 900]}
    res = match_test(counts=counts, metric=["tpr", "mcc"])
    f = res.frame
    assert set(f["method"]) <= {"berger-boos", "e-test", "permutation"}
    p = two_sided(f["p_lower_tail"].to_numpy(), f["p_upper_tail"].to_numpy())
    np.testing.assert_allclose(f["p_value"].to_numpy(), p)
    # one family over the two metrics (family="all"): Holm over four tests
    from sklearn_smallfair.stats import adjust_pvalues

    np.testing.assert_allclose(
        f["p_adjusted"].to_numpy(), adjust_pvalues(f["p_value"].to_numpy(), "holm")
    )


def test_total_reference_compares_with_the_others():
    counts = {"a": [8, 2, 1, 9], "b": [30, 10, 20, 90], "c": [5, 5, 5, 5]}
    total = match_test(counts=counts, reference="total", correction=None)
    rest = match_test(counts=counts, reference="rest", correction=None)
    np.testing.assert_allclose(total.frame["p_value"], rest.frame["p_value"])


def test_prevalence_differences_are_not_a_tpr_gap():
    # 20 positives of 200 (prevalence 0.1) against a reference whose prevalence
    # is 0.5: the published law draws the group's TPR at about 100 positives and
    # reads the spread of 20 as a gap; the default conditions on the 20
    counts = {"g": [12, 8, 36, 144]}
    ref = [4000, 1000, 1000, 4000]
    new = match_test(counts=counts, reference=ref).frame["p_value"].iloc[0]
    old = match_test(counts=counts, reference=ref, null="fixed-reference")
    lower, upper, _ = tails([12], [20], [4000], [5000])
    assert new == pytest.approx(two_sided(lower, upper)[0])
    assert new > 0.02 and old.frame["p_value"].iloc[0] < new / 10


def test_published_options_need_the_published_law():
    for option in (
        {"method": "exact"},
        {"reference_uncertainty": True},
        {"conditional": False},
    ):
        with pytest.raises(ValueError, match="null='fixed-reference'"):
            match_test(counts={"a": [1, 2, 3, 4], "b": [2, 2, 2, 2]}, **option)


def test_reference_without_denominator_gives_no_p_value():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedGroupMetricWarning)
        with pytest.raises(UndefinedGroupMetricWarning, match="cannot be tested"):
            match_test(counts={"g": [3, 2, 1, 4]}, reference=[0, 0, 5, 5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        res = match_test(counts={"g": [3, 2, 1, 4]}, reference=[0, 0, 5, 5])
    assert np.isnan(res.frame["p_value"].iloc[0])


# =====================================================================================
# size and power by simulation (slow)
# =====================================================================================
LAWS = {
    "typical": (0.3, 0.7, 0.2),
    "near 0/1": (0.5, 0.98, 0.01),
}


def _draw(rng, n, law, size):
    prev, tpr, fpr = law
    p = [prev * tpr, prev * (1 - tpr), (1 - prev) * fpr, (1 - prev) * (1 - fpr)]
    return rng.multinomial(n, p, size=size)


@pytest.mark.slow
@pytest.mark.parametrize("law", list(LAWS))
@pytest.mark.parametrize(
    ("n", "m", "dprev"),
    [
        (5, 100_000, 0.0),
        (10, 30, 0.2),
        (20, 1000, 0.2),
        (150, 5, 0.0),
        (1000, 100, 0.2),
        (5000, 100_000, 0.0),
    ],
)
def test_size_of_the_default(law, n, m, dprev):
    """Under the null (the same TPR and FPR, prevalence differing by ``dprev``)
    no proportion metric's two-sided test rejects more than alpha + 1.5 points
    (plus three Monte Carlo standard errors)."""
    rng = np.random.default_rng(abs(hash((law, n, m))) % 2**32)
    reps = 1000
    prev, tpr, fpr = LAWS[law]
    g = _draw(rng, n, (min(prev + dprev, 0.95), tpr, fpr), reps)
    r = _draw(rng, m, (prev, tpr, fpr), reps)
    metrics = ["tpr", "fpr"] + ([] if dprev else ["ppv", "npv", "acc", "ppr"])
    _check_size(g, r, metrics, reps)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "m"), [(10, 100), (30, 1000), (50, 30)])
def test_size_of_the_permutation_law(n, m):
    rng = np.random.default_rng(n)
    reps = 400
    g = _draw(rng, n, LAWS["typical"], reps)
    r = _draw(rng, m, LAWS["typical"], reps)
    _check_size(g, r, ["f1", "mcc"], reps)


def _check_size(g, r, metrics, reps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = match_test(
            counts=dict(enumerate(g)),
            reference=r,
            metric=metrics,
            correction=None,
            confidence_level=None,
            random_state=0,
            n_resamples=2000,
        )
    se = np.sqrt(0.05 * 0.95 / reps)
    for metric, rows in res.frame.groupby("metric"):
        p = rows["p_value"].to_numpy()
        rate = np.mean(p[~np.isnan(p)] <= 0.05) if (~np.isnan(p)).any() else 0.0
        assert rate <= 0.05 + 0.015 + 3 * se, (metric, rate)


@pytest.mark.slow
def test_the_published_law_fails_the_same_check():
    """Not vacuous: the published default flags a large group against a small
    rest far more often than alpha."""
    rng = np.random.default_rng(0)
    g = _draw(rng, 1000, LAWS["typical"], 400)
    r = _draw(rng, 100, LAWS["typical"], 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = match_test(
            counts=dict(enumerate(g)),
            reference=r,
            correction=None,
            confidence_level=None,
            null="fixed-reference",
        )
        new = match_test(
            counts=dict(enumerate(g)),
            reference=r,
            correction=None,
            confidence_level=None,
        )
    assert (old.frame["p_value"] <= 0.05).mean() > 0.2
    assert (new.frame["p_value"] <= 0.05).mean() <= 0.05 + 0.015 + 3 * 0.011


@pytest.mark.slow
@pytest.mark.parametrize(("n_pos", "m_pos"), [(15, 60), (40, 200), (60, 300)])
def test_power_at_least_boschloo(n_pos, m_pos):
    """At a true TPR gap of 0.2 the default rejects at least as often as
    scipy's Boschloo test on the same 2 x 2 tables (within Monte Carlo error)."""
    rng = np.random.default_rng(n_pos)
    reps = 200
    x = rng.binomial(n_pos, 0.5, reps)
    y = rng.binomial(m_pos, 0.7, reps)
    lower, upper, _ = tails(x, np.full(reps, n_pos), y, np.full(reps, m_pos))
    ours = np.mean(two_sided(lower, upper) <= 0.05)
    theirs = np.mean(
        [
            stats.boschloo_exact([[x[i], n_pos - x[i]], [y[i], m_pos - y[i]]]).pvalue
            <= 0.05
            for i in range(reps)
        ]
    )
    assert ours >= theirs - 3 * np.sqrt(theirs * (1 - theirs) / reps) - 0.01


def test_normal_law_of_groups_of_millions_agrees_with_the_exact_law():
    """Above a count variance of NORMAL_MIN_VARIANCE the tails take the normal
    law with its skewness correction; at the switch the exact law (on the
    window) and the normal one agree to 2 parts in 10^3 (up to z = 4)."""
    from sklearn_smallfair.stats._two_sample import (
        NORMAL_MIN_VARIANCE,
        _normal_region,
        _Region,
        window,
    )

    pi = np.array([0.3, 0.5, 0.2, 0.05])
    n_a = 1.01 * NORMAL_MIN_VARIANCE / (pi * (1 - pi))
    n_b = np.array([3.0, 1.0, 10.0, 0.5]) * n_a
    lo, hi = window(n_a, pi)
    for z in (1.0, 1.96, 2.5, 3.3, 4.0):
        t = np.full(pi.shape, z)
        exact = _Region(n_a, n_b, t, t, lo, hi).probability(pi, pi)
        normal = _normal_region(n_a, n_b, t, t, pi, pi)
        for e, a in zip(exact, normal):
            np.testing.assert_allclose(a, e, rtol=2e-3, atol=0)
            assert np.abs(a - e).max() < 1e-4
    # region_probability switches there
    t = np.full(pi.shape, 1.96)
    np.testing.assert_array_equal(
        region_probability(n_a, n_b, t, t, pi, pi),
        _normal_region(n_a, n_b, t, t, pi, pi),
    )
