"""scikit-learn integration: the package's scorers inside model selection.

Metadata routing carries ``sensitive_features`` (and ``sample_weight``) to the
scorers in ``GridSearchCV``, ``cross_validate`` and pipelines; without routing the
error says how to turn it on.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from sklearn_smallfair.metrics import (
    aggregate_group_metric,
    make_group_scorer,
)
from sklearn_smallfair.smoothing import CrossPriorSmoothing


def test_scorer_direct_call_equals_function(scored_data, routing):
    X, y, A = scored_data
    est = LogisticRegression().fit(X, y)
    scorer = make_group_scorer("fpr", aggregate="difference")
    expected = aggregate_group_metric(
        y, est.predict(X), sensitive_features=A, metric="fpr"
    )
    assert scorer(est, X, y, sensitive_features=A) == pytest.approx(-expected)


def test_grid_search_with_routing(scored_data, routing):
    X, y, A = scored_data
    scorer = make_group_scorer(
        "tpr", aggregate="difference", smoothing=CrossPriorSmoothing(lam=10)
    )
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        DecisionTreeClassifier(random_state=0),
        {"max_depth": [1, 2, 4]},
        scoring={"gap": scorer, "acc": "accuracy"},
        refit="acc",
        cv=cv,
        error_score="raise",
    )
    search.fit(X, y, sensitive_features=A)
    scores = search.cv_results_["mean_test_gap"]
    assert np.isfinite(scores).all() and (scores <= 0).all()
    # the reported fold score equals the score recomputed by hand on that fold
    train, test = next(cv.split(X, y))
    est = DecisionTreeClassifier(random_state=0, max_depth=2).fit(
        X.iloc[train], y.iloc[train]
    )
    by_hand = aggregate_group_metric(
        y.iloc[test],
        est.predict(X.iloc[test]),
        sensitive_features=A.iloc[test],
        metric="tpr",
        smoothing=CrossPriorSmoothing(lam=10),
    )
    assert search.cv_results_["split0_test_gap"][1] == pytest.approx(-by_hand)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cross_validate_with_routing_and_jobs(scored_data, routing, n_jobs):
    X, y, A = scored_data
    scorer = make_group_scorer("ppv", aggregate="ratio")
    res = cross_validate(
        LogisticRegression(),
        X,
        y,
        cv=4,
        n_jobs=n_jobs,
        scoring=scorer,
        params={"sensitive_features": A},
        error_score="raise",
    )
    assert res["test_score"].shape == (4,)
    assert ((res["test_score"] > 0) & (res["test_score"] <= 1)).all()
    ref = cross_validate(
        LogisticRegression(),
        X,
        y,
        cv=4,
        n_jobs=1,
        scoring=scorer,
        params={"sensitive_features": A},
    )
    np.testing.assert_allclose(res["test_score"], ref["test_score"])


def test_numpy_inputs_and_sample_weight_routing(scored_data, routing):
    X, y, A = scored_data
    X, y, A = X.to_numpy(), y.to_numpy(), A.to_numpy()
    w = np.random.default_rng(1).integers(1, 3, len(y)).astype(float)
    scorer = make_group_scorer("tpr").set_score_request(sample_weight=True)
    est = LogisticRegression().set_fit_request(sample_weight=False)
    res = cross_validate(
        est,
        X,
        y,
        cv=3,
        scoring=scorer,
        params={"sensitive_features": A, "sample_weight": w},
        error_score="raise",
    )
    # sample_weight alias request kept sensitive_features requested
    assert np.isfinite(res["test_score"]).all()
    unweighted = cross_validate(
        est,
        X,
        y,
        cv=3,
        scoring=make_group_scorer("tpr"),
        params={"sensitive_features": A},
    )
    assert not np.allclose(res["test_score"], unweighted["test_score"])


def test_alias_request_for_sensitive_features(scored_data, routing):
    X, y, A = scored_data
    scorer = make_group_scorer("tpr").set_score_request(sensitive_features="groups")
    res = cross_validate(
        LogisticRegression(),
        X,
        y,
        cv=3,
        scoring=scorer,
        params={"groups": A},
        error_score="raise",
    )
    assert np.isfinite(res["test_score"]).all()


def test_without_routing_error_explains_how_to_enable(scored_data):
    X, y, A = scored_data
    scorer = make_group_scorer("tpr")
    with pytest.raises(ValueError, match=r"enable_metadata_routing=True"):
        cross_validate(
            LogisticRegression(), X, y, cv=3, scoring=scorer, error_score="raise"
        )
    # default error_score: scikit-learn turns it into a warning carrying our message
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = cross_validate(LogisticRegression(), X, y, cv=3, scoring=scorer)
    assert np.isnan(res["test_score"]).all()
    assert any("enable_metadata_routing=True" in str(w.message) for w in rec)
    # calling the scorer by hand with the labels but routing off: sklearn's message
    est = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        scorer(est, X, y, sensitive_features=A)


def test_library_never_changes_global_config(scored_data):
    before = sklearn.get_config()["enable_metadata_routing"]
    make_group_scorer("tpr")
    aggregate_group_metric([1, 0], [1, 0], sensitive_features=["a", "b"])
    assert sklearn.get_config()["enable_metadata_routing"] == before


def test_german_credit_grid_search(routing, german_path):
    cols = [f"a{i}" for i in range(1, 21)] + ["label"]
    df = pd.read_csv(german_path, sep=" ", header=None, names=cols)
    y = (df["label"] == 1).astype(int)
    # attribute 9: personal status and sex; A92 = female (divorced/married)
    A = np.where(df["a9"] == "A92", "female", "other")
    X = pd.get_dummies(df.drop(columns="label"), dtype=float)
    scorer = make_group_scorer("tpr", aggregate="difference")
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    search = GridSearchCV(
        model,
        {"logisticregression__C": [0.01, 1.0]},
        scoring={"gap": scorer, "acc": "accuracy"},
        refit="acc",
        cv=3,
        error_score="raise",
    ).fit(X, y, sensitive_features=A)
    gaps = search.cv_results_["mean_test_gap"]
    assert np.isfinite(gaps).all() and (gaps <= 0).all()


def test_gap_bound_scorer_with_sample_weight_and_multimetric(scored_data, routing):
    """The confidence-bound aggregate next to the point gap in cross_validate."""
    X, y, A = scored_data
    w = np.where(np.arange(len(y)) % 3 == 0, 2, 1)
    scoring = {
        "gap": make_group_scorer("tpr", aggregate="difference"),
        "gap_bound": make_group_scorer("tpr", aggregate="difference_upper"),
    }
    for s in scoring.values():
        s.set_score_request(sample_weight=True)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    res = cross_validate(
        LogisticRegression().set_fit_request(sample_weight=False),
        X,
        y,
        scoring=scoring,
        cv=cv,
        params={"sensitive_features": A, "sample_weight": w},
    )
    assert np.all(np.isfinite(res["test_gap_bound"]))
    assert np.all(-res["test_gap_bound"] > 0)
    for k, (train, test) in enumerate(cv.split(X, y)):
        model = LogisticRegression().fit(X.iloc[train], y.iloc[train])
        expected = aggregate_group_metric(
            y.iloc[test],
            model.predict(X.iloc[test]),
            sensitive_features=A.iloc[test],
            sample_weight=w[test],
            metric="tpr",
            aggregate="difference_upper",
        )
        assert -res["test_gap_bound"][k] == pytest.approx(expected)
