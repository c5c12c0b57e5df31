"""Tests of additive and Cross-Prior Smoothing."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf
from sklearn_smallfair.metrics import compute_metric, metric_names
from sklearn_smallfair.smoothing import (
    AdditiveSmoothing,
    BaseSmoothing,
    CrossPriorSmoothing,
)

REF = np.array([40, 10, 20, 30])

# Most references below are tiny on purpose; the reference warnings are tested in
# test_auto_lambda.py.
pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn_smallfair.exceptions.ReferenceWarning"
)


def _random_counts(seed, shape, high=20):
    return np.random.default_rng(seed).integers(0, high, size=shape)


# --------------------------------------------------------------------------------------
# Cross-Prior Smoothing: basic properties


def test_cps_docstring_example():
    out = CrossPriorSmoothing(lam=10).transform([3, 0, 1, 0], reference_counts=REF)
    # (c + 10 p') / 14 * 4 with p' = (.4, .1, .2, .3)
    assert_allclose(out, [2.0, 2 / 7, 6 / 7, 6 / 7], rtol=1e-15)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0, 10.0, 123.4, 1e6])
@pytest.mark.parametrize("dtype", [int, float])
def test_cps_preserves_cell_sums(lam, dtype):
    counts = _random_counts(0, (50, 4)).astype(dtype)
    counts[0] = 0  # an empty matrix stays empty
    ref = _random_counts(1, (50, 4)) + 1
    out = CrossPriorSmoothing(lam=lam).transform(counts, ref)
    assert out.dtype == np.float64
    assert out.shape == counts.shape
    assert_allclose(out.sum(axis=-1), counts.sum(axis=-1), rtol=1e-12)
    assert_array_equal(out[0], 0.0)


@pytest.mark.parametrize("n", [1, 2, 7, 22, 44, 60])
def test_cps_lam_zero_is_exact_identity(n):
    cms = enumerate_confusion_matrices(n)
    out = CrossPriorSmoothing(lam=0).transform(cms, [1, 2, 3, 4])
    assert_array_equal(out, cms)
    # so every metric, holes included, is unchanged
    for name in metric_names(n_groups=1):
        assert_array_equal(compute_metric(name, out), compute_metric(name, cms))


@pytest.mark.parametrize("n", [1, 5, 40])
def test_cps_large_lam_tends_to_reference_proportions(n):
    lam = 1e9
    cms = enumerate_confusion_matrices(n)
    out = CrossPriorSmoothing(lam=lam).transform(cms, REF)
    target = n * REF / REF.sum()
    # CPS(c) - n p' = n (c - n p') / (n + lam), so |CPS(c) - n p'| <= n^2 / lam
    assert np.abs(out - target).max() <= n * n / lam
    assert_allclose(out, np.broadcast_to(target, out.shape), rtol=n / lam * 10)


@pytest.mark.parametrize("lam", [1e-8, 0.1, 2.0, 50.0])
def test_cps_output_positive_when_reference_cells_positive(lam):
    cms = enumerate_confusion_matrices(12)  # includes matrices with empty cells
    out = CrossPriorSmoothing(lam=lam).transform(cms, [1, 2, 1, 1])
    assert (out > 0).all()
    # so all joint-ratio metrics become defined
    for name in metric_names(family="joint_ratio"):
        assert not np.isnan(compute_metric(name, out)).any()


def test_cps_zero_reference_cell_stays_zero():
    out = CrossPriorSmoothing(lam=5).transform([0, 2, 0, 3], [10, 0, 5, 5])
    assert out[1] > 0 and out[0] > 0
    assert_allclose(
        out, (np.array([0, 2, 0, 3]) + 5 * np.array([0.5, 0, 0.25, 0.25])) / 10 * 5
    )
    out = CrossPriorSmoothing(lam=5).transform([1, 0, 2, 3], [10, 0, 5, 5])
    assert out[1] == 0.0


def test_cps_is_the_dirichlet_posterior_mean():
    # (c + lam p') / (n + lam) is the posterior mean under Dirichlet(lam p'); times n
    counts = np.array([3.0, 0.0, 1.0, 6.0])
    lam, p_ref = 4.0, REF / REF.sum()
    post = counts + lam * p_ref
    expected = post / post.sum() * counts.sum()
    out = CrossPriorSmoothing(lam).transform(counts, REF)
    assert_allclose(out, expected, rtol=1e-15)


@pytest.mark.parametrize("ref_shape", [(4,), (5, 4), (3, 5, 4), (3, 1, 4), (1, 5, 4)])
def test_cps_broadcasts_over_leading_shapes(ref_shape):
    counts = _random_counts(2, (3, 5, 4))
    ref = _random_counts(3, ref_shape) + 1
    cps = CrossPriorSmoothing(lam=7.5)
    out = cps.transform(counts, ref)
    assert out.shape == (3, 5, 4)
    ref_full = np.broadcast_to(ref, counts.shape)
    for i in range(3):
        for j in range(5):
            assert_allclose(
                out[i, j], cps.transform(counts[i, j], ref_full[i, j]), rtol=1e-15
            )


def test_cps_broadcasts_counts_against_references():
    # one group matrix against several references
    counts = np.array([3, 0, 1, 0])
    refs = np.array([[40, 10, 20, 30], [1, 1, 1, 1]])
    out = CrossPriorSmoothing(lam=10).transform(counts, refs)
    assert out.shape == (2, 4)
    assert_allclose(out[1], (counts + 2.5) / 14 * 4)


def test_cps_requires_reference():
    assert CrossPriorSmoothing.requires_reference
    with pytest.raises(ValueError, match="CrossPriorSmoothing needs reference_counts"):
        CrossPriorSmoothing().transform([1, 2, 3, 4])


@pytest.mark.parametrize("ref", [[0, 0, 0, 0], [[1, 1, 1, 1], [0, 0, 0, 0]]])
def test_cps_zero_total_reference_raises(ref):
    with pytest.raises(ValueError, match="reference_counts has a matrix with zero"):
        CrossPriorSmoothing(lam=1).transform([[1, 2, 3, 4], [1, 1, 1, 1]], ref)


@pytest.mark.parametrize(
    "ref, error, match",
    [
        ([1, -1, 1, 1], ValueError, "reference_counts must be non-negative"),
        ([1, np.nan, 1, 1], ValueError, "reference_counts contains NaN"),
        ([1, 1, 1], ValueError, r"reference_counts must have shape \(\.\.\., 4\)"),
        ({"TP": 1}, TypeError, "reference_counts must be array-like"),
    ],
)
def test_cps_bad_reference(ref, error, match):
    with pytest.raises(error, match=match):
        CrossPriorSmoothing().transform([1, 2, 3, 4], ref)


@pytest.mark.parametrize(
    "lam, error",
    [
        (-1.0, ValueError),
        (-1e-12, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        ("10", TypeError),
        (None, TypeError),
        (True, TypeError),
        ([1.0], TypeError),
    ],
)
def test_cps_bad_lam(lam, error):
    cps = CrossPriorSmoothing(lam=lam)  # __init__ stores verbatim
    assert cps.lam is lam
    with pytest.raises(error, match="'lam' parameter of CrossPriorSmoothing must be"):
        cps.transform([1, 2, 3, 4], REF)
    with pytest.raises(error, match="'lam' parameter of CrossPriorSmoothing must be"):
        cps.fit()


def test_cps_estimator_api():
    cps = CrossPriorSmoothing(lam=5)
    assert isinstance(cps, BaseSmoothing)
    assert cps.get_params() == {"lam": 5, "min_reference": 100}
    assert repr(cps) == "CrossPriorSmoothing(lam=5)"
    assert repr(CrossPriorSmoothing()) == "CrossPriorSmoothing()"
    other = clone(cps)
    assert other is not cps
    assert other.get_params() == {"lam": 5, "min_reference": 100}
    assert cps.fit() is cps
    assert cps.lam_ == 5.0
    assert cps.set_params(lam=2.5) is cps and cps.lam == 2.5
    assert_allclose(cps.transform([1, 1, 1, 1], [1, 1, 1, 1]), [1, 1, 1, 1])
    assert CrossPriorSmoothing().lam == 10.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        cps.set_params(eps=1)


# --------------------------------------------------------------------------------------
# Cross-Prior Smoothing: exact bias and variance

CPS_CASES = [
    # n, p (group's true cell probabilities), p' (reference), lam
    (1, [0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], 10.0),
    (5, [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], 10.0),
    (12, [0.5, 0.1, 0.1, 0.3], [0.4, 0.2, 0.1, 0.3], 3.5),
    (20, [0.2, 0.0, 0.5, 0.3], [0.1, 0.3, 0.3, 0.3], 100.0),  # a zero cell
    (30, [0.05, 0.15, 0.3, 0.5], [0.1, 0.1, 0.4, 0.4], 0.0),  # unbiased
    (60, [0.3, 0.2, 0.1, 0.4], [0.3, 0.2, 0.1, 0.4], 25.0),  # p' = p: unbiased
]


def _exact_moments(n, p, ref, lam):
    cms = enumerate_confusion_matrices(n)
    pmf = np.exp(multinomial_logpmf(cms, p))
    pmf = pmf / pmf.sum()
    x = CrossPriorSmoothing(lam=lam).transform(cms, ref) / n  # smoothed proportions
    mean = pmf @ x
    dev = x - mean
    return mean, pmf @ dev**2, pmf @ dev**4


@pytest.mark.parametrize("n, p, p_ref, lam", CPS_CASES)
def test_cps_bias_and_variance_exact(n, p, p_ref, lam):
    p, p_ref = np.array(p), np.array(p_ref)
    ref = p_ref * 1000  # reference counts with proportions p'
    mean, var, _ = _exact_moments(n, p, ref, lam)
    bias = lam / (n + lam) * (p_ref - p)
    variance = n * p * (1 - p) / (n + lam) ** 2
    # the expectation to 1e-12 relative, and the bias itself to 1e-12 relative
    # wherever it is not 0 (where it is 0, only rounding of the sum of ~C(n+3, 3)
    # terms remains, which the first check bounds)
    assert_allclose(mean, p + bias, rtol=1e-12, atol=0)
    nonzero = bias != 0
    assert_allclose((mean - p)[nonzero], bias[nonzero], rtol=1e-12, atol=0)
    # (a cell with p = 0 has variance 0 up to squared rounding, ~1e-32)
    assert_allclose(var, variance, rtol=1e-12, atol=1e-28)


@pytest.mark.parametrize("n, p, p_ref, lam", [CPS_CASES[1], CPS_CASES[2], CPS_CASES[3]])
def test_cps_bias_and_variance_simulation(n, p, p_ref, lam):
    # Monte Carlo check of the same formulas; tolerances are 5 standard errors
    # computed from the exact moments (z = 5: false alarm ~ 6e-7 per cell).
    p, p_ref = np.array(p), np.array(p_ref)
    ref = p_ref * 1000
    n_resamples = 100_000
    rng = np.random.default_rng(99)
    draws = rng.multinomial(n, p, size=n_resamples)
    x = CrossPriorSmoothing(lam=lam).transform(draws, ref) / n
    _, var_exact, m4_exact = _exact_moments(n, p, ref, lam)
    se_mean = np.sqrt(var_exact / n_resamples)
    se_var = np.sqrt(np.maximum(m4_exact - var_exact**2, 0) / n_resamples)
    bias = lam / (n + lam) * (p_ref - p)
    variance = n * p * (1 - p) / (n + lam) ** 2
    assert (np.abs(x.mean(axis=0) - p - bias) <= 5 * se_mean + 1e-15).all()
    assert (np.abs(x.var(axis=0, ddof=1) - variance) <= 5 * se_var + 1e-15).all()


def test_cps_reduces_mse_of_small_group_tpr_when_reference_is_close():
    # CPS trades bias for variance: with p' = p the MSE of every cell proportion drops
    n, p, lam = 10, np.array([0.3, 0.2, 0.1, 0.4]), 10.0
    mean, var, _ = _exact_moments(n, p, p * 100, lam)
    raw_var = p * (1 - p) / n
    assert_allclose(mean, p, rtol=1e-12)
    assert (var < raw_var).all()
    assert_allclose(var / raw_var, (n / (n + lam)) ** 2, rtol=1e-12)


# --------------------------------------------------------------------------------------
# Additive smoothing


@pytest.mark.parametrize("eps", [0.0, 1e-10, 0.5, 1.0, 3])
@pytest.mark.parametrize("shape", [(4,), (7, 4), (2, 3, 4)])
def test_additive_adds_eps(eps, shape):
    counts = _random_counts(4, shape)
    out = AdditiveSmoothing(eps=eps).transform(counts)
    assert out.dtype == np.float64
    assert out.shape == shape
    assert_array_equal(out, counts + float(eps))
    assert_allclose(out.sum(axis=-1), counts.sum(axis=-1) + 4 * eps)


def test_additive_eps_zero_is_identity():
    cms = enumerate_confusion_matrices(9)
    assert_array_equal(AdditiveSmoothing(eps=0).transform(cms), cms)


def test_additive_makes_ratios_defined():
    out = AdditiveSmoothing(eps=1).transform([0, 0, 3, 3])
    assert_array_equal(out, [1, 1, 4, 4])
    assert compute_metric("tpr", out) == 0.5
    bashful = AdditiveSmoothing(eps=1e-10).transform([0, 0, 3, 3])
    assert_allclose(compute_metric("tpr", bashful), 0.5)
    assert_allclose(compute_metric("fpr", bashful), 0.5)


def test_additive_needs_no_reference():
    assert not AdditiveSmoothing.requires_reference
    sm = AdditiveSmoothing(eps=2.0)
    counts = np.array([[1, 2, 3, 4], [0, 0, 0, 0]])
    assert_array_equal(sm.transform(counts), counts + 2.0)
    # a reference, if given, is validated but does not change the result
    assert_array_equal(sm.transform(counts, [9, 9, 9, 9]), counts + 2.0)
    with pytest.raises(ValueError, match="reference_counts must be non-negative"):
        sm.transform(counts, [-1, 0, 0, 0])


@pytest.mark.parametrize(
    "eps, error",
    [
        (-1.0, ValueError),
        (-1e-300, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        ("1", TypeError),
        (None, TypeError),
        (False, TypeError),
        (1j, TypeError),
    ],
)
def test_additive_bad_eps(eps, error):
    sm = AdditiveSmoothing(eps=eps)
    with pytest.raises(error, match="'eps' parameter of AdditiveSmoothing must be"):
        sm.transform([1, 2, 3, 4])
    with pytest.raises(error, match="'eps' parameter of AdditiveSmoothing must be"):
        sm.fit()


def test_additive_estimator_api():
    sm = AdditiveSmoothing(eps=0.5)
    assert sm.get_params() == {"eps": 0.5}
    assert repr(sm) == "AdditiveSmoothing(eps=0.5)"
    assert repr(AdditiveSmoothing()) == "AdditiveSmoothing()"
    other = clone(sm)
    assert other is not sm and other.get_params() == {"eps": 0.5}
    assert sm.fit() is sm


@pytest.mark.parametrize("smoother", [AdditiveSmoothing(1.0), CrossPriorSmoothing(2.0)])
@pytest.mark.parametrize(
    "counts, error, match",
    [
        ([1, -2, 3, 4], ValueError, "counts must be non-negative"),
        ([1, np.inf, 3, 4], ValueError, "counts contains NaN or inf"),
        ([1, 2, 3], ValueError, r"counts must have shape \(\.\.\., 4\)"),
        (["a", "b", "c", "d"], TypeError, "counts must be numeric"),
    ],
)
def test_smoothers_validate_counts(smoother, counts, error, match):
    with pytest.raises(error, match=match):
        smoother.transform(counts, REF)


@pytest.mark.parametrize(
    "smoother", [AdditiveSmoothing(eps=0.7), CrossPriorSmoothing(lam=4.0)]
)
def test_coefficients_give_the_transform(smoother):
    cms = enumerate_confusion_matrices(9)
    ref = np.array([5.0, 1.0, 3.0, 11.0])
    scale, offset = smoother.coefficients(9, reference_counts=ref)
    np.testing.assert_allclose(
        smoother.transform(cms, ref), scale * cms + offset, rtol=1e-14
    )
