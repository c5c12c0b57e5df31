"""The EAUC study's findings on MovieLens-100k (needs recbole's copy of it)."""

import importlib.util
import warnings

import numpy as np
import pytest

from sklearn_smallfair.datasets import load_movielens_100k
from sklearn_smallfair.dyadic import (
    DyadicMeanRegressor,
    MatrixFactorizationRegressor,
    UniformRandomRegressor,
    eauc_score,
    eccentricity,
)
from sklearn_smallfair.exceptions import DyadicDataWarning

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("recbole") is None,
        reason="recbole (MovieLens-100k) not installed",
    ),
]


def test_models_are_worse_than_random_on_eccentric_ratings():
    X, y = load_movielens_100k()
    test = np.random.default_rng(0).random(y.size) < 0.2
    X_tr, y_tr, X_te, y_te = X[~test], y[~test], X[test], y[test]
    models = {
        "mean": DyadicMeanRegressor(),
        "mf": MatrixFactorizationRegressor(10, alpha=10.0, n_iter=10, random_state=0),
        "random": UniformRandomRegressor(random_state=0),
    }
    pred = {k: m.fit(X_tr, y_tr).predict(X_te) for k, m in models.items()}
    err = {k: np.abs(p - y_te) for k, p in pred.items()}
    means = models["mean"].entity_means_
    ecc = eccentricity(
        y_te, users=X_te[:, 0], items=X_te[:, 1], means=means, unknown="global_mean"
    )
    far, near = ecc >= 2.5, ecc < 1.0
    assert 0.005 < far.mean() < 0.03  # about 1 % of the test ratings
    for name in ("mean", "mf"):
        # worse than a uniform guess far from the pair's average, much better near
        assert err[name][far].mean() > err["random"][far].mean() + 0.3
        assert err[name][near].mean() < err["random"][near].mean() - 0.5
    # the factorization is better by RMSE and by EAUC; the random guess has an
    # RMSE far above both but an EAUC within 0.05 of the pair's average
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        kw = dict(users=X_te[:, 0], items=X_te[:, 1], means=means)
        eauc = {k: eauc_score(y_te, p, **kw) for k, p in pred.items()}
    rmse = {k: float(np.sqrt(np.mean(e**2))) for k, e in err.items()}
    assert rmse["mf"] < rmse["mean"] < rmse["random"] - 0.5
    assert eauc["mf"] < eauc["mean"]
    assert abs(eauc["random"] - eauc["mean"]) < 0.05
