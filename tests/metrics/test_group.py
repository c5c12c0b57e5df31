"""Tests of group_metrics."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import recall_score

from sklearn_smallfair import reference_counts
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import compute_metric, confusion_counts, group_metrics
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing


@pytest.fixture
def rows():
    rng = np.random.default_rng(3)
    n = 400
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8, y_true, 1 - y_true)
    groups = rng.choice(["a", "b", "c", "d"], size=n, p=[0.5, 0.3, 0.15, 0.05])
    return y_true, y_pred, groups


def test_columns_and_values_match_per_group_computation(rows):
    y_true, y_pred, groups = rows
    table = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=["recall", "fpr", "mcc"],
        zero_division=np.nan,
    )
    assert list(table.columns) == [
        "n",
        "n_pos",
        "n_neg",
        "tpr",
        "tpr_undefined",
        "fpr",
        "fpr_undefined",
        "mcc",
        "mcc_undefined",
    ]
    assert list(table.index) == ["a", "b", "c", "d"]
    for g in table.index:
        mask = groups == g
        assert table.loc[g, "n"] == mask.sum()
        assert table.loc[g, "n_pos"] == y_true[mask].sum()
        assert table.loc[g, "n_neg"] == (1 - y_true[mask]).sum()
        assert table.loc[g, "tpr"] == pytest.approx(
            recall_score(y_true[mask], y_pred[mask])
        )
        fpr = ((y_pred == 1) & (y_true == 0) & mask).sum() / (
            (y_true == 0) & mask
        ).sum()
        assert table.loc[g, "fpr"] == pytest.approx(fpr)


def test_smoothed_columns_use_reference(rows):
    y_true, y_pred, groups = rows
    cps = CrossPriorSmoothing(lam=7.0)
    table = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics="ppv",
        smoothing=cps,
        zero_division=np.nan,
    )
    _, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
    smoothed = cps.transform(counts, reference_counts(counts, "rest"))
    np.testing.assert_allclose(table["ppv_smoothed"], compute_metric("ppv", smoothed))
    assert not table["ppv_smoothed_undefined"].any()
    # a named reference group: that group itself is smoothed toward itself
    table_b = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics="ppv",
        smoothing=cps,
        reference="b",
        zero_division=np.nan,
    )
    assert table_b.loc["b", "ppv_smoothed"] == pytest.approx(table_b.loc["b", "ppv"])


def test_undefined_flag_and_zero_division_policies():
    y_true = [1, 1, 0, 0, 0, 0]
    y_pred = [1, 0, 0, 1, 0, 0]
    groups = ["a", "a", "a", "b", "b", "b"]  # group b has no positives
    with pytest.warns(
        UndefinedGroupMetricWarning, match=r"tpr is undefined .*'b' \(n=3, n_pos=0\)"
    ):
        t = group_metrics(y_true, y_pred, sensitive_features=groups, metrics="tpr")
    assert np.isnan(t.loc["b", "tpr"]) and t.loc["b", "tpr_undefined"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t_nan = group_metrics(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics="tpr",
            zero_division=np.nan,
        )
        t_one = group_metrics(
            y_true, y_pred, sensitive_features=groups, metrics="tpr", zero_division=1.0
        )
    assert np.isnan(t_nan.loc["b", "tpr"])
    assert t_one.loc["b", "tpr"] == 1.0 and t_one.loc["b", "tpr_undefined"]
    assert t_one.loc["a", "tpr"] == 0.5
    with pytest.raises(ValueError, match="zero_division"):
        group_metrics(y_true, y_pred, sensitive_features=groups, zero_division=2)


def test_sample_weight_and_integer_repetition(rows):
    y_true, y_pred, groups = rows
    w = np.random.default_rng(0).integers(0, 4, len(y_true))
    w[:4] = 1  # keep every group non-empty in this sample
    weighted = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        sample_weight=w,
        metrics=["tpr", "f1"],
        zero_division=np.nan,
    )
    rep = np.repeat(np.arange(len(y_true)), w)
    repeated = group_metrics(
        y_true[rep],
        y_pred[rep],
        sensitive_features=groups[rep],
        metrics=["tpr", "f1"],
        zero_division=np.nan,
    )
    pd.testing.assert_frame_equal(weighted, repeated, check_dtype=False)


def test_intersectional_groups_from_dataframe():
    sf = pd.DataFrame(
        {"race": ["x", "x", "y", "y", "y", "x"], "sex": ["F", "M", "F", "F", "M", "M"]}
    )
    table = group_metrics(
        [1, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 1], sensitive_features=sf, metrics="acc"
    )
    assert table.index.name == "race|sex"
    assert list(table.index) == ["x|F", "x|M", "y|F", "y|M"]
    assert list(table["n"]) == [1, 2, 2, 1]


def test_two_group_metrics_compare_with_reference():
    counts = pd.DataFrame(
        {"TP": [5, 8], "FN": [2, 4], "FP": [4, 1], "TN": [9, 7]},
        index=pd.Index(["a", "b"], name="g"),
    )
    table = group_metrics(counts=counts, metrics=["te", "ofi"])
    assert table.index.name == "g"
    # reference "rest" of a is b and vice versa
    assert table.loc["a", "te"] == pytest.approx(2 / 4 - 4 / 1)
    assert table.loc["b", "te"] == pytest.approx(4 / 1 - 2 / 4)
    assert table.loc["a", "ofi"] == pytest.approx((4 - 2) / 20 - (1 - 4) / 20)


def test_counts_input_forms_agree(rows):
    y_true, y_pred, groups = rows
    labels, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
    from_rows = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=["tpr", "npv"],
        zero_division=np.nan,
    )
    mapping = dict(zip(labels, counts))
    from_map = group_metrics(counts=mapping, metrics=["tpr", "npv"])
    np.testing.assert_allclose(from_rows[["tpr", "npv"]], from_map[["tpr", "npv"]])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (
            dict(metrics="nope"),
            ValueError,
            "unknown metric 'nope'.*valid names are acc",
        ),
        (dict(metrics=[]), ValueError, "metrics is empty"),
        (dict(metrics=["tpr", "recall"]), ValueError, "twice"),
        (dict(smoothing="cps"), TypeError, "'smoothing' parameter of group_metrics"),
        (dict(smoothing=CrossPriorSmoothing(lam=-1)), ValueError, "'lam' parameter"),
        (dict(smoothing=AdditiveSmoothing(eps=-0.5)), ValueError, "'eps' parameter"),
        (
            dict(smoothing=CrossPriorSmoothing(), reference="zzz"),
            ValueError,
            "reference='zzz' is not",
        ),
    ],
)
def test_bad_arguments(rows, kwargs, exc, match):
    y_true, y_pred, groups = rows
    with pytest.raises(exc, match=match):
        group_metrics(y_true, y_pred, sensitive_features=groups, **kwargs)


def test_bad_inputs():
    with pytest.raises(ValueError, match="sensitive_features is required"):
        group_metrics([1, 0], [1, 0])
    with pytest.raises(TypeError, match=r"not a dict|got a dict"):
        group_metrics([1, 0], [1, 0], sensitive_features={"a": [1, 2]})
    with pytest.raises(ValueError, match=r"either rows .* or counts"):
        group_metrics([1, 0], [1, 0], counts=[[1, 2, 3, 4]])
    with pytest.raises(ValueError, match="only one group"):
        group_metrics(
            [1, 0],
            [1, 0],
            sensitive_features=["a", "a"],
            smoothing=CrossPriorSmoothing(),
        )
    with pytest.raises(ValueError, match="zero total sample_weight"):
        group_metrics(
            [1, 0, 1],
            [1, 0, 0],
            sensitive_features=["a", "a", "b"],
            sample_weight=[1, 1, 0],
        )


def test_single_group_without_reference_is_fine():
    table = group_metrics(
        [1, 0, 1], [1, 0, 0], sensitive_features=["a", "a", "a"], metrics="tpr"
    )
    assert table.loc["a", "tpr"] == 0.5


# ---------------------------------------------------------------------------------
# Intervals (confidence_level=...); the methods are tested in test_intervals.py
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "interval_method", ["auto", "wilson", "posterior", "bootstrap"]
)
def test_intervals_from_rows_equal_intervals_from_counts(rows, interval_method):
    y_true, y_pred, groups = rows
    kw = dict(
        metrics=["tpr", "ppv", "mcc"]
        if interval_method != "wilson"
        else ["tpr", "ppv"],
        zero_division=np.nan,
        confidence_level=0.9,
        interval_method=interval_method,
        n_resamples=300,
        random_state=0,
    )
    from_rows = group_metrics(y_true, y_pred, sensitive_features=groups, **kw)
    labels, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
    from_counts = group_metrics(counts=dict(zip(labels, counts)), **kw)
    pd.testing.assert_frame_equal(from_rows, from_counts)
    assert from_rows.attrs == from_counts.attrs


def test_intervals_with_unit_weights_equal_unweighted(rows):
    y_true, y_pred, groups = rows
    kw = dict(
        metrics=["fpr", "mcc"],
        zero_division=np.nan,
        confidence_level=0.95,
        n_resamples=200,
        random_state=1,
    )
    plain = group_metrics(y_true, y_pred, sensitive_features=groups, **kw)
    weighted = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        sample_weight=np.ones(len(y_true)),
        **kw,
    )
    pd.testing.assert_frame_equal(plain, weighted, check_dtype=False)


def test_intervals_leave_the_values_unchanged(rows):
    y_true, y_pred, groups = rows
    kw = dict(
        metrics=["tpr", "f1", "mb"],
        smoothing=CrossPriorSmoothing(4.0),
        zero_division=np.nan,
    )
    plain = group_metrics(y_true, y_pred, sensitive_features=groups, **kw)
    with_intervals = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        confidence_level=0.8,
        random_state=0,
        **kw,
    )
    pd.testing.assert_frame_equal(with_intervals[plain.columns], plain)


def test_group_metrics_reports_the_learned_lambda():
    from sklearn_smallfair.datasets import load_published_confusion_matrices

    counts = load_published_confusion_matrices("Folktables", include_all=False)
    auto = group_metrics(counts=counts, smoothing=CrossPriorSmoothing("auto"))
    fixed = group_metrics(counts=counts, smoothing=CrossPriorSmoothing(10))
    learned = CrossPriorSmoothing("auto").fit(
        counts[["TP", "FN", "FP", "TN"]].to_numpy(),
        reference_counts(counts[["TP", "FN", "FP", "TN"]].to_numpy()),
    )
    np.testing.assert_allclose(auto["lam"], learned.lam_)
    assert (fixed["lam"] == 10.0).all()
    # the smoothed values use the learned strength
    again = group_metrics(
        counts=counts, smoothing=CrossPriorSmoothing(float(learned.lam_))
    )
    np.testing.assert_allclose(auto["tpr_smoothed"], again["tpr_smoothed"])
    assert "lam" not in group_metrics(counts=counts).columns


def test_unknown_metric_name_suggests_the_closest():
    rows = {"y_true": [1, 0, 1, 0], "y_pred": [1, 0, 0, 0]}
    with pytest.raises(
        ValueError, match=r"unknown metric 'recal'.*Did you mean 'recall'"
    ):
        group_metrics(**rows, sensitive_features=["a", "a", "b", "b"], metrics="recal")
    with pytest.raises(ValueError, match="Did you mean 'pt' or 'fpr'"):
        group_metrics(
            **rows, sensitive_features=["a", "a", "b", "b"], metrics=["tpr", "fpt"]
        )
    with pytest.raises(ValueError, match="unknown metric 'zzz'; valid names are"):
        group_metrics(**rows, sensitive_features=["a", "a", "b", "b"], metrics="zzz")


def test_smoothing_warnings_name_the_groups_by_label():
    from sklearn_smallfair.exceptions import ReferenceWarning

    rng = np.random.default_rng(0)
    y, pred = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
    groups = rng.choice(["north", "south"], 60)
    with pytest.warns(ReferenceWarning, match="group 'north'") as caught:
        group_metrics(
            y, pred, sensitive_features=groups, smoothing=CrossPriorSmoothing(lam=10)
        )
    references = [w for w in caught if issubclass(w.category, ReferenceWarning)]
    assert not any("position" in str(w.message) for w in references)
