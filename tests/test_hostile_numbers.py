"""Careless and hostile numbers: counts, weights, averaging, intervals.

Each test pins one rule: counts read by an unambiguous name; pandas nullable
counts converted and a missing one named; integer counts bounded so that their
sums cannot wrap around; huge weights and pseudo-counts never turned into a
wrong rate; Monte Carlo draws enough to reach ``alpha``; undefined per-class
values averaged as scikit-learn averages them; an interval that holds its point;
a warning that names a group by its label, or says it has only a position.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import precision_recall_fscore_support

from sklearn_smallfair.exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import (
    compute_metric,
    disparity_intervals,
    group_metrics,
    metric_names,
    multiclass_confusion_counts,
    multiclass_metric,
)
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.stats import (
    comparative_separation_test,
    match_test,
    multiclass_match_test,
    separation_test,
)

CELLS = ["TP", "FN", "FP", "TN"]
COMPAS = pd.DataFrame(
    [[273, 170, 1043, 1692], [77, 129, 380, 1679]],
    index=pd.Index(["Black", "White"], name="group"),
    columns=CELLS,
)


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


# =====================================================================================
# Counts frames: names, nullable dtypes, missing values
# =====================================================================================
def test_columns_that_differ_only_in_case_are_an_error():
    clash = COMPAS.assign(tp=[1, 2])
    with pytest.raises(ValueError, match=r"differ only in case \('TP' and 'tp'\)"):
        group_metrics(counts=clash, metrics="tpr")
    with pytest.raises(ValueError, match=r"'TP' and 'tp'"):
        disparity_intervals(counts=clash)
    with pytest.raises(ValueError, match=r"'TP' and 'tp'"):
        compute_metric("tpr", clash)
    with pytest.raises(ValueError, match=r"'group' and 'Group'"):
        group_metrics(counts=COMPAS.reset_index().assign(Group=["x", "y"]))
    long = _long_table()
    with pytest.raises(ValueError, match=r"'count' and 'Count'"):
        group_metrics(counts=long.assign(Count=1), metrics="tpr")
    repeated = COMPAS[["TP", "TP", "FN", "FP", "TN"]]
    with pytest.raises(ValueError, match=r"\['TP'\] more than once"):
        group_metrics(counts=repeated)
    # one spelling, whatever its case, is read as before
    lower = group_metrics(counts=COMPAS.rename(columns=str.lower), metrics="tpr")
    np.testing.assert_allclose(lower["tpr"], [273 / 443, 77 / 206], rtol=1e-15)


@pytest.mark.parametrize("dtype", ["Int64", "Float64", "UInt32"])
def test_pandas_nullable_counts_are_read_as_numbers(dtype):
    expected = group_metrics(counts=COMPAS, metrics=["tpr", "fpr"])
    got = group_metrics(counts=COMPAS.astype(dtype), metrics=["tpr", "fpr"])
    np.testing.assert_allclose(got["tpr"], expected["tpr"], rtol=1e-15)
    np.testing.assert_allclose(got["n"], expected["n"], rtol=1e-15)
    one = COMPAS.loc["Black"].astype(dtype)
    assert compute_metric("tpr", one) == pytest.approx(273 / 443, rel=1e-15)


def _long_table():
    """The long multiclass counts table of two groups (``to_frame()``)."""
    t = np.array([0, 1, 2, 0, 1, 2, 1, 1, 2, 0])
    p = np.array([0, 1, 1, 0, 2, 2, 1, 0, 2, 1])
    g = np.repeat(["a", "b"], 5)
    return multiclass_confusion_counts(t, p, sensitive_features=g).to_frame()


def test_pandas_nullable_multiclass_counts_are_read_as_numbers():
    long = _long_table()
    expected = _quiet(group_metrics, counts=long, metrics="tpr")
    nullable = long.astype({"count": "Int64"})
    got = _quiet(group_metrics, counts=nullable, metrics="tpr")
    np.testing.assert_allclose(got["tpr"], expected["tpr"], rtol=1e-15)
    nullable.loc[3, "count"] = pd.NA
    with pytest.raises(ValueError, match=r"column 'count' \(first at row 3\)"):
        group_metrics(counts=nullable, metrics="tpr")


def test_a_missing_count_names_its_column_and_row():
    counts = COMPAS.astype("Int64")
    counts.loc["White", "FP"] = pd.NA
    with pytest.raises(ValueError, match=r"column 'FP' \(first at row 'White'\)"):
        group_metrics(counts=counts)
    by_position = counts.reset_index(drop=True)
    with pytest.raises(ValueError, match=r"column 'FP' \(first at row 1\)"):
        disparity_intervals(counts=by_position)
    with_column = counts.reset_index()
    with pytest.raises(ValueError, match=r"column 'FP' \(first at row 'White'\)"):
        group_metrics(counts=with_column)
    floats = COMPAS.astype(float)
    floats.loc["Black", "TN"] = np.nan
    with pytest.raises(ValueError, match=r"column 'TN' \(first at row 'Black'\)"):
        group_metrics(counts=floats)


# =====================================================================================
# Integer counts: bounded, summed without wrapping around
# =====================================================================================
def test_counts_whose_sums_would_overflow_int64_are_refused():
    huge = pd.DataFrame(
        {"TP": [2**62, 1], "FN": [2, 1], "FP": [2**62, 1], "TN": [1, 2]},
        index=["a", "b"],
    )
    with pytest.raises(ValueError, match=r"2\*\*62"):
        group_metrics(counts=huge, metrics="tpr")
    with pytest.raises(ValueError, match=r"2\*\*62"):
        match_test(counts=huge)
    with pytest.raises(ValueError, match=r"2\*\*62"):
        match_test(counts=huge.astype(float))
    unsigned = np.array([[2**63 + 5, 1, 1, 1], [1, 1, 1, 1]], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"2\*\*62"):
        group_metrics(counts=unsigned)
    with pytest.raises(ValueError, match=r"largest float64"):
        group_metrics(counts=np.array([[1e308, 1e308, 1.0, 1.0], [1.0, 1, 1, 1]]))
    # just below the bound every size is exact
    big = np.array([[2**60, 2**60, 7, 9], [3, 1, 2, 4]], dtype=np.int64)
    table = group_metrics(counts=big, metrics="tpr")
    assert table["n"].tolist() == [2**61 + 16, 10]
    assert table["n_pos"].tolist() == [2**61, 4]


def test_small_integer_dtypes_are_summed_in_int64():
    counts = np.array([[100, 100, 100, 100], [1, 2, 3, 4]], dtype=np.int8)
    table = group_metrics(counts=counts, metrics="tpr")
    assert table["n"].tolist() == [400, 10]
    assert table["n_pos"].tolist() == [200, 3]
    assert table["n_neg"].tolist() == [200, 7]


# =====================================================================================
# Huge weights and pseudo-counts: never a wrong rate
# =====================================================================================
_Y = np.array([1, 1, 0, 0, 1, 1, 0, 0, 1, 0])
_P = np.array([1, 0, 0, 1, 1, 1, 1, 0, 0, 0])
_G = np.array(["a"] * 4 + ["b"] * 6)


def test_weights_that_overflow_are_refused():
    with pytest.raises(ValueError, match=r"sample_weight sums to more than"):
        group_metrics(_Y, _P, sensitive_features=_G, sample_weight=[1e308] * 10)
    with pytest.raises(ValueError, match=r"sample_weight sums to more than"):
        disparity_intervals(_Y, _P, sensitive_features=_G, sample_weight=[1e308] * 10)


@pytest.mark.parametrize("scale", [1e300, 2.0**900, 1e-300])
def test_rates_do_not_depend_on_the_scale_of_the_weights(scale):
    metrics = ["tpr", "fpr", "ppv", "f1", "mcc", "pt", "mb", "acc"]
    w = np.linspace(1.0, 2.0, 10)
    plain = group_metrics(
        _Y, _P, sensitive_features=_G, sample_weight=w, metrics=metrics
    )
    scaled = group_metrics(
        _Y, _P, sensitive_features=_G, sample_weight=w * scale, metrics=metrics
    )
    for m in metrics:
        np.testing.assert_allclose(scaled[m], plain[m], rtol=1e-12, err_msg=m)


def test_every_metric_is_unchanged_by_a_huge_scale_of_the_counts():
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 50, size=(30, 4)).astype(float)
    for name in metric_names(n_groups=1):
        plain = compute_metric(name, counts)
        for scale in (2.0**600, 2.0**1000, 1e300):
            np.testing.assert_allclose(
                compute_metric(name, counts * scale),
                plain,
                rtol=1e-12,
                equal_nan=True,
                err_msg=f"{name} x {scale}",
            )
    cm = np.array([[5, 1, 0], [2, 3, 1], [0, 1, 4]], dtype=float)
    for name in ("accuracy", "balanced_accuracy", "mcc", "kappa"):
        np.testing.assert_allclose(
            multiclass_metric(name, cm * 1e300),
            multiclass_metric(name, cm),
            rtol=1e-12,
            err_msg=name,
        )


@pytest.mark.parametrize("eps", [1e300, 1e308])
def test_a_huge_pseudo_count_gives_the_limit_of_the_smoothed_rate(eps):
    # (c + eps) / (m + 2 eps) -> 1/2, (TP + eps) / (n + 4 eps) -> 1/4, and MCC -> 0
    table = group_metrics(
        counts=COMPAS,
        metrics=["tpr", "acc", "mcc", "f1"],
        smoothing=AdditiveSmoothing(eps=eps),
    )
    np.testing.assert_allclose(table["tpr_smoothed"], 0.5, rtol=1e-12)
    np.testing.assert_allclose(table["acc_smoothed"], 0.5, rtol=1e-12)
    np.testing.assert_allclose(table["mcc_smoothed"], 0.0, atol=1e-12)
    np.testing.assert_allclose(table["f1_smoothed"], 0.5, rtol=1e-12)
    smoothed = AdditiveSmoothing(eps=eps).transform(COMPAS.to_numpy())
    np.testing.assert_allclose(compute_metric("tpr", smoothed), 0.5, rtol=1e-12)
    # the smoothed intervals hold the smoothed values, without overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = group_metrics(
            counts=COMPAS,
            metrics=["tpr", "acc", "mcc"],
            smoothing=AdditiveSmoothing(eps=eps),
            confidence_level=0.95,
        )
    for m in ("tpr", "acc", "mcc"):
        value = table[f"{m}_smoothed"]
        assert (table[f"{m}_smoothed_low"] <= value + 1e-12).all(), m
        assert (value <= table[f"{m}_smoothed_high"] + 1e-12).all(), m


# =====================================================================================
# Monte Carlo p-values: enough draws to reach alpha
# =====================================================================================
_GROUPS = {"a": [300, 100, 100, 500], "b": [10, 10, 10, 10]}


def test_montecarlo_with_too_few_draws_to_reject_is_an_error():
    drawn = dict(counts=_GROUPS, metric="f1", null="fixed-reference")
    drawn["method"] = "montecarlo"
    with pytest.raises(ValueError, match=r"n_resamples >= 39 \(ceil\(2/alpha\) - 1"):
        _quiet(match_test, **drawn, n_resamples=10)
    with pytest.raises(ValueError, match=r"n_resamples >= 19 \(ceil\(1/alpha\) - 1"):
        _quiet(match_test, **drawn, n_resamples=18, alternative="less")
    with pytest.raises(ValueError, match=r"n_resamples >= 199"):
        _quiet(match_test, **drawn, n_resamples=100, alpha=0.01)
    # the fewest draws that can reach alpha are accepted
    _quiet(match_test, **drawn, n_resamples=39)
    _quiet(match_test, **drawn, n_resamples=19, alternative="greater")
    # no draw, no bound
    _quiet(match_test, counts=_GROUPS, null="fixed-reference", n_resamples=10)


def test_every_drawn_test_refuses_too_few_draws():
    counts = {"a": [[30, 6, 2], [5, 40, 7], [2, 6, 25]], "b": [[3, 1, 0], [0, 2, 1]]}
    counts["b"].append([1, 0, 2])
    with pytest.raises(ValueError, match=r"n_resamples >= 39"):
        _quiet(
            multiclass_match_test,
            counts=counts,
            metric="accuracy",
            method="montecarlo",
            n_resamples=10,
        )
    with pytest.raises(ValueError, match=r"n_resamples >= 199"):
        separation_test(
            counts=_GROUPS, method="permutation", n_resamples=100, alpha=0.005
        )
    rng = np.random.default_rng(0)
    y, score = rng.integers(0, 2, 40), rng.random(40)
    with pytest.raises(ValueError, match=r"n_resamples >= 199"):
        comparative_separation_test(
            y,
            score,
            sensitive_features=np.repeat(["a", "b"], 20),
            method="permutation",
            n_resamples=100,
            alpha=0.005,
        )


# =====================================================================================
# Macro and weighted averages: undefined classes as scikit-learn has them
# =====================================================================================
def _multiclass_rows(seed, n_groups=4, n=7):
    """Small groups over four classes, so that some classes are never true or
    never predicted in a group; the last group is all class 0 predicted as 1
    (its weighted precision has only zero weights left: scikit-learn's plain
    mean)."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 4, n * n_groups)
    p = np.where(rng.random(t.shape) < 0.6, t, rng.integers(0, 4, t.shape))
    g = np.repeat(np.arange(n_groups), n)
    t = np.concatenate([t, np.zeros(3, int)])
    p = np.concatenate([p, np.ones(3, int)])
    g = np.concatenate([g, np.full(3, n_groups)])
    return t, p, g


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_averages_match_scikit_learn_for_every_zero_division(average):
    labels = [0, 1, 2, 3]
    metrics = ["ppv", "tpr", "f1"]
    for seed in range(5):
        t, p, g = _multiclass_rows(seed)
        for zd in (0.0, 1.0, "warn", np.nan):
            table = _quiet(
                group_metrics,
                t,
                p,
                sensitive_features=g,
                labels=labels,
                metrics=metrics,
                average=average,
                zero_division=zd,
            )
            cms = multiclass_confusion_counts(
                t, p, sensitive_features=g, labels=labels
            ).counts
            for i, group in enumerate(np.unique(g)):
                rows = g == group
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = precision_recall_fscore_support(
                        t[rows],
                        p[rows],
                        labels=labels,
                        average=average,
                        zero_division=zd,
                    )[:3]
                    direct = [
                        multiclass_metric(m, cms[i], average=average, zero_division=zd)
                        for m in metrics
                    ]
                got = table.loc[group, metrics].to_numpy(dtype=float)
                np.testing.assert_allclose(
                    got,
                    expected,
                    rtol=1e-12,
                    atol=1e-15,
                    equal_nan=True,
                    err_msg=f"seed {seed}, group {group}, zero_division={zd!r}",
                )
                np.testing.assert_allclose(
                    direct, expected, rtol=1e-12, atol=1e-15, equal_nan=True
                )


def test_undefined_classes_in_an_average_are_warned_about_under_warn():
    t = np.array([0, 0, 1, 1, 2, 0, 1, 1])
    p = np.array([0, 1, 1, 1, 1, 0, 0, 2])
    g = np.array(["a"] * 4 + ["b"] * 4)
    with pytest.warns(UndefinedGroupMetricWarning, match=r"class\(es\) 2 in group"):
        table = group_metrics(
            t,
            p,
            sensitive_features=g,
            labels=[0, 1, 2],
            metrics="tpr",
            average="macro",
        )
    assert table.loc["a", "tpr"] == pytest.approx(0.5, rel=1e-15)  # (1 + 1/2 + 0) / 3
    cm = np.array([[3, 0, 0], [0, 0, 0], [0, 0, 2]])
    with pytest.warns(UndefinedGroupMetricWarning, match=r"class\(es\) 1"):
        assert multiclass_metric(
            "tpr", cm, average="macro", zero_division="warn"
        ) == pytest.approx(2 / 3, rel=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        group_metrics(
            t,
            p,
            sensitive_features=g,
            labels=[0, 1, 2],
            metrics="tpr",
            average="macro",
            zero_division=np.nan,
        )


@pytest.mark.parametrize("zero_division", [0.0, 1.0, "warn"])
def test_macro_interval_holds_the_macro_value(zero_division):
    # class 2 never true in group "b": its TPR enters the mean as zero_division
    counts = {"a": [[6, 2, 1], [1, 5, 2], [0, 2, 7]], "b": [[3, 0, 1], [2, 2, 0]]}
    counts["b"].append([0, 0, 0])
    table = _quiet(
        group_metrics,
        counts=counts,
        metrics="tpr",
        average="macro",
        confidence_level=0.9,
        zero_division=zero_division,
    )
    recall_b = [3 / 4, 2 / 4]
    fill = {0.0: [0.0], 1.0: [1.0], "warn": [0.0]}.get(zero_division, [])
    assert table.loc["b", "tpr"] == pytest.approx(np.mean(recall_b + fill), rel=1e-12)
    assert (table["tpr_low"] <= table["tpr"]).all()
    assert (table["tpr"] <= table["tpr_high"]).all()


# =====================================================================================
# Disparity intervals: the point inside its interval, NaN with NaN
# =====================================================================================
_ZERO_CELLS = pd.DataFrame(
    {
        "TP": [0, 5, 0, 6, 4, 0],
        "FN": [5, 5, 4, 0, 4, 0],
        "FP": [3, 3, 0, 2, 0, 3],
        "TN": [5, 5, 2, 2, 4, 3],
    },
    index=["a", "b", "c", "d", "e", "f"],
)


@pytest.mark.parametrize("reference", ["rest", "total", "b"])
def test_each_disparity_interval_holds_its_point(reference):
    for method in ("auto", "posterior", "bootstrap"):
        table = disparity_intervals(
            counts=_ZERO_CELLS,
            metrics=["tpr", "fpr", "ppv", "npv", "acc"],
            reference=reference,
            interval_method=method,
            n_resamples=400,
        )
        for what in ("ratio", "difference"):
            point = table[what].to_numpy(dtype=float)
            low = table[f"{what}_low"].to_numpy(dtype=float)
            high = table[f"{what}_high"].to_numpy(dtype=float)
            nan = np.isnan(point)
            message = f"{what}, {method}"
            np.testing.assert_array_equal(np.isnan(low), nan, err_msg=message)
            np.testing.assert_array_equal(np.isnan(high), nan, err_msg=message)
            assert (low[~nan] <= point[~nan]).all(), message
            assert (point[~nan] <= high[~nan]).all(), message
        # a group without true positives has ratio 0, inside its interval
        row = table.loc[("a", "tpr")]
        assert row["ratio"] == 0.0 and row["ratio_low"] == 0.0


def test_an_undefined_ratio_has_no_interval():
    # the reference of group "b" (everyone else) has no true positive: TPR 0
    counts = pd.DataFrame(
        {"TP": [0, 5], "FN": [5, 5], "FP": [3, 3], "TN": [5, 5]}, index=["a", "b"]
    )
    row = disparity_intervals(counts=counts, metrics="tpr").loc[("b", "tpr")]
    assert row["reference_value"] == 0.0 and np.isnan(row["ratio"])
    assert np.isnan(row["ratio_low"]) and np.isnan(row["ratio_high"])
    assert not row["undefined"]  # the difference is defined
    assert row["difference_low"] <= row["difference"] <= row["difference_high"]


# =====================================================================================
# Warnings name a group by its label, or say it has only a position
# =====================================================================================
_SMALL_REFERENCE = [[300, 100, 100, 500], [10, 10, 10, 10]]


def _reference_messages(counts, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        match_test(counts=counts, null="fixed-reference", **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, ReferenceWarning)]


def test_match_reference_warning_names_groups_by_label_or_position():
    labelled = pd.DataFrame(_SMALL_REFERENCE, index=["A", "B"], columns=CELLS)
    (message,) = _reference_messages(labelled)
    assert "group 'A' (40 people" in message
    with_column = labelled.rename_axis("group").reset_index()
    (message,) = _reference_messages(with_column)
    assert "group 'A' (40 people" in message
    for unlabelled in (np.array(_SMALL_REFERENCE), labelled.reset_index(drop=True)):
        (message,) = _reference_messages(unlabelled)
        assert "at position 0 (40 people" in message
        assert "group 0 " not in message


def test_smoothing_reference_warning_names_positions_without_labels():
    def messages(counts):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            group_metrics(
                counts=counts, smoothing=CrossPriorSmoothing(5), zero_division=np.nan
            )
        return [str(w.message) for w in caught if w.category is ReferenceWarning]

    (message,) = messages(np.array(_SMALL_REFERENCE))
    assert "at position 0 (40 people" in message and "group 0 " not in message
    labelled = pd.DataFrame(_SMALL_REFERENCE, index=["A", "B"], columns=CELLS)
    (message,) = messages(labelled)
    assert "group 'A' (40 people" in message


def test_multiclass_match_reference_warning_names_positions_without_labels():
    counts = np.array(
        [[[3, 1, 0], [0, 2, 0], [1, 0, 2]], [[5, 0, 0], [0, 4, 0], [0, 0, 3]]]
    )
    with pytest.warns(ReferenceWarning, match=r"at position\(s\) \[0, 1\]"):
        _quiet_undefined(multiclass_match_test, counts=counts, metric="accuracy")
    named = {"x": counts[0], "y": counts[1]}
    with pytest.warns(ReferenceWarning, match=r"group\(s\) \['x', 'y'\]"):
        _quiet_undefined(multiclass_match_test, counts=named, metric="accuracy")


def _quiet_undefined(func, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        warnings.simplefilter("always", ReferenceWarning)
        return func(**kwargs)


def test_a_counts_frame_with_its_labels_in_a_column_is_refused():
    counts = pd.DataFrame(
        {"race": ["a", "b"], "tp": [5, 6], "fn": [1, 2], "fp": [3, 3], "tn": [9, 9]}
    )
    with pytest.raises(ValueError, match=r"counts.set_index\('race'\)"):
        group_metrics(counts=counts)
    table = group_metrics(counts=counts.set_index("race"), metrics=["tpr"])
    assert table.index.tolist() == ["a", "b"]
