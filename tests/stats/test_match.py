"""Tests of the MATCH test (match_test, MatchResult).

Statistics are checked three ways: closed forms against exact
enumeration and against an independent rational-arithmetic implementation, Monte
Carlo against exact within its standard error, and calibration by simulation under
the null. Tolerances are either floating-point round-off (1e-10 for sums of at most
C(63, 3) = 39,711 terms) or multiples of a standard error computed in the test.
"""

import functools
import warnings
from fractions import Fraction
from math import comb, sqrt

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_smallfair import reference_counts
from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.datasets import load_published_confusion_matrices
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import (
    compute_metric,
    confusion_counts,
    get_metric,
    metric_names,
)
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.stats import (
    ENUMERATE_MAX_N,
    MatchResult,
    _binomial,
    _match,
    _match_laws,
    adjust_pvalues,
    match_test,
)

# These tests check the published law of the MATCH test (null="fixed-reference");
# tests/stats/test_match_two_sample.py checks the default two-sample law.
match_test = functools.partial(match_test, null="fixed-reference", family="metric")

BINOMIAL = metric_names(family="binomial")
JOINT_RATIO = metric_names(family="joint_ratio")
EXACT_FAMILIES = BINOMIAL + JOINT_RATIO + ["mb"]
COLUMNS = [
    "group",
    "n",
    "metric",
    "score",
    "score_low",
    "score_high",
    "reference_score",
    "reference_range_low",
    "reference_range_high",
    "p_lower_tail",
    "p_upper_tail",
    "p_value",
    "p_adjusted",
    "p_undefined",
    "method",
    "reject",
]
ALPHA = 0.05


@pytest.fixture(autouse=True)
def _quiet_undefined():
    # Groups whose score is undefined are part of several designs below; the warning
    # itself is tested in test_undefined_observed_score.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        yield


def _run(counts, reference, metric, method, **kw):
    kw.setdefault(
        "confidence_level", None
    )  # the intervals are tested in test_result_intervals
    return match_test(
        counts=np.atleast_2d(counts),
        reference=reference,
        metric=metric,
        method=method,
        **kw,
    ).frame


# =====================================================================================
# 1. Exact closed forms against enumeration of all C(n + 3, 3) matrices
# =====================================================================================
REFERENCES = {
    "positive": [13, 4, 9, 21],
    "one_zero_cell": [8, 0, 5, 11],  # FN never occurs: tpr is always 1 under the null
    "zero_pair": [0, 0, 6, 9],  # TP + FN never occurs: tpr/fnr always undefined
}
SMOOTHERS = {
    "none": None,
    "additive": AdditiveSmoothing(eps=0.5),
    "cps": CrossPriorSmoothing(lam=3.0),
}


def _groups(n, seed, size=5):
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, rng.dirichlet(np.ones(4)), size=size)


def _enumerate_cases():
    for n in (1, 2, 5, 17, 60):
        for ref in REFERENCES:
            # n = 60 enumerates 39,711 matrices per group, metric and option: the
            # zero-cell reference runs by default, the other two in the slow suite.
            slow = n == 60 and ref != "one_zero_cell"
            yield pytest.param(
                n, ref, marks=[pytest.mark.slow] if slow else [], id=f"n{n}-{ref}"
            )


@pytest.mark.parametrize("smoother", list(SMOOTHERS))
@pytest.mark.parametrize("conditional", [True, False], ids=["cond", "uncond"])
@pytest.mark.parametrize("reference_uncertainty", [False, True], ids=["mult", "dm"])
@pytest.mark.parametrize("n, ref_name", list(_enumerate_cases()))
def test_exact_equals_enumerate(
    n, ref_name, reference_uncertainty, conditional, smoother
):
    counts = _groups(n, seed=n)
    kw = dict(
        reference_uncertainty=reference_uncertainty,
        conditional=conditional,
        smoothing=SMOOTHERS[smoother],
    )
    ref = REFERENCES[ref_name]
    exact = _run(counts, ref, EXACT_FAMILIES, "exact", **kw)
    enum = _run(counts, ref, EXACT_FAMILIES, "enumerate", **kw)
    assert (exact["method"] == "exact").all() and (enum["method"] == "enumerate").all()
    for col in ["score", "p_lower_tail", "p_upper_tail", "p_value", "p_undefined"]:
        a, b = exact[col].to_numpy(float), enum[col].to_numpy(float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=col)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10, err_msg=col)
    # the comparison is not vacuous: most rows are defined, tails are not all 0/1
    lower = exact["p_lower_tail"].to_numpy(float)
    assert np.mean(np.isfinite(lower)) > 0.7
    assert np.any((lower > 0) & (lower < 1))
    if n >= 5 and ref_name == "positive":
        assert np.mean((lower > 1e-6) & (lower < 1 - 1e-6)) > 0.3
    # ties count in both tails: lower + upper >= P(defined) (conditional: >= 1)
    defined = np.isfinite(lower)
    total = (exact["p_lower_tail"] + exact["p_upper_tail"]).to_numpy(float)[defined]
    p_def = 1.0 - exact["p_undefined"].to_numpy(float)[defined]
    assert np.all(total >= (1.0 if conditional else p_def) - 1e-12)


def test_exact_equals_enumerate_one_metric_per_call():
    # The multi-metric calls above could hide a metric-mixing bug; spot-check singles.
    counts = _groups(9, seed=1)
    ref = REFERENCES["positive"]
    for m in EXACT_FAMILIES:
        a = _run(counts, ref, m, "exact")[
            ["p_lower_tail", "p_upper_tail", "p_undefined"]
        ]
        b = _run(counts, ref, m, "enumerate")[
            ["p_lower_tail", "p_upper_tail", "p_undefined"]
        ]
        np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), atol=1e-10)


# ---- independent rational-arithmetic implementation of the joint-ratio sum ---------
def _rising(x, m):
    out = Fraction(1)
    for t in range(m):
        out *= x + t
    return out


def _binom_pmf(x, size, q):
    return comb(size, x) * q**x * (1 - q) ** (size - x)


def _betabinom_pmf(x, size, a, b):
    return comb(size, x) * _rising(a, x) * _rising(b, size - x) / _rising(a + b, size)


def _joint_ratio_by_hand(obs, ref, i, j, reference_uncertainty, smoother, conditional):
    """MATCH percentiles of c_i / (c_i + c_j) by a plain double loop over (k, c_i).

    Everything is a Fraction: the reference proportions, the Dirichlet parameters
    (prior 1/2), the smoothed scores (additive
    (c_i + eps) / (k + 2 eps); Cross-Prior (c_i + lam p'_i) / (k + lam (p'_i + p'_j)))
    and the comparisons, so ties are exact.
    """
    n, total = sum(obs), sum(ref)
    if smoother == "none":
        a = b = Fraction(0)
    elif smoother == "additive":
        a, b = Fraction(1, 2), Fraction(1)
    else:
        lam = Fraction(3)
        a, b = lam * Fraction(ref[i], total), lam * Fraction(ref[i] + ref[j], total)

    def score(c, k):
        return (c + a) / (k + b)

    s_obs = score(obs[i], obs[i] + obs[j])
    if reference_uncertainty:
        al = [Fraction(r) + Fraction(1, 2) for r in ref]
        aij = al[i] + al[j]

        def weight(k):
            return _betabinom_pmf(k, n, aij, sum(al) - aij)

        def split(c, k):
            return _betabinom_pmf(c, k, al[i], al[j])
    else:
        q = Fraction(ref[i] + ref[j], total)
        theta = Fraction(ref[i], ref[i] + ref[j]) if ref[i] + ref[j] else Fraction(0)

        def weight(k):
            return _binom_pmf(k, n, q)

        def split(c, k):
            return _binom_pmf(c, k, theta)

    lower = upper = p_def = Fraction(0)
    for k in range(n + 1):
        if k + b == 0:
            continue  # undefined
        wk = weight(k)
        p_def += wk
        for c in range(k + 1):
            mass = wk * split(c, k)
            s = score(c, k)
            if s <= s_obs:
                lower += mass
            if s >= s_obs:
                upper += mass
    if conditional:
        lower, upper = lower / p_def, upper / p_def
    return float(lower), float(upper), float(1 - p_def)


@pytest.mark.parametrize("smoother", list(SMOOTHERS))
@pytest.mark.parametrize("reference_uncertainty", [False, True], ids=["mult", "dm"])
@pytest.mark.parametrize("metric", JOINT_RATIO)
def test_exact_joint_ratio_equals_rational_double_loop(
    metric, reference_uncertainty, smoother
):
    m = get_metric(metric)
    (i,) = m.numerator
    (j,) = [c for c in m.denominator if c != i]
    rng = np.random.default_rng(7)
    for ref in ([13, 4, 9, 21], [8, 0, 5, 11], [2, 7, 0, 3]):
        for n in (1, 4, 11):
            obs_all = rng.multinomial(n, [0.3, 0.2, 0.2, 0.3], size=3)
            for conditional in (True, False):
                res = _run(
                    obs_all,
                    ref,
                    metric,
                    "exact",
                    reference_uncertainty=reference_uncertainty,
                    smoothing=SMOOTHERS[smoother],
                    conditional=conditional,
                )
                for row, obs in zip(res.itertuples(), obs_all):
                    if np.isnan(row.score):
                        assert obs[i] + obs[j] == 0
                        continue
                    lo, up, pu = _joint_ratio_by_hand(
                        list(map(int, obs)),
                        ref,
                        i,
                        j,
                        reference_uncertainty,
                        smoother,
                        conditional,
                    )
                    if np.isnan(row.p_lower_tail):  # no defined matrix under the null
                        assert pu == 1.0
                        continue
                    np.testing.assert_allclose(
                        [row.p_lower_tail, row.p_upper_tail, row.p_undefined],
                        [lo, up, pu],
                        rtol=0,
                        atol=1e-12,
                    )


@pytest.mark.parametrize("num", [29, 57, 58])  # 0.29 * 100, 0.57 * 100 < their ints
@pytest.mark.parametrize("reference_uncertainty", [False, True], ids=["mult", "dm"])
@pytest.mark.parametrize(
    "smoothing", [None, CrossPriorSmoothing(0.0)], ids=["raw", "cps0"]
)
def test_joint_ratio_threshold_uses_integer_arithmetic(
    num, reference_uncertainty, smoothing
):
    # tpr = num / 100 with every row positive: k = TP + FN = 100 always, so the tails
    # are binomial (beta-binomial) tails at c = num. floor(0.57 * 100) = 56 in floating
    # point would drop P(c = 57) (about 0.08). CPS with lam = 0 is the identity but
    # runs the smoothed (floating-point with tolerance) branch.
    ref = [num, 100 - num, 0, 0]
    res = _run(
        [num, 100 - num, 0, 0],
        ref,
        "tpr",
        "exact",
        reference_uncertainty=reference_uncertainty,
        smoothing=smoothing,
    ).iloc[0]
    if reference_uncertainty:
        # k is not always 100 now (FP/TN have prior mass): compare with enumerate
        enum = _run(
            [num, 100 - num, 0, 0],
            ref,
            "tpr",
            "enumerate",
            reference_uncertainty=True,
            smoothing=smoothing,
        ).iloc[0]
        expected = enum["p_lower_tail"], enum["p_upper_tail"]
    else:
        law = stats.binom(100, num / 100)
        expected = law.cdf(num), law.sf(num - 1)
    np.testing.assert_allclose(
        [res["p_lower_tail"], res["p_upper_tail"]], expected, rtol=0, atol=1e-10
    )


# =====================================================================================
# 2. Monte Carlo against exact / enumerate within 4 standard errors
# =====================================================================================
MC_REF = [30, 10, 20, 40]
MC_OBS = [6, 3, 4, 7]  # n = 20, near the reference: both tails between 0.3 and 0.8
MC_CASES = [
    ("tpr", "exact", False),
    ("tpr", "exact", True),
    ("acc", "exact", False),
    ("mb", "exact", True),
    ("ppv", "exact", True),
    ("mcc", "enumerate", False),
    ("mcc", "enumerate", True),
    ("f1", "enumerate", False),
    ("pt", "enumerate", False),  # P(undefined) ~ 1%: conditioning matters
    ("pt", "enumerate", True),
]


@pytest.mark.parametrize("conditional", [True, False], ids=["cond", "uncond"])
@pytest.mark.parametrize("metric, method, reference_uncertainty", MC_CASES)
def test_montecarlo_agrees_with_exact(
    metric, method, reference_uncertainty, conditional
):
    n_resamples = 20_000
    kw = dict(reference_uncertainty=reference_uncertainty, conditional=conditional)
    for alternative, tail in (("less", "p_lower_tail"), ("greater", "p_upper_tail")):
        exact = _run(MC_OBS, MC_REF, metric, method, alternative=alternative, **kw)
        mc = _run(
            MC_OBS,
            MC_REF,
            metric,
            "montecarlo",
            alternative=alternative,
            n_resamples=n_resamples,
            random_state=11,
            **kw,
        )
        p_ex, p_mc = float(exact["p_value"].iloc[0]), float(mc["p_value"].iloc[0])
        assert p_ex == float(exact[tail].iloc[0]) and p_mc == float(mc[tail].iloc[0])
        # independent SE: a proportion over the defined draws (delta method for the
        # conditional ratio estimator), at the exact value
        p_def = 1.0 - float(exact["p_undefined"].iloc[0])
        n_eff = n_resamples * p_def if conditional else n_resamples
        se_indep = sqrt(p_ex * (1 - p_ex) / n_eff)
        se_reported = float(mc["se"].iloc[0])
        assert 0.1 < p_ex < 0.9  # keeps the normal approximation of the SE honest
        assert abs(p_mc - p_ex) <= 4 * se_reported
        assert abs(p_mc - p_ex) <= 4 * se_indep
        # the reported SE estimates the same quantity: its relative error is
        # O(|p_mc - p_ex| / p) + O(1/sqrt(n_resamples p_def)), below 10% here
        assert se_reported == pytest.approx(se_indep, rel=0.1)
        # P(undefined) is a plain proportion of all draws
        pu_ex, pu_mc = (
            float(exact["p_undefined"].iloc[0]),
            float(mc["p_undefined"].iloc[0]),
        )
        se_pu = sqrt(max(pu_ex * (1 - pu_ex), 1e-12) / n_resamples)
        assert abs(pu_mc - pu_ex) <= 4 * se_pu + 1.0 / n_resamples


def test_montecarlo_two_sided_se_and_p_value():
    n_resamples = 20_000
    exact = _run(MC_OBS, MC_REF, "mcc", "enumerate")
    mc = _run(
        MC_OBS, MC_REF, "mcc", "montecarlo", n_resamples=n_resamples, random_state=2
    )
    p_ex = float(exact["p_value"].iloc[0])
    lower = float(mc["p_lower_tail"].iloc[0])
    # two-sided = 2 x the smaller tail, so its SE is 2 x that tail's binomial SE over
    # the defined draws (conditional percentiles)
    tail = min(lower, float(mc["p_upper_tail"].iloc[0]))
    n_defined = round(n_resamples * (1 - float(mc["p_undefined"].iloc[0])))
    assert n_defined < n_resamples  # a few undefined draws: the base matters
    assert float(mc["se"].iloc[0]) == pytest.approx(
        2 * sqrt(tail * (1 - tail) / n_defined), rel=1e-12
    )
    assert abs(float(mc["p_value"].iloc[0]) - p_ex) <= 4 * float(mc["se"].iloc[0])


# =====================================================================================
# 3. The worked example: n = 100, p = 0.75, k = 80
# =====================================================================================
def test_worked_example():
    counts = {"g": [40, 40, 10, 10]}  # prev = (TP + FN) / n = 80 / 100
    ref = [75, 0, 0, 25]  # reference prevalence 0.75
    exact = match_test(counts=counts, reference=ref, metric="prev").frame.iloc[0]
    normal = match_test(
        counts=counts, reference=ref, metric="prev", method="asymptotic"
    ).frame.iloc[0]
    assert exact["method"] == "exact"
    assert round(exact["p_lower_tail"], 4) == 0.9005
    assert round(normal["p_lower_tail"], 4) == 0.8980
    assert exact["p_lower_tail"] == pytest.approx(
        stats.binom.cdf(80, 100, 0.75), abs=1e-13
    )
    assert exact["p_upper_tail"] == pytest.approx(
        stats.binom.sf(79, 100, 0.75), abs=1e-13
    )
    z = (80 + 0.5 - 75) / sqrt(100 * 0.75 * 0.25)
    assert normal["p_lower_tail"] == pytest.approx(stats.norm.cdf(z), abs=1e-14)
    # the same binomial through another metric and another cell pair
    acc = match_test(
        counts={"g": [50, 10, 10, 30]}, reference=[40, 5, 20, 35], metric="acc"
    ).frame.iloc[0]
    assert acc["p_lower_tail"] == pytest.approx(exact["p_lower_tail"], abs=1e-13)


# =====================================================================================
# 4. Normal and beta approximations
# =====================================================================================
def _berry_esseen(values, probs, n):
    """Berry-Esseen bound C rho / (sigma^3 sqrt(n)), C = 0.4748 (Shevtsova 2011), for
    a sum of n i.i.d. copies of a variable with the given values and probabilities.
    For an integer lattice with the +-0.5 continuity correction the bound applies to
    P(S <= x) = P(S <= x + 0.5) directly, so it bounds |normal - exact| rigorously."""
    values, probs = np.asarray(values, float), np.asarray(probs, float)
    mu = probs @ values
    sigma2 = probs @ (values - mu) ** 2
    rho = probs @ np.abs(values - mu) ** 3
    return 0.4748 * rho / (sigma2**1.5 * sqrt(n))


@pytest.mark.parametrize("n", [30, 100, 500])
@pytest.mark.parametrize("metric", BINOMIAL)
def test_normal_binomial_within_berry_esseen(metric, n):
    ref = np.array([40, 10, 15, 35])
    cells = list(get_metric(metric).numerator)
    q = ref[cells].sum() / ref.sum()
    bound = _berry_esseen([1, 0], [q, 1 - q], n)
    rng = np.random.default_rng(n)
    counts = rng.multinomial(n, ref / ref.sum(), size=8)
    exact = _run(counts, ref, metric, "exact")
    normal = _run(counts, ref, metric, "asymptotic")
    for tail in ("p_lower_tail", "p_upper_tail"):
        err = np.abs(exact[tail] - normal[tail]).max()
        # measured: at most 0.014 (acc/inacc, n=30) against bounds 0.02-0.13
        assert err <= bound
    # the documented formula, with continuity correction (the bound alone would not
    # notice a dropped correction)
    k = counts[:, cells].sum(axis=1)
    sd = sqrt(n * q * (1 - q))
    np.testing.assert_allclose(
        normal["p_lower_tail"], stats.norm.cdf((k + 0.5 - n * q) / sd), rtol=1e-12
    )
    np.testing.assert_allclose(
        normal["p_upper_tail"], stats.norm.cdf((n * q - k + 0.5) / sd), rtol=1e-12
    )
    assert "se" not in normal.columns and (normal["method"] == "asymptotic").all()


def test_normal_mb_against_exact_large_n():
    # z = (S - n mu) / sqrt(n sigma^2), S = FP - FN (a count).
    n = 2000
    ref = np.array([40, 10, 15, 35])
    p = ref / ref.sum()
    mu, sigma2 = p[2] - p[1], p[2] + p[1] - (p[2] - p[1]) ** 2
    bound = _berry_esseen([1, -1, 0], [p[2], p[1], p[0] + p[3]], n)  # = 0.021
    assert bound < 0.025
    rows = []
    for s in (40, 70, 100, 130, 160):  # n mu = 100; sd = sqrt(n sigma2) = 22.2
        t = 500
        fp, fn = (t + s) // 2, t - (t + s) // 2
        rows.append([800, fn, fp, n - 800 - t])
    exact = _run(rows, ref, "mb", "exact")
    normal = _run(rows, ref, "mb", "asymptotic")
    err = np.abs(
        exact[["p_lower_tail", "p_upper_tail"]].to_numpy()
        - normal[["p_lower_tail", "p_upper_tail"]].to_numpy()
    )
    # measured: max error 1.6e-4 (at S = n mu); the Berry-Esseen bound is 0.021
    assert err.max() <= min(0.01, bound)
    # the documented formula (continuity-corrected, like the binomial one; without the
    # correction the error at S = n mu would be 0.009 instead of 0.00016)
    s_cnt = np.array([r[2] - r[1] for r in rows])
    sd = sqrt(n * sigma2)
    np.testing.assert_allclose(
        normal["p_lower_tail"], stats.norm.cdf((s_cnt + 0.5 - n * mu) / sd), rtol=1e-12
    )
    # The published formula without the factors n, z = (MB - mu) / sigma with
    # MB = S / n, is badly off: at S = 40 the exact lower tail is 0.0037, the
    # published one 0.476. A "fix" back to it fails the assertion above.
    s_obs = (exact["score"] * n).to_numpy()
    published = stats.norm.cdf((s_obs / n - mu) / sqrt(sigma2))
    assert np.abs(published - exact["p_lower_tail"].to_numpy()).max() > 0.4


def test_normal_with_reference_uncertainty_uses_the_beta_binomial_variance():
    # With p ~ Dirichlet(ref + a0), k is beta-binomial: the normal approximation must
    # use its variance, n q (1 - q) (A + n) / (A + 1).
    n, ref, prior = 120, np.array([12, 3, 5, 20]), 0.5
    obs = [70, 20, 10, 20]  # prev: k = 90
    res = _run(obs, ref, "prev", "asymptotic", reference_uncertainty=True)
    alpha = ref + prior
    law = stats.betabinom(n, alpha[0] + alpha[1], alpha[2] + alpha[3])
    z = stats.norm.ppf(float(res["p_lower_tail"].iloc[0]))
    assert (90 + 0.5 - law.mean()) / z == pytest.approx(law.std(), rel=1e-9)
    z_up = stats.norm.ppf(float(res["p_upper_tail"].iloc[0]))
    assert (law.mean() - 90 + 0.5) / z_up == pytest.approx(law.std(), rel=1e-9)
    # ... and mb: the whole covariance of the Dirichlet-multinomial inflates alike
    res = _run(obs, ref, "mb", "asymptotic", reference_uncertainty=True)
    pa = alpha / alpha.sum()
    mu = pa[2] - pa[1]
    var = n * (pa[2] + pa[1] - mu**2) * (alpha.sum() + n) / (alpha.sum() + 1)
    z = stats.norm.ppf(float(res["p_lower_tail"].iloc[0]))
    assert (10 - 20 + 0.5 - n * mu) / z == pytest.approx(sqrt(var), rel=1e-9)


# (reference, observed) for the beta approximation. Measured |p_beta - p_exact| of the
# two-sided p-values (tpr / fpr / ppv / for):
#   ref [30,10,20,40]  obs [2,2,3,3]      n=10   0.040 / 0.069 / 0.090 / 0.121
#   ref [30,10,20,40]  obs [6,1,5,8]      n=20   0.331 / 0.054 / 0.021 / 0.364
#   ref [30,10,20,40]  obs [12,8,10,20]   n=50   0.038 / 0.068 / 0.040 / 0.065
#   ref [30,10,20,40]  obs [50,10,30,60]  n=150  0.059 / 0.039 / 0.054 / 0.070
#   ref [5,1,60,34]    obs [1,1,6,12]     n=20   0.058 / 0.002 / 0.557 / 0.598
# e.g. tpr at n=20: exact p 0.596, beta p 0.265. No theory bounds this error (the beta
# law is continuous, ignores the lattice and the randomness of the denominator), so
# only its definition is asserted, plus "finite and different from exact".
BETA_CASES = [
    ([30, 10, 20, 40], [2, 2, 3, 3]),
    ([30, 10, 20, 40], [6, 1, 5, 8]),
    ([30, 10, 20, 40], [12, 8, 10, 20]),
    ([30, 10, 20, 40], [50, 10, 30, 60]),
    ([5, 1, 60, 34], [1, 1, 6, 12]),
]


@pytest.mark.parametrize("metric", ["tpr", "fpr", "ppv", "for"])
@pytest.mark.parametrize("ref, obs", BETA_CASES)
def test_beta_approximation_is_its_definition(ref, obs, metric):
    m = get_metric(metric)
    (i,) = m.numerator
    (j,) = [c for c in m.denominator if c != i]
    ref, obs = np.array(ref), np.array(obs)
    res = _run(obs, ref, metric, "beta").iloc[0]
    k = obs[i] + obs[j]
    theta = ref[i] / (ref[i] + ref[j])
    law = stats.beta(k * theta + 1, k * (1 - theta) + 1)
    s = obs[i] / k
    assert res["method"] == "beta" and "se" not in res.index
    assert res["p_lower_tail"] == pytest.approx(law.cdf(s), abs=1e-14)
    assert res["p_upper_tail"] == pytest.approx(law.sf(s), abs=1e-14)
    q = (ref[i] + ref[j]) / ref.sum()
    p_undef = (1 - q) ** obs.sum()
    assert res["p_undefined"] == pytest.approx(p_undef, rel=1e-12)
    uncond = _run(obs, ref, metric, "beta", conditional=False).iloc[0]
    assert uncond["p_lower_tail"] == pytest.approx(
        law.cdf(s) * (1 - p_undef), abs=1e-14
    )
    assert uncond["p_upper_tail"] == pytest.approx(law.sf(s) * (1 - p_undef), abs=1e-14)
    # the measured error against the exact law (documented above) is finite and > 0
    exact = _run(obs, ref, metric, "exact").iloc[0]
    err = abs(res["p_value"] - exact["p_value"])
    assert np.isfinite(err) and err > 1e-3


# =====================================================================================
# 5. Calibration under the null (simulation)
# =====================================================================================
def _rejection_rate(frame, alpha=ALPHA):
    p = frame["p_value"].to_numpy(float)
    p = p[~np.isnan(p)]  # groups whose score is undefined cannot be tested
    rate = float(np.mean(p <= alpha))
    se = sqrt(alpha * (1 - alpha) / p.size)  # MC SE of a rate equal to alpha
    return rate, se, p.size


TRUE_P = np.array([0.3, 0.1, 0.15, 0.45])
TRUE_REF = np.round(TRUE_P * 1000).astype(int)  # the reference law itself


@pytest.mark.slow
@pytest.mark.parametrize(
    "metric, method, n, n_groups",
    [
        ("acc", "exact", 30, 10_000),
        ("tpr", "exact", 30, 8_000),
        ("fpr", "exact", 20, 8_000),
        ("mb", "exact", 30, 8_000),
        ("mcc", "enumerate", 20, 10_000),
    ],
)
def test_calibration_under_the_null(metric, method, n, n_groups):
    rng = np.random.default_rng(2024)
    counts = rng.multinomial(n, TRUE_P, size=n_groups)
    res = match_test(counts=counts, reference=TRUE_REF, metric=metric, method=method)
    rate, se, size = _rejection_rate(res.frame)
    assert size > 0.95 * n_groups
    # measured: acc 0.031, tpr 0.027, fpr 0.021, mb 0.026, mcc 0.048 (SE 0.0022-0.0024;
    # the exact tests of discrete scores are conservative)
    assert rate <= ALPHA + 3 * se
    # not vacuous: a test that never rejects would pass the line above
    assert rate > 0.01


@pytest.mark.slow
@pytest.mark.parametrize(
    "metric, n_ref, n",
    [("prev", 100, 50), ("prev", 30, 200), ("tpr", 100, 50), ("tpr", 30, 200)],
)
def test_calibration_with_reference_uncertainty(metric, n_ref, n):
    # The reference is itself a small sample of the true law; the group is another.
    n_rep = 8_000
    rng = np.random.default_rng(n_ref * 1000 + n)
    refs = rng.multinomial(n_ref, TRUE_P, size=n_rep)
    counts = rng.multinomial(n, TRUE_P, size=n_rep)
    with_ru = match_test(
        counts=counts, reference=refs, metric=metric, reference_uncertainty=True
    )
    rate, se, _ = _rejection_rate(with_ru.frame)
    assert rate <= ALPHA + 3 * se
    assert rate > 0.02
    # measured with it: prev 0.040 / 0.045, tpr 0.046 / 0.052 at (100, 50) / (30, 200)
    # (SE 0.0024). Without the refinement the reference's own sampling noise is
    # ignored and the test over-rejects clearly: prev 0.091 / 0.470, tpr 0.103 / 0.495.
    naive = match_test(counts=counts, reference=refs, metric=metric)
    rate_naive, se_naive, _ = _rejection_rate(naive.frame)
    assert rate_naive - 3 * se_naive > ALPHA


CALIBRATION_SIZES = (5, 10, 20, 50, 200)
CALIBRATION_CASES = [
    # (metric, method): auto (the default) and the approximations
    ("tpr", "auto"),
    ("fpr", "auto"),
    ("acc", "auto"),
    ("mb", "auto"),
    ("mcc", "auto"),
    ("f1", "auto"),
    ("tpr", "saddlepoint"),
    ("acc", "saddlepoint"),
    ("mb", "saddlepoint"),
    ("acc", "asymptotic"),
    ("mb", "asymptotic"),
    ("tpr", "beta"),
]


@pytest.mark.slow
def test_calibration_of_auto_and_the_approximations():
    # Rejection rate at alpha = 0.05 under the null (groups drawn from the reference
    # law itself), 20,000 groups per size; about 10 s. Measured (user guide,
    # calibration page):
    #                         n = 5     10      20      50      200
    #   tpr   auto (exact)      0.000  0.022   0.020   0.044   0.052
    #   fpr   auto (exact)      0.000  0.017   0.023   0.048   0.051
    #   acc   auto (exact)      0.016  0.021   0.037   0.031   0.041
    #   mb    auto (exact)      0.027  0.010   0.042   0.047   0.040
    #   mcc   auto (enumerate)  0.015  0.025   0.047   0.047   0.050
    #   f1    auto (enumerate)  0.000  0.000   0.048   0.045   0.048
    #   tpr   saddlepoint       0.000  0.022   0.020   0.051   0.052
    #   acc   saddlepoint       0.016  0.021   0.037   0.031   0.041
    #   mb    saddlepoint       0.027  0.010   0.042   0.047   0.040
    #   acc   normal            0.016  0.021   0.017   0.019   0.041
    #   mb    normal            0.027  0.010   0.042   0.047   0.040
    #   tpr   beta (published)  0.656  0.382   0.149   0.085   0.062
    # (Monte Carlo standard error 0.0015 at a rate of 0.05.)
    # The exact tests of discrete scores are conservative (two one-sided tests at
    # alpha / 2 each); the beta approximation is not a test at these sizes.
    n_groups = 20_000
    se = sqrt(ALPHA * (1 - ALPHA) / n_groups)
    table = {}
    for n in CALIBRATION_SIZES:
        counts = np.random.default_rng(n).multinomial(n, TRUE_P, size=n_groups)
        for metric, method in CALIBRATION_CASES:
            res = match_test(
                counts=counts, reference=TRUE_REF, metric=metric, method=method
            )
            used = set(res.frame["method"])
            rate, _, size = _rejection_rate(res.frame)
            table.setdefault((metric, method), {})[n] = rate
            if method == "auto":
                assert used <= {"exact", "enumerate"}
                # exact laws: at most alpha up to Monte Carlo error; the defaults
                # within 1.5 points of alpha or below
                assert rate <= ALPHA + 2 * se
                assert rate <= ALPHA + 0.015
                assert size > (0.5 if n == 5 else 0.9) * n_groups
            elif method != "beta":
                assert rate <= ALPHA + 0.015
    print(pd.DataFrame(table).T.round(3).to_string())
    # not vacuous: from n = 20 on the tests do reject at close to the nominal rate
    for metric in ("tpr", "acc", "mb", "mcc"):
        assert table[(metric, "auto")][50] > 0.025
        assert table[(metric, "auto")][200] > 0.035
    # the published beta approximation over-rejects small groups badly
    assert table[("tpr", "beta")][5] > 0.5 and table[("tpr", "beta")][200] > ALPHA


# =====================================================================================
# 6. Corrections inside match_test
# =====================================================================================
@pytest.mark.parametrize("correction", ["holm", "bonferroni", "fdr_bh"])
def test_correction_within_each_metric(correction):
    counts = {
        "a": [3, 9, 2, 20],
        "b": [20, 2, 9, 3],
        "c": [8, 8, 8, 8],
        "d": [0, 0, 4, 4],  # tpr undefined: NaN, not counted in the tpr family
        "e": [12, 1, 1, 12],
    }
    raw = match_test(counts=counts, metric=["tpr", "acc"], correction="none")
    adj = match_test(counts=counts, metric=["tpr", "acc"], correction=correction)
    f, g = raw.frame, adj.frame
    for name in ("tpr", "acc"):
        sel = f["metric"] == name
        expected = adjust_pvalues(f.loc[sel, "p_value"].to_numpy(float), correction)
        np.testing.assert_allclose(
            g.loc[sel, "p_adjusted"].to_numpy(float), expected, equal_nan=True
        )
    np.testing.assert_array_equal(g["p_value"], f["p_value"])
    # the families are separate: 5 acc p-values, 4 defined tpr p-values
    acc = g[g["metric"] == "acc"]
    if correction == "bonferroni":
        np.testing.assert_allclose(
            acc["p_adjusted"], np.minimum(1, 5 * acc["p_value"]), rtol=1e-15
        )
        tpr = g[(g["metric"] == "tpr") & g["p_value"].notna()]
        np.testing.assert_allclose(
            tpr["p_adjusted"], np.minimum(1, 4 * tpr["p_value"]), rtol=1e-15
        )
    assert (g["reject"] == (g["p_adjusted"] <= ALPHA)).all()


# =====================================================================================
# 7. The result object
# =====================================================================================
COUNTS = {"a": [3, 2, 1, 4], "b": [5, 5, 5, 5], "c": [1, 0, 2, 9], "d": [9, 1, 0, 7]}


def test_result_columns_and_dtypes():
    res = match_test(counts=COUNTS, metric="tpr")
    assert isinstance(res, MatchResult)
    frame = res.frame
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 4
    assert frame["n"].dtype.kind == "i"
    for col in ["score", "reference_score", "p_lower_tail", "p_upper_tail", "p_value"]:
        assert frame[col].dtype == np.float64
    for col in ["p_adjusted", "p_undefined"]:
        assert frame[col].dtype == np.float64
    assert frame["reject"].dtype == bool
    assert pd.api.types.is_string_dtype(frame["method"])
    assert pd.api.types.is_string_dtype(frame["metric"])
    assert list(frame["group"]) == list(COUNTS)
    assert list(frame["n"]) == [sum(v) for v in COUNTS.values()]
    assert res.alpha == ALPHA
    assert repr(res) == "MatchResult(alpha=0.05, n_tests=4, n_rejected=0)"
    assert "<table" in res._repr_html_()


def test_to_frame_is_a_copy():
    res = match_test(counts=COUNTS, metric="tpr")
    out = res.to_frame()
    pd.testing.assert_frame_equal(out, res.frame)
    out.loc[0, "p_value"] = -1.0
    out["extra"] = 1
    assert res.frame.loc[0, "p_value"] != -1.0
    assert "extra" not in res.frame.columns


def test_pvalues_and_reject_series():
    res = match_test(counts=COUNTS, metric="tpr", correction="holm")
    assert list(res.pvalues.index) == list(COUNTS)
    assert res.pvalues.index.name == "group"
    np.testing.assert_array_equal(res.pvalues.to_numpy(), res.frame["p_adjusted"])
    np.testing.assert_array_equal(res.reject.to_numpy(), res.frame["reject"])
    several = match_test(counts=COUNTS, metric=["tpr", "mcc"])
    assert several.pvalues.index.names == ["group", "metric"]
    assert (
        several.pvalues.loc[("c", "mcc")]
        == several.frame.query("group == 'c' and metric == 'mcc'")["p_adjusted"].item()
    )
    assert several.reject.index.names == ["group", "metric"]
    assert len(several.reject) == 8


@pytest.mark.parametrize("metric", ["tpr", "acc", "mb", "mcc"])
def test_alternatives(metric):
    res = {
        alt: match_test(counts=COUNTS, metric=metric, alternative=alt).frame
        for alt in ("two-sided", "less", "greater")
    }
    lower, upper = res["two-sided"]["p_lower_tail"], res["two-sided"]["p_upper_tail"]
    for alt in ("less", "greater"):  # the percentiles do not depend on the alternative
        np.testing.assert_array_equal(res[alt]["p_lower_tail"], lower)
        np.testing.assert_array_equal(res[alt]["p_upper_tail"], upper)
    np.testing.assert_array_equal(res["less"]["p_value"], lower)
    np.testing.assert_array_equal(res["greater"]["p_value"], upper)
    np.testing.assert_allclose(
        res["two-sided"]["p_value"], np.minimum(1, 2 * np.minimum(lower, upper))
    )


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2, 0.5])
def test_reject_is_p_adjusted_at_most_alpha(alpha):
    rng = np.random.default_rng(5)
    counts = rng.multinomial(25, [0.4, 0.1, 0.1, 0.4], size=12)
    counts[:4] = rng.multinomial(25, [0.1, 0.4, 0.4, 0.1], size=4)  # some disparity
    res = match_test(counts=counts, metric="acc", alpha=alpha, correction="fdr_bh")
    f = res.frame
    assert (f["reject"] == (f["p_adjusted"] <= alpha)).all()
    assert res.alpha == alpha
    if alpha >= 0.05:
        assert f["reject"].any() and not f["reject"].all()


def test_reject_includes_equality():
    # n = 1, prevalence 1/2, observed k = 0: lower = P(k <= 0) = 0.5 exactly
    res = match_test(
        counts={"g": [0, 0, 0, 1]},
        reference=[1, 0, 0, 1],
        metric="prev",
        alternative="less",
        alpha=0.5,
    ).frame
    assert res["p_adjusted"].item() == 0.5
    assert res["reject"].item()


def test_method_column_shows_what_auto_chose():
    assert (match_test(counts=COUNTS, metric="tpr").frame["method"] == "exact").all()
    assert (match_test(counts=COUNTS, metric="mb").frame["method"] == "exact").all()
    assert (
        match_test(counts=COUNTS, metric="mcc").frame["method"] == "enumerate"
    ).all()
    # auto enumerates up to AUTO_ENUMERATE_MAX_N (under a second), method="enumerate"
    # up to ENUMERATE_MAX_N
    top = _match.AUTO_ENUMERATE_MAX_N
    assert top == 200 < ENUMERATE_MAX_N
    ref = [30, 10, 20, 40]
    at_max = {"g": [50, 50, 50, top - 150]}
    f = match_test(counts=at_max, reference=ref, metric="f1").frame
    assert f["method"].item() == "enumerate"
    big = {"small": [3, 2, 1, 4], "big": [60, 20, 40, top - 119]}
    f = match_test(
        counts=big, reference=ref, metric="mcc", n_resamples=200, random_state=0
    ).frame
    assert list(f["method"]) == ["enumerate", "montecarlo"]
    assert np.isnan(f["se"].iloc[0]) and f["se"].iloc[1] > 0
    f = match_test(counts=big, reference=ref, metric="mcc", method="enumerate").frame
    assert list(f["method"]) == ["enumerate", "enumerate"]


@pytest.mark.parametrize("reference", ["rest", "total", "b"])
@pytest.mark.parametrize("metric", ["tpr", "mcc", "mb", "pt"])
def test_reference_score_is_the_metric_of_the_reference(reference, metric):
    groups = np.array(list(COUNTS))
    counts = np.array(list(COUNTS.values()))
    res = match_test(counts=COUNTS, metric=metric, reference=reference).frame
    refs = reference_counts(counts, reference, groups=groups)
    np.testing.assert_allclose(
        res["reference_score"], compute_metric(metric, refs), equal_nan=True
    )
    np.testing.assert_allclose(
        res["score"], compute_metric(metric, counts), equal_nan=True
    )


def test_undefined_observed_score():
    counts = {"ok": [4, 2, 3, 5], "nopos": [0, 0, 3, 5]}  # tpr of "nopos" is 0/0
    ref = np.array([30, 10, 20, 40])
    with pytest.warns(UndefinedGroupMetricWarning, match=r"tpr is undefined.*'nopos'"):
        res = match_test(counts=counts, reference=ref, metric="tpr").frame
    row = res.iloc[1]
    assert (
        np.isnan(row["score"])
        and np.isnan(row["p_lower_tail"])
        and np.isnan(row["p_upper_tail"])
    )
    assert (
        np.isnan(row["p_value"]) and np.isnan(row["p_adjusted"]) and not row["reject"]
    )
    closed_form = (1 - 40 / 100) ** 8  # P(TP + FN = 0) at n = 8
    assert row["p_undefined"] == pytest.approx(closed_form, rel=1e-12)
    assert res["p_undefined"].iloc[0] == pytest.approx(0.6**14, rel=1e-12)
    # enumerate and Monte Carlo agree for the undefined group too
    enum = match_test(counts=counts, reference=ref, metric="tpr", method="enumerate")
    assert enum.frame["p_undefined"].iloc[1] == pytest.approx(closed_form, rel=1e-10)
    n_resamples = 50_000
    mc = match_test(
        counts=counts,
        reference=ref,
        metric="tpr",
        method="montecarlo",
        n_resamples=n_resamples,
        random_state=0,
    ).frame
    se = sqrt(closed_form * (1 - closed_form) / n_resamples)
    assert abs(mc["p_undefined"].iloc[1] - closed_form) <= 4 * se
    # mcc: undefined when a margin is empty; check against a scipy multinomial sum
    with pytest.warns(UndefinedGroupMetricWarning, match="mcc is undefined"):
        res = match_test(counts={"g": [0, 0, 2, 3]}, reference=ref, metric="mcc")
    cms = np.array(
        [
            (a, b, c, 5 - a - b - c)
            for a in range(6)
            for b in range(6 - a)
            for c in range(6 - a - b)
        ]
    )
    margins = np.stack(
        [
            cms[:, 0] + cms[:, 2],
            cms[:, 0] + cms[:, 1],
            cms[:, 3] + cms[:, 2],
            cms[:, 3] + cms[:, 1],
        ],
        axis=1,
    )
    pmf = stats.multinomial.pmf(cms, 5, ref / ref.sum())
    expected = pmf[(margins == 0).any(axis=1)].sum()
    assert res.frame["p_undefined"].item() == pytest.approx(expected, rel=1e-10)


def test_undefined_observed_score_large_group_exact_with_smoothing():
    # Regression: with smoothing and n > ENUMERATE_MAX_N the exact method returned
    # NaN for P(undefined) of a group whose (smoothed) score is undefined.
    n = ENUMERATE_MAX_N + 50
    ref = np.array([30, 10, 20, 40])
    res = match_test(
        counts={"g": [0, 0, 200, n - 200]},
        reference=ref,
        metric="tpr",
        method="exact",
        smoothing=AdditiveSmoothing(eps=0.0),
    ).frame
    assert res["p_undefined"].item() == pytest.approx(0.6**n, rel=1e-9)


def test_undefined_observed_score_montecarlo_uses_n_resamples():
    # Regression: P(undefined) of an undefined group used 100,000 draws whatever
    # n_resamples said; with n_resamples = 7 it must be a multiple of 1/7.
    res = match_test(
        counts={"g": [0, 0, 1, 1]},
        reference=[1, 1, 1, 1],
        metric="tpr",
        method="montecarlo",
        n_resamples=7,
        random_state=0,
    ).frame
    assert (res["p_undefined"].item() * 7) == pytest.approx(
        round(res["p_undefined"].item() * 7), abs=1e-12
    )


# =====================================================================================
# 8. Inputs, reproducibility and the estimator
# =====================================================================================
def _rows(seed=0, n=300):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.75, y_true, 1 - y_true)
    groups = rng.choice(["x", "y", "z"], size=n, p=[0.6, 0.3, 0.1])
    return y_true, y_pred, groups


@pytest.mark.parametrize(
    "metric, kw",
    [
        ("tpr", {}),
        ("mcc", {"random_state": 0}),
        ("mb", {"reference": "total", "random_state": 0}),
        ("f1", {"method": "montecarlo", "n_resamples": 2000, "random_state": 4}),
        (
            "ppv",
            {
                "smoothing": CrossPriorSmoothing(5.0),
                "reference_uncertainty": True,
                "random_state": 0,
            },
        ),
    ],
)
def test_rows_equal_counts(metric, kw):
    y_true, y_pred, groups = _rows()
    labels, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
    from_rows = match_test(
        y_true, y_pred, sensitive_features=groups, metric=metric, **kw
    )
    table = pd.DataFrame(counts, index=labels, columns=["TP", "FN", "FP", "TN"])
    from_counts = match_test(counts=table, metric=metric, **kw)
    pd.testing.assert_frame_equal(from_rows.frame, from_counts.frame, check_dtype=False)
    assert list(from_rows.frame["group"]) == ["x", "y", "z"]


def test_random_state_reproducibility():
    counts = {"a": [3, 2, 1, 4], "b": [5, 5, 5, 5], "c": [9, 1, 0, 7]}
    ref = [30, 10, 20, 40]
    kw = dict(
        reference=ref,
        metric=["f1", "mcc"],
        method="montecarlo",
        n_resamples=3000,
        correction="none",
    )
    first = match_test(counts=counts, random_state=42, **kw).frame
    again = match_test(counts=counts, random_state=42, **kw).frame
    pd.testing.assert_frame_equal(first, again)
    other = match_test(counts=counts, random_state=43, **kw).frame
    assert not np.array_equal(first["p_lower_tail"], other["p_lower_tail"])
    # each group has its own stream: identical matrices under different labels get
    # different Monte Carlo estimates (a shared stream would give equal ones)
    twins = match_test(
        counts={"t1": counts["b"], "t2": counts["b"]}, random_state=42, **kw
    ).frame
    for _, pair in twins.groupby("metric"):
        assert pair["p_lower_tail"].iloc[0] != pair["p_lower_tail"].iloc[1]
    gen = match_test(counts=counts, random_state=np.random.default_rng(5), **kw).frame
    gen2 = match_test(counts=counts, random_state=np.random.default_rng(5), **kw).frame
    pd.testing.assert_frame_equal(gen, gen2)
    # a group's result does not depend on which other groups (or metrics) are passed,
    # nor on their order
    alone = match_test(counts={"b": counts["b"]}, random_state=42, **kw).frame
    pd.testing.assert_frame_equal(
        alone.reset_index(drop=True),
        first[first["group"] == "b"].reset_index(drop=True),
    )
    swapped = match_test(
        counts={"c": counts["c"], "b": counts["b"], "a": counts["a"]},
        random_state=42,
        **kw,
    ).frame
    pd.testing.assert_frame_equal(
        swapped.sort_values(["metric", "group"]).reset_index(drop=True),
        first.sort_values(["metric", "group"]).reset_index(drop=True),
    )
    only_mcc = match_test(
        counts=counts, random_state=42, **{**kw, "metric": "mcc"}
    ).frame
    pd.testing.assert_frame_equal(
        only_mcc.reset_index(drop=True),
        first[first["metric"] == "mcc"].reset_index(drop=True),
    )


# =====================================================================================
# 9. Bad inputs
# =====================================================================================
GOOD = {"a": [3, 2, 1, 4], "b": [5, 5, 5, 5]}


def _declared(param):
    """The start of the message of a refused declared parameter."""
    return rf"The '{param}' parameter of match_test must be"


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"metric": "ofi"}, "two-group metric"),
        ({"metric": "te"}, "two-group metric"),
        ({"metric": ["tpr", "te"]}, "two-group metric"),
        (
            {"metric": "tpr", "method": "asymptotic"},
            r"method='asymptotic' handles .*'tpr'",
        ),
        ({"metric": "mcc", "method": "beta"}, r"method='beta' handles .*'mcc'"),
        ({"metric": "acc", "method": "beta"}, r"method='beta' handles .*'acc'"),
        ({"metric": "f1", "method": "exact"}, r"method='exact' handles .*'f1'"),
        (
            {"metric": "pt", "method": "asymptotic"},
            r"method='asymptotic' handles .*'pt'",
        ),
        (
            {"metric": "mcc", "method": "saddlepoint"},
            r"method='saddlepoint' handles .*'mcc'",
        ),
        ({"method": "bootstrap"}, _declared("method")),
        ({"alternative": "two_sided"}, _declared("alternative")),
        ({"alternative": "lower"}, _declared("alternative")),
        ({"n_resamples": 0}, _declared("n_resamples")),
        ({"n_resamples": -5}, _declared("n_resamples")),
        ({"n_resamples": 1000.0}, _declared("n_resamples")),
        ({"n_resamples": 1e5}, _declared("n_resamples")),
        ({"n_resamples": True}, _declared("n_resamples")),
        ({"alpha": 0}, _declared("alpha")),
        ({"alpha": 1}, _declared("alpha")),
        ({"alpha": 1.5}, _declared("alpha")),
        ({"alpha": -0.05}, _declared("alpha")),
        ({"alpha": float("nan")}, _declared("alpha")),
        ({"alpha": "0.05"}, _declared("alpha")),
        ({"reference_prior": -0.5}, _declared("reference_prior")),
        ({"reference_prior": float("inf")}, _declared("reference_prior")),
        ({"correction": "Holm"}, _declared("correction")),
        ({"metric": []}, "metric is empty"),
        ({"metric": "recal"}, "unknown metric"),
        ({"reference": [0, 0, 0, 0]}, "has zero total"),
        ({"reference": "nobody"}, "is not 'rest', 'total', a group label"),
        ({"method": "beta", "reference_uncertainty": True}, "no reference_uncertainty"),
        (
            {"method": "saddlepoint", "reference_uncertainty": True},
            "no reference_uncertainty",
        ),
        ({"method": "beta", "smoothing": AdditiveSmoothing(1.0)}, "with smoothing"),
        (
            {
                "reference": [5, 0, 3, 4],
                "reference_uncertainty": True,
                "reference_prior": 0.0,
            },
            "reference_prior > 0",
        ),
    ],
)
def test_bad_options_raise(kw, match, monkeypatch):
    # "before any work": none of the null laws may run
    def forbidden(*args, **kwargs):  # pragma: no cover - only runs on failure
        raise AssertionError("work started before validation")

    for name in list(_match_laws.LAWS):
        monkeypatch.setitem(_match_laws.LAWS, name, forbidden)
    with pytest.raises(ValueError, match=match):
        match_test(counts=GOOD, **kw)


@pytest.mark.parametrize(
    "counts, match",
    [
        ([[1.5, 2, 3, 4]], "integer confusion-matrix counts"),
        ({"a": [1, 2, 3, 4.25], "b": [1, 1, 1, 1]}, "integer confusion-matrix counts"),
        ([[0, 0, 0, 0], [1, 2, 3, 4]], r"are empty"),
        ([[1, 2, -3, 4], [1, 2, 3, 4]], "non-negative"),
        ([[1, 2, 3]], r"shape \(\.\.\., 4\)"),
    ],
)
def test_bad_counts_raise(counts, match):
    with pytest.raises(ValueError, match=match):
        match_test(counts=counts, reference=[1, 1, 1, 1])


def test_bad_types_raise():
    with pytest.raises(TypeError, match=_declared("smoothing")):
        match_test(counts=GOOD, smoothing="cps")
    with pytest.raises(TypeError, match=_declared("random_state")):
        match_test(counts=GOOD, random_state="seed")
    with pytest.raises(ValueError, match=r"either rows .* or counts"):
        match_test([1, 0], [1, 0], counts=GOOD)
    with pytest.raises(ValueError, match="sensitive_features is required"):
        match_test([1, 0], [1, 0])


def test_enumerate_refuses_large_groups_before_enumerating(monkeypatch):
    calls = []

    def spy(n):  # pragma: no cover - only runs on failure
        calls.append(n)
        raise AssertionError("enumerated")

    monkeypatch.setattr(_match_laws, "enumerate_confusion_matrices", spy)
    counts = {"small": [3, 2, 1, 4], "big": [100, 100, 100, 101]}  # n = 401
    with pytest.raises(ValueError, match=r"n <= 400.*'big'"):
        match_test(
            counts=counts, reference=[1, 1, 1, 1], metric="mcc", method="enumerate"
        )
    # an undefined observed score must not slip through to a Monte Carlo fallback
    with pytest.raises(ValueError, match="n <= 400"):
        match_test(
            counts={"big": [0, 0, 200, 201]},
            reference=[1, 1, 1, 1],
            metric="tpr",
            method="enumerate",
        )
    assert calls == []
    assert ENUMERATE_MAX_N == 400


# =====================================================================================
# 10. Large n: the exact joint-ratio sum at n = 100,000
# =====================================================================================
@pytest.mark.parametrize("reference_uncertainty", [False, True], ids=["mult", "dm"])
def test_exact_joint_ratio_at_n_100000(reference_uncertainty):
    n_resamples = 20_000
    obs = [30_000, 10_100, 20_000, 39_900]  # n = 100,000, tpr slightly below 0.75
    ref = [30_000, 10_000, 20_000, 40_000]
    kw = dict(reference_uncertainty=reference_uncertainty, alternative="less")
    exact = _run(obs, ref, "tpr", "exact", **kw).iloc[0]
    mc = _run(
        obs, ref, "tpr", "montecarlo", n_resamples=n_resamples, random_state=8, **kw
    )
    mc = mc.iloc[0]
    assert 0.05 < exact["p_lower_tail"] < 0.95 and np.isfinite(exact["p_upper_tail"])
    se = sqrt(exact["p_lower_tail"] * (1 - exact["p_lower_tail"]) / n_resamples)
    assert abs(mc["p_lower_tail"] - exact["p_lower_tail"]) <= 4 * se
    assert abs(mc["p_lower_tail"] - exact["p_lower_tail"]) <= 4 * mc["se"]
    assert exact["p_lower_tail"] + exact["p_upper_tail"] >= 1.0 - 1e-9


def test_string_labels_with_pos_label():
    rows = (["y", "n", "y", "n"], ["y", "y", "n", "n"])
    res = match_test(
        *rows, sensitive_features=[0, 0, 1, 1], pos_label="y",
        null="fixed-reference", family="metric",
    )  # fmt: skip
    # group 0 has TPR 1 and its reference (group 1) TPR 0: impossible under the null
    assert list(res.frame["score"]) == [1.0, 0.0]
    assert res.pvalues.loc[0] == 0.0
    # without pos_label, labels other than {0, 1} or {-1, 1} are refused
    with pytest.raises(ValueError, match="pos_label"):
        match_test(*rows, sensitive_features=[0, 0, 1, 1])


@pytest.mark.parametrize("method", ["exact", "beta", "enumerate"])
def test_reference_that_never_defines_the_metric(method):
    with pytest.warns(UndefinedGroupMetricWarning, match="never defined"):
        res = match_test(
            counts={"a": [2, 1, 3, 4]},
            reference=[0, 0, 5, 5],
            metric="tpr",
            method=method,
        )
    row = res.frame.iloc[0]
    assert np.isnan(row["p_value"]) and row["p_undefined"] == 1.0


def test_duplicate_metric_after_aliases_raises():
    with pytest.raises(ValueError, match="twice"):
        match_test(
            counts={"a": [1, 2, 3, 4]}, reference=[1, 1, 1, 1], metric=["tpr", "recall"]
        )


def test_montecarlo_p_value_never_zero():
    # a perfect MCC can still be rare but a Monte Carlo tail is at least 1/(N+1)
    res = match_test(
        counts={"a": [10, 0, 0, 10]},
        reference=[5, 5, 5, 5],
        metric="mcc",
        method="montecarlo",
        n_resamples=2000,
        random_state=0,
    )
    row = res.frame.iloc[0]
    # no draw reaches a perfect MCC: the tail is exactly 1 / (defined draws + 1)
    defined = 2000 * (1 - row["p_undefined"])
    assert row["p_upper_tail"] == pytest.approx(1 / (defined + 1), rel=1e-12)
    assert row["p_value"] > 0


# =====================================================================================
# 11. Any size: the windowed exact sums, the saddle point, the choice of auto
# =====================================================================================
COMPAS_REST = np.array([116, 177, 554, 2429])  # published COMPAS: ALL minus Black


def _full_joint_ratio(obs, ref, i, j):
    """The O(n) sum over every denominator k = 1..n (the code before windowing),
    with scipy.stats: (lower, upper, p_undefined), conditional."""
    n = int(sum(obs))
    p = np.asarray(ref, float) / np.sum(ref)
    q, theta = p[i] + p[j], p[i] / (p[i] + p[j])
    a, b = int(obs[i]), int(obs[i] + obs[j])
    k = np.arange(1, n + 1)
    w = stats.binom.pmf(k, n, q)
    lower = w @ stats.binom.cdf((a * k) // b, k, theta)
    upper = w @ stats.binom.sf(-((-a * k) // b) - 1, k, theta)
    p_def = w.sum()
    return lower / p_def, upper / p_def, stats.binom.pmf(0, n, q)


def _full_mb(obs, ref):
    """The O(n) sum over t = FP + FN = 0..n, with scipy.stats."""
    n = int(sum(obs))
    p = np.asarray(ref, float) / np.sum(ref)
    q, phi = p[2] + p[1], p[2] / (p[2] + p[1])
    d = int(obs[2] - obs[1])
    t = np.arange(n + 1)
    w = stats.binom.pmf(t, n, q)
    lower = w @ stats.binom.cdf((d + t) // 2, t, phi)
    upper = w @ stats.binom.sf(-((-(d + t)) // 2) - 1, t, phi)
    return lower, upper, 0.0


@pytest.mark.parametrize(
    "n",
    [
        10**2,
        10**3,
        10**4,
        # the reference sums take 10 s and 40 s (scipy's incomplete beta near the
        # centre of the law is slow at large n): slow suite
        pytest.param(10**5, marks=pytest.mark.slow),
        pytest.param(10**6, marks=pytest.mark.slow),
    ],
)
def test_windowed_exact_equals_the_full_sum(n):
    # the exact sums now run over a window of the denominator and by recursion;
    # the full O(n) sum over every k with scipy's kernels is the reference
    rng = np.random.default_rng(n)
    refs = {"compas": COMPAS_REST, "synthetic": np.array([30, 10, 15, 45])}
    size = 4 if n < 10**5 else 1
    checked = 0
    for ref in refs.values():
        cms = rng.multinomial(n, ref / ref.sum(), size=size)
        for metric in ("tpr", "ppv", "fnr", "mb"):
            m = get_metric(metric)
            res = _run(cms, ref, metric, "exact")
            for row, obs in zip(res.itertuples(), cms):
                if metric == "mb":
                    expected = _full_mb(obs, ref)
                else:
                    (i,) = m.numerator
                    (j,) = [c for c in m.denominator if c != i]
                    expected = _full_joint_ratio(obs, ref, i, j)
                got = (row.p_lower_tail, row.p_upper_tail, row.p_undefined)
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
                # tiny tails keep their relative precision
                for g, e in zip(got[:2], expected[:2]):
                    if 0 < e < 1e-6:
                        assert g == pytest.approx(e, rel=1e-9)
                checked += 1
    assert checked == 2 * 4 * size


def test_window_leaves_out_less_than_its_bound():
    # Bernstein's bound, checked against the binomial tails outside the window
    rng = np.random.default_rng(3)
    n = np.concatenate([[1, 2, 10, 10**3], 10 ** rng.uniform(1, 12, size=200)])
    n = np.round(n).astype(np.int64)
    prob = np.concatenate([[0.5, 1e-9, 0.999, 0.3], rng.uniform(0, 1, size=200)])
    prob[-5:] = [0.0, 1.0, 1e-12, 1 - 1e-12, 0.5]
    lo, hi = _binomial.window(n, prob)
    left = _binomial._cdf(lo - 1, n, prob)
    right = _binomial._sf(hi + 1, n, prob)
    assert np.all(left + right <= _binomial.WINDOW_MASS)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= n))
    # and the window is narrow: about 8.4 standard deviations each side
    sd = np.sqrt(n * prob * (1 - prob))
    big = sd > 100
    assert big.sum() > 50
    assert np.all((hi - lo)[big] <= 2 * (8.4 * sd[big] + 12) + 1)


def test_groups_computed_together_equal_groups_alone():
    # all the groups of a call share flat arrays: none may leak into another
    rng = np.random.default_rng(11)
    sizes = [1, 3, 17, 150, 5000, 10**5, 10**7]
    cms = np.stack([rng.multinomial(s, COMPAS_REST / COMPAS_REST.sum()) for s in sizes])
    cms[2] = [0, 0, 5, 12]  # an undefined tpr among them
    for metric in ("tpr", "mb", "fpr"):
        together = _run(cms, COMPAS_REST, metric, "exact")
        for k, obs in enumerate(cms):
            alone = _run(obs, COMPAS_REST, metric, "exact").iloc[0]
            for col in ("p_lower_tail", "p_upper_tail", "p_undefined"):
                np.testing.assert_allclose(
                    together[col].iloc[k], alone[col], rtol=1e-14, atol=1e-300
                )


@pytest.mark.parametrize(
    "metric, reference_uncertainty, expected",
    [
        ("tpr", False, "saddlepoint"),
        ("ppv", False, "saddlepoint"),
        ("mb", False, "saddlepoint"),
        ("acc", False, "exact"),
        ("mcc", False, "montecarlo"),
        ("tpr", True, "montecarlo"),
        ("acc", True, "montecarlo"),
    ],
)
def test_huge_counts_do_not_exhaust_memory(metric, reference_uncertainty, expected):
    # Regression: counts with 10^12 people raised "MemoryError: Unable to allocate
    # 16.0 TiB" (a sum over every k = 0..n)
    n = 10**12
    cms = np.round(n * COMPAS_REST / COMPAS_REST.sum()).astype(np.int64)
    cms[3] += n - cms.sum()
    cms[0] += 200_000
    cms[1] -= 200_000
    res = match_test(
        counts={"huge": cms},
        reference=COMPAS_REST,
        metric=metric,
        reference_uncertainty=reference_uncertainty,
        random_state=0,
    )
    row = res.frame.iloc[0]
    assert row["n"] == n
    assert row["method"] == expected
    assert (
        0 < row["p_value"] <= 1
        and row["p_lower_tail"] + row["p_upper_tail"] >= 1 - 1e-9
    )


def test_a_million_people_exactly():
    # Regression: n = 10^6 took seconds per metric (the O(n) sum with scipy);
    # the speed is tracked in bench_match.py
    cms = np.random.default_rng(6).multinomial(10**6, COMPAS_REST / 3276, size=3)
    res = match_test(counts=cms, reference=COMPAS_REST, metric=["tpr", "mb", "ppv"])
    assert (res.frame["method"] == "exact").all()


def test_twenty_thousand_groups_at_once():
    # Regression: a loop over groups took about 50 s for 20,000 groups
    rng = np.random.default_rng(20_000)
    sizes = rng.integers(5, 151, size=20_000)
    cms = np.stack([rng.multinomial(s, COMPAS_REST / 3276) for s in sizes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        res = match_test(counts=cms, metric="tpr")
    assert len(res.frame) == 20_000 and (res.frame["method"] == "exact").all()
    # spot-check against single-group calls with the same (rest) references
    refs = reference_counts(cms, "rest")
    for k in rng.choice(20_000, size=20, replace=False):
        alone = _run(cms[k], refs[k], "tpr", "exact").iloc[0]
        np.testing.assert_allclose(
            res.frame.iloc[k][["p_lower_tail", "p_upper_tail"]].to_numpy(float),
            alone[["p_lower_tail", "p_upper_tail"]].to_numpy(float),
            rtol=1e-13,
            atol=1e-300,
        )


def _auto_methods(metric, n, **kw):
    counts = [np.round(m * COMPAS_REST / 3276).astype(np.int64) for m in n]
    for c, m in zip(counts, n):
        c[3] += m - c.sum()
    res = match_test(
        counts=np.array(counts),
        reference=COMPAS_REST,
        metric=metric,
        n_resamples=100,
        **kw,
    )
    return list(res.frame["method"])


def test_auto_chooses_by_cost():
    sizes = [10, 10**4, 10**8, 10**11, 10**13]
    assert _auto_methods("acc", sizes) == ["exact"] * 5
    assert _auto_methods("tpr", sizes) == ["exact"] * 3 + ["saddlepoint"] * 2
    assert _auto_methods("mb", sizes) == ["exact"] * 3 + ["saddlepoint"] * 2
    assert _auto_methods("mcc", [10, 200, 201, 10**12]) == [
        "enumerate",
        "enumerate",
        "montecarlo",
        "montecarlo",
    ]
    # the Dirichlet-multinomial sums run over all n + 1 values of the denominator
    ru = {"reference_uncertainty": True}
    for metric in ("tpr", "mb", "acc"):
        assert _auto_methods(metric, [10, 499_999, 500_000, 10**12], **ru) == [
            "exact",
            "exact",
            "montecarlo",
            "montecarlo",
        ]
    # the cost is per group: a group's method does not depend on the others
    mixed = _auto_methods("tpr", [10**11, 10])
    assert mixed == ["saddlepoint", "exact"]


def test_explicit_exact_refuses_sums_beyond_its_limit(monkeypatch):
    def forbidden(*args, **kwargs):  # pragma: no cover - only runs on failure
        raise AssertionError("work started before the size check")

    monkeypatch.setitem(_match_laws.LAWS, "exact", forbidden)
    n = 10**16
    cms = {"g": [n // 10, n // 10, n // 10, n - 3 * (n // 10)]}
    with pytest.raises(ValueError, match=r"EXACT_MAX_TERMS.*'g'.*method='auto'"):
        match_test(counts=cms, reference=[1, 1, 1, 1], method="exact")
    with pytest.raises(ValueError, match=r"EXACT_MAX_TERMS"):
        match_test(
            counts={"g": [10**7, 0, 0, 1]},
            reference=[1, 1, 1, 1],
            method="exact",
            reference_uncertainty=True,
        )


# Worst absolute errors of the saddle point (lower and upper) against the exact law
# over 300 null groups from each of two references, measured (bounds ~20% above):
#               n = 10     30       100      1000     10^4
#   acc           3.4e-3   4.0e-4   6.0e-5   1.8e-6   5.8e-8
#   mb            3.2e-3   5.4e-4   8.2e-5   2.5e-6   8.0e-8
#   tpr           2.3e-1   5.1e-2   1.5e-2   5.3e-3   2.0e-3
# (the user guide's table over observed values spanning the null law agrees).
# Binomial metrics and mb: relative error O(1/n). Joint ratios: the discrete law of
# c_i / K is smoothed, and the error decreases like 1/sqrt(n) only.
SADDLEPOINT_BOUNDS = {
    "acc": {10: 4e-3, 30: 5e-4, 100: 7e-5, 1000: 2.2e-6, 10**4: 7e-8},
    "mb": {10: 4e-3, 30: 6.5e-4, 100: 1e-4, 1000: 3e-6, 10**4: 1e-7},
    "tpr": {10: 0.27, 30: 0.06, 100: 0.018, 1000: 6.4e-3, 10**4: 2.4e-3},
}


@pytest.mark.parametrize("metric", list(SADDLEPOINT_BOUNDS))
@pytest.mark.parametrize("n", [10, 30, 100, 1000, 10**4])
def test_saddlepoint_within_its_measured_error(metric, n):
    rng = np.random.default_rng(n)
    errors = []
    for ref in (COMPAS_REST, np.array([30, 10, 15, 45])):
        cms = rng.multinomial(n, ref / ref.sum(), size=300)
        exact = _run(cms, ref, metric, "exact")[
            ["p_lower_tail", "p_upper_tail"]
        ].to_numpy(float)
        approx = _run(cms, ref, metric, "saddlepoint")
        assert (approx["method"] == "saddlepoint").all() and "se" not in approx.columns
        approx = approx[["p_lower_tail", "p_upper_tail"]].to_numpy(float)
        np.testing.assert_array_equal(np.isnan(exact), np.isnan(approx))
        errors.append(np.nanmax(np.abs(exact - approx)))
    assert max(errors) <= SADDLEPOINT_BOUNDS[metric][n]
    assert max(errors) > 0  # an approximation, not the exact law again


def test_saddlepoint_at_large_n_matches_the_exact_law():
    # where auto switches (10^9 to 10^11 people), the approximation is within 1e-5
    rng = np.random.default_rng(9)
    for n in (10**9, 10**10):
        cms = rng.multinomial(n, COMPAS_REST / 3276, size=5)
        # (1e-7: the exact side's incomplete beta differs by up to 2e-8 between
        # scipy releases at these sizes)
        for metric, tol in (("tpr", 1e-6), ("mb", 1e-7), ("acc", 1e-7)):
            exact = _run(cms, COMPAS_REST, metric, "exact")
            approx = _run(cms, COMPAS_REST, metric, "saddlepoint")
            for col in ("p_lower_tail", "p_upper_tail"):
                np.testing.assert_allclose(approx[col], exact[col], rtol=0, atol=tol)


def test_saddlepoint_edges_and_closed_forms():
    ref = np.array([13, 4, 9, 21])
    counts = {
        "tpr0": [0, 5, 3, 12],  # score 0: lower is P(TP = 0 | defined)
        "tpr1": [6, 0, 3, 11],  # score 1
        "undefined": [0, 0, 9, 11],
    }
    exact = match_test(counts=counts, reference=ref, method="exact").frame
    approx = match_test(counts=counts, reference=ref, method="saddlepoint").frame
    # scores 0 and 1 sit at an end of the support: closed forms, equal to exact
    for col in ("p_lower_tail", "p_upper_tail", "p_undefined"):
        np.testing.assert_allclose(approx[col], exact[col], rtol=1e-12, atol=1e-15)
    # a reference cell at 0 leaves a two-point law: exact again
    zero = [13, 0, 9, 21]
    a = match_test(counts={"g": [5, 1, 3, 11]}, reference=zero, method="saddlepoint")
    e = match_test(counts={"g": [5, 1, 3, 11]}, reference=zero, method="exact")
    np.testing.assert_allclose(
        a.frame["p_upper_tail"], e.frame["p_upper_tail"], rtol=1e-12
    )
    # binomial metrics: P(K <= k) at the ends of the support
    a = match_test(
        counts={"lo": [0, 0, 3, 7], "hi": [3, 7, 0, 0]},
        reference=ref,
        metric="prev",
        method="saddlepoint",
    ).frame
    q = 17 / 47
    np.testing.assert_allclose(a["p_lower_tail"].iloc[0], (1 - q) ** 10, rtol=1e-12)
    np.testing.assert_allclose(a["p_upper_tail"].iloc[1], q**10, rtol=1e-12)
    assert a["p_upper_tail"].iloc[0] == 1.0 and a["p_lower_tail"].iloc[1] == 1.0


# =====================================================================================
# 12. Declared parameters (each case failed before the table)
# =====================================================================================
@pytest.mark.parametrize("value", ["no", "yes", 0, 1, None, "False"])
@pytest.mark.parametrize("param", ["reference_uncertainty", "conditional"])
def test_booleans_are_booleans(param, value, monkeypatch):
    # Regression: reference_uncertainty="no" ran as if it were True (a truthiness
    # test), moving a p-value from 0.024 to 0.316; conditional=0 was accepted
    for ok in (True, False, np.True_, np.False_):
        match_test(counts=GOOD, **{param: ok})
    monkeypatch.setitem(_match_laws.LAWS, "exact", None)  # never reached
    with pytest.raises(InvalidParameterError, match=_declared(param)):
        match_test(counts=GOOD, **{param: value})


def test_reference_uncertainty_no_is_not_true():
    # the published COMPAS example of the regression: PPV of the Black group
    compas = load_published_confusion_matrices("COMPAS").set_index("group")
    cells = ["TP", "FN", "FP", "TN"]
    black = compas.loc[["Black"], cells]
    rest = compas.loc["ALL", cells] - compas.loc["Black", cells]
    plain = match_test(counts=black, reference=rest, metric="ppv")
    assert round(plain.frame["p_value"].item(), 3) == 0.024
    with pytest.raises(InvalidParameterError):
        match_test(
            counts=black, reference=rest, metric="ppv", reference_uncertainty="no"
        )


def test_metric_none_is_a_declared_error():
    # Regression: TypeError: 'NoneType' object is not iterable
    with pytest.raises(InvalidParameterError, match=_declared("metric")):
        match_test(counts=GOOD, metric=None)
    with pytest.raises(InvalidParameterError, match=_declared("metric")):
        match_test(counts=GOOD, metric=3)
    # a name, a Metric, or a list or tuple of them
    for metric in ("tpr", get_metric("tpr"), ["tpr", "fpr"], ("tpr", get_metric("f1"))):
        match_test(counts=GOOD, metric=metric)


@pytest.mark.parametrize("seed", [True, False, np.True_, -1, 1.5, "0"])
def test_random_state_is_a_seed(seed):
    # Regression: random_state=True was accepted (as the seed 1)
    with pytest.raises(InvalidParameterError, match=_declared("random_state")):
        match_test(counts=GOOD, metric="mcc", method="montecarlo", random_state=seed)


def test_n_resamples_has_an_upper_bound(monkeypatch):
    # Regression: n_resamples=10**12 ran for minutes with no progress
    monkeypatch.setitem(_match_laws.LAWS, "montecarlo", None)  # never reached
    with pytest.raises(InvalidParameterError, match=_declared("n_resamples")):
        match_test(counts=GOOD, method="montecarlo", n_resamples=10**12)
    assert _match.MAX_N_RESAMPLES == 10**8
    with pytest.raises(InvalidParameterError, match=r"\[1, 100000000\]"):
        match_test(counts=GOOD, method="montecarlo", n_resamples=10**8 + 1)


def test_correction_none_is_no_correction():
    counts = {"a": [3, 9, 2, 20], "b": [20, 2, 9, 3], "c": [8, 8, 8, 8]}
    plain = match_test(counts=counts, metric="acc", correction=None)
    named = match_test(counts=counts, metric="acc", correction="none")
    pd.testing.assert_frame_equal(plain.frame, named.frame)
    np.testing.assert_array_equal(named.frame["p_adjusted"], named.frame["p_value"])


def test_every_parameter_is_declared():
    import inspect

    table = match_test.func._skl_parameter_constraints
    assert set(table) == set(inspect.signature(match_test.func).parameters)
    for name in ("reference_uncertainty", "conditional"):
        assert table[name] == ["boolean"]


def test_reject_is_set_by_the_result_base():
    # the frame's reject column comes from TestResult (p_adjusted <= alpha)
    res = match_test(counts=COUNTS, metric="tpr", alpha=0.5)
    f = res.frame
    assert list(f.columns) == COLUMNS
    np.testing.assert_array_equal(f["reject"], f["p_adjusted"] <= 0.5)
