"""The EAUC scorer in scikit-learn's model selection, and EccentricityDisplay."""

import warnings

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline

from sklearn_smallfair.datasets import make_dyadic_regression
from sklearn_smallfair.dyadic import (
    DyadicMeanRegressor,
    EccentricityDisplay,
    MatrixFactorizationRegressor,
    eauc_score,
    eccentricity_curve,
    make_eauc_scorer,
)
from sklearn_smallfair.exceptions import DyadicDataWarning


@pytest.fixture(scope="module")
def data():
    return make_dyadic_regression(
        n_users=80, n_items=60, n_ratings=3000, non_uniformity=0.8, random_state=0
    )


def _fold_eaucs(model, X, y, cv, **kw):
    """EAUC of each fold computed by hand with the fold's training ratings."""
    out = []
    for train, test in cv.split(X):
        fitted = model.fit(X[train], y[train])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DyadicDataWarning)
            out.append(
                eauc_score(
                    y[test],
                    fitted.predict(X[test]),
                    users=X[test, 0],
                    items=X[test, 1],
                    train_ratings=y[train],
                    train_users=X[train, 0],
                    train_items=X[train, 1],
                    **kw,
                )
            )
    return np.array(out)


@pytest.mark.parametrize("kw", [{}, {"error": "squared", "method": "grouped"}])
def test_cross_validate_equals_eauc_with_fold_training_data(data, kw):
    X, y = data
    cv = KFold(4, shuffle=True, random_state=0)
    expected = _fold_eaucs(DyadicMeanRegressor(), X, y, cv, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        scores = cross_validate(
            DyadicMeanRegressor(), X, y, cv=cv, scoring=make_eauc_scorer(**kw)
        )
        piped = cross_validate(
            make_pipeline(DyadicMeanRegressor()),
            X,
            y,
            cv=cv,
            scoring={"eauc": make_eauc_scorer(**kw)},
        )
    np.testing.assert_allclose(-scores["test_score"], expected, rtol=1e-12)
    np.testing.assert_allclose(-piped["test_eauc"], expected, rtol=1e-12)
    assert (expected > 0).all()


def test_grid_search_and_meta_estimator_means(data):
    X, y = data
    grid = GridSearchCV(
        MatrixFactorizationRegressor(n_iter=5, random_state=0),
        {"n_components": [1, 4]},
        scoring=make_eauc_scorer(),
        cv=3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        grid.fit(X[:2500], y[:2500])
        # the scorer finds best_estimator_.entity_means_
        score = make_eauc_scorer()(grid, X[2500:], y[2500:])
        direct = eauc_score(
            y[2500:],
            grid.predict(X[2500:]),
            users=X[2500:, 0],
            items=X[2500:, 1],
            train_ratings=y[:2500],
            train_users=X[:2500, 0],
            train_items=X[:2500, 1],
        )
    assert score == pytest.approx(-direct, rel=1e-12)
    assert grid.best_params_["n_components"] in (1, 4)


def test_estimator_without_means_uses_the_fold_with_a_warning(data):
    X, y = data
    model = DummyRegressor().fit(X[:2000], y[:2000])
    with pytest.warns(DyadicDataWarning, match="no training ratings given"):
        score = make_eauc_scorer()(model, X[2000:], y[2000:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        own = eauc_score(
            y[2000:], model.predict(X[2000:]), users=X[2000:, 0], items=X[2000:, 1]
        )
    assert score == -own


def test_scorer_options_and_errors(data):
    X, y = data
    scorer = make_eauc_scorer(method="bins", n_bins=5)
    assert repr(scorer) == (
        "make_eauc_scorer(error='absolute', tail='both', method='bins', n_bins=5, "
        "unknown='drop')"
    )
    with pytest.raises(
        ValueError, match="'error' parameter of make_eauc_scorer must be a str among"
    ):
        make_eauc_scorer(error="huber")
    with pytest.raises(
        ValueError, match="'n_bins' parameter of make_eauc_scorer must be an int"
    ):
        make_eauc_scorer(n_bins=0)
    assert repr(make_eauc_scorer(method="bins", n_bins=np.int64(5))) == repr(scorer)
    model = DyadicMeanRegressor().fit(X, y)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 2\)"):
        scorer(model, np.column_stack([X, X[:, 0]]), y)


def test_display_from_predictions_and_estimator(data):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = data
    tr, te = slice(0, 2400), slice(2400, None)
    mean = DyadicMeanRegressor().fit(X[tr], y[tr])
    train = dict(train_ratings=y[tr], train_users=X[tr, 0], train_items=X[tr, 1])
    preds = {"pair mean": mean.predict(X[te]), "truth": y[te].astype(float)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        disp = EccentricityDisplay.from_predictions(
            y[te], preds, users=X[te, 0], items=X[te, 1], n_bins=10, **train
        )
        expected = eauc_score(
            y[te], preds["pair mean"], users=X[te, 0], items=X[te, 1], **train
        )
        binned = eccentricity_curve(
            y[te],
            preds["pair mean"],
            users=X[te, 0],
            items=X[te, 1],
            method="bins",
            n_bins=10,
            **train,
        )
    labels = [line.get_label() for line in disp.lines_]
    assert labels == [f"pair mean (EAUC = {expected:.4f})", "truth (EAUC = 0.0000)"]
    np.testing.assert_allclose(disp.lines_[0].get_xdata(), binned.eccentricity)
    np.testing.assert_allclose(disp.lines_[0].get_ydata(), binned.error)
    assert disp.ax_.get_ylabel() == "mean absolute error"

    fig, ax = plt.subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        disp = EccentricityDisplay.from_estimator(
            [
                mean,
                MatrixFactorizationRegressor(n_iter=3, random_state=0).fit(
                    X[tr], y[tr]
                ),
            ],
            X[te],
            y[te],
            ax=ax,
            method="ordered",
        )
    assert disp.ax_ is ax and disp.figure_ is fig
    assert disp.lines_[0].get_label().startswith("DyadicMeanRegressor (EAUC = ")
    assert disp.lines_[0].get_label().endswith(f"{expected:.4f})")
    assert disp.ax_.get_ylabel() == "absolute error"
    with pytest.raises(ValueError, match="names has 1 entries"):
        EccentricityDisplay.from_estimator([mean, mean], X[te], y[te], names=["a"])
    with pytest.raises(ValueError, match="not a dict"):
        EccentricityDisplay.from_estimator({"a": mean}, X[te], y[te], names=["a"])
    plt.close("all")


def test_display_checks_each_model_once(data):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = data
    tr, te = slice(0, 2400), slice(2400, None)
    users, items = X[te, 0].copy(), X[te, 1]
    users[:4] = 10_000  # users never seen in training
    train = dict(train_ratings=y[tr], train_users=X[tr, 0], train_items=X[tr, 1])
    preds = {"noisy": y[te] + 0.5, "truth": y[te].astype(float)}
    # the drawn (binned) curve and the legend's (ordered) EAUC share one check
    with pytest.warns(DyadicDataWarning, match="4 of 600 rating") as rec:
        disp = EccentricityDisplay.from_predictions(
            y[te], preds, users=users, items=items, **train
        )
    assert len(rec) == 2  # one per model
    assert [w.filename for w in rec] == [__file__] * 2  # pointing at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        kw = dict(users=users, items=items, **train)
        expected = eauc_score(y[te], preds["noisy"], **kw)
        binned = eccentricity_curve(y[te], preds["noisy"], method="bins", **kw)
    assert disp.curves[0].n_dropped == 4
    np.testing.assert_array_equal(disp.curves[0].eccentricity, binned.eccentricity)
    assert disp.eaucs[0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(
        ValueError,
        match=r"'eauc_method' parameter of EccentricityDisplay\.from_predictions",
    ):
        EccentricityDisplay.from_predictions(
            y[te], preds, eauc_method="area", **dict(kw, users=X[te, 0])
        )
    plt.close("all")
