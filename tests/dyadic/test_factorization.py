"""Matrix factorization by ALS on exactly low-rank matrices."""

import numpy as np

from sklearn_smallfair.dyadic import MatrixFactorizationRegressor


def _low_rank(n_users=20, n_items=15, rank=2, seed=0):
    rng = np.random.default_rng(seed)
    full = 3.0 + rng.normal(size=(n_users, rank)) @ rng.normal(size=(rank, n_items))
    users, items = np.divmod(np.arange(n_users * n_items), n_items)
    return np.column_stack([users, items]), full.ravel()


def test_als_recovers_a_fully_observed_low_rank_matrix():
    X, y = _low_rank()
    model = MatrixFactorizationRegressor(
        n_components=2, alpha=1e-9, n_iter=300, tol=0, clip=False, random_state=0
    ).fit(X, y)
    assert np.max(np.abs(model.predict(X) - y)) < 1e-4


def test_als_completes_a_partly_observed_low_rank_matrix():
    X, y = _low_rank(n_users=40, n_items=30, seed=1)
    rng = np.random.default_rng(2)
    seen = rng.random(y.size) < 0.7
    model = MatrixFactorizationRegressor(
        n_components=2, alpha=1e-6, n_iter=500, tol=0, clip=False, random_state=0
    ).fit(X[seen], y[seen])
    assert np.max(np.abs(model.predict(X[~seen]) - y[~seen])) < 1e-2
