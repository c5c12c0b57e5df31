"""Tests of the synthetic small-group classification generator."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_smallfair.datasets import make_small_group_classification


def _rates(y, y_pred, mask):
    pos, neg = mask & (y == 1), mask & (y == 0)
    return y_pred[pos].mean(), pos.sum(), y_pred[neg].mean(), neg.sum()


def test_shapes_and_dtypes():
    X, y, groups = make_small_group_classification(random_state=0)
    assert X.shape == (2000, 5) and X.dtype == np.float64
    assert y.shape == groups.shape == (2000,)
    assert y.dtype == np.int64 and set(np.unique(y)) <= {0, 1}
    labels, counts = np.unique(groups, return_counts=True)
    # the default groups: 75 %, 20 % and 5 %
    assert labels.tolist() == ["A", "B", "C"]
    assert counts.tolist() == [1500, 400, 100]

    out = make_small_group_classification(
        50, group_sizes=[40, 10], n_features=3, return_predictions=True
    )
    assert len(out) == 4
    X, y, groups, y_pred = out
    assert X.shape == (50, 3) and y_pred.shape == (50,) and y_pred.dtype == np.int64
    assert sorted(set(groups.tolist())) == [0, 1]


def test_as_frame():
    X, y, groups, y_pred = make_small_group_classification(
        100,
        group_sizes={"x": 90, "y": 10},
        n_features=2,
        return_predictions=True,
        as_frame=True,
        random_state=0,
    )
    assert isinstance(X, pd.DataFrame) and list(X.columns) == ["x0", "x1"]
    assert isinstance(y, pd.Series) and y.name == "y"
    assert isinstance(groups, pd.Series) and groups.name == "group"
    assert isinstance(y_pred, pd.Series) and y_pred.name == "y_pred"
    assert groups.value_counts().to_dict() == {"x": 90, "y": 10}
    Xa, ya, ga, pa = make_small_group_classification(
        100,
        group_sizes={"x": 90, "y": 10},
        n_features=2,
        return_predictions=True,
        random_state=0,
    )
    np.testing.assert_array_equal(X.to_numpy(), Xa)
    np.testing.assert_array_equal(y.to_numpy(), ya)
    np.testing.assert_array_equal(groups.to_numpy(), ga)
    np.testing.assert_array_equal(y_pred.to_numpy(), pa)


@pytest.mark.parametrize(
    "n_samples, group_sizes, expected",
    [
        (1000, {"big": 990, "tiny": 10}, {"big": 990, "tiny": 10}),
        (1000, {"big": 0.99, "tiny": 0.01}, {"big": 990, "tiny": 10}),
        (10, [0.5, 0.25, 0.25], {0: 5, 1: 3, 2: 2}),  # largest remainder, ties first
        (7, np.array([1, 2, 4]), {0: 1, 1: 2, 2: 4}),
        (100, pd.Series({"m": 0.93, "f": 0.07}), {"m": 93, "f": 7}),
        (3, {"only": 3}, {"only": 3}),
    ],
)
def test_exact_group_sizes(n_samples, group_sizes, expected):
    _, _, groups = make_small_group_classification(
        n_samples, group_sizes=group_sizes, random_state=0
    )
    labels, counts = np.unique(groups, return_counts=True)
    assert dict(zip(labels.tolist(), counts.tolist())) == expected
    assert counts.sum() == n_samples


def test_mixed_type_labels_are_kept():
    _, _, groups = make_small_group_classification(
        10,
        group_sizes={1: 5, "one": 5},
        group_error_rates={1: 0.0, "one": 1.0},
        random_state=0,
    )
    assert groups.dtype == object
    assert sorted(map(str, set(groups.tolist()))) == ["1", "one"]


def test_determinism_and_shuffle():
    kwargs = dict(group_sizes={"a": 80, "b": 20}, return_predictions=True)
    first = make_small_group_classification(100, random_state=3, **kwargs)
    second = make_small_group_classification(100, random_state=3, **kwargs)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    third = make_small_group_classification(
        100, random_state=np.random.RandomState(4), **kwargs
    )
    assert not np.array_equal(first[0], third[0])
    gen = make_small_group_classification(
        100, random_state=np.random.default_rng(3), **kwargs
    )
    assert gen[0].shape == (100, 5)

    _, _, groups = make_small_group_classification(
        100, group_sizes={"a": 80, "b": 20}, random_state=0
    )
    assert not (groups[:80] == "a").all()  # shuffled
    _, _, groups = make_small_group_classification(
        100, group_sizes={"a": 80, "b": 20}, shuffle=False, random_state=0
    )
    assert (groups[:80] == "a").all() and (groups[80:] == "b").all()


def test_simulated_classifier_rates_match_within_binomial_error():
    requested = {
        "a": (0.1, 0.2),  # (fnr, fpr)
        "b": (0.35, 0.05),
        "c": (0.0, 0.5),
        "tiny": (0.5, 0.5),
    }
    prevalence = {"a": 0.5, "b": 0.3, "c": 0.6, "tiny": 0.5}
    _, y, groups, y_pred = make_small_group_classification(
        60_010,
        group_sizes={"a": 20_000, "b": 20_000, "c": 20_000, "tiny": 10},
        group_error_rates=requested,
        prevalence=prevalence,
        return_predictions=True,
        random_state=42,
    )
    for label in ("a", "b", "c"):
        mask = groups == label
        tpr, n_pos, fpr, n_neg = _rates(y, y_pred, mask)
        fnr_req, fpr_req = requested[label]
        tpr_req = 1 - fnr_req
        assert abs(tpr - tpr_req) <= 4 * np.sqrt(tpr_req * (1 - tpr_req) / n_pos)
        assert abs(fpr - fpr_req) <= 4 * np.sqrt(fpr_req * (1 - fpr_req) / n_neg)
        prev = prevalence[label]
        assert abs(y[mask].mean() - prev) <= 4 * np.sqrt(prev * (1 - prev) / 20_000)
    # a rate of 0 is exact: every positive of group c is predicted positive
    assert (y_pred[(groups == "c") & (y == 1)] == 1).all()


def test_extreme_rates_are_exact():
    _, y, groups, y_pred = make_small_group_classification(
        200,
        group_sizes={"perfect": 100, "inverted": 100},
        group_error_rates={"perfect": 0.0, "inverted": 1.0},
        return_predictions=True,
        random_state=0,
    )
    perfect = groups == "perfect"
    np.testing.assert_array_equal(y_pred[perfect], y[perfect])
    np.testing.assert_array_equal(y_pred[~perfect], 1 - y[~perfect])
    _, y, _ = make_small_group_classification(
        50, group_sizes=[25, 25], prevalence=[0.0, 1.0], shuffle=False
    )
    np.testing.assert_array_equal(y, np.repeat([0, 1], 25))


def test_features_carry_the_apparent_class():
    X, _, _, y_pred = make_small_group_classification(
        20_000,
        group_sizes=[20_000],
        n_features=4,
        return_predictions=True,
        random_state=0,
    )
    # the class means are class_sep = 4 apart along (1, 1, 1, 1) / 2
    diff = X[y_pred == 1].mean(axis=0) - X[y_pred == 0].mean(axis=0)
    np.testing.assert_allclose(diff, 4 / 2, atol=0.1)
    np.testing.assert_allclose(X[y_pred == 1].std(axis=0), 1, atol=0.05)


@pytest.mark.parametrize(
    "rates, worse_in_b",
    [
        ({"a": 0.05, "b": (0.3, 0.05)}, "tpr"),  # more false negatives in b
        ({"a": 0.05, "b": (0.05, 0.3)}, "fpr"),  # more false positives in b
    ],
)
def test_fitted_model_inherits_the_requested_disparity(rates, worse_in_b):
    X, y, groups = make_small_group_classification(
        6000,
        group_sizes={"a": 3000, "b": 3000},
        group_error_rates=rates,
        random_state=0,
    )
    pred = LogisticRegression().fit(X, y).predict(X)
    tpr_a, _, fpr_a, _ = _rates(y, pred, groups == "a")
    tpr_b, _, fpr_b, _ = _rates(y, pred, groups == "b")
    if worse_in_b == "tpr":
        assert tpr_a - tpr_b > 0.15  # requested 0.25 less the overlap blur
        assert abs(fpr_a - fpr_b) < 0.04
    else:
        assert fpr_b - fpr_a > 0.15
        assert abs(tpr_a - tpr_b) < 0.04


_PARAM = "parameter of make_small_group_classification must be"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"group_sizes": {"a": 10, "b": 20}}, ValueError, "counts summing to 30"),
        ({"group_sizes": [0.5, 0.4]}, ValueError, "must sum to 1, got 0.9"),
        ({"group_sizes": {"a": 2010, "b": -10}}, ValueError, "non-negative"),
        (
            {"group_sizes": {"a": 2000, "b": 0}},
            ValueError,
            r"no member to the groups \['b'\]",
        ),
        (
            {"group_sizes": [0.9999, 0.0001]},
            ValueError,
            r"no member to the groups \[1\]",
        ),
        ({"group_sizes": []}, ValueError, "at least one group"),
        ({"group_sizes": "ab"}, TypeError, f"'group_sizes' {_PARAM} an instance of"),
        ({"group_sizes": {1, 2}}, TypeError, "group_sizes must be None, a dict"),
        ({"group_sizes": [[1000], [1000]]}, ValueError, "1-D sequence"),
        ({"group_sizes": {"a": "x"}}, TypeError, "group_sizes must hold numbers"),
        ({"group_sizes": [np.nan, 1.0]}, ValueError, "group_sizes must be finite"),
        (
            {"group_error_rates": 1.5},
            ValueError,
            rf"'group_error_rates' {_PARAM} a float in the range \[0.0, 1.0\]",
        ),
        ({"group_error_rates": [1.5] * 3}, ValueError, r"must be in \[0, 1\]"),
        (
            {"group_error_rates": {"A": (0.1, -0.1), "B": 0.1, "C": 0.1}},
            ValueError,
            r"in \[0, 1\]; got \(0.1, -0.1\) for group 'A'",
        ),
        ({"group_error_rates": [0.1, 0.2]}, ValueError, "one entry per group"),
        ({"group_error_rates": [(0.1, 0.2, 0.3)] * 3}, ValueError, "a pair"),
        ({"group_error_rates": {"A": 0.1, "B": 0.1}}, ValueError, r"missing \['C'\]"),
        (
            {"group_error_rates": {"A": 0.1, "B": 0.1, "C": 0.1, "D": 0.1}},
            ValueError,
            r"unknown \['D'\]",
        ),
        ({"prevalence": -0.1}, ValueError, rf"'prevalence' {_PARAM} a float in"),
        ({"prevalence": np.nan}, ValueError, f"'prevalence' {_PARAM}"),
        ({"prevalence": [0.5, (0.1, 0.2), 0.5]}, ValueError, "must be a number"),
        ({"prevalence": "high"}, TypeError, f"'prevalence' {_PARAM}"),
        ({"prevalence": ["high"] * 3}, TypeError, "prevalence must hold numbers"),
        ({"n_samples": 0}, ValueError, rf"'n_samples' {_PARAM} an int in the range"),
        ({"n_samples": 10.5}, TypeError, f"'n_samples' {_PARAM} an int"),
        ({"n_features": 0}, ValueError, rf"'n_features' {_PARAM} an int in the"),
        ({"class_sep": -1}, ValueError, rf"'class_sep' {_PARAM} a float in the"),
        ({"class_sep": np.inf}, ValueError, f"'class_sep' {_PARAM}"),
        ({"class_sep": "far"}, TypeError, f"'class_sep' {_PARAM}"),
        ({"return_predictions": "yes"}, TypeError, f"'return_predictions' {_PARAM}"),
        ({"as_frame": 1}, TypeError, f"'as_frame' {_PARAM}"),
        ({"shuffle": None}, TypeError, f"'shuffle' {_PARAM}"),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_small_group_classification(**kwargs)
