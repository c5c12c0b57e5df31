"""Group scorers inside scikit-learn model selection, with metadata routing."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_smallfair.metrics import (
    aggregate_group_metric,
    group_metrics,
    make_group_scorer,
)
from sklearn_smallfair.smoothing import CrossPriorSmoothing


@pytest.mark.parametrize(
    "aggregate, expected",
    [
        ("difference", lambda v: v.max() - v.min()),
        ("ratio", lambda v: v.min() / v.max()),
        ("worst", lambda v: v.min()),  # tpr: greater is better
        ("max", lambda v: v.max()),
        ("min", lambda v: v.min()),
    ],
)
def test_aggregates_match_group_table(scored_data, aggregate, expected):
    X, y, A = scored_data
    y_pred = (X["x0"] > 0).astype(int)
    values = group_metrics(y, y_pred, sensitive_features=A, metrics="tpr")["tpr"]
    got = aggregate_group_metric(
        y, y_pred, sensitive_features=A, metric="tpr", aggregate=aggregate
    )
    assert got == pytest.approx(expected(values.to_numpy()))


def test_worst_for_lower_is_better_metric_is_max(scored_data):
    X, y, A = scored_data
    y_pred = (X["x0"] > 0).astype(int)
    values = group_metrics(y, y_pred, sensitive_features=A, metrics="fpr")["fpr"]
    got = aggregate_group_metric(
        y, y_pred, sensitive_features=A, metric="fpr", aggregate="worst"
    )
    assert got == pytest.approx(values.max())


def test_callable_aggregate_and_smoothing(scored_data):
    X, y, A = scored_data
    y_pred = (X["x0"] > 0).astype(int)
    cps = CrossPriorSmoothing(lam=20)
    table = group_metrics(y, y_pred, sensitive_features=A, metrics="ppv", smoothing=cps)
    got = aggregate_group_metric(
        y, y_pred, sensitive_features=A, metric="ppv", smoothing=cps, aggregate=np.std
    )
    assert got == pytest.approx(np.std(table["ppv_smoothed"]))


def test_undefined_group_makes_score_nan_unless_zero_division():
    y_true = [1, 1, 0, 0, 0, 0]
    y_pred = [1, 0, 0, 1, 0, 0]
    groups = ["a", "a", "a", "b", "b", "b"]
    assert np.isnan(aggregate_group_metric(y_true, y_pred, sensitive_features=groups))
    assert aggregate_group_metric(
        y_true, y_pred, sensitive_features=groups, zero_division=0.0
    ) == pytest.approx(0.5)
    # smoothing makes b's TPR defined: b borrows a's TP:FN = 1:1, so TPR_b = 1/2,
    # and a is unchanged (its reference b has no positives): difference 0
    assert (
        aggregate_group_metric(
            y_true,
            y_pred,
            sensitive_features=groups,
            smoothing=CrossPriorSmoothing(1.0),
        )
        == 0.0
    )


def test_greater_is_better_inference():
    assert make_group_scorer("tpr")._sign == -1  # a difference: lower is better
    assert make_group_scorer("tpr", aggregate="ratio")._sign == 1
    assert make_group_scorer("tpr", aggregate="worst")._sign == 1
    assert make_group_scorer("fpr", aggregate="max")._sign == -1
    with pytest.raises(ValueError, match="greater_is_better cannot be inferred"):
        make_group_scorer("prev", aggregate="max")
    with pytest.raises(ValueError, match="aggregate='worst' needs a metric"):
        make_group_scorer("mb", aggregate="worst")
    with pytest.raises(ValueError, match="'aggregate' parameter of make_group_scorer"):
        make_group_scorer("tpr", aggregate="mean")
    with pytest.raises(ValueError, match="unknown metric"):
        make_group_scorer("tprr")
    assert make_group_scorer("prev", aggregate="max", greater_is_better=True)._sign == 1


def test_scorer_pickles_and_repr():
    scorer = make_group_scorer("recall", smoothing=CrossPriorSmoothing(lam=3))
    clone(CrossPriorSmoothing(lam=3))
    again = pickle.loads(pickle.dumps(scorer))
    assert "metric=tpr" in repr(again) and "CrossPriorSmoothing(lam=3)" in repr(again)


def test_zero_division_warn_names_the_group():
    from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning

    with pytest.warns(UndefinedGroupMetricWarning, match=r"tpr is undefined .*'b'"):
        score = aggregate_group_metric(
            [1, 1, 0, 0],
            [1, 0, 0, 1],
            sensitive_features=["a", "a", "b", "b"],
            zero_division="warn",
        )
    assert np.isnan(score)


def test_single_group_aggregate_is_an_error_not_perfect_fairness():
    # a single group used to aggregate to 0.0 ("perfectly fair")
    with pytest.raises(ValueError, match=r"single group \['a'\]"):
        aggregate_group_metric(
            [1, 0, 1, 0], [1, 0, 0, 0], sensitive_features=["a"] * 4, metric="tpr"
        )


def test_difference_upper_is_largest_bound_of_disparity_intervals(scored_data):
    from sklearn_smallfair.metrics import disparity_intervals

    X, y, A = scored_data
    y_pred = (X["x0"] > 0).astype(int)
    for level in (0.9, 0.95):
        table = disparity_intervals(
            y, y_pred, sensitive_features=A, metrics="tpr", confidence_level=level
        )
        low = table["difference_low"].to_numpy()
        high = table["difference_high"].to_numpy()
        assert (table["difference_method"] == "newcombe").all()
        got = aggregate_group_metric(
            y,
            y_pred,
            sensitive_features=A,
            metric="tpr",
            aggregate="difference_upper",
            confidence_level=level,
        )
        assert got == pytest.approx(np.maximum(np.abs(low), np.abs(high)).max())
        # the bound covers the point gap to the reference
        assert got >= np.abs(table["difference"]).max()
        ratio = aggregate_group_metric(
            y,
            y_pred,
            sensitive_features=A,
            metric="tpr",
            aggregate="ratio_lower",
            confidence_level=level,
        )
        r_low = table["ratio_low"].to_numpy()
        r_high = table["ratio_high"].to_numpy()
        assert ratio == pytest.approx(np.minimum(r_low, 1 / r_high).min())


def test_bound_aggregates_infer_direction_and_refuse_smoothing():
    scorer = make_group_scorer("tpr", aggregate="difference_upper")
    assert scorer._sign == -1
    assert make_group_scorer("tpr", aggregate="ratio_lower")._sign == 1
    with pytest.raises(ValueError, match="smoothing=None"):
        make_group_scorer(
            "tpr", aggregate="difference_upper", smoothing=CrossPriorSmoothing()
        )
    with pytest.raises(ValueError, match="confidence_level"):
        make_group_scorer("tpr", aggregate="difference_upper", confidence_level=1.5)


def test_difference_upper_nan_when_undefined():
    y_true = [1, 1, 0, 0, 0, 0]
    y_pred = [1, 0, 0, 1, 0, 0]
    groups = ["a", "a", "a", "b", "b", "b"]  # b has no positives
    got = aggregate_group_metric(
        y_true,
        y_pred,
        sensitive_features=groups,
        metric="tpr",
        aggregate="difference_upper",
    )
    assert np.isnan(got)


def test_difference_upper_in_grid_search(routing, scored_data):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, KFold

    X, y, A = scored_data
    scorer = make_group_scorer(
        "tpr", aggregate="difference_upper", confidence_level=0.9
    )
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        LogisticRegression(), {"C": [0.01, 1.0]}, scoring=scorer, cv=cv
    ).fit(X, y, sensitive_features=A)
    A = np.asarray(A)
    for i, C in enumerate([0.01, 1.0]):
        expected = []
        for train, test in cv.split(X):
            model = LogisticRegression(C=C).fit(X.iloc[train], y.iloc[train])
            expected.append(
                -aggregate_group_metric(
                    y.iloc[test],
                    model.predict(X.iloc[test]),
                    sensitive_features=A[test],
                    metric="tpr",
                    aggregate="difference_upper",
                    confidence_level=0.9,
                )
            )
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(
            np.mean(expected)
        )
    assert np.isfinite(search.best_score_) and search.best_score_ < 0


def test_intersectional_smoothing_in_cross_validate(routing, scored_data):
    """A scorer with IntersectionalSmoothing: each fold's score is the
    aggregate of the structured estimates of that fold's intersections (the
    smoother fitted on the fold), the groups given as two columns."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_validate

    from sklearn_smallfair.smoothing import IntersectionalSmoothing

    X, y, A = scored_data
    rng = np.random.default_rng(1)
    groups = pd.DataFrame({"grp": A, "band": rng.choice(["x", "y"], size=len(A))})
    scorer = make_group_scorer(
        "ppv", aggregate="difference", smoothing=IntersectionalSmoothing()
    )
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_validate(
        LogisticRegression(),
        X,
        y,
        scoring=scorer,
        cv=cv,
        params={"sensitive_features": groups},
    )["test_score"]
    for score, (train, test) in zip(scores, cv.split(X)):
        model = LogisticRegression().fit(X.iloc[train], y.iloc[train])
        table = group_metrics(
            y.iloc[test],
            model.predict(X.iloc[test]),
            sensitive_features=groups.iloc[test],
            metrics="ppv",
            smoothing=IntersectionalSmoothing(),
        )
        values = table["ppv_smoothed"].to_numpy()
        assert score == pytest.approx(-(values.max() - values.min()), rel=1e-12)
        raw = table["ppv"].to_numpy()
        assert not np.allclose(values, raw)  # the smoother did something
