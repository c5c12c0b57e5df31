"""Intervals in the test results, the table columns and the shared options.

The MATCH table carries the interval of the group's metric (that of
``group_metrics(confidence_level=...)``) and the range of the reference law's
scores at the group's size (the central range of the test's null law); the
separation table the Newcombe interval of each gap and the interval of the
equalized-odds difference (that of ``disparity_intervals``); ``correction`` takes
one set of values with one default everywhere.
"""

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_smallfair._pvalues import P_VALUE_FLOOR
from sklearn_smallfair.metrics import disparity_intervals, group_metrics
from sklearn_smallfair.stats import (
    comparative_separation_test,
    match_test,
    separation_test,
)

# These tests check the published law of the MATCH test (null="fixed-reference");
# tests/stats/test_match_two_sample.py checks the default two-sample law.
match_test = functools.partial(match_test, null="fixed-reference", family="metric")

COUNTS = {"a": [8, 2, 1, 9], "b": [3, 3, 4, 10], "c": [1, 5, 2, 12], "d": [0, 0, 3, 5]}
REFERENCE = [130, 70, 40, 160]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        yield


def _wilson(k, m, level):
    """Wilson's score interval written from its definition (the roots in p of
    ``(k/m - p)^2 = z^2 p (1 - p) / m``)."""
    z = stats.norm.ppf(0.5 + level / 2)
    a = 1 + z * z / m
    b = -(2 * k / m + z * z / m)
    c = (k / m) ** 2
    root = np.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


# =====================================================================================
# MATCH: intervals of the group's and the reference's metric
# =====================================================================================
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_match_intervals_are_those_of_group_metrics(level):
    metrics = ["tpr", "acc", "f1", "mcc"]
    res = match_test(
        counts=COUNTS,
        reference=REFERENCE,
        metric=metrics,
        confidence_level=level,
        random_state=3,
    )
    table = group_metrics(
        counts=COUNTS,
        metrics=metrics,
        confidence_level=level,
        random_state=3,
        zero_division=np.nan,
    )
    f = res.frame
    n_checked = 0
    for name in metrics:
        rows = f[f["metric"] == name].set_index("group")
        for side in ("low", "high"):
            expected = table[f"{name}_{side}"].to_numpy(float)
            got = rows.loc[table.index, f"score_{side}"].to_numpy(float)
            np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
            n_checked += np.isfinite(got).sum()
    assert n_checked >= 2 * 3 * len(metrics)  # d's tpr and f1 are undefined: NaN
    tpr = f[f["metric"] == "tpr"].set_index("group")
    assert np.isnan(tpr.loc["d", "score_low"])
    # Clopper-Pearson (the default for a proportion) from its definition
    a = 1.0 - level
    low = stats.beta.ppf(a / 2, 8, 3)
    high = stats.beta.ppf(1 - a / 2, 9, 2)
    assert tpr.loc["a", "score_low"] == pytest.approx(low, rel=1e-10)
    assert tpr.loc["a", "score_high"] == pytest.approx(high, rel=1e-10)
    # a closed-form interval contains its estimate (a posterior one need not)
    closed = f[f["metric"].isin(["tpr", "acc", "f1"]) & f["score"].notna()]
    assert (closed["score_low"] <= closed["score"] + 1e-12).all()
    assert (closed["score"] <= closed["score_high"] + 1e-12).all()


def _null_range_by_enumeration(metric, n, reference, level):
    """The central range of the score over all C(n + 3, 3) matrices of size n."""
    from sklearn_smallfair._enumeration import enumerate_confusion_matrices
    from sklearn_smallfair._pmf import multinomial_logpmf
    from sklearn_smallfair.metrics import get_metric

    cms = enumerate_confusion_matrices(n)
    p = np.asarray(reference, float) / np.sum(reference)
    pmf = np.exp(multinomial_logpmf(cms, p))
    values = np.asarray(get_metric(metric).func(cms.astype(float)), float)
    ok = np.isfinite(values)
    values, pmf = values[ok], pmf[ok] / pmf[ok].sum()
    grid, where = np.unique(np.round(values, 12), return_inverse=True)
    mass = np.bincount(where.ravel(), weights=pmf, minlength=grid.size)
    lower, upper = np.cumsum(mass), np.cumsum(mass[::-1])[::-1]
    return grid[lower > level].min(), grid[upper > level].max()


@pytest.mark.parametrize("metric", ["tpr", "ppv", "acc", "mb"])
def test_match_reference_range_is_the_exact_null_range(metric):
    ref = [13, 4, 9, 21]
    counts = {"a": [3, 1, 2, 4], "b": [6, 2, 1, 3], "c": [0, 3, 3, 0]}
    res = match_test(
        counts=counts,
        reference=ref,
        metric=metric,
        method="exact",
        confidence_level=0.9,
    ).frame.set_index("group")
    for g, cm in counts.items():
        lo, hi = _null_range_by_enumeration(metric, sum(cm), ref, 0.05)
        assert res.loc[g, "reference_range_low"] == pytest.approx(lo, abs=1e-12)
        assert res.loc[g, "reference_range_high"] == pytest.approx(hi, abs=1e-12)
        # outside the range exactly when the two-sided p-value is <= 1 - level
        outside = not (lo - 1e-12 <= res.loc[g, "score"] <= hi + 1e-12)
        assert outside == (res.loc[g, "p_value"] <= 0.1)


def test_match_reference_range_by_draws_elsewhere():
    ref = [130, 70, 40, 160]
    counts = {"a": [8, 2, 1, 9], "b": [30, 20, 14, 36]}
    res = match_test(
        counts=counts, reference=ref, metric="mcc", random_state=1
    ).frame.set_index("group")
    for g, cm in counts.items():
        lo, hi = _null_range_by_enumeration("mcc", sum(cm), ref, 0.025)
        # 2,000 draws: quantiles within a few draws' mass of the exact ones
        assert abs(res.loc[g, "reference_range_low"] - lo) < 0.05
        assert abs(res.loc[g, "reference_range_high"] - hi) < 0.05
    again = match_test(counts=counts, reference=ref, metric="mcc", random_state=1)
    pd.testing.assert_frame_equal(again.frame.set_index("group"), res)


def test_match_interval_of_a_smoothed_score_is_its_posterior():
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    res = match_test(
        counts=COUNTS,
        reference=REFERENCE,
        metric="tpr",
        smoothing=CrossPriorSmoothing(4),
    ).frame.set_index("group")
    p_ref = np.asarray(REFERENCE, float) / sum(REFERENCE)
    for g, cm in COUNTS.items():
        a = cm[0] + 4 * p_ref[0]
        b = cm[1] + 4 * p_ref[1]
        assert res.loc[g, "score"] == pytest.approx(a / (a + b), rel=1e-12)
        lo, hi = stats.beta.ppf([0.025, 0.975], a, b)
        # the default: the hull of the smoothing posterior and the raw
        # Clopper-Pearson interval, so that it covers whether or not the group
        # follows its reference
        tp, fn = cm[0], cm[1]
        raw_lo = stats.beta.ppf(0.025, tp, fn + 1) if tp > 0 else 0.0
        raw_hi = stats.beta.ppf(0.975, tp + 1, fn) if fn > 0 else 1.0
        if tp + fn > 0:
            lo, hi = min(lo, raw_lo), max(hi, raw_hi)
        assert res.loc[g, "score_low"] == pytest.approx(lo, rel=1e-10)
        assert res.loc[g, "score_high"] == pytest.approx(hi, rel=1e-10)


def test_match_confidence_level_none_and_validation():
    res = match_test(counts=COUNTS, reference=REFERENCE, confidence_level=None)
    assert not any(c.endswith(("_low", "_high")) for c in res.frame.columns)
    for bad in (0, 1, 95, "0.95"):
        with pytest.raises(InvalidParameterError, match="'confidence_level' param"):
            match_test(counts=COUNTS, reference=REFERENCE, confidence_level=bad)


# =====================================================================================
# MATCH: the standard error column
# =====================================================================================
def test_se_only_with_monte_carlo():
    exact = match_test(counts=COUNTS, reference=REFERENCE, metric="tpr").frame
    assert "se" not in exact.columns
    mc = match_test(
        counts=COUNTS,
        reference=REFERENCE,
        metric=["tpr", "mcc"],
        method="montecarlo",
        n_resamples=500,
        random_state=0,
    ).frame
    assert (mc["se"][mc["p_value"].notna()] > 0).all()
    mixed = match_test(
        counts={"small": [3, 2, 1, 4], "big": [90, 40, 60, 140]},
        reference=REFERENCE,
        metric="mcc",
        n_resamples=500,
        random_state=0,
    ).frame
    assert list(mixed["method"]) == ["enumerate", "montecarlo"]
    assert np.isnan(mixed["se"].iloc[0]) and mixed["se"].iloc[1] > 0


def test_subnormal_p_values_are_floored():
    # no prevalent case in 1,000 people at a prevalence of 0.52: P = 0.48^1000,
    # about 1e-319, a subnormal double
    res = match_test(
        counts={"g": [0, 0, 0, 1000]}, reference=[52, 0, 0, 48], metric="prev"
    ).frame.iloc[0]
    assert 0.48**1000 < P_VALUE_FLOOR and 0.48**1000 > 0
    assert res["p_lower_tail"] == P_VALUE_FLOOR
    assert res["p_value"] == P_VALUE_FLOOR and res["p_adjusted"] == P_VALUE_FLOOR
    assert res["p_upper_tail"] == 1.0
    # a p-value above the floor is untouched
    res = match_test(
        counts={"g": [0, 0, 0, 100]}, reference=[52, 0, 0, 48], metric="prev"
    ).frame.iloc[0]
    assert res["p_lower_tail"] == pytest.approx(0.48**100, rel=1e-10)


# =====================================================================================
# Separation: Newcombe intervals of the gaps and the equalized-odds difference
# =====================================================================================
def _rows(cells):
    """Rows from per-group ``(tp, fn, fp, tn)``."""
    y_true, y_pred, groups = [], [], []
    for g, (tp, fn, fp, tn) in cells.items():
        y_true += [1] * (tp + fn) + [0] * (fp + tn)
        y_pred += [1] * tp + [0] * fn + [1] * fp + [0] * tn
        groups += [g] * (tp + fn + fp + tn)
    return np.array(y_true), np.array(y_pred), np.array(groups)


def test_separation_gap_interval_is_newcombes_published_example():
    # Newcombe (1998), Table II, example (a): 56/70 - 48/80, method 10:
    # 0.0524 to 0.3339
    y_true, y_pred, groups = _rows({"a": (48, 32, 5, 5), "b": (56, 14, 5, 5)})
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    tpr = res.frame[res.frame["metric"] == "tpr"].iloc[0]
    assert (tpr["group_a"], tpr["group_b"]) == ("b", "a")
    assert tpr["difference"] == pytest.approx(56 / 70 - 48 / 80)
    assert round(tpr["difference_low"], 4) == 0.0524
    assert round(tpr["difference_high"], 4) == 0.3339


def test_separation_equalized_odds_interval_is_that_of_disparity_intervals():
    cells = {"a": (9, 3, 2, 11), "b": (4, 6, 5, 5), "c": (7, 0, 0, 6)}
    y_true, y_pred, groups = _rows(cells)
    res = separation_test(
        y_true, y_pred, sensitive_features=groups, confidence_level=0.9
    )
    eod = res.equalized_odds
    assert len(eod) == 3 and list(eod.columns) == [
        "group_a",
        "group_b",
        "difference",
        "difference_low",
        "difference_high",
    ]
    for row in eod.itertuples():
        pair = np.isin(groups, [row.group_a, row.group_b])
        other = disparity_intervals(
            y_true[pair],
            y_pred[pair],
            sensitive_features=groups[pair],
            metrics="equalized_odds",
            reference="rest",
            confidence_level=0.9,
        )
        ref = other.loc[(row.group_a, "equalized_odds")]
        assert row.difference == pytest.approx(ref["difference"], rel=1e-12)
        assert row.difference_low == pytest.approx(ref["difference_low"], abs=1e-12)
        assert row.difference_high == pytest.approx(ref["difference_high"], rel=1e-12)
        assert row.difference_low <= row.difference <= row.difference_high
    # the gap intervals at the level, each containing its gap
    f = res.frame
    assert ((f["difference_low"] <= f["difference"]) | f["difference"].isna()).all()
    assert ((f["difference"] <= f["difference_high"]) | f["difference"].isna()).all()


def test_separation_confidence_level_none_and_validation():
    y_true, y_pred, groups = _rows({"a": (9, 3, 2, 11), "b": (4, 6, 5, 5)})
    kw = dict(sensitive_features=groups)
    res = separation_test(y_true, y_pred, confidence_level=None, **kw)
    assert res.equalized_odds is None and res.confidence_level is None
    assert "difference_low" not in res.frame.columns
    with pytest.raises(InvalidParameterError, match="'confidence_level' param"):
        separation_test(y_true, y_pred, confidence_level=1.0, **kw)
    res = separation_test(y_true, y_pred, confidence_level=0.8, **kw)
    assert res.confidence_level == 0.8


# =====================================================================================
# One name for p-values, one set of corrections
# =====================================================================================
def test_headline_p_values_have_one_name():
    y_true, y_pred, groups = _rows({"a": (9, 3, 2, 11), "b": (4, 6, 5, 5)})
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert "p_value_tpr=" in repr(res) and "pvalue" not in repr(res)
    comp = comparative_separation_test(
        [3, 2, 1, 3, 2, 1],
        [0.9, 0.5, 0.1, 0.2, 0.8, 0.0],
        sensitive_features=["a", "a", "a", "b", "b", "b"],
    )
    for result in (res, comp):
        assert not [a for a in dir(result) if a.startswith("pvalue_")]


def test_correction_has_one_default_and_one_set_of_values():
    import inspect

    y_true, y_pred, groups = _rows(
        {"a": (9, 3, 2, 11), "b": (4, 6, 5, 5), "c": (7, 1, 1, 6)}
    )
    for func in (match_test, separation_test, comparative_separation_test):
        assert inspect.signature(func).parameters["correction"].default == "holm"
    runs = {
        "match": lambda c: match_test(
            counts=COUNTS, reference=REFERENCE, correction=c
        ).frame["p_adjusted"],
        "separation": lambda c: separation_test(
            y_true, y_pred, sensitive_features=groups, correction=c
        ).frame["p_adjusted"],
    }
    for name, run in runs.items():
        default = run("holm").dropna()
        raw = run("none").dropna()
        pd.testing.assert_series_equal(run(None).dropna(), raw)
        assert (default >= raw - 1e-15).all() and (default > raw).any(), name
        for c in ("bonferroni", "fdr_bh"):
            run(c)
        with pytest.raises(InvalidParameterError, match="'correction' parameter"):
            run("Holm")
