"""Properties behind the stress tests of the adaptive metric, in closed form."""

import math

import numpy as np
import pytest

from sklearn_smallfair.adaptive import adaptive_normalized_report


def test_imbalance_factor_cannot_tell_models_of_equal_accuracy():
    # 95 negatives, 5 positives; both predictors make 5 errors
    y = np.array([0] * 95 + [1] * 5)
    majority = np.zeros(100, dtype=int)
    finder = y.copy()
    finder[:5] = 1  # all positives found, 5 false alarms
    a = adaptive_normalized_report(y, majority, n_features=1, n_samples=1000)
    b = adaptive_normalized_report(y, finder, n_features=1, n_samples=1000)
    assert a.raw_score == b.raw_score == 0.95
    assert a.score == b.score
    expected = 0.95 * (1 - math.exp(-19)) / (1 + math.log(19))
    assert a.score == pytest.approx(expected, rel=1e-12)
    # a balanced base metric separates them
    a = adaptive_normalized_report(
        y, majority, n_features=1, n_samples=1000, base_metric="balanced_accuracy"
    )
    b = adaptive_normalized_report(
        y, finder, n_features=1, n_samples=1000, base_metric="balanced_accuracy"
    )
    assert a.raw_score == 0.5 and b.raw_score == pytest.approx((1 + 90 / 95) / 2)


def test_few_samples_per_feature_push_the_score_to_the_ceiling():
    # accuracy 0.9, balanced, d = 20 and N = 100: f = 1 + sigma(3) - 1/2
    y = np.array([0, 1] * 50)
    pred = y.copy()
    pred[:10] = 1 - pred[:10]
    rep = adaptive_normalized_report(y, pred, n_features=20, n_samples=100)
    f = 1 + 1 / (1 + math.exp(-3)) - 0.5
    assert rep.dimensionality_factor == pytest.approx(f, rel=1e-12)
    assert rep.unclipped_score == pytest.approx(0.9 * f * (1 - math.exp(-9)))
    assert rep.unclipped_score > 1 and rep.score == 1.0
