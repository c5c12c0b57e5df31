"""Registry-driven common tests of every single-group metric, computed from rows.

In the style of scikit-learn's ``sklearn/metrics/tests/test_common.py``: each metric
of :func:`metric_names` is checked for invariances of its input handling, and
against scikit-learn wherever scikit-learn has the metric and defines its value.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
    zero_one_loss,
)

from sklearn_smallfair._confusion import FN, FP, TN, TP
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import compute_metric, confusion_counts, metric_names

SINGLE_GROUP_METRICS = metric_names(n_groups=1)
SEEDS = range(6)
SIZES = [1, 2, 3, 4, 5, 10, 40]


def datasets(n_seeds):
    """(seed, n) for every size in SIZES, with n_seeds seeds rotating over sizes."""
    return [
        (int((i + k * len(SEEDS) // n_seeds) % len(SEEDS)), n)
        for i, n in enumerate(SIZES)
        for k in range(n_seeds)
    ]


def metric_from_rows(
    metric, y_true, y_pred, *, sample_weight=None, pos_label=1, zero_division=np.nan
):
    """The metric of all rows together, via the package's counting and registry."""
    counts = confusion_counts(
        y_true, y_pred, sample_weight=sample_weight, pos_label=pos_label
    ).counts
    return compute_metric(metric, counts, zero_division=zero_division)


def make_rows(seed, n):
    """Random binary rows; base rate and error rate vary so that single-class and
    undefined cases are frequent at small n."""
    rng = np.random.default_rng([seed, n])
    base_rate = rng.choice([0.05, 0.3, 0.5, 0.8])
    error_rate = rng.choice([0.0, 0.2, 0.5])
    y_true = (rng.random(n) < base_rate).astype(np.int64)
    flip = rng.random(n) < error_rate
    y_pred = np.where(flip, 1 - y_true, y_true)
    return y_true, y_pred


def make_weights(seed, n):
    return np.random.default_rng([seed, n, 1]).uniform(0.1, 3.0, n)


# --------------------------------------------------------------------------------------
# invariances


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(2))
def test_order_invariance(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    w = make_weights(seed, n)
    perm = np.random.default_rng(seed + 100).permutation(n)
    assert_array_equal(
        metric_from_rows(name, y_true[perm], y_pred[perm]),
        metric_from_rows(name, y_true, y_pred),
    )
    # weighted sums may differ in the last bit when reordered
    assert_allclose(
        metric_from_rows(name, y_true[perm], y_pred[perm], sample_weight=w[perm]),
        metric_from_rows(name, y_true, y_pred, sample_weight=w),
        rtol=1e-12,
        atol=1e-15,
        equal_nan=True,
    )


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(1))
def test_list_array_series_inputs(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    w = make_weights(seed, n)
    expected = metric_from_rows(name, y_true, y_pred, sample_weight=w)
    variants = [
        (y_true.tolist(), y_pred.tolist(), w.tolist()),
        (tuple(y_true.tolist()), tuple(y_pred.tolist()), w),
        (pd.Series(y_true), pd.Series(y_pred), pd.Series(w)),
        # a Series with a shuffled index: position, not index, pairs the rows
        (pd.Series(y_true, index=np.arange(n)[::-1]), y_pred, w),
        (y_true.reshape(-1, 1), y_pred, w),  # a column vector
        (y_true.astype(float), y_pred.astype(np.int8), w.astype(np.float32)),
    ]
    for i, (t, p, sw) in enumerate(variants):
        got = metric_from_rows(name, t, p, sample_weight=sw)
        rtol = 1e-6 if i == len(variants) - 1 else 0  # float32 weights
        assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(2))
def test_unit_weights_equal_no_weights(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    assert_array_equal(
        metric_from_rows(name, y_true, y_pred, sample_weight=np.ones(n)),
        metric_from_rows(name, y_true, y_pred),
    )
    # and a common scale does not matter either
    assert_allclose(
        metric_from_rows(name, y_true, y_pred, sample_weight=np.full(n, 0.37)),
        metric_from_rows(name, y_true, y_pred),
        rtol=1e-12,
        atol=1e-15,
        equal_nan=True,
    )


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(2))
def test_integer_weights_equal_repetition(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    w = np.random.default_rng([seed, n, 2]).integers(0, 4, n)
    w[0] = max(w[0], 1)  # at least one row carries weight
    assert_array_equal(
        metric_from_rows(name, y_true, y_pred, sample_weight=w),
        metric_from_rows(name, np.repeat(y_true, w), np.repeat(y_pred, w)),
    )


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(1))
def test_other_labels_with_pos_label(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    expected = metric_from_rows(name, y_true, y_pred)
    for neg, pos in [
        ("no", "yes"),
        ("0", "1"),
        ("b", "a"),
        (-1, 1),
        (2, 5),
        (-1.0, 2.0),
    ]:
        labels = np.array([neg, pos], dtype=object)
        t, p = labels[y_true].tolist(), labels[y_pred].tolist()
        assert_array_equal(metric_from_rows(name, t, p, pos_label=pos), expected)
        t, p = np.asarray(t), np.asarray(p)
        assert_array_equal(metric_from_rows(name, t, p, pos_label=pos), expected)
        assert_array_equal(
            metric_from_rows(name, pd.Series(t, dtype="category"), p, pos_label=pos),
            expected,
        )


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed, n", datasets(1))
def test_boolean_labels(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    expected = metric_from_rows(name, y_true, y_pred)
    t, p = y_true.astype(bool), y_pred.astype(bool)
    assert_array_equal(metric_from_rows(name, t, p, pos_label=True), expected)
    assert_array_equal(metric_from_rows(name, t, p), expected)  # True == 1
    assert_array_equal(metric_from_rows(name, t.tolist(), y_pred), expected)


# The metric obtained by swapping the positive and negative class, and the sign.
SWAP = {
    "acc": ("acc", 1),
    "prev": ("nprev", 1),
    "ppr": ("pnr", 1),
    "inacc": ("inacc", 1),
    "nprev": ("prev", 1),
    "pnr": ("ppr", 1),
    "tpr": ("tnr", 1),
    "fnr": ("fpr", 1),
    "fpr": ("fnr", 1),
    "tnr": ("tpr", 1),
    "ppv": ("npv", 1),
    "fdr": ("for", 1),
    "npv": ("ppv", 1),
    "for": ("fdr", 1),
    "mcc": ("mcc", 1),
    "mb": ("mb", -1),
}


@pytest.mark.parametrize("name", sorted(SWAP))
@pytest.mark.parametrize("seed, n", datasets(2))
def test_pos_label_swap(name, seed, n):
    y_true, y_pred = make_rows(seed, n)
    other, sign = SWAP[name]
    assert_allclose(
        metric_from_rows(name, y_true, y_pred, pos_label=0),
        sign * metric_from_rows(other, y_true, y_pred),
        rtol=1e-15,
        atol=0,
        equal_nan=True,
    )


@pytest.mark.parametrize("name", SINGLE_GROUP_METRICS)
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_grouped_equals_per_group_rows(name, seed):
    rng = np.random.default_rng(seed)
    n = 60
    y_true, y_pred = make_rows(seed, n)
    groups = rng.choice(["a", "b", "c", "d"], n, p=[0.7, 0.2, 0.07, 0.03])
    w = make_weights(seed, n)
    labels, counts = confusion_counts(
        y_true, y_pred, sensitive_features=groups, sample_weight=w
    )
    values = compute_metric(name, counts)
    for g, value in zip(labels, values):
        m = groups == g
        expected = metric_from_rows(name, y_true[m], y_pred[m], sample_weight=w[m])
        assert_allclose(value, expected, rtol=1e-12, equal_nan=True)


def test_every_single_group_metric_is_covered():
    # the tables below and SWAP do not silently drop a newly registered metric
    assert set(SWAP) | {"f1", "f1_original", "pt"} == set(SINGLE_GROUP_METRICS)
    assert set(SKLEARN) <= set(SINGLE_GROUP_METRICS)


# --------------------------------------------------------------------------------------
# agreement with scikit-learn


def _c(counts, *cells):
    return sum(counts[..., i] for i in cells)


def _margins_positive(c):
    return all(_c(c, *m) > 0 for m in ((TP, FP), (TP, FN), (TN, FP), (TN, FN)))


# name -> (scikit-learn function, kwargs, transform of its value, defined(counts))
SKLEARN = {
    "tpr": (recall_score, {}, lambda v: v, lambda c: _c(c, TP, FN) > 0),
    "fnr": (recall_score, {}, lambda v: 1 - v, lambda c: _c(c, TP, FN) > 0),
    "tnr": (recall_score, {"pos_label": 0}, lambda v: v, lambda c: _c(c, TN, FP) > 0),
    "fpr": (
        recall_score,
        {"pos_label": 0},
        lambda v: 1 - v,
        lambda c: _c(c, TN, FP) > 0,
    ),
    "ppv": (precision_score, {}, lambda v: v, lambda c: _c(c, TP, FP) > 0),
    "fdr": (precision_score, {}, lambda v: 1 - v, lambda c: _c(c, TP, FP) > 0),
    "npv": (
        precision_score,
        {"pos_label": 0},
        lambda v: v,
        lambda c: _c(c, TN, FN) > 0,
    ),
    "for": (
        precision_score,
        {"pos_label": 0},
        lambda v: 1 - v,
        lambda c: _c(c, TN, FN) > 0,
    ),
    "acc": (accuracy_score, {}, lambda v: v, lambda c: True),
    "inacc": (zero_one_loss, {}, lambda v: v, lambda c: True),
    "f1": (f1_score, {}, lambda v: v, lambda c: _c(c, TP, TP, FP, FN) > 0),
    "f1_original": (f1_score, {}, lambda v: v, lambda c: c[TP] > 0),
    "mcc": (matthews_corrcoef, {}, lambda v: v, _margins_positive),
}


def _sklearn_value(name, y_true, y_pred, sample_weight):
    func, kwargs, transform, _ = SKLEARN[name]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        value = func(y_true, y_pred, sample_weight=sample_weight, **kwargs)
    warned = any(issubclass(r.category, UndefinedMetricWarning) for r in record)
    return transform(float(value)), float(value), warned


@pytest.mark.parametrize("name", sorted(SKLEARN))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_agrees_with_sklearn(name, n, weighted):
    n_defined = 0
    for seed in SEEDS:
        y_true, y_pred = make_rows(seed, n)
        w = make_weights(seed, n) if weighted else None
        counts = confusion_counts(y_true, y_pred, sample_weight=w).counts
        ours = compute_metric(name, counts)
        expected, raw, sk_warned = _sklearn_value(name, y_true, y_pred, w)
        if SKLEARN[name][3](counts):
            n_defined += 1
            assert not sk_warned
            assert_allclose(ours, expected, rtol=1e-12, atol=1e-14)
        else:
            assert np.isnan(ours)
            if sk_warned:
                # scikit-learn substitutes 0 with a warning; we flag and return NaN
                assert raw == 0.0
                with pytest.warns(UndefinedGroupMetricWarning, match=name):
                    flagged = compute_metric(name, counts, zero_division="warn")
                assert np.isnan(flagged)
    if n >= 10:
        assert n_defined > 0  # the comparison is not vacuous


@pytest.mark.parametrize("weighted", [False, True])
def test_agrees_with_sklearn_many_datasets(weighted):
    # 80 more datasets of random size 1..12, every sklearn-backed metric
    rng = np.random.default_rng(2024 + weighted)
    checked = dict.fromkeys(SKLEARN, 0)
    for _ in range(80):
        n = int(rng.integers(1, 13))
        y_true, y_pred = make_rows(int(rng.integers(1 << 30)), n)
        w = rng.uniform(0.1, 2.0, n) if weighted else None
        counts = confusion_counts(y_true, y_pred, sample_weight=w).counts
        for name, (*_, defined) in SKLEARN.items():
            ours = compute_metric(name, counts)
            expected, _, sk_warned = _sklearn_value(name, y_true, y_pred, w)
            if defined(counts):
                checked[name] += 1
                assert not sk_warned
                assert_allclose(ours, expected, rtol=1e-12, atol=1e-14)
            else:
                assert np.isnan(ours)
    assert min(checked.values()) >= 10


@pytest.mark.parametrize(
    "name, y_true, y_pred",
    [
        ("tpr", [0, 0, 0], [0, 1, 0]),  # no positives
        ("fnr", [0, 0], [1, 1]),
        ("tnr", [1, 1, 1], [1, 0, 1]),  # no negatives
        ("fpr", [1], [0]),
        ("ppv", [1, 0, 1], [0, 0, 0]),  # no predicted positives
        ("fdr", [1, 1], [0, 0]),
        ("npv", [1, 0, 1], [1, 1, 1]),  # no predicted negatives
        ("for", [0], [1]),
        ("f1", [0, 0, 0], [0, 0, 0]),  # only true negatives
        ("f1_original", [0, 0], [0, 0]),
    ],
)
def test_sklearn_warns_and_returns_zero_where_we_return_nan(name, y_true, y_pred):
    _, raw, sk_warned = _sklearn_value(name, y_true, y_pred, None)
    assert sk_warned and raw == 0.0
    assert np.isnan(metric_from_rows(name, y_true, y_pred))
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        value = metric_from_rows(name, y_true, y_pred, zero_division="warn")
    assert np.isnan(value)
    assert all(issubclass(r.category, UndefinedMetricWarning) for r in record)
    # scikit-learn's own value is available on request
    assert metric_from_rows(name, y_true, y_pred, zero_division=0.0) == 0.0


def test_mcc_zero_margin_is_nan_not_zero():
    # scikit-learn returns 0 silently when a margin is empty; 0 would read as
    # "no correlation", so the registry returns NaN
    y_true, y_pred = [1, 1, 0], [1, 1, 1]
    assert matthews_corrcoef(y_true, y_pred) == 0.0
    assert np.isnan(metric_from_rows("mcc", y_true, y_pred))
