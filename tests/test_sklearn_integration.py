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

from sklearn_smallfair.datasets import make_dyadic_regression
from sklearn_smallfair.dyadic import DyadicMeanRegressor, make_eauc_scorer
from sklearn_smallfair.exceptions import (
    MetadataRoutingError,
    MetadataRoutingWarning,
    UndefinedGroupMetricWarning,
)
from sklearn_smallfair.metrics import (
    aggregate_group_metric,
    make_group_scorer,
)
from sklearn_smallfair.smoothing import CrossPriorSmoothing
from sklearn_smallfair.stats import make_comparative_separation_scorer

GROUP_SCORERS = {
    "group": lambda: make_group_scorer("tpr"),
    "comparative": lambda: make_comparative_separation_scorer(n_pairs=500),
}


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


# -------------------------------------------------------------------------------------
# routing off, or labels not passed: one clear error (and a warning carrying it)
# -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", GROUP_SCORERS)
def test_routing_off_grid_search_without_labels(scored_data, kind):
    X, y, _ = scored_data
    search = GridSearchCV(
        LogisticRegression(), {"C": [1.0]}, scoring=GROUP_SCORERS[kind](), cv=2
    )
    with sklearn.config_context(enable_metadata_routing=False):
        # default error_score: NaN scores, and our message on its own line
        with pytest.warns(MetadataRoutingWarning) as rec:
            search.fit(X, y)
        assert np.isnan(search.cv_results_["mean_test_score"]).all()
        ours = [w for w in rec if w.category is MetadataRoutingWarning]
        message = str(ours[0].message)
        assert "sklearn.set_config(enable_metadata_routing=True)" in message
        assert ".fit(X, y, sensitive_features=A)" in message
        assert "routing is off" in message
        # error_score="raise": the error itself
        search.set_params(error_score="raise")
        with pytest.warns(MetadataRoutingWarning):
            with pytest.raises(MetadataRoutingError, match="routing is off"):
                search.fit(X, y)


def test_routing_off_multimetric_and_direct_call(scored_data):
    X, y, A = scored_data
    est = LogisticRegression().fit(X, y)
    scorer = make_group_scorer("tpr")
    with sklearn.config_context(enable_metadata_routing=False):
        # a dict of scorers goes through the scorers' _score, not __call__
        with pytest.warns(MetadataRoutingWarning, match="routing is off"):
            res = cross_validate(
                LogisticRegression(),
                X,
                y,
                cv=2,
                scoring={"gap": scorer, "acc": "accuracy"},
            )
        assert np.isnan(res["test_gap"]).all() and np.isfinite(res["test_acc"]).all()
        # by hand, even with the labels: routing off is named (not scikit-learn's
        # generic message about extra keyword arguments)
        with pytest.warns(MetadataRoutingWarning):
            with pytest.raises(MetadataRoutingError, match="routing is off"):
                scorer(est, X, y, sensitive_features=A)


def test_routing_off_labels_to_fit_fail_in_the_estimator(scored_data):
    """What the scorer cannot intercept: scikit-learn gives the labels to fit.

    The documentation (routing.rst, the scorers' error) quotes this message; the
    test keeps the quote true for the supported scikit-learn versions.
    """
    X, y, A = scored_data
    search = GridSearchCV(
        LogisticRegression(), {"C": [1.0]}, scoring=make_group_scorer("tpr"), cv=2
    )
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y, sensitive_features=A)
    assert "unexpected keyword argument 'sensitive_features'" in str(info.value)


@pytest.mark.parametrize("kind", GROUP_SCORERS)
def test_routing_on_labels_not_passed(scored_data, routing, kind):
    X, y, _ = scored_data
    search = GridSearchCV(
        LogisticRegression(),
        {"C": [1.0]},
        scoring=GROUP_SCORERS[kind](),
        cv=2,
        error_score="raise",
    )
    with pytest.warns(MetadataRoutingWarning):
        with pytest.raises(MetadataRoutingError, match="received no group labels"):
            search.fit(X, y)


def test_routing_on_request_turned_off_or_aliased(scored_data, routing):
    X, y, _ = scored_data
    est = LogisticRegression().fit(X, y)
    off = make_group_scorer("tpr").set_score_request(sensitive_features=False)
    with pytest.warns(MetadataRoutingWarning):
        with pytest.raises(
            MetadataRoutingError,
            match=r"set_score_request\(sensitive_features=True\)",
        ):
            off(est, X, y)
    aliased = make_group_scorer("tpr").set_score_request(sensitive_features="grp")
    with pytest.warns(MetadataRoutingWarning):
        with pytest.raises(MetadataRoutingError, match=r"under the name 'grp'"):
            aliased(est, X, y)


@pytest.mark.parametrize("routing_on", [False, True])
def test_eauc_scorer_needs_no_routing(routing_on):
    X, y = make_dyadic_regression(n_users=30, n_items=20, n_ratings=600, random_state=0)
    with sklearn.config_context(enable_metadata_routing=routing_on):
        search = GridSearchCV(
            DyadicMeanRegressor(),
            {"fallback": ["global"]},
            scoring=make_eauc_scorer(),
            cv=3,
            error_score="raise",
        ).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and (scores < 0).all()


# -------------------------------------------------------------------------------------
# NaN scores are never silent; nan_policy
# -------------------------------------------------------------------------------------
@pytest.fixture
def empty_cell_data():
    """Group "c" (8 people, 1 positive): the fold without it has TP + FN = 0."""
    rng = np.random.default_rng(3)
    n = 200
    A = np.array(["a"] * 96 + ["b"] * 96 + ["c"] * 8)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    y[A == "c"] = 0
    y[-1] = 1  # the only positive of "c" is in the last fold
    return X, y, A


def test_nan_fold_warns_naming_group_and_cell(empty_cell_data, routing):
    X, y, A = empty_cell_data
    cv = [(np.r_[0:96, 100:192], np.r_[96:100, 192:200])]  # test: a, c only
    with pytest.warns(
        UndefinedGroupMetricWarning,
        match=r"tpr is undefined \(0/0\) for group\(s\) 'c' \(n=7, empty "
        r"cells: TP, FN; TP \+ FN = 0\), so the 'difference' score is NaN",
    ):
        res = cross_validate(
            LogisticRegression(),
            X,
            y,
            cv=[(train, test[:-1]) for train, test in cv],
            scoring=make_group_scorer("tpr"),
            params={"sensitive_features": A},
            error_score="raise",
        )
    assert np.isnan(res["test_score"]).all()


def test_nan_policy_omit_and_raise_in_cross_validate(empty_cell_data, routing):
    X, y, A = empty_cell_data
    cv = [(np.r_[0:90, 100:190, 196:200], np.r_[90:100, 190:196])]  # c: 6 negatives
    params = {"sensitive_features": A}
    with pytest.warns(UndefinedGroupMetricWarning, match="nan_policy='omit' leaves"):
        res = cross_validate(
            LogisticRegression(),
            X,
            y,
            cv=cv,
            scoring=make_group_scorer("tpr", nan_policy="omit"),
            params=params,
            error_score="raise",
        )
    train, test = cv[0]
    pred = LogisticRegression().fit(X[train], y[train]).predict(X[test])
    keep = A[test] != "c"
    by_hand = aggregate_group_metric(
        y[test][keep], pred[keep], sensitive_features=A[test][keep]
    )
    assert np.isfinite(by_hand)
    assert res["test_score"][0] == pytest.approx(-by_hand)
    with pytest.raises(ValueError, match=r"'c' .*TP \+ FN = 0.*nan_policy='raise'"):
        cross_validate(
            LogisticRegression(),
            X,
            y,
            cv=cv,
            scoring=make_group_scorer("tpr", nan_policy="raise"),
            params=params,
            error_score="raise",
        )
