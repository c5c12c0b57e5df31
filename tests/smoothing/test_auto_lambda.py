"""Automatic lambda of Cross-Prior Smoothing and the reference checks: the
marginal likelihood against scipy and the closed form, ``lam="auto"``
against a brute-force grid search, the estimator's states, the warnings, the
downsampling engine, and the published validation (slow)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy
from numpy.testing import assert_allclose
from scipy.special import gammaln
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from sklearn_smallfair import dirichlet_multinomial_logpmf, reference_counts
from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair._references import warn_small_references
from sklearn_smallfair.datasets import load_published_groups
from sklearn_smallfair.exceptions import ReferenceWarning
from sklearn_smallfair.model_selection import downsampling_experiment
from sklearn_smallfair.smoothing import CrossPriorSmoothing
from sklearn_smallfair.smoothing._auto import (
    LAM_MAX,
    LAM_MIN,
    XATOL,
    MarginalLikelihood,
    fit_lam,
    lam_grid,
)

SCIPY_DIRMULT = tuple(int(v) for v in scipy.__version__.split(".")[:2]) >= (1, 11)


def _dirichlet_groups(seed, lam, n_groups, sizes, ref_size=5000):
    """Groups whose proportions are drawn from Dirichlet(lam * p'), p' from a large
    reference drawn around one base matrix."""
    rng = np.random.default_rng(seed)
    base = np.array([0.15, 0.1, 0.15, 0.6])
    refs = rng.multinomial(ref_size, base, size=n_groups)
    p_ref = refs / refs.sum(axis=1, keepdims=True)
    p = np.array([rng.dirichlet(lam * q) for q in p_ref])
    n = rng.choice(np.atleast_1d(sizes), size=n_groups)
    counts = np.array([rng.multinomial(k, q) for k, q in zip(n, p)])
    return counts, refs


CASES = {
    # name: (counts, references)
    "dispersed": _dirichlet_groups(0, 5.0, 40, [10, 30, 200]),
    "close": _dirichlet_groups(1, 200.0, 25, [50, 500]),
    "few small groups": _dirichlet_groups(2, 20.0, 6, [5, 8, 12]),
    "published": tuple(a.to_numpy() for a in load_published_groups()),
}


# ------------------------------------------------------------------------------
# The marginal likelihood


def _closed_form(lam, counts, refs):
    """sum_g log DirMult(c_g; lam p'_g), written out with gammaln, group by group."""
    total = 0.0
    for c, r in zip(counts.astype(float), refs.astype(float)):
        a = lam * r / r.sum()
        n = c.sum()
        total += (
            gammaln(n + 1)
            - gammaln(c + 1).sum()
            + gammaln(a.sum())
            - gammaln(n + a.sum())
            + (gammaln(c + a) - gammaln(a)).sum()
        )
    return total


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("lam", [0.03, 1.0, 17.5, 400.0, 9999.0])
def test_marginal_likelihood_closed_form(case, lam):
    counts, refs = CASES[case]
    likelihood = MarginalLikelihood(counts, refs)
    assert likelihood.n_used == len(counts)
    expected = _closed_form(lam, counts, refs)
    assert_allclose(likelihood(lam, full=True), expected, rtol=1e-11)
    # the package's Dirichlet-multinomial log-pmf, summed over the groups
    alpha = lam * refs / refs.sum(axis=1, keepdims=True)
    assert_allclose(
        dirichlet_multinomial_logpmf(counts, alpha).sum(), expected, rtol=1e-11
    )


@pytest.mark.skipif(not SCIPY_DIRMULT, reason="scipy.stats.dirichlet_multinomial")
@pytest.mark.parametrize("case", list(CASES))
def test_marginal_likelihood_against_scipy(case):
    from scipy.stats import dirichlet_multinomial

    counts, refs = CASES[case]
    likelihood = MarginalLikelihood(counts, refs)
    lams = np.array([0.05, 2.0, 23.0, 800.0])
    values = likelihood(lams, full=True)
    assert values.shape == lams.shape
    for lam, value in zip(lams, values):
        direct = sum(
            dirichlet_multinomial.logpmf(c, lam * r / r.sum(), int(c.sum()))
            for c, r in zip(counts, refs)
        )
        assert_allclose(value, direct, rtol=1e-11)


def test_marginal_likelihood_at_zero_is_the_limit():
    refs = np.array([[10, 20, 30, 40], [5, 5, 5, 5]])
    pure = np.array([[0, 0, 7, 0], [3, 0, 0, 0]])  # one occupied cell each
    likelihood = MarginalLikelihood(pure, refs)
    at_zero = likelihood(0.0, full=True)
    assert_allclose(at_zero, np.log(0.3) + np.log(0.25), rtol=1e-14)
    assert_allclose(likelihood(1e-9, full=True), at_zero, rtol=1e-7)
    mixed = MarginalLikelihood(np.array([[1, 0, 6, 0], [3, 0, 0, 0]]), refs)
    assert mixed(0.0) == -np.inf
    assert mixed(1e-9) < mixed(1.0) - 10


def test_marginal_likelihood_leaves_out_impossible_and_empty_groups():
    counts = np.array([[5, 1, 2, 9], [0, 0, 0, 0], [4, 3, 0, 2], [6, 2, 3, 7]])
    refs = np.array([[20, 5, 10, 40], [1, 1, 1, 1], [30, 10, 0, 20], [25, 5, 9, 33]])
    likelihood = MarginalLikelihood(counts, refs)
    assert likelihood.impossible.tolist() == [False, False, False, False]
    refs[2] = [30, 0, 10, 20]  # group 2 has FN = 3 where the reference has none
    likelihood = MarginalLikelihood(counts, refs)
    assert likelihood.impossible.tolist() == [False, False, True, False]
    assert likelihood.n_used == 2
    kept = MarginalLikelihood(counts[[0, 3]], refs[[0, 3]])
    lams = lam_grid()[1:]
    assert_allclose(likelihood(lams, full=True), kept(lams, full=True), rtol=1e-14)


# ------------------------------------------------------------------------------
# lam="auto" against a brute-force grid search of the same criterion

#: Brute-force grid: 24,000 steps of 2.5e-4 in log10(lam) over [0.01, 10^4].
BRUTE = np.logspace(np.log10(LAM_MIN), np.log10(LAM_MAX), 24_001)
BRUTE_STEP = np.log10(BRUTE[1] / BRUTE[0])


@pytest.mark.parametrize("case", list(CASES))
def test_auto_lambda_matches_brute_force(case):
    counts, refs = CASES[case]
    lam = CrossPriorSmoothing(lam="auto").fit(counts, refs).lam_
    likelihood = MarginalLikelihood(counts, refs)
    values = likelihood(BRUTE)
    i = int(np.argmax(values))
    best = BRUTE[i]
    # The brute force is within half a step of the maximum and Brent's search
    # within XATOL of it (both in log10 lam); at a bound, the search ends within
    # XATOL of that bound too.
    distance = BRUTE_STEP / 2 + XATOL
    assert abs(np.log10(lam) - np.log10(best)) <= distance
    # Over that distance the likelihood can drop by at most its curvature times
    # the squared distance (in ln lam), estimated by finite differences.
    j = min(max(i, 1), BRUTE.size - 2)
    h = np.log(BRUTE[1] / BRUTE[0])
    curvature = abs(values[j - 1] - 2 * values[j] + values[j + 1]) / h**2
    slack = curvature * (distance * np.log(10)) ** 2 + 1e-9 * abs(values[i])
    assert likelihood(lam) >= values[i] - slack
    # and no point of the fine grid is higher than that
    assert (values <= likelihood(lam) + slack).all()


def test_brute_force_cases_are_not_vacuous():
    # interior maxima for all but the few-small-groups case (at the upper bound)
    interior = {
        case: LAM_MIN
        < BRUTE[np.argmax(MarginalLikelihood(*CASES[case])(BRUTE))]
        < LAM_MAX
        for case in CASES
    }
    assert sum(interior.values()) >= 3


def test_auto_lambda_recovers_the_dirichlet_precision():
    # 400 groups drawn from Dirichlet(30 p'): the estimate is consistent
    counts, refs = _dirichlet_groups(7, 30.0, 400, [40, 100, 300])
    lam = CrossPriorSmoothing(lam="auto").fit(counts, refs).lam_
    assert 22 < lam < 40


def test_auto_lambda_at_the_bounds():
    refs = np.array([[40, 10, 20, 30]] * 6)
    # groups exactly proportional to their references: no dispersion at all
    same = refs * 7
    assert CrossPriorSmoothing("auto").fit(same, refs).lam_ == pytest.approx(
        LAM_MAX, rel=1e-2
    )
    # every group in a single cell while the references are mixed: lam = 0
    pure = np.array([[9, 0, 0, 0], [0, 0, 0, 12], [0, 5, 0, 0]] * 2)
    cps = CrossPriorSmoothing("auto").fit(pure, refs)
    assert cps.lam_ == 0.0
    assert_allclose(cps.transform(pure, refs), pure)


@pytest.mark.parametrize(
    "counts",
    [
        np.array([[1, 0, 0, 0], [0, 0, 1, 0]]),  # one person per group
        np.array([[0, 0, 0, 0], [0, 0, 0, 0]]),  # empty groups
    ],
)
def test_auto_lambda_needs_informative_groups(counts):
    refs = np.array([[4, 3, 2, 1], [1, 2, 3, 4]]) * 50
    with pytest.raises(ValueError, match="lam='auto' cannot learn lam"):
        CrossPriorSmoothing("auto").fit(counts, refs)
    with pytest.raises(ValueError, match="lam='auto' cannot learn lam"):
        fit_lam(counts, refs)


# ------------------------------------------------------------------------------
# The estimator: lam_, fit, transform, coefficients


def test_lam_is_reported_and_used():
    counts, refs = CASES["dispersed"]
    cps = CrossPriorSmoothing(lam="auto")
    assert cps.get_params() == {"lam": "auto", "min_reference": 100}
    assert repr(cps) == "CrossPriorSmoothing(lam='auto')"
    assert not hasattr(cps, "lam_")
    assert cps.fit(counts, refs) is cps
    assert isinstance(cps.lam_, float) and 0 < cps.lam_ < LAM_MAX
    check_is_fitted(cps)
    fixed = CrossPriorSmoothing(lam=cps.lam_)
    assert_allclose(cps.transform(counts, refs), fixed.transform(counts, refs))
    scale, offset = cps.coefficients(counts.sum(axis=1), refs)
    assert_allclose(scale * counts + offset, fixed.transform(counts, refs))
    # any matrices are then smoothed with the fitted lam_
    other = np.array([[1, 0, 2, 5], [0, 0, 0, 3]])
    assert_allclose(cps.transform(other, refs[:2]), fixed.transform(other, refs[:2]))
    # a number is its own lam_
    assert CrossPriorSmoothing(lam=7).fit().lam_ == 7.0
    assert CrossPriorSmoothing(lam=0).fit(counts, refs).lam_ == 0.0


def test_fit_without_counts_learns_nothing():
    counts, refs = CASES["close"]
    cps = CrossPriorSmoothing("auto")
    assert cps.fit() is cps and not hasattr(cps, "lam_")
    lam = cps.fit(counts, refs).lam_
    assert cps.fit().lam_ == lam  # parameters checked, lam_ kept
    with pytest.raises(ValueError, match="needs the groups' counts"):
        CrossPriorSmoothing("auto").fit(reference_counts=refs)
    with pytest.raises(ValueError, match="CrossPriorSmoothing needs reference_counts"):
        CrossPriorSmoothing("auto").fit(counts)


def test_set_params_and_clone_follow_lam():
    counts, refs = CASES["close"]
    cps = CrossPriorSmoothing("auto").fit(counts, refs)
    assert not hasattr(clone(cps), "lam_")
    cps.set_params(lam=3.0)  # a number wins over the learned value
    assert_allclose(
        cps.transform(counts, refs), CrossPriorSmoothing(3.0).transform(counts, refs)
    )
    fixed = CrossPriorSmoothing(5.0).fit(counts, refs)
    fixed.set_params(lam="auto")  # lam_ = 5 was not learned: not fitted
    with pytest.raises(NotFittedError, match=r"call fit\(counts, reference_counts\)"):
        fixed.coefficients(10, refs[0])


def test_unfitted_auto_transform_fits_on_the_given_groups():
    counts, refs = CASES["dispersed"]
    cps = CrossPriorSmoothing("auto")
    out = cps.transform(counts, refs)
    assert not hasattr(cps, "lam_")  # nothing stored
    fitted = CrossPriorSmoothing("auto").fit(counts, refs)
    assert_allclose(out, fitted.transform(counts, refs), rtol=1e-14)
    assert_allclose(cps.fit_transform(counts, refs), out, rtol=1e-14)
    assert cps.lam_ == fitted.lam_
    # the counts sum is kept, as for any lam
    assert_allclose(out.sum(axis=1), counts.sum(axis=1))


def test_unfitted_auto_coefficients_raise():
    with pytest.raises(NotFittedError, match="has no lam yet"):
        CrossPriorSmoothing("auto").coefficients(10, [40, 10, 20, 30])
    with pytest.raises(NotFittedError):
        check_is_fitted(CrossPriorSmoothing("auto"))


def test_auto_broadcasts_references():
    counts, refs = CASES["close"]
    one_ref = refs[0]
    lam = CrossPriorSmoothing("auto").fit(counts, one_ref).lam_
    assert (
        lam == CrossPriorSmoothing("auto").fit(counts, np.tile(one_ref, (25, 1))).lam_
    )


def test_auto_and_weighted_counts():
    # fractional (weighted) counts are used as they are
    counts, refs = CASES["dispersed"]
    lam = CrossPriorSmoothing("auto").fit(counts * 1.0, refs).lam_
    assert lam == CrossPriorSmoothing("auto").fit(counts, refs).lam_
    half = CrossPriorSmoothing("auto").fit(counts * 0.5 + 0.25, refs).lam_
    assert np.isfinite(half) and half > 0


@pytest.mark.parametrize(
    "param, value, error",
    [
        ("lam", "Auto", ValueError),
        ("lam", "best", ValueError),
        ("min_reference", -1, ValueError),
        ("min_reference", 1.5, TypeError),
        ("min_reference", True, TypeError),
        ("min_reference", None, TypeError),
    ],
)
def test_bad_parameters(param, value, error):
    cps = CrossPriorSmoothing(**{param: value})
    with pytest.raises(InvalidParameterError, match=f"'{param}' parameter"):
        cps.fit()
    with pytest.raises(error):
        cps.transform([1, 2, 3, 4], [40, 10, 20, 30])


def test_zero_total_reference_raises_before_fitting():
    with pytest.raises(ValueError, match="zero total"):
        CrossPriorSmoothing("auto").fit([[1, 2, 3, 4], [2, 2, 2, 2]], [0, 0, 0, 0])


# ------------------------------------------------------------------------------
# Reference warnings


def _caught(func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func()
    return result, [w for w in caught if issubclass(w.category, ReferenceWarning)]


def test_reference_warning_is_a_user_warning():
    assert issubclass(ReferenceWarning, UserWarning)


def test_small_reference_warning_names_groups_and_fix():
    counts = pd.DataFrame(
        [[5, 1, 2, 9], [3, 2, 1, 4]], index=["Ainu", "Sami"], columns=list("TFPN")
    ).to_numpy()
    refs = pd.DataFrame(
        [[20, 5, 10, 40], [300, 100, 200, 400]],
        index=pd.Index(["Ainu", "Sami"], name="group"),
        columns=["TP", "FN", "FP", "TN"],
    )
    _, caught = _caught(lambda: CrossPriorSmoothing(10).transform(counts, refs))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert (
        "group 'Ainu' (75 people in the reference)" in message and "Sami" not in message
    )
    assert "min_reference=100" in message
    assert "a larger reference" in message and "a smaller lam" in message
    assert caught[0].filename == __file__  # shown at the caller
    # by position without labels
    _, caught = _caught(lambda: CrossPriorSmoothing(10).transform(counts, refs.values))
    assert "group at position 0 (75 people in the reference)" in str(caught[0].message)
    # min_reference decides; 0 disables the size check
    _, caught = _caught(
        lambda: CrossPriorSmoothing(10, min_reference=50).transform(counts, refs)
    )
    assert caught == []
    _, caught = _caught(
        lambda: CrossPriorSmoothing(10, min_reference=1001).transform(counts, refs)
    )
    assert (
        "the references of group 'Ainu' (75 people in the reference), group 'Sami'"
        in str(caught[0].message)
    )


def test_empty_reference_cell_warning():
    _, caught = _caught(
        lambda: CrossPriorSmoothing(5).transform([1, 2, 3, 4], [500, 0, 300, 200])
    )
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "the reference (FN = 0) has an empty cell" in message
    assert "no prior mass" in message and "reference_counts + 0.5" in message
    # min_reference=0 does not silence it
    _, caught = _caught(
        lambda: CrossPriorSmoothing(5, min_reference=0).transform(
            [1, 2, 3, 4], [500, 0, 300, 200]
        )
    )
    assert len(caught) == 1


def test_no_warning_without_smoothing_or_with_good_references():
    counts, refs = CASES["published"]
    for cps in (CrossPriorSmoothing(0), CrossPriorSmoothing(10)):
        _, caught = _caught(lambda cps=cps: cps.transform(counts, refs))
        assert caught == []
    _, caught = _caught(
        lambda: CrossPriorSmoothing(0).transform([1, 1, 1, 1], [1, 0, 1, 1])
    )
    assert caught == []  # lam = 0: the reference is not used


@pytest.mark.parametrize("lam", ["auto", 10.0])
@pytest.mark.parametrize("method", ["fit", "fit_transform", "transform"])
def test_references_checked_once_per_call_and_shown_at_the_caller(lam, method):
    counts = np.array([[5, 1, 2, 9], [3, 2, 1, 4], [6, 1, 1, 8]])
    refs = reference_counts(counts)  # 26 to 33 people each
    cps = CrossPriorSmoothing(lam)
    _, caught = _caught(lambda: getattr(cps, method)(counts, refs))
    if lam != "auto" and method == "fit":
        assert caught == []  # a fixed lam learns nothing from the references
        return
    assert len(caught) == 1
    expected = "the references of the group at position 0 (26 people in the reference)"
    assert expected in str(caught[0].message)
    assert caught[0].filename == __file__


def test_warn_small_references_helper():
    refs = np.array(
        [[[10, 10, 10, 10], [500, 1, 500, 500]], [[0, 80, 80, 80], [1, 1, 1, 1]]]
    )
    flagged, caught = _caught(lambda: warn_small_references(refs, min_reference=50))
    assert flagged.tolist() == [[True, False], [True, True]]
    assert "reference at position (0, 0) (40 people in the reference)" in str(
        caught[0].message
    )
    assert "reference at position (1, 0) (TP = 0)" in str(caught[1].message)
    labels = np.array([["a", "b"], ["c", "d"]])
    _, caught = _caught(
        lambda: warn_small_references(refs, labels, 50, what="The MATCH test")
    )
    assert str(caught[0].message).startswith(
        "The MATCH test: the references of group 'a' (40 people in the reference), "
        "group 'd' (4 people in the reference)"
    )
    _, caught = _caught(
        lambda: warn_small_references(refs[1, 1], what="The MATCH test", parameter=None)
    )
    assert str(caught[0].message).startswith(
        "The MATCH test: the reference (4 people) has fewer than 100 people, so"
    )
    assert "min_reference" not in str(caught[0].message)
    many = np.tile([[5, 5, 5, 5]], (12, 1))
    _, caught = _caught(lambda: warn_small_references(many))
    assert "... (12 in all)" in str(caught[0].message)
    with pytest.raises(ValueError, match="labels must hold one label per reference"):
        warn_small_references(many, labels=["a"])
    flagged, caught = _caught(lambda: warn_small_references([50.5, 20, 20, 20]))
    assert not flagged and caught == []  # 110.5 people
    flagged, caught = _caught(
        lambda: warn_small_references([50.5, 20, 20, 20], None, 111)
    )
    assert flagged and "the reference (110.5 people) has fewer" in str(
        caught[0].message
    )


# ------------------------------------------------------------------------------
# The downsampling engine: lam fitted once on the whole groups


def test_downsampling_fits_auto_once_on_the_whole_groups():
    counts, refs = load_published_groups("COMPAS")
    auto = CrossPriorSmoothing("auto")
    lam = clone(auto).fit(counts, refs).lam_
    kwargs = dict(counts=counts, reference=refs, metrics=["tpr", "ppv"], sizes=[7, 30])
    got = downsampling_experiment(estimators={"auto": auto}, **kwargs)
    expected = downsampling_experiment(
        estimators={"auto": CrossPriorSmoothing(lam)}, **kwargs
    )
    pd.testing.assert_frame_equal(got, expected)
    assert not hasattr(auto, "lam_")  # the caller's object is left alone


def test_downsampling_auto_names_groups_with_small_references():
    counts = {"a": (6, 3, 4, 12), "b": (2, 1, 5, 20), "c": (30, 9, 20, 140)}
    _, caught = _caught(
        lambda: downsampling_experiment(
            counts=counts,
            metrics="tpr",
            sizes=[5],
            estimators={"auto": CrossPriorSmoothing("auto")},
        )
    )
    assert len(caught) == 1  # once, when lam is fitted
    message = str(caught[0].message)
    assert (
        "the reference of group 'c' (53 people in the reference) has fewer" in message
    )
    assert "'a'" not in message and "'b'" not in message  # 224 and 227 people


# ------------------------------------------------------------------------------
# Validation on the published groups (the criterion of the user guide)


@pytest.mark.slow
def test_auto_lambda_on_the_published_groups():
    """Exact downsampling of the ten published groups, 19 metrics, sizes 5, 10, ...,
    150 (30 of the 146 sizes, for time; benchmarks/bench_auto_lambda.py runs all
    146): with lam="auto" fitted per dataset on its whole groups, the MSE pooled
    over groups, metrics and sizes is at most 1.05 times that of the best fixed
    lam in {5, 10, 20} chosen in hindsight, and the MSE pooled over groups is
    below the raw metric's in every (metric, n) cell."""
    from sklearn_smallfair.metrics import metric_names

    fixed = [f"cps_{lam}" for lam in (5, 10, 20)]
    estimators = {
        "raw": None,
        **{name: CrossPriorSmoothing(int(name[4:])) for name in fixed},
        "auto": CrossPriorSmoothing("auto"),
    }
    frames, lams = [], []
    for dataset in ("COMPAS", "Folktables"):
        counts, refs = load_published_groups(dataset)
        lams.append(CrossPriorSmoothing("auto").fit(counts, refs).lam_)
        frames.append(
            downsampling_experiment(
                counts=counts,
                reference=refs,
                metrics=metric_names(n_groups=1),
                estimators=estimators,
                sizes=range(5, 151, 5),
            )
        )
    assert_allclose(lams, [19.24, 23.81], atol=0.01)
    res = pd.concat(frames)
    assert res["group"].nunique() == 10
    pooled = res.groupby(["metric", "n", "estimator"])["mse"].mean().unstack()
    assert pooled.shape == (19 * 30, 5) and np.isfinite(pooled.to_numpy()).all()
    totals = pooled.sum()
    assert totals["auto"] <= 1.05 * totals[fixed].min()
    assert (pooled["auto"] < pooled["raw"]).all()
    # measured: 0.995 of the best fixed lam (20), and at worst 0.987 of the raw MSE
    assert totals["auto"] / totals[fixed].min() == pytest.approx(0.995, abs=0.002)
