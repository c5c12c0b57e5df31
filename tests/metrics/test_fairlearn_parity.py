"""The functions named like fairlearn's compute fairlearn's quantity with
fairlearn's arguments, and GroupMetricFrame agrees with fairlearn's MetricFrame.

fairlearn counts an undefined rate (a group without positives for the TPR,
without negatives for the FPR) as 0; ours is NaN with a warning by default, and
``zero_division=0.0`` reproduces fairlearn. A ratio 0/0 (a rate 0 in every group
compared) is NaN in ours, with a warning.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import (
    GroupMetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
)

fl = pytest.importorskip("fairlearn.metrics")

METHODS = ("between_groups", "to_overall")
AGGS = ("worst_case", "mean")
RTOL = ATOL = 1e-12


def _data(seed, *, weighted):
    """Random binary rows in 2 to 5 groups of 2 to 15 rows, often with a group
    without positives or without negatives."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 16, size=rng.integers(2, 6))
    groups = np.repeat([f"g{i}" for i in range(sizes.size)], sizes)
    n = groups.size
    y_true = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(int)
    y_pred = np.where(rng.random(n) < 0.7, y_true, 1 - y_true)
    weight = rng.uniform(0.5, 3.0, n) if weighted else None
    return y_true, y_pred, groups, weight


def _has_undefined_rate(y_true, groups):
    """Whether a group has no positives or no negatives (its TPR or FPR is 0/0)."""
    return any(
        y_true[groups == g].min() == y_true[groups == g].max() for g in set(groups)
    )


def _ours(func, *args, **kwargs):
    """``(value, ratio_undefined)``: ours, and whether a ratio was 0/0."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = func(*args, **kwargs)
    zero = any(
        issubclass(w.category, UndefinedGroupMetricWarning) and "0/0" in str(w.message)
        for w in caught
        if "ratio" in str(w.message)
    )
    return value, zero


#: Four data sets in the quick suite, fifty under the ``slow`` marker.
CASES = [
    pytest.param(seed, weighted, marks=() if seed < 2 else pytest.mark.slow)
    for seed in range(25)
    for weighted in (False, True)
]


@pytest.mark.parametrize("seed, weighted", CASES)
def test_functions_match_fairlearn(seed, weighted):
    y_true, y_pred, groups, weight = _data(seed, weighted=weighted)
    kw = {"sensitive_features": groups, "sample_weight": weight}
    # fairlearn's value of an undefined rate is 0
    zd = {"zero_division": 0.0}
    pairs = [
        (demographic_parity_difference, fl.demographic_parity_difference, {}, {}),
        (demographic_parity_ratio, fl.demographic_parity_ratio, {}, {}),
        (equal_opportunity_difference, fl.equal_opportunity_difference, {}, zd),
        (equal_opportunity_ratio, fl.equal_opportunity_ratio, {}, zd),
    ]
    for agg in AGGS:
        pairs += [
            (equalized_odds_difference, fl.equalized_odds_difference, {"agg": agg}, zd),
            (equalized_odds_ratio, fl.equalized_odds_ratio, {"agg": agg}, zd),
        ]
    checked = 0
    for ours_func, theirs_func, args, extra in pairs:
        for method in METHODS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = theirs_func(y_true, y_pred, method=method, **args, **kw)
            ours, zero = _ours(
                ours_func, y_true, y_pred, method=method, **args, **extra, **kw
            )
            if zero:
                # a ratio 0/0: NaN in ours (fairlearn's "worst_case" skips it)
                assert np.isnan(ours)
                continue
            assert ours == pytest.approx(theirs, rel=RTOL, abs=ATOL), (
                ours_func.__name__,
                method,
                args,
            )
            checked += 1
    assert checked >= 8


@pytest.mark.parametrize(
    "seed",
    [pytest.param(s, marks=() if s < 4 else pytest.mark.slow) for s in range(20)],
)
def test_defaults_match_fairlearn_where_every_rate_is_defined(seed):
    y_true, y_pred, groups, _ = _data(seed, weighted=False)
    if _has_undefined_rate(y_true, groups):
        # ours is NaN with a warning where fairlearn substitutes 0
        with pytest.warns(UndefinedGroupMetricWarning, match="undefined"):
            assert np.isnan(
                equalized_odds_difference(y_true, y_pred, sensitive_features=groups)
            )
        return
    for method in METHODS:
        for agg in AGGS:
            with warnings.catch_warnings():
                warnings.simplefilter("error", UndefinedGroupMetricWarning)
                ours = equalized_odds_difference(
                    y_true, y_pred, sensitive_features=groups, method=method, agg=agg
                )
            theirs = fl.equalized_odds_difference(
                y_true, y_pred, sensitive_features=groups, method=method, agg=agg
            )
            assert ours == pytest.approx(theirs, rel=RTOL, abs=ATOL)
        ours = equal_opportunity_difference(
            y_true, y_pred, sensitive_features=groups, method=method
        )
        theirs = fl.equal_opportunity_difference(
            y_true, y_pred, sensitive_features=groups, method=method
        )
        assert ours == pytest.approx(theirs, rel=RTOL, abs=ATOL)


def test_undefined_rate_differs_only_by_the_substituted_zero():
    # group "b" has no positives: fairlearn's TPR there is 0
    y_true = np.array([1, 1, 0, 0, 0, 0, 0, 0])
    y_pred = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    groups = np.array(["a"] * 4 + ["b"] * 4)
    theirs = fl.equalized_odds_difference(y_true, y_pred, sensitive_features=groups)
    with pytest.warns(UndefinedGroupMetricWarning, match=r"'b' \(n=4, n_pos=0\)"):
        assert np.isnan(
            equalized_odds_difference(y_true, y_pred, sensitive_features=groups)
        )
    assert theirs == equalized_odds_difference(
        y_true, y_pred, sensitive_features=groups, zero_division=0.0
    )


def _fairlearn_labels(index):
    """fairlearn's MultiIndex of intersections as "a|b" labels."""
    if isinstance(index, pd.MultiIndex):
        return pd.Index(
            ["|".join(map(str, t)) for t in index], name="|".join(index.names)
        )
    return index


@pytest.mark.parametrize("seed", range(3))
def test_group_metric_frame_matches_metric_frame(seed):
    from sklearn.metrics import precision_score, recall_score, roc_auc_score

    rng = np.random.default_rng(100 + seed)
    n = 400
    groups = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    sex = rng.choice(["f", "m"], n)
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.75, y_true, 1 - y_true)
    score = y_pred * 0.6 + 0.2 * y_true + 0.1 * rng.random(n)
    for features in (groups, pd.DataFrame({"g": groups, "sex": sex})):
        for metrics, other in (
            (
                {"recall": recall_score, "precision": precision_score, "tpr": "tpr"},
                {"y_pred": y_pred},
            ),
            ({"auc": roc_auc_score}, {"y_score": score}),
        ):
            callables = {k: v for k, v in metrics.items() if callable(v)}
            theirs = fl.MetricFrame(
                metrics=callables,
                y_true=y_true,
                y_pred=next(iter(other.values())),
                sensitive_features=features,
            )
            ours = GroupMetricFrame(
                metrics=metrics, y_true=y_true, sensitive_features=features, **other
            )
            expected = theirs.by_group.astype(float)
            expected.index = _fairlearn_labels(expected.index)
            if "tpr" in metrics:
                expected["tpr"] = expected["recall"]
            pd.testing.assert_frame_equal(
                ours.by_group, expected, check_names=False, rtol=RTOL, atol=ATOL
            )
            aggregates = [("group_min", {}), ("group_max", {})] + [
                (name, {"method": method})
                for name in ("difference", "ratio")
                for method in METHODS
            ]
            for name, kwargs in aggregates:
                want = getattr(theirs, name)(**kwargs).astype(float)
                got = getattr(ours, name)(**kwargs)[list(callables)]
                pd.testing.assert_series_equal(got, want, rtol=RTOL, atol=ATOL)
            pd.testing.assert_series_equal(
                ours.overall[list(callables)],
                theirs.overall.astype(float),
                rtol=RTOL,
                atol=ATOL,
            )
