"""Tests of UniformRandomRegressor."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

from sklearn_smallfair.dyadic import UniformRandomRegressor

X = np.column_stack([np.arange(40) % 7, np.arange(40) % 5])
Y = np.linspace(1.0, 5.0, 40)


def test_draws_are_uniform_on_the_training_range():
    model = UniformRandomRegressor(random_state=0).fit(X, Y)
    assert model.rating_range_ == (1.0, 5.0)
    Xq = np.zeros((20_000, 2), dtype=int)
    pred = model.predict(Xq)
    assert 1.0 <= pred.min() and pred.max() <= 5.0
    # a fixed seed: the KS test of U[1, 5] must not reject at 1e-3
    assert stats.kstest(pred, stats.uniform(1.0, 4.0).cdf).pvalue > 1e-3
    # the mean within 4 standard errors of 3 (sd of U[1, 5] is 4 / sqrt(12))
    assert abs(pred.mean() - 3.0) < 4 * (4 / np.sqrt(12)) / np.sqrt(pred.size)


def test_explicit_range():
    model = UniformRandomRegressor((0, 10), random_state=1).fit(X, Y)
    pred = model.predict(np.zeros((5000, 2), dtype=int))
    assert model.rating_range_ == (0.0, 10.0)
    assert 0.0 <= pred.min() and pred.max() <= 10.0
    assert pred.min() < 1.0 and pred.max() > 9.0  # not the training range


def test_reproducible_with_a_seed():
    a = UniformRandomRegressor(random_state=3).fit(X, Y).predict(X)
    b = UniformRandomRegressor(random_state=3).fit(X, Y).predict(X)
    c = UniformRandomRegressor(random_state=4).fit(X, Y).predict(X)
    assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    rs = np.random.RandomState(0)
    model = UniformRandomRegressor(random_state=rs).fit(X, Y)
    assert not np.array_equal(model.predict(X), model.predict(X))


@pytest.mark.parametrize("bad", [(5, 1), (1, np.inf), "15", (1, 2, 3)])
def test_bad_range(bad):
    with pytest.raises((TypeError, ValueError), match="rating_range"):
        UniformRandomRegressor(bad).fit(X, Y)


def test_sklearn_common_checks(sklearn_checks):
    run_sklearn_checks, expected_failed_checks = sklearn_checks
    failed, stale = run_sklearn_checks(
        UniformRandomRegressor(random_state=0), expected_failed_checks
    )
    assert not failed
    assert not stale
