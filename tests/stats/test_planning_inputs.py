"""Inputs of the planning functions: references given as ConfusionCounts, and sizes
at which no effect is detectable."""

import warnings

import numpy as np
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.metrics import ConfusionCounts, confusion_counts
from sklearn_smallfair.stats import (
    match_min_detectable_effect,
    match_power,
    match_sample_size,
)

REFERENCE = np.array([389, 347, 1597, 4121])  # COMPAS, all defendants


def _labels(counts):
    """``y_true, y_pred`` with the confusion counts ``(TP, FN, FP, TN)``."""
    tp, fn, fp, tn = counts
    y_true = np.repeat([1, 1, 0, 0], [tp, fn, fp, tn])
    y_pred = np.repeat([1, 0, 1, 0], [tp, fn, fp, tn])
    return y_true, y_pred


def _one_matrix():
    return confusion_counts(*_labels(REFERENCE))


def _one_group():
    y_true, y_pred = _labels(REFERENCE)
    return confusion_counts(y_true, y_pred, sensitive_features=["x"] * y_true.size)


def _not_reached(record):
    return [w for w in record if "is not reached" in str(w.message)]


@pytest.mark.parametrize("make", [_one_matrix, _one_group], ids=["total", "group"])
@pytest.mark.parametrize("null", ["two-sample", "fixed-reference"])
def test_confusion_counts_reference_is_its_row(make, null):
    reference = make()
    assert isinstance(reference, ConfusionCounts)
    for func, kwargs in (
        (match_power, {"n": 200, "effect": -0.15}),
        (match_min_detectable_effect, {"n": 200, "alternative": "less"}),
    ):
        got = func("tpr", reference, null=null, **kwargs)
        expected = func("tpr", REFERENCE, null=null, **kwargs)
        assert got == expected


@pytest.mark.parametrize("make", [_one_matrix, _one_group], ids=["total", "group"])
def test_confusion_counts_reference_sample_size(make):
    got = match_sample_size("tpr", make(), effect=-0.15)
    assert got == match_sample_size("tpr", REFERENCE, effect=-0.15)


def test_confusion_counts_reference_with_sizes():
    sizes = [100, 200]
    got = match_power("tpr", _one_matrix(), sizes, effect=-0.15)
    expected = match_power("tpr", REFERENCE, sizes, effect=-0.15)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "func, kwargs",
    [
        (match_power, {"n": 200, "effect": -0.15}),
        (match_sample_size, {"effect": -0.15}),
        (match_min_detectable_effect, {"n": 200}),
    ],
)
def test_confusion_counts_of_several_groups_is_refused(func, kwargs):
    y_true, y_pred = _labels(REFERENCE)
    groups = np.resize(["a", "b"], y_true.size)
    reference = confusion_counts(y_true, y_pred, sensitive_features=groups)
    with pytest.raises(ValueError, match=r"of 2 groups.*counts\.sum\(axis=0\)"):
        func("tpr", reference, **kwargs)


@pytest.mark.parametrize("null", ["two-sample", "fixed-reference"])
def test_min_detectable_effect_is_nan_where_nothing_is_detectable(null):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        effect = match_min_detectable_effect("tpr", REFERENCE, 8, null=null)
    assert np.isnan(effect)
    (warning,) = _not_reached(record)
    assert "n=8" in str(warning.message)


def test_min_detectable_effect_sizes_warn_once_naming_them():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        effect = match_min_detectable_effect("tpr", REFERENCE, [8, 9, 200])
    assert np.isnan(effect[:2]).all() and np.isfinite(effect[2])
    (warning,) = _not_reached(record)
    assert "n=8, 9:" in str(warning.message)
    # no warning where every size has a detectable effect
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        match_min_detectable_effect("tpr", REFERENCE, [100, 200])
    assert not _not_reached(record)


COUNTS = {
    "a": [60, 20, 30, 290],
    "b": [14, 6, 9, 71],
    "c": [5, 5, 2, 18],
    "d": [300, 90, 160, 1450],
    "e": [2, 1, 1, 4],  # 8 people: no gap is detectable
}


def test_audit_keeps_tiny_groups_quiet_and_nan():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        report = audit_predictions(
            counts=COUNTS, metrics=["tpr", "ppv"], tests=("match",)
        )
    assert not _not_reached(record)
    assert np.isnan(report.frame.loc["e", "tpr_detectable_gap"])
    assert np.isnan(report.frame.loc["e", "ppv_detectable_gap"])


def test_audit_detectable_gap_is_unsigned_at_every_alpha():
    # the public two-sided effect takes the sign of its smaller side, which can
    # change with the level; the audit's gap is a size, the same sign throughout
    signs = set()
    for alpha in (0.01, 0.05, 0.2):
        frame = audit_predictions(
            counts=COUNTS, metrics=["tpr", "ppv", "acc"], tests=("match",), alpha=alpha
        ).frame
        for metric in ("tpr", "ppv", "acc"):
            gap = frame[f"{metric}_detectable_gap"].to_numpy(dtype=float)
            signs.update(np.sign(gap[np.isfinite(gap)]).tolist())
    assert signs == {1.0}
