"""Exact coverage of the default intervals (``interval_method="auto"``) at small n.

Every confusion matrix of size n is enumerated (``C(n + 3, 3)`` of them), its
interval computed once, and the coverage under a law is the multinomial
probability of the matrices whose interval contains the law's true value, among
the matrices where the metric is defined (coverage conditional on a defined
value). No simulation: the numbers are exact up to the posterior draws of the
smoothed intervals.
"""

import numpy as np
import pytest

from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf
from sklearn_smallfair._column_intervals import (
    column_interval,
    resolve_interval_method,
)
from sklearn_smallfair.metrics import compute_metric, get_metric

ALPHA = 0.05
TARGET = 0.93
#: Laws (prevalence, TPR, FPR) with rates near 0 and 1, where score and posterior
#: intervals under-cover at small n.
EXTREME_LAWS = [
    (0.5, 0.98, 0.01),
    (0.99, 0.9, 0.5),
    (0.2, 0.99, 0.05),
    (0.05, 0.8, 0.02),
    (0.5, 0.9, 0.1),
]
PROPORTIONS = ("acc", "tpr", "fpr", "ppv", "npv", "f1")
PROJECTED = ("mcc", "mb", "pt")


def cells(prevalence, tpr, fpr):
    return np.array(
        [
            prevalence * tpr,
            prevalence * (1 - tpr),
            (1 - prevalence) * fpr,
            (1 - prevalence) * (1 - fpr),
        ]
    )


def exact_coverage(metric, n, law, low, high, cms):
    """Coverage of the intervals ``(low, high)`` of the matrices ``cms`` of size n."""
    p = cells(*law)
    truth = float(compute_metric(metric, p))
    weight = np.exp(multinomial_logpmf(cms, p))
    values = np.asarray(metric.func(cms.astype(float)), dtype=float)
    defined = np.isfinite(values) & np.isfinite(low)
    covered = defined & (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    return weight[covered].sum() / weight[defined].sum()


def intervals(metric, cms, method, prior=None):
    labels = np.arange(cms.shape[0]).astype(object)
    return column_interval(
        metric,
        cms,
        method=method,
        alpha=ALPHA,
        n_resamples=400,
        seed=np.random.SeedSequence(0),
        labels=labels,
        prior=prior,
    )


@pytest.mark.parametrize("n", [5, 10])
@pytest.mark.parametrize("name", PROPORTIONS + PROJECTED)
def test_auto_covers_at_small_n_on_extreme_laws(name, n):
    metric = get_metric(name)
    method = resolve_interval_method(metric, "auto", smoothed=False)
    cms = enumerate_confusion_matrices(n)
    low, high = intervals(metric, cms, method)
    for law in EXTREME_LAWS:
        coverage = exact_coverage(metric, n, law, low, high, cms)
        assert coverage >= TARGET, (name, n, law, method, coverage)


@pytest.mark.parametrize(
    "name, bad, law",
    [
        # Wilson at n = 10, accuracy 0.985: 9/10 correct gives an upper bound
        # below the truth, so only 10/10 covers (0.985^10 = 86 %).
        ("acc", "wilson", (0.5, 0.98, 0.01)),
        ("f1", "wilson", (0.5, 0.98, 0.01)),
        ("tpr", "wilson", (0.99, 0.95, 0.5)),
        # the Jeffreys posterior's interval for a matrix of 10 with one error
        # (e.g. 4, 1, 0, 5) stops at 0.95, below the true MCC of 0.97
        ("mcc", "posterior", (0.5, 0.98, 0.01)),
    ],
)
def test_the_check_fails_a_bad_method(name, bad, law):
    """The coverage check is not vacuous: the former default fails it."""
    metric = get_metric(name)
    cms = enumerate_confusion_matrices(10)
    low, high = intervals(metric, cms, bad)
    assert exact_coverage(metric, 10, law, low, high, cms) < TARGET


def test_auto_methods():
    assert resolve_interval_method(get_metric("tpr"), "auto", smoothed=False) == (
        "clopper-pearson"
    )
    assert resolve_interval_method(get_metric("f1"), "auto", smoothed=False) == (
        "clopper-pearson"
    )
    assert resolve_interval_method(get_metric("mcc"), "auto", smoothed=False) == (
        "projection"
    )
    assert resolve_interval_method(get_metric("ofi"), "auto", smoothed=False) == (
        "posterior"
    )
    assert resolve_interval_method(get_metric("tpr"), "auto", smoothed=True) == (
        "posterior-hull"
    )
    # methods asked for explicitly are unchanged
    assert (
        resolve_interval_method(get_metric("tpr"), "wilson", smoothed=False) == "wilson"
    )
    assert resolve_interval_method(get_metric("tpr"), "wilson", smoothed=True) == (
        "posterior"
    )


def test_projection_contains_the_value_and_is_the_box_range():
    metric = get_metric("mcc")
    cms = enumerate_confusion_matrices(6).astype(float)
    low, high = intervals(metric, cms, "projection")
    values = np.asarray(metric.func(cms))
    ok = np.isfinite(values)
    assert np.all(low[ok] <= values[ok] + 1e-12)
    assert np.all(values[ok] <= high[ok] + 1e-12)
    assert np.all((low[ok] >= -1 - 1e-12) & (high[ok] <= 1 + 1e-12))
    # a perfect matrix reaches 1 (on the lattice's corner)
    perfect = np.flatnonzero((cms[:, 1] == 0) & (cms[:, 2] == 0) & ok)
    assert np.allclose(high[perfect], 1.0)


def test_smoothed_hull_contains_raw_and_posterior_intervals():
    metric = get_metric("ppv")
    cms = enumerate_confusion_matrices(5).astype(float)
    prior = np.broadcast_to(10 * cells(0.5, 0.8, 0.2), cms.shape)
    low, high = intervals(metric, cms, "posterior-hull", prior=prior)
    r_low, r_high = intervals(metric, cms, "clopper-pearson")
    p_low, p_high = intervals(metric, cms, "posterior", prior=prior)
    ok = np.isfinite(r_low)
    assert np.all(low[ok] <= np.fmin(r_low, p_low)[ok])
    assert np.all(high[ok] >= np.fmax(r_high, p_high)[ok])
    # the smoothed value (the posterior mean) lies inside
    smoothed = np.asarray(metric.func(cms + prior))
    assert np.all((low[ok] <= smoothed[ok]) & (smoothed[ok] <= high[ok]))


@pytest.mark.parametrize("n", [5, 10])
def test_smoothed_auto_covers_a_group_that_differs_from_its_reference(n):
    """The reference's law has PPV 0.8; the group's PPV truly differs."""
    metric = get_metric("ppv")
    cms = enumerate_confusion_matrices(n)
    prior = np.broadcast_to(10 * cells(0.5, 0.8, 0.2), cms.shape)
    low, high = intervals(metric, cms, "posterior-hull", prior=prior)
    p_low, p_high = intervals(metric, cms, "posterior", prior=prior)
    group_law = (0.5, 0.3, 0.6)  # PPV 1/3
    assert exact_coverage(metric, n, group_law, low, high, cms) >= TARGET
    # the posterior with the smoothing prior alone does not cover
    assert exact_coverage(metric, n, group_law, p_low, p_high, cms) < TARGET


# ---------------------------------------------------------------------------------
# Slow: the whole grid of laws, and the smoothed intervals
# ---------------------------------------------------------------------------------
GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.98, 0.99)


def grid_laws():
    laws = [(p, t, f) for p in GRID for t in GRID for f in GRID if t != f]
    return np.array([cells(*law) for law in laws])


def coverage_on_laws(metric, cms, low, high, laws, min_defined=0.1):
    """Exact coverage under each law where the metric is defined with probability
    at least ``min_defined``."""
    weight = np.exp(multinomial_logpmf(cms[None, :, :], laws[:, None, :]))
    truth = np.asarray(metric.func(laws), dtype=float)
    values = np.asarray(metric.func(cms.astype(float)), dtype=float)
    defined = np.isfinite(values) & np.isfinite(low)
    covered = (
        defined[None]
        & (low[None] <= truth[:, None] + 1e-12)
        & (truth[:, None] - 1e-12 <= high[None])
    )
    mass = (weight * defined[None]).sum(axis=1)
    keep = np.isfinite(truth) & (mass >= min_defined)
    return (weight * covered).sum(axis=1)[keep] / mass[keep]


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 10, 20])
def test_auto_covers_on_the_grid_of_laws(n):
    laws = grid_laws()
    cms = enumerate_confusion_matrices(n)
    for name in PROPORTIONS + PROJECTED:
        metric = get_metric(name)
        low, high = intervals(
            metric, cms, resolve_interval_method(metric, "auto", smoothed=False)
        )
        coverage = coverage_on_laws(metric, cms, low, high, laws)
        assert coverage.min() >= TARGET, (name, n, coverage.min())


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 10, 20, 50])
@pytest.mark.parametrize(
    "name, group_law, ref_law",
    [
        ("ppv", (0.5, 0.3, 0.6), (0.5, 0.8, 0.2)),  # the group's PPV differs
        ("tpr", (0.4, 0.95, 0.3), (0.4, 0.95, 0.3)),  # the reference's own law
        ("mcc", (0.5, 0.98, 0.01), (0.3, 0.6, 0.1)),
        ("acc", (0.2, 0.99, 0.05), (0.5, 0.8, 0.2)),
    ],
)
def test_smoothed_auto_covers_the_groups_own_value(name, group_law, ref_law, n):
    """Cross-Prior Smoothing with lam = 10 toward a reference of 200 people drawn
    from its law: each reference draw gives the prior lam * p_ref; the coverage is
    averaged over 20 reference draws (5 at n = 50, whose 23,426 matrices each
    need posterior draws for the MCC)."""
    metric = get_metric(name)
    cms = enumerate_confusion_matrices(n)
    rng = np.random.default_rng(0)
    p = cells(*group_law)
    coverages = []
    for ref in rng.multinomial(200, cells(*ref_law), size=20 if n < 50 else 5):
        prior = np.broadcast_to(10 * ref / ref.sum(), cms.shape)
        low, high = intervals(metric, cms, "posterior-hull", prior=prior)
        coverages.append(exact_coverage(metric, n, group_law, low, high, cms))
    assert np.isfinite(p).all()
    assert np.mean(coverages) >= TARGET, (name, n, np.mean(coverages))
