"""Tests of DyadicMeanRegressor and MatrixFactorizationRegressor."""

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from sklearn_smallfair.datasets import make_dyadic_regression
from sklearn_smallfair.dyadic._estimators import (
    DyadicMeanRegressor,
    MatrixFactorizationRegressor,
)


def make_low_rank(
    n_users=120, n_items=80, n_ratings=4000, rank=3, noise=0.3, random_state=0
):
    """Ratings ``3 + b_u + b_i + p_u . q_i + noise`` on distinct random pairs."""
    rng = np.random.default_rng(random_state)
    pairs = rng.choice(n_users * n_items, size=n_ratings, replace=False)
    users, items = np.divmod(pairs, n_items)
    p = rng.normal(size=(n_users, rank))
    q = rng.normal(size=(n_items, rank))
    bu = rng.normal(scale=0.5, size=n_users)
    bi = rng.normal(scale=0.5, size=n_items)
    y = 3 + bu[users] + bi[items] + np.einsum("nk,nk->n", p[users], q[items])
    y += rng.normal(scale=noise, size=n_ratings)
    return np.column_stack([users, items]), y


def rmse(a, b):
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


SMALL_X = np.array([[0, 0], [0, 1], [1, 0], [1, 2], [2, 2], [2, 1], [0, 2]])
SMALL_Y = np.array([5.0, 3.0, 4.0, 1.0, 2.0, 4.5, 3.5])


# --------------------------------------------------------------------------------------
# DyadicMeanRegressor


def _pandas_pair_average(X_train, y_train, X_test):
    """The straightforward reference: groupby means and explicit fallbacks."""
    train = pd.DataFrame({"u": X_train[:, 0], "i": X_train[:, 1], "r": y_train})
    um = train.groupby("u")["r"].mean()
    im = train.groupby("i")["r"].mean()
    out = []
    for u, i in X_test.tolist():
        a, b = um.get(u, np.nan), im.get(i, np.nan)
        if np.isnan(a) and np.isnan(b):
            out.append(train["r"].mean())
        elif np.isnan(a):
            out.append(b)
        elif np.isnan(b):
            out.append(a)
        else:
            out.append((a + b) / 2)
    return np.array(out)


def test_mean_regressor_matches_pandas_reference():
    X, y = make_low_rank(n_users=15, n_items=10, n_ratings=60, random_state=1)
    X_test = np.array([[u, i] for u in range(17) for i in range(12)])  # some unseen
    model = DyadicMeanRegressor().fit(X, y)
    assert_allclose(
        model.predict(X_test), _pandas_pair_average(X, y, X_test), rtol=0, atol=1e-12
    )


def test_mean_regressor_small_example_and_fallbacks():
    model = DyadicMeanRegressor().fit(SMALL_X, SMALL_Y)
    um = {0: (5 + 3 + 3.5) / 3, 1: (4 + 1) / 2, 2: (2 + 4.5) / 2}
    im = {0: (5 + 4) / 2, 1: (3 + 4.5) / 2, 2: (1 + 2 + 3.5) / 3}
    pred = model.predict([[0, 0], [2, 1], [0, 9], [9, 2], [9, 9]])
    expected = [
        (um[0] + im[0]) / 2,
        (um[2] + im[1]) / 2,
        um[0],  # unseen item: the user's mean
        im[2],  # unseen user: the item's mean
        SMALL_Y.mean(),  # both unseen: the global mean
    ]
    assert_allclose(pred, expected, rtol=0, atol=1e-12)
    assert model.n_features_in_ == 2
    assert model.entity_means_.n_ratings == SMALL_Y.size


def test_mean_regressor_fallback_error():
    model = DyadicMeanRegressor(fallback="error").fit(SMALL_X, SMALL_Y)
    assert_allclose(
        model.predict(SMALL_X),
        DyadicMeanRegressor().fit(SMALL_X, SMALL_Y).predict(SMALL_X),
    )
    with pytest.raises(
        ValueError, match=r"1 rating.*unseen users and 0 of unseen items"
    ):
        model.predict([[0, 0], [7, 1]])
    with pytest.raises(
        ValueError, match="'fallback' parameter of DyadicMeanRegressor must be a str"
    ):
        DyadicMeanRegressor(fallback="nan").fit(SMALL_X, SMALL_Y)


def test_dataframe_with_string_ids_matches_integer_codes():
    users = np.array(["ann", "bob", "cy"])[SMALL_X[:, 0]]
    items = np.array(["x", "y", "z"])[SMALL_X[:, 1]]
    frame = pd.DataFrame({"user": users, "item": items})
    for model in (
        DyadicMeanRegressor(),
        MatrixFactorizationRegressor(2, random_state=0),
    ):
        by_name = clone(model).fit(frame, SMALL_Y)
        by_code = clone(model).fit(SMALL_X, SMALL_Y)
        assert_allclose(by_name.predict(frame), by_code.predict(SMALL_X), atol=1e-12)
        assert_array_equal(by_name.feature_names_in_, ["user", "item"])
        # mixed dtypes: integer users and string items
        mixed = pd.DataFrame({"user": SMALL_X[:, 0], "item": items})
        assert_allclose(
            clone(model).fit(mixed, SMALL_Y).predict(mixed),
            by_code.predict(SMALL_X),
            atol=1e-12,
        )


# --------------------------------------------------------------------------------------
# MatrixFactorizationRegressor


@pytest.fixture(scope="module")
def low_rank_split():
    X, y = make_low_rank(n_users=150, n_items=100, n_ratings=6000, random_state=0)
    return X[:4800], X[4800:], y[:4800], y[4800:]


def test_mf_beats_mean_baseline_on_low_rank_data(low_rank_split):
    X_train, X_test, y_train, y_test = low_rank_split
    mean_rmse = rmse(
        DyadicMeanRegressor().fit(X_train, y_train).predict(X_test), y_test
    )
    mf = MatrixFactorizationRegressor(n_components=5, alpha=2.0, random_state=0)
    mf_rmse = rmse(mf.fit(X_train, y_train).predict(X_test), y_test)
    # measured: mean baseline 1.71, factorization 0.37 (noise sd 0.3)
    assert mf_rmse < 0.5 * mean_rmse


def test_mf_default_parameters_beat_mean_baseline(low_rank_split):
    X_train, X_test, y_train, y_test = low_rank_split
    mean_rmse = rmse(
        DyadicMeanRegressor().fit(X_train, y_train).predict(X_test), y_test
    )
    mf = MatrixFactorizationRegressor(random_state=0).fit(X_train, y_train)
    assert rmse(mf.predict(X_test), y_test) < 0.75 * mean_rmse


def test_mf_reproducible_with_random_state(low_rank_split):
    X_train, X_test, y_train, _ = low_rank_split
    a = MatrixFactorizationRegressor(4, random_state=3).fit(X_train, y_train)
    b = MatrixFactorizationRegressor(4, random_state=3).fit(X_train, y_train)
    c = MatrixFactorizationRegressor(4, random_state=4).fit(X_train, y_train)
    assert_array_equal(a.predict(X_test), b.predict(X_test))
    assert_array_equal(a.user_factors_, b.user_factors_)
    assert a.loss_curve_ == b.loss_curve_
    assert not np.array_equal(a.user_factors_, c.user_factors_)


@pytest.mark.parametrize("n_components", [0, 1, 5])
def test_mf_objective_decreases(low_rank_split, n_components):
    X_train, _, y_train, _ = low_rank_split
    mf = MatrixFactorizationRegressor(n_components, n_iter=15, tol=0, random_state=0)
    loss = np.array(mf.fit(X_train, y_train).loss_curve_)
    assert loss.shape == (16,) and mf.n_iter_ == 15
    assert np.all(np.diff(loss) <= 1e-9 * loss[0])
    assert loss[-1] < (0.5 if n_components == 5 else 1.0) * loss[0]


def test_mf_objective_matches_recorded_loss(low_rank_split):
    X_train, _, y_train, _ = low_rank_split
    alpha = 1.5
    mf = MatrixFactorizationRegressor(3, alpha=alpha, n_iter=5, clip=False)
    mf.fit(X_train, y_train)
    fitted = mf.predict(X_train)
    penalty = alpha * (
        np.sum(mf.user_factors_**2)
        + np.sum(mf.item_factors_**2)
        + np.sum(mf.user_bias_**2)
        + np.sum(mf.item_bias_**2)
    )
    assert_allclose(
        np.sum((y_train - fitted) ** 2) + penalty, mf.loss_curve_[-1], rtol=1e-10
    )


def test_mf_tol_stops_early(low_rank_split):
    X_train, _, y_train, _ = low_rank_split
    mf = MatrixFactorizationRegressor(2, n_iter=200, tol=1e-3, random_state=0)
    mf.fit(X_train, y_train)
    assert mf.n_iter_ < 200
    assert len(mf.loss_curve_) == mf.n_iter_ + 1


def test_mf_unseen_entities_fall_back_to_biases():
    X, y = make_low_rank(n_users=30, n_items=20, n_ratings=300, random_state=2)
    mf = MatrixFactorizationRegressor(3, clip=False, random_state=0).fit(X, y)
    users = mf.entity_means_.user_means.index.to_numpy()
    items = mf.entity_means_.item_means.index.to_numpy()
    u, i = users[4], items[7]
    pred = mf.predict([[u, 999], [999, i], [999, 999], [u, i]])
    mu = mf.global_mean_
    assert mu == pytest.approx(y.mean())
    assert_allclose(
        pred[:3], [mu + mf.user_bias_[4], mu + mf.item_bias_[7], mu], atol=1e-12
    )
    full = mu + mf.user_bias_[4] + mf.item_bias_[7]
    full += mf.user_factors_[4] @ mf.item_factors_[7]
    assert pred[3] == pytest.approx(full)


def test_mf_sparse_large_ids():
    X, y = make_low_rank(n_users=30, n_items=20, n_ratings=300, random_state=2)
    mf = MatrixFactorizationRegressor(2, random_state=0)
    shifted = X * np.array([10**9, 7]) + 5  # huge, gappy ids: compact storage
    assert_allclose(mf.fit(shifted, y).predict(shifted), clone(mf).fit(X, y).predict(X))
    assert mf.user_factors_.shape == (np.unique(X[:, 0]).size, 2)


def test_mf_clip_to_training_range():
    X, y = make_low_rank(n_users=30, n_items=20, n_ratings=300, noise=0.0)
    y = np.clip(np.round(y), 1, 5)
    mf = MatrixFactorizationRegressor(5, alpha=0.01, random_state=0).fit(X, y)
    pred = mf.predict(np.column_stack([np.arange(30), np.arange(30) % 20]))
    assert pred.min() >= 1 and pred.max() <= 5
    raw = mf.set_params(clip=False).predict(X)
    assert raw.min() < 1 or raw.max() > 5  # clipping did something


def test_mf_parameter_errors():
    name = "parameter of MatrixFactorizationRegressor must be"
    with pytest.raises(ValueError, match=rf"'alpha' {name} a float in the range \(0"):
        MatrixFactorizationRegressor(alpha=0).fit(SMALL_X, SMALL_Y)
    with pytest.raises(ValueError, match=rf"'n_components' {name} an int"):
        MatrixFactorizationRegressor(n_components=-1).fit(SMALL_X, SMALL_Y)
    with pytest.raises(TypeError, match=rf"'n_iter' {name} an int"):
        MatrixFactorizationRegressor(n_iter=2.5).fit(SMALL_X, SMALL_Y)
    with pytest.raises(TypeError, match=rf"'clip' {name} an instance of 'bool'"):
        MatrixFactorizationRegressor(clip="no").fit(SMALL_X, SMALL_Y)
    with pytest.raises(ValueError, match=rf"'random_state' {name}"):
        MatrixFactorizationRegressor(random_state=True).fit(SMALL_X, SMALL_Y)


@pytest.mark.parametrize("name", ["alpha", "tol", "init_scale"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_mf_refuses_non_finite_float_parameters(name, value):
    # alpha=nan would fit and predict NaN for every pair
    model = MatrixFactorizationRegressor(2, random_state=0).set_params(**{name: value})
    with pytest.raises(
        ValueError, match=f"'{name}' parameter of MatrixFactorizationRegressor"
    ):
        model.fit(SMALL_X, SMALL_Y)
    assert not hasattr(model, "entity_means_")  # refused before any work


# --------------------------------------------------------------------------------------
# shared behaviour

ESTIMATORS = [
    DyadicMeanRegressor(),
    MatrixFactorizationRegressor(n_components=2, n_iter=5, random_state=0),
]


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: type(m).__name__)
def test_clone_get_params_and_pickle(model):
    fitted = clone(model).fit(SMALL_X, SMALL_Y)
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(fitted))
    assert_array_equal(restored.predict(SMALL_X), fitted.predict(SMALL_X))
    assert "entity_means_" not in clone(fitted).__dict__
    assert repr(model).startswith(type(model).__name__)


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: type(m).__name__)
def test_order_and_subset_invariance(model):
    X, y = make_low_rank(n_users=20, n_items=15, n_ratings=150, random_state=5)
    fitted = clone(model).fit(X, y)
    pred = fitted.predict(X)
    order = np.random.default_rng(0).permutation(X.shape[0])
    assert_allclose(fitted.predict(X[order]), pred[order], atol=1e-12)
    assert_allclose(fitted.predict(X[10:20]), pred[10:20], atol=1e-12)
    assert fitted.score(X, y) > 0


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: type(m).__name__)
def test_input_errors(model):
    model = clone(model)
    with pytest.raises(ValueError, match=r"exactly 2 columns.*got 3 feature"):
        model.fit(np.zeros((5, 3), dtype=int), np.arange(5.0))
    with pytest.raises(ValueError, match=r"exactly 2 columns.*got 1 feature"):
        model.fit(np.zeros((5, 1), dtype=int), np.arange(5.0))
    with pytest.raises(ValueError, match="2D array"):
        model.fit(np.arange(5), np.arange(5.0))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.fit(SMALL_X, SMALL_Y[:-1])
    X_nan = SMALL_X.astype(float)
    X_nan[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"X column 1 \(item ids\) contains 1 missing"):
        model.fit(X_nan, SMALL_Y)
    frame = pd.DataFrame({"user": ["a", None, "b"], "item": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"X column 0 \(user ids\) contains 1 missing"):
        model.fit(frame, [1.0, 2.0, 3.0])
    y_nan = SMALL_Y.copy()
    y_nan[0] = np.nan
    with pytest.raises(ValueError, match=r"y.*NaN"):
        model.fit(SMALL_X, y_nan)
    with pytest.raises(ValueError, match="requires y"):
        model.fit(SMALL_X, None)
    with pytest.raises(NotFittedError):
        model.predict(SMALL_X)
    model.fit(SMALL_X, SMALL_Y)
    with pytest.raises(ValueError, match="X has 3 features"):
        model.predict(np.zeros((2, 3), dtype=int))
    with pytest.raises(ValueError, match="missing"):
        model.predict(X_nan)


def test_make_dyadic_regression_smoke():
    X, y = make_dyadic_regression(
        n_users=60, n_items=40, n_ratings=1500, random_state=0
    )
    for model in ESTIMATORS:
        pred = clone(model).fit(X[:1200], y[:1200]).predict(X[1200:])
        assert np.all(np.isfinite(pred))
        assert y[:1200].min() <= pred.min() and pred.max() <= y[:1200].max()


# --------------------------------------------------------------------------------------
# scikit-learn's common checks


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: type(m).__name__)
def test_sklearn_common_checks(model, sklearn_checks):
    run_sklearn_checks, expected_failed_checks = sklearn_checks
    failed, stale = run_sklearn_checks(clone(model), expected_failed_checks)
    assert not failed
    assert not stale
