"""EAUC with method="bins_published" against the published binning, written
with pandas.cut as in the published code."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.datasets import make_dyadic_regression
from sklearn_smallfair.dyadic import eauc_score, eccentricity_curve, entity_means


def _pandas_reference(y, pred, users, items, means, n_bins, squared=False):
    um = means.user_mean(users)
    im = means.item_mean(items)
    ecc = np.abs(y - (um + im) / 2)
    err = (y - pred) ** 2 if squared else np.abs(y - pred)
    span = y.max() - y.min()
    edges = np.linspace(0, span, n_bins)
    frame = pd.DataFrame({"ecc": ecc, "err": err})
    # the published code takes ``interval.mid`` of pandas' labels, whose edges
    # pandas rounds to 3 decimals (``precision=3``); the package uses the exact
    # edges, so the reference takes the bin codes and exact midpoints
    codes = pd.cut(frame["ecc"], edges, labels=False)
    by_bin = frame["err"].groupby(codes).mean().reindex(range(n_bins - 1))
    x = (edges[:-1] + edges[1:]) / 2
    v = by_bin.to_numpy()
    x, v = x[~np.isnan(v)], v[~np.isnan(v)]
    area = float(np.sum(np.diff(x) * (v[1:] + v[:-1])) / 2)
    return area / span ** (3 if squared else 2), x, v


@pytest.mark.parametrize("n_bins", [2, 5, 20, 100])
@pytest.mark.parametrize("squared", [False, True])
def test_matches_pandas_cut(n_bins, squared):
    X, y = make_dyadic_regression(
        n_users=40, n_items=30, n_ratings=900, random_state=n_bins
    )
    rng = np.random.default_rng(0)
    pred = np.clip(y + rng.normal(0, 1, y.size), 1, 5)
    tr, te = slice(0, 600), slice(600, None)
    means = entity_means(y[tr], users=X[tr, 0], items=X[tr, 1])
    users, items = X[te, 0], X[te, 1]
    seen = ~np.isnan(means.user_mean(users)) & ~np.isnan(means.item_mean(items))
    users, items, yt, pt = users[seen], items[seen], y[te][seen], pred[te][seen]
    expected, x, v = _pandas_reference(yt, pt, users, items, means, n_bins, squared)
    error = "squared" if squared else "absolute"
    curve = eccentricity_curve(
        yt,
        pt,
        users=users,
        items=items,
        means=means,
        method="bins_published",
        n_bins=n_bins,
        error=error,
    )
    np.testing.assert_allclose(curve.eccentricity, x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(curve.error, v, rtol=0, atol=1e-12)
    assert curve.eauc == pytest.approx(expected, rel=1e-12, abs=1e-15)
    score = eauc_score(
        yt,
        pt,
        users=users,
        items=items,
        means=means,
        method="bins_published",
        n_bins=n_bins,
        error=error,
    )
    assert score == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_zero_eccentricity_is_dropped():
    # user and item means 3: the rating 3 has eccentricity 0 and is in no bin
    y = np.array([1.0, 5.0, 3.0])
    users, items = np.array([0, 0, 0]), np.array([0, 0, 0])
    means = entity_means(y, users=users, items=items)
    curve = eccentricity_curve(
        y,
        [1.0, 5.0, 0.0],
        users=users,
        items=items,
        means=means,
        method="bins_published",
        n_bins=3,
    )
    # edges 0, 2, 4: both eccentricities 2 fall in (0, 2]; the error 3 of the
    # rating at eccentricity 0 is not counted
    assert curve.eccentricity.tolist() == [1.0]
    assert curve.error.tolist() == [0.0]
