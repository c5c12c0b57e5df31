"""The audit's detectable gaps: one path with the public planning functions, and
the power they state holds when the test is simulated."""

import numpy as np
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.audit._detectable import detectable_gaps
from sklearn_smallfair.stats import match_min_detectable_effect, match_test
from sklearn_smallfair.stats._planning_two_sample import size_detectable

COUNTS = {
    "a": [60, 20, 30, 290],
    "b": [14, 6, 9, 71],
    "c": [5, 5, 2, 18],
    "d": [300, 90, 160, 1450],
}


def test_audit_gap_is_the_public_minimum_detectable_effect():
    report = audit_predictions(counts=COUNTS, metrics=["tpr", "ppv"], tests=("match",))
    frame = report.frame
    cms = np.array([COUNTS[g] for g in frame.index], dtype=float)
    others = cms.sum(axis=0) - cms
    n_tests = 2 * len(COUNTS)  # family="all": every group x metric
    for metric, cells in (("tpr", [0, 1]), ("ppv", [0, 2])):
        share = cms[:, cells].sum(axis=1) / cms.sum(axis=1)
        for k, group in enumerate(frame.index):
            try:
                expected = abs(
                    match_min_detectable_effect(
                        metric,
                        others[k],
                        int(cms[k].sum()),
                        share=share[k],
                        alpha=0.05 / n_tests,
                    )
                )
            except ValueError:
                expected = np.nan
            got = frame.loc[group, f"{metric}_detectable_gap"]
            np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


def test_family_metric_gives_smaller_gaps_than_the_whole_audit():
    both = audit_predictions(counts=COUNTS, metrics=["tpr", "ppv"], tests=("match",))
    one = audit_predictions(
        counts=COUNTS, metrics=["tpr", "ppv"], tests=("match",), family="metric"
    )
    a = both.frame["tpr_detectable_gap"].to_numpy()
    b = one.frame["tpr_detectable_gap"].to_numpy()
    ok = ~np.isnan(a) & ~np.isnan(b)
    assert ok.sum() >= 2 and (b[ok] < a[ok]).all()
    # the adjusted p-values: the whole audit's are never smaller
    assert (
        both.frame["tpr_match_p_adjusted"].to_numpy()
        >= one.frame["tpr_match_p_adjusted"].to_numpy() - 1e-15
    ).all()


def test_groups_of_millions_are_fast_and_finite():
    sizes = np.array([2 * 10**5, 3 * 10**6, 22_500_000, 10**9], np.int64)
    ref = np.array([27_600_000, 6_900_000, 13_100_000, 52_400_000], dtype=float)
    refs = np.tile(ref, (sizes.size, 1))
    for metric in ("tpr", "fpr", "ppv", "acc"):
        gaps = detectable_gaps(metric, refs, sizes, np.full(4, 0.3), alpha=1e-3)
        assert np.isfinite(gaps).all() and (gaps > 0).all() and (gaps < 0.05).all()
        assert (np.diff(gaps) < 0).all()  # more people, smaller gaps


def test_metrics_without_a_closed_form_have_no_gap():
    gaps = detectable_gaps(
        "mcc", np.array([[40, 10, 20, 30]]), np.array([50]), np.array([0.5]), alpha=0.05
    )
    assert np.isnan(gaps).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "prevalence", "reference", "tpr"),
    [(150, 0.35, 2000, 0.7), (40, 0.5, 300, 0.8), (1000, 0.2, 100_000, 0.6)],
)
def test_stated_gap_has_its_power(n, prevalence, reference, tpr):
    """Simulate the whole test (group and reference counts random) at the stated
    gap in each direction: the rejection rate is 80 % within 2 points (plus three
    Monte Carlo standard errors)."""
    rng = np.random.default_rng(11)
    m_pos = int(reference * prevalence)
    ref = np.array([tpr * m_pos, (1 - tpr) * m_pos, 100, reference - m_pos - 100])
    ref = np.rint(ref)
    level = 0.05 / 12
    draws = 4000
    m = int(ref[:2].sum())
    stated = size_detectable(n, prevalence, ref[0], m, level)
    for sign in (1, -1):
        gap = stated[sign][0]
        if np.isnan(gap):
            continue
        theta0 = ref[0] / ref[:2].sum()
        k = rng.binomial(n, prevalence, draws)
        x = rng.binomial(k, theta0 + sign * gap)
        y = rng.binomial(m, theta0, draws)
        counts = {i: [x[i], k[i] - x[i], 1, 1] for i in range(draws)}
        refs = np.array([[y[i], m - y[i], 1, 1] for i in range(draws)])
        res = match_test(
            counts=counts, reference=refs, correction=None, confidence_level=None
        )
        p = res.frame["p_value"].fillna(1.0).to_numpy()
        rate = float((p <= level).mean())
        se = np.sqrt(0.8 * 0.2 / draws)
        assert abs(rate - 0.8) <= 0.02 + 3 * se, (sign, gap, rate)
