"""``nan_policy`` of the group aggregates: values by hand, warnings and errors.

One fold of ten people: groups ``a`` and ``b`` have positives, ``c`` has none, so
its TPR is undefined (TP + FN = 0).
"""

import warnings

import numpy as np
import pytest

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import aggregate_group_metric, disparity_intervals
from sklearn_smallfair.stats import comparative_separation_statistic

Y = np.array([1, 1, 0, 0, 1, 1, 1, 0, 0, 0])
P = np.array([1, 0, 0, 1, 1, 1, 0, 0, 1, 0])
G = np.array(["a", "a", "a", "a", "b", "b", "b", "c", "c", "c"])
TPR = {"a": 1 / 2, "b": 2 / 3}  # c: undefined


def score(**kwargs):
    return aggregate_group_metric(Y, P, sensitive_features=G, **kwargs)


@pytest.mark.parametrize(
    "aggregate, expected",
    [
        ("difference", 2 / 3 - 1 / 2),
        ("ratio", (1 / 2) / (2 / 3)),
        ("max", 2 / 3),
        ("min", 1 / 2),
        ("worst", 1 / 2),
    ],
)
def test_omit_aggregates_the_defined_groups(aggregate, expected):
    with pytest.warns(UndefinedGroupMetricWarning, match="leaves them out") as rec:
        got = score(aggregate=aggregate, nan_policy="omit")
    assert got == pytest.approx(expected, rel=1e-12)
    assert len(rec) == 1 and "'c' (n=3, empty cells: TP, FN" in str(rec[0].message)


@pytest.mark.parametrize("aggregate", ["difference", "ratio", "worst"])
def test_propagate_is_nan_and_warns_naming_the_cell(aggregate):
    with pytest.warns(UndefinedGroupMetricWarning) as rec:
        got = score(aggregate=aggregate)  # the default policy
    assert np.isnan(got)
    message = str(rec[0].message)
    assert "tpr is undefined (0/0) for group(s) 'c'" in message
    assert "TP + FN = 0" in message and f"the {aggregate!r} score is NaN" in message


def test_raise_names_group_and_cells():
    with pytest.raises(ValueError, match=r"'c' \(n=3, empty cells: TP, FN; TP \+ FN"):
        score(nan_policy="raise")


def test_defined_groups_do_not_warn():
    keep = G != "c"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for policy in ("propagate", "omit", "raise"):
            got = aggregate_group_metric(
                Y[keep], P[keep], sensitive_features=G[keep], nan_policy=policy
            )
            assert got == pytest.approx(2 / 3 - 1 / 2, rel=1e-12)


def test_zero_division_substitutes_before_the_policy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = score(zero_division=0.0, nan_policy="raise")
    assert got == pytest.approx(2 / 3 - 0.0, rel=1e-12)


def test_omit_with_fewer_than_two_groups_left_is_nan():
    keep = G != "b"
    with pytest.warns(UndefinedGroupMetricWarning, match="fewer than two groups"):
        got = aggregate_group_metric(
            Y[keep], P[keep], sensitive_features=G[keep], nan_policy="omit"
        )
    assert np.isnan(got)


def test_callable_aggregate():
    # propagate: the callable sees the NaN (a NaN-aware callable handles it)
    assert score(aggregate=np.nanmax) == pytest.approx(2 / 3, rel=1e-12)
    with pytest.warns(UndefinedGroupMetricWarning, match=r"'a?max' score is NaN"):
        assert np.isnan(score(aggregate=np.max))
    # omit: only the defined values reach it
    seen = []
    with pytest.warns(UndefinedGroupMetricWarning):
        score(aggregate=lambda v: seen.append(v.copy()) or 0.0, nan_policy="omit")
    np.testing.assert_allclose(seen[0], [TPR["a"], TPR["b"]], rtol=1e-12)


def test_omit_bound_is_the_largest_defined_bound():
    table = disparity_intervals(Y, P, sensitive_features=G, metrics=["tpr"])
    low = table["difference_low"].to_numpy(dtype=float)
    high = table["difference_high"].to_numpy(dtype=float)
    bounds = np.maximum(np.abs(low), np.abs(high))
    assert np.isnan(bounds[2]) and np.isfinite(bounds[:2]).all()
    with pytest.warns(UndefinedGroupMetricWarning, match="bound of the tpr gap"):
        got = score(aggregate="difference_upper", nan_policy="omit")
    assert got == pytest.approx(bounds[:2].max(), rel=1e-12)
    with pytest.warns(UndefinedGroupMetricWarning):
        assert np.isnan(score(aggregate="difference_upper"))


def test_ratio_of_zeros_warns():
    with pytest.warns(UndefinedGroupMetricWarning, match="every group's value is 0"):
        got = aggregate_group_metric(
            [1, 1, 1, 1],
            [0, 0, 0, 0],
            sensitive_features=["a", "a", "b", "b"],
            aggregate="ratio",
        )
    assert np.isnan(got)


def test_comparative_statistic_policies():
    # group "b" has a single label: its within cell (b, b) has no pairs
    y = [0, 1, 2, 0, 1, 2, 1, 1, 0, 2]
    s = [0.1, 0.5, 0.9, 0.2, 0.4, 0.8, 0.3, 0.6, 0.7, 0.05]
    g = ["a"] * 6 + ["b"] * 2 + ["c"] * 2
    with pytest.warns(UndefinedGroupMetricWarning, match=r"\('b', 'b'\)"):
        assert np.isnan(comparative_separation_statistic(y, s, sensitive_features=g))
    with pytest.warns(UndefinedGroupMetricWarning, match="left out"):
        omitted = comparative_separation_statistic(
            y, s, sensitive_features=g, nan_policy="omit"
        )
    with pytest.raises(ValueError, match=r"\('b', 'b'\).*nan_policy='raise'"):
        comparative_separation_statistic(y, s, sensitive_features=g, nan_policy="raise")
    # omit: the largest absolute gap of the tests that could be run
    from sklearn_smallfair.stats import comparative_separation_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gaps = (
            comparative_separation_test(y, s, sensitive_features=g)
            .frame["difference"]
            .to_numpy(dtype=float)
        )
    # the tests involving (b, b), and the cross tests of b, which share no label
    # pair with the other groups' cells (the default compares within label pairs)
    assert np.isnan(gaps).sum() == 4
    assert omitted == pytest.approx(np.nanmax(np.abs(gaps)), rel=1e-12)
    assert omitted == 1.0  # a defined test with comparative TPRs 1 and 0
