"""Tests of GroupMetricFrame: any metric per group, overall, and aggregates."""

import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    brier_score_loss,
    log_loss,
    mean_absolute_error,
    precision_score,
    recall_score,
    roc_auc_score,
)

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import GroupMetricFrame, group_metrics


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    n = 600
    groups = rng.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    sex = rng.choice(["f", "m"], size=n)
    y_true = rng.integers(0, 2, n)
    y_score = np.clip(0.3 * y_true + rng.uniform(0, 0.7, n), 0.01, 0.99)
    y_pred = (y_score > 0.5).astype(int)
    weight = rng.integers(1, 4, n).astype(float)
    return y_true, y_pred, y_score, groups, sex, weight


def _loop(func, y_true, y_other, groups, weight=None):
    """The straightforward way: a pandas groupby and the metric on each group."""
    frame = pd.DataFrame({"t": y_true, "o": y_other, "g": groups})
    if weight is not None:
        frame["w"] = weight
    out = {}
    for label, sub in frame.groupby("g", sort=True):
        kwargs = {} if weight is None else {"sample_weight": sub["w"].to_numpy()}
        out[label] = func(sub["t"].to_numpy(), sub["o"].to_numpy(), **kwargs)
    return pd.Series(out, dtype=float)


def test_callables_on_scores_match_a_per_group_loop(data):
    y_true, _, y_score, groups, _, _ = data
    metrics = {"auc": roc_auc_score, "log_loss": log_loss, "brier": brier_score_loss}
    frame = GroupMetricFrame(
        metrics=metrics, y_true=y_true, y_score=y_score, sensitive_features=groups
    )
    assert list(frame.by_group.columns) == ["auc", "log_loss", "brier"]
    assert list(frame.by_group.index) == ["a", "b", "c", "d"]
    for column, func in metrics.items():
        expected = _loop(func, y_true, y_score, groups)
        np.testing.assert_allclose(frame.by_group[column], expected, rtol=1e-12)
        assert frame.overall[column] == pytest.approx(func(y_true, y_score), 1e-12)
    assert not frame.undefined.to_numpy().any()


def test_registry_names_and_callables_agree_and_mix(data):
    y_true, y_pred, _, groups, _, _ = data
    frame = GroupMetricFrame(
        metrics=["recall", recall_score, "ppv", precision_score, "mcc"],
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=pd.Series(groups, name="region"),
    )
    by_group = frame.by_group
    assert list(by_group.columns) == [
        "tpr",
        "recall_score",
        "ppv",
        "precision_score",
        "mcc",
    ]
    assert by_group.index.name == "region"
    np.testing.assert_allclose(by_group["tpr"], by_group["recall_score"])
    np.testing.assert_allclose(by_group["ppv"], by_group["precision_score"])
    table = group_metrics(
        y_true, y_pred, sensitive_features=groups, metrics=["mcc"], zero_division=np.nan
    )
    np.testing.assert_array_equal(by_group["mcc"], table["mcc"])
    assert frame.overall["tpr"] == pytest.approx(recall_score(y_true, y_pred))
    assert frame.overall["recall_score"] == pytest.approx(recall_score(y_true, y_pred))
    np.testing.assert_array_equal(
        frame.sizes, pd.Series(groups).value_counts().sort_index()
    )


def test_regression_metric_on_scores(data):
    y_true, _, y_score, groups, _, _ = data
    frame = GroupMetricFrame(
        metrics=mean_absolute_error,
        y_true=y_true.astype(float),
        y_score=y_score,
        sensitive_features=groups,
    )
    expected = _loop(mean_absolute_error, y_true, y_score, groups)
    np.testing.assert_allclose(frame.by_group["mean_absolute_error"], expected)


def test_aggregates_against_hand_computation(data):
    y_true, y_pred, _, groups, _, _ = data
    frame = GroupMetricFrame(
        metrics=["tpr", "fpr", "acc"],
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    values, overall = frame.by_group, frame.overall
    for m in values.columns:
        v, o = values[m].to_numpy(), overall[m]
        assert frame.group_min()[m] == v.min()
        assert frame.group_max()[m] == v.max()
        assert frame.difference()[m] == pytest.approx(v.max() - v.min())
        assert frame.difference(method="to_overall")[m] == pytest.approx(
            np.abs(v - o).max()
        )
        assert frame.ratio()[m] == pytest.approx(v.min() / v.max())
        assert frame.ratio(method="to_overall")[m] == pytest.approx(
            min(min(x, o) / max(x, o) for x in v)
        )
    # the overall row of a rate is the pooled rate, not the mean of the groups
    pos = y_true == 1
    assert overall["tpr"] == pytest.approx(y_pred[pos].mean())


def test_intersections_are_joined_labels(data):
    y_true, y_pred, _, groups, sex, _ = data
    features = pd.DataFrame({"region": groups, "sex": sex})
    frame = GroupMetricFrame(
        metrics={"tpr": "tpr", "recall": recall_score},
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=features,
    )
    index = frame.by_group.index
    assert not isinstance(index, pd.MultiIndex)
    assert index.name == "region|sex"
    assert frame.by_group.shape == (8, 2)
    assert list(index) == [f"{g}|{s}" for g in "abcd" for s in "fm"]
    for label, row in frame.by_group.iterrows():
        g, s = label.split("|")
        mask = (groups == g) & (sex == s)
        assert row["tpr"] == pytest.approx(recall_score(y_true[mask], y_pred[mask]))
        assert row["recall"] == row["tpr"]
        assert frame.sizes[label] == mask.sum()
    # a 2-D array: absent combinations have no row
    keep = ~((groups == "d") & (sex == "m"))
    frame = GroupMetricFrame(
        metrics="tpr",
        y_true=y_true[keep],
        y_pred=y_pred[keep],
        sensitive_features=np.column_stack([groups, sex])[keep],
    )
    assert frame.by_group.shape == (7, 1)
    assert "d|m" not in frame.by_group.index


def test_weights_are_routed_and_equal_repetition(data):
    y_true, y_pred, y_score, groups, _, weight = data
    frame = GroupMetricFrame(
        metrics={"tpr": "tpr", "recall": recall_score, "brier": brier_score_loss},
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
        sample_weight=weight,
    )
    np.testing.assert_allclose(
        frame.by_group["recall"], _loop(recall_score, y_true, y_pred, groups, weight)
    )
    np.testing.assert_allclose(frame.by_group["tpr"], frame.by_group["recall"])
    reps = weight.astype(int)
    repeated = GroupMetricFrame(
        metrics={"tpr": "tpr", "recall": recall_score, "brier": brier_score_loss},
        y_true=np.repeat(y_true, reps),
        y_pred=np.repeat(y_pred, reps),
        sensitive_features=np.repeat(groups, reps),
    )
    np.testing.assert_allclose(frame.by_group, repeated.by_group, rtol=1e-12)
    np.testing.assert_allclose(frame.overall, repeated.overall, rtol=1e-12)
    np.testing.assert_allclose(frame.sizes, repeated.sizes)
    # the same call on scores routes the weights to a score metric
    scored = GroupMetricFrame(
        metrics=roc_auc_score,
        y_true=y_true,
        y_score=y_score,
        sensitive_features=groups,
        sample_weight=weight,
    )
    np.testing.assert_allclose(
        scored.by_group["roc_auc_score"],
        _loop(roc_auc_score, y_true, y_score, groups, weight),
    )


def test_weights_refused_by_a_callable_without_sample_weight(data):
    y_true, y_pred, _, groups, _, weight = data

    def hit_rate(y_true, y_pred):
        return float(np.mean(y_true == y_pred))

    with pytest.raises(ValueError, match=r"\['hit_rate'\] do not accept"):
        GroupMetricFrame(
            metrics=[hit_rate, "tpr"],
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=groups,
            sample_weight=weight,
        )


@pytest.fixture
def one_class():
    """Group "b" has only negatives: no AUC, no TPR, log_loss raises."""
    y_true = np.array([1, 1, 0, 0, 1, 0, 0, 0, 0, 0])
    y_score = np.array([0.9, 0.4, 0.2, 0.6, 0.8, 0.1, 0.7, 0.6, 0.3, 0.4])
    groups = np.array(["a"] * 5 + ["b"] * 5)
    return y_true, y_score, groups


def test_one_class_group_gives_nan_with_a_warning_naming_it(one_class):
    y_true, y_score, groups = one_class
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        frame = GroupMetricFrame(
            metrics=[roc_auc_score, log_loss],
            y_true=y_true,
            y_score=y_score,
            sensitive_features=groups,
        )
    messages = [str(w.message) for w in record]
    # scikit-learn >= 1.6 warns and returns NaN for one class; older releases
    # raise: either way the group's value is NaN with a warning naming it
    assert any(
        ("roc_auc_score is undefined" in m or "roc_auc_score could not be" in m)
        and "'b'" in m
        and "one class" in m.lower()
        for m in messages
    )
    assert any(
        "log_loss could not be computed" in m and "'b'" in m and "ValueError" in m
        for m in messages
    )
    assert frame.by_group.loc["a"].notna().all()
    assert frame.by_group.loc["b"].isna().all()
    assert frame.undefined.loc["b"].all() and not frame.undefined.loc["a"].any()
    assert frame.overall.notna().all()
    # aggregates meeting an undefined group are NaN, with a warning; skipna opts out
    with pytest.warns(UndefinedGroupMetricWarning, match="skipna=True"):
        assert frame.difference().isna().all()
    with pytest.warns(UndefinedGroupMetricWarning):
        assert frame.group_min().isna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(frame.difference(skipna=True), [0.0, 0.0])
        np.testing.assert_array_equal(
            frame.group_max(skipna=True), frame.by_group.loc["a"]
        )


def test_substituted_zero_of_a_callable_is_undefined(one_class):
    """recall_score's 0.0 for 0/0 (with its warning) is reported as undefined."""
    y_true, y_score, groups = one_class
    y_pred = (y_score > 0.5).astype(int)
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        frame = GroupMetricFrame(
            metrics=[recall_score, "tpr"],
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=groups,
        )
    messages = " ".join(str(w.message) for w in record)
    assert "recall_score is undefined for group(s) 'b' (n=5)" in messages
    assert "tpr is undefined (0/0) for group(s) 'b' (n=5, n_pos=0)" in messages
    assert np.isnan(frame.by_group.loc["b", "recall_score"])
    assert np.isnan(frame.by_group.loc["b", "tpr"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        silent = GroupMetricFrame(
            metrics=[recall_score, "tpr"],
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=groups,
            zero_division=np.nan,
        )
        assert silent.by_group.loc["b"].isna().all()
        assert silent.difference().isna().all()  # silent with np.nan too
        zero = GroupMetricFrame(
            metrics=[recall_score, "tpr"],
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=groups,
            zero_division=0.0,
        )
    np.testing.assert_array_equal(zero.by_group.loc["b"], [0.0, 0.0])
    assert zero.undefined.loc["b"].all()
    assert zero.difference()["tpr"] == pytest.approx(zero.by_group.loc["a", "tpr"])


def test_a_callable_that_raises_gives_nan_whatever_the_policy(one_class):
    y_true, y_score, groups = one_class

    def fragile(y_true, y_pred):
        if len(y_true) < 6:
            raise RuntimeError("needs six rows")
        return 1.0

    with pytest.warns(UndefinedGroupMetricWarning, match="RuntimeError: needs six"):
        frame = GroupMetricFrame(
            metrics=fragile,
            y_true=y_true,
            y_score=y_score,
            sensitive_features=groups,
            zero_division=0.0,
        )
    assert frame.by_group["fragile"].isna().all()
    assert frame.overall["fragile"] == 1.0


def test_ratio_undefined_for_zeros_and_negative_values():
    y_true = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    y_pred = np.array([0, 0, 1, 0, 0, 0, 0, 1])
    groups = np.array(["a"] * 4 + ["b"] * 4)
    frame = GroupMetricFrame(
        metrics=["fpr", "mb", "tpr"],
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    assert (frame.by_group["fpr"] == 0).all()
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        ratio = frame.ratio()
    text = " ".join(str(w.message) for w in record)
    assert "ratio of fpr is undefined" in text and "0/0" in text
    assert "ratio of mb is undefined" in text and "negative" in text
    assert np.isnan(ratio["fpr"]) and np.isnan(ratio["mb"])
    assert ratio["tpr"] == pytest.approx(0.5 / 0.5)
    assert frame.difference()["fpr"] == 0.0


def test_intervals_are_group_metrics_intervals(data):
    y_true, y_pred, _, groups, _, _ = data
    frame = GroupMetricFrame(
        metrics={"recall": "tpr", "acc": "acc", "precision": precision_score},
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
        confidence_level=0.9,
    )
    table = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=["tpr", "acc"],
        confidence_level=0.9,
    )
    assert list(frame.by_group_intervals.columns) == [
        "recall_low",
        "recall_high",
        "acc_low",
        "acc_high",
    ]
    np.testing.assert_array_equal(
        frame.by_group_intervals["recall_low"], table["tpr_low"]
    )
    np.testing.assert_array_equal(
        frame.by_group_intervals["acc_high"], table["acc_high"]
    )
    assert frame.by_group_intervals.attrs == {
        "confidence_level": 0.9,
        "interval_method": {"recall": "clopper-pearson", "acc": "clopper-pearson"},
    }
    low, high = (
        frame.overall_intervals["recall_low"],
        frame.overall_intervals["recall_high"],
    )
    assert low < frame.overall["recall"] < high
    assert (
        GroupMetricFrame(
            metrics="tpr", y_true=y_true, y_pred=y_pred, sensitive_features=groups
        ).by_group_intervals
        is None
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"metrics": "recal"}, ValueError, "Did you mean 'recall'"),
        ({"metrics": ["tpr", "fprr"]}, ValueError, "Did you mean 'fpr'"),
        ({"metrics": "zzzz"}, ValueError, "unknown metric 'zzzz'"),
        ({"metrics": "ofi"}, ValueError, "two-group metric 'ofi'"),
        ({"metrics": ["recall", "tpr"]}, ValueError, r"\['tpr'\] twice"),
        ({"metrics": lambda t, p: 0.0}, ValueError, "name its column with a dict"),
        ({"metrics": [3]}, TypeError, "metric names"),
        ({"metrics": {1: "tpr"}}, TypeError, "column names"),
        ({"metrics": []}, ValueError, "metrics is empty"),
        ({"y_pred": [1, 0, 1]}, ValueError, "inconsistent lengths"),
        ({"y_pred": None}, ValueError, "y_pred is required"),
        ({"sensitive_features": ["a"] * 3}, ValueError, "sensitive_features has 3"),
        ({"zero_division": "skip"}, ValueError, "zero_division"),
        ({"confidence_level": 1.5}, ValueError, "confidence_level"),
        (
            {"metrics": recall_score, "confidence_level": 0.9},
            ValueError,
            "only callables",
        ),
    ],
)
def test_hostile_input(kwargs, error, match):
    args = {
        "metrics": "tpr",
        "y_true": [1, 0, 1, 0],
        "y_pred": [1, 0, 0, 0],
        "sensitive_features": ["a", "a", "b", "b"],
        **kwargs,
    }
    with pytest.raises(error, match=match):
        GroupMetricFrame(**args)


def test_hostile_aggregate_arguments_and_returns():
    args = {
        "y_true": [1, 0, 1, 0],
        "y_pred": [1, 0, 0, 0],
        "sensitive_features": ["a", "a", "b", "b"],
    }
    frame = GroupMetricFrame(metrics="acc", **args)
    with pytest.raises(ValueError, match="method"):
        frame.difference(method="to_reference")
    with pytest.raises(ValueError, match="skipna"):
        frame.ratio(skipna="yes")
    with pytest.raises(TypeError, match="one number per group"):
        GroupMetricFrame(metrics={"cm": lambda t, p: np.ones(2)}, **args)
    with pytest.raises(ValueError, match="inconsistent lengths"):
        GroupMetricFrame(metrics={"auc": roc_auc_score}, y_score=[0.1, 0.2], **args)


def test_partial_names_its_column():
    frame = GroupMetricFrame(
        metrics=partial(precision_score, zero_division=np.nan),
        y_true=[1, 0, 1, 0],
        y_pred=[1, 0, 1, 1],
        sensitive_features=["a", "a", "b", "b"],
    )
    np.testing.assert_allclose(frame.by_group["precision_score"], [1.0, 0.5])


def test_independent_of_row_order_and_warns_at_the_caller(data, one_class):
    y_true, y_pred, y_score, groups, _, weight = data
    perm = np.random.default_rng(0).permutation(len(y_true))
    kwargs = {"metrics": {"tpr": "tpr", "brier": brier_score_loss}}
    frame = GroupMetricFrame(
        y_true=y_true,
        y_pred=y_pred,
        y_score=y_score,
        sensitive_features=groups,
        sample_weight=weight,
        **kwargs,
    )
    shuffled = GroupMetricFrame(
        y_true=y_true[perm],
        y_pred=y_pred[perm],
        y_score=y_score[perm],
        sensitive_features=groups[perm],
        sample_weight=weight[perm],
        **kwargs,
    )
    pd.testing.assert_frame_equal(frame.by_group, shuffled.by_group, rtol=1e-12)
    pd.testing.assert_series_equal(frame.overall, shuffled.overall, rtol=1e-12)
    y_true, y_score, groups = one_class
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        GroupMetricFrame(
            metrics=roc_auc_score,
            y_true=y_true,
            y_score=y_score,
            sensitive_features=groups,
        )
    assert record[0].filename == __file__


def test_callable_returns_and_warnings():
    args = {
        "y_true": [1, 0, 1, 0, 1, 1],
        "y_pred": [1, 0, 0, 0, 1, 0],
        "sensitive_features": ["a", "a", "b", "b", "c", "c"],
    }

    def nan_for_b(y_true, y_pred):
        return np.nan if len(y_true) == 2 and y_true[1] == 0 and y_pred[0] == 0 else 0.5

    def chatty(y_true, y_pred):
        warnings.warn("converged slowly", UserWarning, stacklevel=2)
        return 0.25

    with pytest.warns(
        UndefinedGroupMetricWarning, match="'b' \\(n=2\\): it returned nan"
    ):
        frame = GroupMetricFrame(metrics=[nan_for_b], **args)
    np.testing.assert_array_equal(frame.undefined["nan_for_b"], [False, True, False])
    with pytest.warns(UserWarning, match="converged slowly"):
        frame = GroupMetricFrame(metrics=chatty, **args)
    assert (frame.by_group["chatty"] == 0.25).all()
    with pytest.raises(TypeError, match="returned 'high'"):
        GroupMetricFrame(metrics={"word": lambda t, p: "high"}, **args)


def test_undefined_overall_value():
    args = {
        "y_true": [1, 0, 1, 0],
        "y_pred": [1, 0, 0, 0],
        "sensitive_features": ["a", "a", "b", "b"],
    }

    def undefined_on_all_rows(y_true, y_pred):
        return np.nan if len(y_true) == 4 else float(np.mean(y_pred))

    with pytest.warns(UndefinedGroupMetricWarning, match="for group\\(s\\) 'overall'"):
        frame = GroupMetricFrame(metrics=undefined_on_all_rows, **args)
    assert np.isnan(frame.overall["undefined_on_all_rows"])
    np.testing.assert_array_equal(frame.by_group["undefined_on_all_rows"], [0.5, 0.0])
    assert np.isnan(frame.difference(method="to_overall")["undefined_on_all_rows"])
    assert np.isnan(frame.ratio(method="to_overall")["undefined_on_all_rows"])
    assert frame.difference()["undefined_on_all_rows"] == 0.5
    one = GroupMetricFrame(metrics=undefined_on_all_rows, zero_division=1.0, **args)
    assert one.overall["undefined_on_all_rows"] == 1.0


def test_bad_weights_and_lengths():
    args = {
        "metrics": {"brier": brier_score_loss},
        "y_true": [1, 0, 1, 0],
        "y_score": [0.9, 0.1, 0.4, 0.3],
        "sensitive_features": ["a", "a", "b", "b"],
    }
    with pytest.raises(ValueError, match="zero total sample_weight"):
        GroupMetricFrame(sample_weight=[1.0, 1.0, 0.0, 0.0], **args)
    with pytest.raises(ValueError, match="y_true and y_pred have inconsistent"):
        GroupMetricFrame(y_pred=[1, 0, 1], **args)
    with pytest.raises(ValueError, match="sample_weight has 3 entries"):
        GroupMetricFrame(sample_weight=[1.0, 1.0, 1.0], **args)
