"""Tests of EccentricityCorrectedRegressor."""

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from sklearn_smallfair.dyadic._correction import (
    EccentricityCorrectedRegressor,
    _balanced_weights,
    _fit_linear,
    _fit_sigmoid,
)
from sklearn_smallfair.dyadic._eauc import eauc_score
from sklearn_smallfair.dyadic._estimators import (
    DyadicMeanRegressor,
    MatrixFactorizationRegressor,
)

CORRECTION_MODELS = ["linear", "balanced_linear", "sigmoid", "forest"]


def make_additive(n_users=100, n_items=60, n_ratings=3000, random_state=0):
    """Integer ratings 1..5 from strong user and item levels plus some noise.

    A user's ratings spread with the levels of the items it rated (and
    conversely), so the pair average ``(user mean + item mean) / 2`` carries
    only half of each level: a :class:`DyadicMeanRegressor` is shrunk towards
    it and fails on eccentric pairs.
    """
    rng = np.random.default_rng(random_state)
    pairs = rng.choice(n_users * n_items, size=n_ratings, replace=False)
    users, items = np.divmod(pairs, n_items)
    bu, bi = rng.normal(size=n_users), rng.normal(size=n_items)
    y = 3 + bu[users] + bi[items] + 0.5 * rng.normal(size=n_ratings)
    return np.column_stack([users, items]), np.clip(np.round(y), 1, 5)


@pytest.fixture(scope="module")
def additive_split():
    X, y = make_additive()
    return X[:2250], X[2250:], y[:2250], y[2250:]


# --------------------------------------------------------------------------------------
# the corrections reduce eccentricity bias


@pytest.mark.parametrize("kind", CORRECTION_MODELS)
def test_each_correction_reduces_eauc(additive_split, kind):
    X_train, X_test, y_train, y_test = additive_split
    base = DyadicMeanRegressor().fit(X_train, y_train)
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model=kind, random_state=0
    ).fit(X_train, y_train)

    def eauc(pred):
        return eauc_score(
            y_test,
            pred,
            users=X_test[:, 0],
            items=X_test[:, 1],
            means=base.entity_means_,
        )

    before, after = eauc(base.predict(X_test)), eauc(model.predict(X_test))
    # measured: 0.141 before; 0.105 linear, 0.104 balanced_linear, 0.100 sigmoid,
    # 0.100 forest
    assert after < 0.9 * before
    # the scorer gets the same training means from the wrapper
    assert_allclose(
        eauc_score(
            y_test,
            model.predict(X_test),
            users=X_test[:, 0],
            items=X_test[:, 1],
            means=model.entity_means_,
        ),
        after,
    )


@pytest.mark.parametrize("kind", ["linear", "balanced_linear"])
def test_linear_corrections_stretch_shrunk_predictions(additive_split, kind):
    X_train, _, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model=kind, random_state=0
    ).fit(X_train, y_train)
    assert isinstance(model.correction_, LinearRegression)
    assert model.coef_[1] > 1.5  # the pair average carries about half of the levels


@pytest.mark.parametrize("kind", CORRECTION_MODELS)
def test_predictions_stay_in_training_range(additive_split, kind):
    X_train, X_test, y_train, _ = additive_split
    y_train = y_train.copy()
    y_train[y_train == 1] = 2  # a training range narrower than the test range
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model=kind, random_state=1
    ).fit(X_train, y_train)
    assert model.rating_range_ == (2.0, 5.0)
    X_new = np.vstack([X_test, [[999, 0], [0, 999], [999, 999]]])  # unseen ids too
    pred = model.predict(X_new)
    assert np.all(np.isfinite(pred))
    assert pred.min() >= 2 and pred.max() <= 5


@pytest.mark.parametrize("kind", CORRECTION_MODELS)
def test_reproducible_with_random_state(additive_split, kind):
    X_train, X_test, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(
        MatrixFactorizationRegressor(3, n_iter=5, random_state=0),
        correction_model=kind,
        random_state=7,
    )
    a = clone(model).fit(X_train, y_train).predict(X_test)
    b = clone(model).fit(X_train, y_train).predict(X_test)
    c = clone(model).set_params(random_state=8).fit(X_train, y_train).predict(X_test)
    assert_array_equal(a, b)
    assert not np.array_equal(a, c)  # another probe


def test_fitted_attributes_and_refit(additive_split):
    X_train, _, y_train, _ = additive_split
    base = DyadicMeanRegressor()
    model = EccentricityCorrectedRegressor(base, probe_size=0.3, random_state=0)
    model.fit(X_train, y_train)
    n = y_train.size
    assert model.n_probe_ == int(np.ceil(0.3 * n))
    assert model.regressor_ is not base and not hasattr(base, "entity_means_")
    assert model.regressor_.entity_means_.n_ratings == n - model.n_probe_
    assert model.entity_means_.n_ratings == n
    assert model.entity_means_.global_mean == pytest.approx(y_train.mean())
    assert model.n_features_in_ == 2
    refit = clone(model).set_params(refit=True).fit(X_train, y_train)
    assert refit.regressor_.entity_means_.n_ratings == n
    assert_array_equal(refit.coef_, model.coef_)  # same probe, same correction
    assert clone(model).set_params(probe_size=100).fit(X_train, y_train).n_probe_ == 100


def test_forest_features_use_means_of_the_fit_part(additive_split):
    X_train, X_test, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model="forest", random_state=0
    ).fit(X_train, y_train)
    assert model.coef_ is None
    assert model.correction_.n_features_in_ == 3
    means = model.regressor_.entity_means_
    features = np.column_stack(
        [
            means.user_mean(X_test[:, 0]),
            means.item_mean(X_test[:, 1]),
            model.regressor_.predict(X_test),
        ]
    )
    assert_allclose(model.predict(X_test), model.correction_.predict(features))


def test_any_regressor_on_id_columns(additive_split):
    """A one-hot ridge pipeline (no entity_means_): means come from the fit part."""
    X_train, X_test, y_train, _ = additive_split
    base = make_pipeline(OneHotEncoder(handle_unknown="ignore"), Ridge(alpha=30.0))
    for kind in ("linear", "forest"):
        model = EccentricityCorrectedRegressor(
            base, correction_model=kind, random_state=0
        )
        pred = model.fit(X_train, y_train).predict(X_test)
        assert pred.shape == (X_test.shape[0],)
        assert pred.min() >= 1 and pred.max() <= 5


def test_dataframe_with_string_ids(additive_split):
    X_train, _, y_train, _ = additive_split
    frame = pd.DataFrame(
        {"user": [f"u{u}" for u in X_train[:, 0]], "item": X_train[:, 1]}
    )
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model="forest", random_state=0
    )
    by_name = clone(model).fit(frame, y_train)
    by_code = clone(model).fit(X_train, y_train)
    assert_allclose(by_name.predict(frame), by_code.predict(X_train))
    assert_array_equal(by_name.feature_names_in_, ["user", "item"])


def test_clone_get_params_and_pickle(additive_split):
    X_train, X_test, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(
        MatrixFactorizationRegressor(2, n_iter=3, random_state=0),
        correction_model="sigmoid",
        random_state=0,
    )
    params = model.get_params()
    assert (
        params["regressor__n_components"] == 2
        and params["correction_model"] == "sigmoid"
    )
    fitted = clone(model).fit(X_train, y_train)
    restored = pickle.loads(pickle.dumps(fitted))
    assert_array_equal(restored.predict(X_test), fitted.predict(X_test))
    assert not hasattr(clone(fitted), "regressor_")


# --------------------------------------------------------------------------------------
# the correction maps


def test_fit_linear_is_least_squares():
    rng = np.random.default_rng(0)
    pred, y = rng.normal(size=50), rng.normal(size=50)
    _, coef = _fit_linear(pred, y, None)
    assert_allclose(coef[::-1], np.polyfit(pred, y, 1))
    w = rng.uniform(0.5, 2, size=50)
    _, coef = _fit_linear(pred, y, w)
    assert_allclose(coef[::-1], np.polyfit(pred, y, 1, w=np.sqrt(w)))


def test_balanced_weights_equal_per_value_and_bin():
    y = np.array([1, 1, 1, 1, 2, 3, 3, 5.0])
    w = _balanced_weights(y, 1, 5, 10)
    totals = pd.Series(w).groupby(y).sum()
    assert_allclose(totals, y.size / 4)
    y = np.random.default_rng(0).uniform(0, 10, size=500) ** 2 / 10  # continuous
    w = _balanced_weights(y, 0, 10, 5)
    totals = pd.Series(w).groupby(np.minimum(y // 2, 4)).sum()
    assert_allclose(totals, y.size / 5)


def test_fit_sigmoid_recovers_parameters():
    pred = np.linspace(1, 5, 40)
    a, b = -6.0, 2.0
    y = 1 + 4 * expit(a + b * pred)
    assert_allclose(_fit_sigmoid(pred, y, 1.0, 5.0), [a, b], rtol=1e-6)


# --------------------------------------------------------------------------------------
# errors


def test_errors(additive_split):
    X_train, _, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(DyadicMeanRegressor(), random_state=0)
    with pytest.raises(
        ValueError,
        match="'correction_model' parameter of EccentricityCorrectedRegressor",
    ):
        clone(model).set_params(correction_model="isotonic").fit(X_train, y_train)
    probe_size = (
        r"'probe_size' parameter of EccentricityCorrectedRegressor must be a float "
        r"in the range \(0.0, 1.0\) or an int in the range \[10, inf\)"
    )
    for size in (5, 0.0, 1.0, -0.5, np.nan, True):
        with pytest.raises(ValueError, match=probe_size):
            clone(model).set_params(probe_size=size).fit(X_train, y_train)
    with pytest.raises(ValueError, match=r"holds 6 rating.*at least 10"):
        clone(model).fit(X_train[:30], y_train[:30])
    with pytest.raises(ValueError, match="leaves no training ratings"):
        clone(model).set_params(probe_size=y_train.size).fit(X_train, y_train)
    with pytest.raises(TypeError, match=probe_size):
        clone(model).set_params(probe_size="0.2").fit(X_train, y_train)
    with pytest.raises(
        ValueError, match=r"y is constant \(every training rating is 3\)"
    ):
        clone(model).fit(X_train, np.full(y_train.size, 3.0))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clone(model).fit(X_train, y_train[:-1])
    y_nan = y_train.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clone(model).fit(X_train, y_nan)
    with pytest.raises(ValueError, match="exactly 2 columns"):
        clone(model).fit(np.column_stack([X_train, X_train[:, 0]]), y_train)
    with pytest.raises(NotFittedError):
        clone(model).predict(X_train)


def test_constant_probe_predictions_error():
    # every user and item rated once: every probe pair is unseen by the base
    users = np.arange(200)
    X = np.column_stack([users, users + 1000])
    y = np.tile([1.0, 2.0, 4.0, 5.0], 50)
    base = MatrixFactorizationRegressor(2, random_state=0)
    model = EccentricityCorrectedRegressor(
        base, correction_model="linear", random_state=0
    )
    with pytest.raises(ValueError, match="predictions on the probe are all equal"):
        model.fit(X, y)
    forest = (
        clone(model).set_params(correction_model="forest").fit(X, y)
    )  # the forest can
    assert np.all(np.isfinite(forest.predict(X)))


# --------------------------------------------------------------------------------------
# scikit-learn's common checks

_UNSEEN = (
    "the check's ids are continuous random values, each rated once, so every "
    "probe pair is unseen, the base predicts one constant, and a linear or "
    "sigmoid map of a constant cannot be fit (a clear ValueError)"
)


@pytest.mark.parametrize(
    "kind, extra",
    [
        ("forest", []),
        (
            "linear",
            [
                "check_estimators_overwrite_params",
                "check_estimators_fit_returns_self",
                "check_readonly_memmap_input",
                "check_fit_idempotent",
                "check_fit_check_is_fitted",
                "check_n_features_in",
            ],
        ),
    ],
)
def test_sklearn_common_checks(kind, extra, sklearn_checks):
    run_sklearn_checks, expected_failed_checks = sklearn_checks
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model=kind, probe_size=0.5, random_state=0
    )
    expected = {**expected_failed_checks, **dict.fromkeys(extra, _UNSEEN)}
    failed, stale = run_sklearn_checks(model, expected)
    assert not failed
    assert not stale


def test_n_bins_errors(additive_split):
    X_train, _, y_train, _ = additive_split
    model = EccentricityCorrectedRegressor(
        DyadicMeanRegressor(), correction_model="balanced_linear", random_state=0
    )
    n_bins = r"'n_bins' parameter of EccentricityCorrectedRegressor must be an int"
    with pytest.raises(ValueError, match=n_bins):
        clone(model).set_params(n_bins=1).fit(X_train, y_train)
    for bad in (2.5, True):
        with pytest.raises(TypeError, match=n_bins):
            clone(model).set_params(n_bins=bad).fit(X_train, y_train)
