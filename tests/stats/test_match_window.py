"""The windowed exact MATCH sums against the plain sum over every denominator.

The window of :func:`~sklearn_smallfair.stats._binomial.window` leaves out at most
``WINDOW_MASS`` (1e-15) of binomial mass per group, so the tails of the windowed
sums must equal those of the full sum over all ``n + 1`` denominators
(``_exact_full``, one incomplete beta function per term) to 1e-12 at every size.
"""

import numpy as np
import pytest

from sklearn_smallfair.metrics import get_metric, metric_names
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.stats import _binomial, _match_exact
from sklearn_smallfair.stats._match_batch import Batch, score
from sklearn_smallfair.stats._match_exact import _exact_full, exact

WINDOWED = [*metric_names(family="joint_ratio"), "mb"]
SMOOTHERS = {
    "raw": None,
    "cps_10": CrossPriorSmoothing(10),
    "eps_1": AdditiveSmoothing(1),
}


def _groups(n, seed):
    """Three groups of size n: near the reference, far below it, far above it,
    and a reference with a rare cell."""
    rng = np.random.default_rng(seed)
    reference = np.array(
        [[300.0, 100.0, 150.0, 450.0], [40.0, 60.0, 2.0, 898.0], [5.0, 5.0, 5.0, 5.0]]
    )
    counts = np.empty((3, 4), dtype=np.int64)
    counts[0] = rng.multinomial(n, reference[0] / reference[0].sum())
    counts[1] = rng.multinomial(n, [0.2, 0.3, 0.1, 0.4])
    counts[2] = rng.multinomial(n, [0.05, 0.45, 0.45, 0.05])
    return counts, reference


def _both(metric_name, smoother, n, seed=0):
    metric = get_metric(metric_name)
    if smoother is not None and metric.name == "mb":
        pytest.skip("the exact law of mb is computed on raw counts")
    counts, reference = _groups(n, seed)
    batch = Batch(
        counts=counts,
        reference=reference,
        score=score(metric, counts, smoother, reference),
        smoothing=smoother,
    )
    return exact(metric, batch), _exact_full(metric, batch)


def _assert_same(windowed, full, n=0):
    # 1e-12, plus the rounding of the reference itself: the plain sum adds n + 1
    # terms of up to 1 each, about 1e-18 n of accumulated error in a tail near 1
    atol = 1e-12 + 2e-18 * n
    for name in ("lower", "upper", "p_undefined"):
        got, expected = getattr(windowed, name), getattr(full, name)
        assert np.array_equal(np.isnan(got), np.isnan(expected)), name
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol, equal_nan=True)
    # the smaller tail (the p-value's) agrees to 1e-12 at every size
    small = np.fmin(windowed.lower, windowed.upper)
    np.testing.assert_allclose(
        small, np.fmin(full.lower, full.upper), rtol=0, atol=1e-12, equal_nan=True
    )


@pytest.mark.parametrize("n", [100, 10_000])
@pytest.mark.parametrize("metric", WINDOWED)
def test_window_equals_full_sum(metric, n):
    _assert_same(*_both(metric, None, n, seed=n))


@pytest.mark.parametrize("smoothing", ["cps_10", "eps_1"])
@pytest.mark.parametrize("metric", ["tpr", "fpr", "ppv"])
def test_window_equals_full_sum_smoothed(metric, smoothing):
    _assert_same(*_both(metric, SMOOTHERS[smoothing], 3_000, seed=3))


@pytest.mark.slow
@pytest.mark.parametrize("n", [1_000, 100_000, 1_000_000])
@pytest.mark.parametrize("smoothing", list(SMOOTHERS))
@pytest.mark.parametrize("metric", WINDOWED)
def test_window_equals_full_sum_up_to_a_million(metric, smoothing, n):
    _assert_same(*_both(metric, SMOOTHERS[smoothing], n, seed=n), n=n)


def test_window_is_a_small_part_of_the_sum():
    # O(sqrt(n)) terms: 16.8 sigma + 25 of the 1,000,001 denominators at n = 10^6
    metric = get_metric("tpr")
    counts = np.array([[250_000, 250_000, 250_000, 250_000]])
    batch = Batch(counts, counts.astype(float), score(metric, counts))
    terms = int(_match_exact.exact_terms(metric, batch)[0])
    sigma = np.sqrt(10**6 * 0.25)
    assert 16 * sigma < terms < 17 * sigma + 30
    lo, hi = _binomial.window(counts.sum(axis=1), [0.5])
    assert terms == hi[0] - lo[0] + 1


def test_full_sum_detects_a_wrong_window(monkeypatch):
    # the comparison can fail: a window too narrow by a few standard deviations
    # leaves out far more than 1e-12
    metric = get_metric("tpr")
    counts, reference = _groups(10_000, 1)
    batch = Batch(counts, reference, score(metric, counts))
    full = _exact_full(metric, batch)
    real = _binomial.window

    def narrow(n, prob):
        lo, hi = real(n, prob)
        mid = (lo + hi) // 2
        return mid - (mid - lo) // 4, mid + (hi - mid) // 4

    monkeypatch.setattr(_match_exact, "window", narrow)
    cut = exact(metric, batch)
    worst = np.nanmax(
        np.abs(np.concatenate([cut.lower - full.lower, cut.upper - full.upper]))
    )
    assert worst > 1e-9
