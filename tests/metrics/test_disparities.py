"""Tests of the named disparities (demographic parity, equalized odds, EOD, AOD)."""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import (
    GroupMetricFrame,
    average_odds_difference,
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    signed_equal_opportunity_difference,
)


def _rates(y_true, y_pred, mask):
    """Selection rate, TPR and FPR of the rows in ``mask``, by hand."""
    t, p = y_true[mask], y_pred[mask]
    return p.mean(), p[t == 1].mean(), p[t == 0].mean()


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    n = 500
    groups = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    y_true = rng.integers(0, 2, n)
    bias = np.select([groups == "a", groups == "b"], [0.8, 0.65], 0.55)
    y_pred = np.where(rng.random(n) < bias, y_true, 1 - y_true)
    return y_true, y_pred, groups


def test_against_hand_computation(data):
    y_true, y_pred, groups = data
    per = np.array([_rates(y_true, y_pred, groups == g) for g in "abc"])
    whole = np.array(_rates(y_true, y_pred, np.ones_like(groups, dtype=bool)))
    sr, tpr, fpr = per.T
    kw = {"sensitive_features": groups}

    def ratio_to(values, overall):
        return min(min(v, overall) / max(v, overall) for v in values)

    assert demographic_parity_difference(y_true, y_pred, **kw) == pytest.approx(
        sr.max() - sr.min()
    )
    assert demographic_parity_difference(
        y_true, y_pred, method="to_overall", **kw
    ) == pytest.approx(np.abs(sr - whole[0]).max())
    assert demographic_parity_ratio(y_true, y_pred, **kw) == pytest.approx(
        sr.min() / sr.max()
    )
    assert demographic_parity_ratio(
        y_true, y_pred, method="to_overall", **kw
    ) == pytest.approx(ratio_to(sr, whole[0]))
    d_tpr, d_fpr = tpr.max() - tpr.min(), fpr.max() - fpr.min()
    assert equalized_odds_difference(y_true, y_pred, **kw) == pytest.approx(
        max(d_tpr, d_fpr)
    )
    assert equalized_odds_difference(y_true, y_pred, agg="mean", **kw) == pytest.approx(
        (d_tpr + d_fpr) / 2
    )
    o_tpr, o_fpr = np.abs(tpr - whole[1]).max(), np.abs(fpr - whole[2]).max()
    assert equalized_odds_difference(
        y_true, y_pred, method="to_overall", **kw
    ) == pytest.approx(max(o_tpr, o_fpr))
    r_tpr, r_fpr = tpr.min() / tpr.max(), fpr.min() / fpr.max()
    assert equalized_odds_ratio(y_true, y_pred, **kw) == pytest.approx(
        min(r_tpr, r_fpr)
    )
    assert equalized_odds_ratio(y_true, y_pred, agg="mean", **kw) == pytest.approx(
        (r_tpr + r_fpr) / 2
    )
    assert equalized_odds_ratio(
        y_true, y_pred, method="to_overall", **kw
    ) == pytest.approx(min(ratio_to(tpr, whole[1]), ratio_to(fpr, whole[2])))


def test_the_frame_gives_the_same_gaps(data):
    y_true, y_pred, groups = data
    frame = GroupMetricFrame(
        metrics=["ppr", "tpr", "fpr"],
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    for method in ("between_groups", "to_overall"):
        gaps = frame.difference(method=method)
        ratios = frame.ratio(method=method)
        kw = {"sensitive_features": groups, "method": method}
        assert demographic_parity_difference(y_true, y_pred, **kw) == pytest.approx(
            gaps["ppr"]
        )
        assert equalized_odds_difference(y_true, y_pred, **kw) == pytest.approx(
            max(gaps["tpr"], gaps["fpr"])
        )
        assert equalized_odds_ratio(y_true, y_pred, **kw) == pytest.approx(
            min(ratios["tpr"], ratios["fpr"])
        )


def test_eod_and_aod_with_privileged_and_unprivileged_groups(data):
    y_true, y_pred, groups = data
    _, tpr_a, fpr_a = _rates(y_true, y_pred, groups == "a")
    _, tpr_rest, fpr_rest = _rates(y_true, y_pred, groups != "a")
    _, tpr_c, fpr_c = _rates(y_true, y_pred, groups == "c")
    kw = {"sensitive_features": groups, "privileged_group": "a"}
    assert signed_equal_opportunity_difference(y_true, y_pred, **kw) == pytest.approx(
        tpr_rest - tpr_a
    )
    assert average_odds_difference(y_true, y_pred, **kw) == pytest.approx(
        ((tpr_rest - tpr_a) + (fpr_rest - fpr_a)) / 2
    )
    assert signed_equal_opportunity_difference(
        y_true, y_pred, unprivileged_group="c", **kw
    ) == pytest.approx(tpr_c - tpr_a)
    assert average_odds_difference(
        y_true, y_pred, unprivileged_group=["c"], **kw
    ) == pytest.approx(((tpr_c - tpr_a) + (fpr_c - fpr_a)) / 2)
    # privileged "a" is disadvantaged less: the unprivileged side's TPR is lower
    assert signed_equal_opportunity_difference(y_true, y_pred, **kw) < 0
    # several privileged groups are pooled
    _, tpr_ab, _ = _rates(y_true, y_pred, groups != "c")
    assert signed_equal_opportunity_difference(
        y_true, y_pred, sensitive_features=groups, privileged_group=["a", "b"]
    ) == pytest.approx(tpr_c - tpr_ab)


def test_privileged_group_defaults_to_label_one(data):
    y_true, y_pred, groups = data
    sex = (groups == "a").astype(int)
    assert signed_equal_opportunity_difference(
        y_true, y_pred, sensitive_features=sex
    ) == pytest.approx(
        signed_equal_opportunity_difference(
            y_true, y_pred, sensitive_features=groups, privileged_group="a"
        )
    )
    assert average_odds_difference(
        y_true, y_pred, sensitive_features=sex, privileged_group=0
    ) == pytest.approx(-average_odds_difference(y_true, y_pred, sensitive_features=sex))


def test_integer_weights_equal_repetition(data):
    y_true, y_pred, groups = data
    w = np.random.default_rng(1).integers(1, 4, len(y_true))
    rep = {
        "y_true": np.repeat(y_true, w),
        "y_pred": np.repeat(y_pred, w),
        "sensitive_features": np.repeat(groups, w),
    }
    weighted = {"y_true": y_true, "y_pred": y_pred, "sensitive_features": groups}
    for func in (
        demographic_parity_difference,
        demographic_parity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
    ):
        assert func(**weighted, sample_weight=w) == pytest.approx(func(**rep))
        assert func(**weighted, sample_weight=w) != pytest.approx(func(**weighted))
    for func in (signed_equal_opportunity_difference, average_odds_difference):
        assert func(**weighted, sample_weight=w, privileged_group="b") == pytest.approx(
            func(**rep, privileged_group="b")
        )


@pytest.fixture
def no_positives():
    """Group "b" has no positives: its TPR is undefined (0/0)."""
    y_true = np.array([1, 1, 0, 0, 0, 0, 0, 0])
    y_pred = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    groups = np.array(["a"] * 4 + ["b"] * 4)
    return y_true, y_pred, groups


def test_undefined_rate_gives_nan_with_a_warning(no_positives):
    y_true, y_pred, groups = no_positives
    kw = {"sensitive_features": groups}
    with pytest.warns(UndefinedGroupMetricWarning, match=r"'b' \(n=4, n_pos=0\)"):
        assert np.isnan(equalized_odds_difference(y_true, y_pred, **kw))
    with pytest.warns(UndefinedGroupMetricWarning, match="tpr is undefined"):
        assert np.isnan(equalized_odds_ratio(y_true, y_pred, **kw))
    with pytest.warns(UndefinedGroupMetricWarning, match="'unprivileged'"):
        assert np.isnan(
            signed_equal_opportunity_difference(
                y_true, y_pred, privileged_group="a", **kw
            )
        )
    with pytest.warns(UndefinedGroupMetricWarning):
        assert np.isnan(
            average_odds_difference(y_true, y_pred, privileged_group="a", **kw)
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(
            equalized_odds_difference(y_true, y_pred, zero_division=np.nan, **kw)
        )
        # a substituted TPR of 0 (fairlearn's value) makes a perfect classifier look
        # maximally unfair: TPR 1 in "a" against 0 in "b"
        assert equalized_odds_difference(
            y_true, y_pred, zero_division=0.0, **kw
        ) == pytest.approx(1.0)
        assert equalized_odds_difference(
            y_true, y_pred, zero_division=1.0, **kw
        ) == pytest.approx(0.25)
        # the selection rate is always defined
        assert demographic_parity_difference(y_true, y_pred, **kw) == pytest.approx(
            0.25
        )


def test_ratio_of_zero_rates_is_nan():
    y_true = np.array([1, 0, 1, 0])
    y_pred = np.array([1, 0, 1, 0])  # no false positive anywhere
    groups = ["a", "a", "b", "b"]
    with pytest.warns(UndefinedGroupMetricWarning, match="FPR ratio is 0/0"):
        assert np.isnan(equalized_odds_ratio(y_true, y_pred, sensitive_features=groups))
    assert equalized_odds_difference(y_true, y_pred, sensitive_features=groups) == 0.0


@pytest.mark.parametrize(
    ("func", "kwargs", "error", "match"),
    [
        (demographic_parity_difference, {"method": "pairwise"}, ValueError, "method"),
        (equalized_odds_difference, {"agg": "max"}, ValueError, "agg"),
        (equalized_odds_ratio, {"zero_division": 2.0}, ValueError, "zero_division"),
        (
            equalized_odds_difference,
            {"sensitive_features": ["a"] * 6},
            ValueError,
            "single group",
        ),
        (
            demographic_parity_ratio,
            {"sensitive_features": ["a", "b"]},
            ValueError,
            "sensitive_features has 2 rows",
        ),
        (demographic_parity_difference, {"y_pred": [1, 0]}, ValueError, "inconsistent"),
        (
            signed_equal_opportunity_difference,
            {"privileged_group": "z"},
            ValueError,
            r"privileged_group='z' is not a group",
        ),
        (
            average_odds_difference,
            {"privileged_group": "a", "unprivileged_group": ["a", "b"]},
            ValueError,
            "both privileged_group and unprivileged_group",
        ),
        (
            signed_equal_opportunity_difference,
            {"privileged_group": ["a", "b"]},
            ValueError,
            "every group",
        ),
        (
            signed_equal_opportunity_difference,
            {},
            ValueError,
            r"privileged_group=1 is not a group; the groups are \['a', 'b'\]",
        ),
    ],
)
def test_hostile_input(func, kwargs, error, match):
    args = {
        "y_true": [1, 0, 1, 0, 1, 0],
        "y_pred": [1, 0, 0, 0, 1, 1],
        "sensitive_features": ["a", "a", "b", "b", "b", "a"],
        **kwargs,
    }
    with pytest.raises(error, match=match):
        func(**args)


_ROW = st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 2))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    st.lists(_ROW, min_size=2, max_size=30),
    st.booleans(),
    st.lists(st.integers(0, 1), min_size=6, max_size=6),
)
def test_nan_exactly_where_a_rate_is_missing(rows, complete, preds):
    """Small random data: NaN iff some group lacks positives or negatives, and
    otherwise the largest gap of the per-group rates computed by hand.

    With ``complete``, every group gets a positive and a negative row (with
    drawn predictions), so about half of the cases are defined.
    """
    if complete:
        rows = rows + [(k % 2, preds[k], k // 2) for k in range(6)]
    y_true, y_pred, groups = (np.array(c) for c in zip(*rows))
    labels = np.unique(groups)
    assume(len(labels) >= 2)
    tpr, fpr = [], []
    for g in labels:
        t, p = y_true[groups == g], y_pred[groups == g]
        tpr.append(p[t == 1].mean() if (t == 1).any() else np.nan)
        fpr.append(p[t == 0].mean() if (t == 0).any() else np.nan)
    tpr, fpr = np.array(tpr), np.array(fpr)
    got = equalized_odds_difference(
        y_true, y_pred, sensitive_features=groups, zero_division=np.nan
    )
    if np.isnan(tpr).any() or np.isnan(fpr).any():
        assert np.isnan(got)
    else:
        gaps = (np.ptp(tpr), np.ptp(fpr))
        assert got == pytest.approx(max(gaps))
        eo_ratio = equalized_odds_ratio(
            y_true, y_pred, sensitive_features=groups, zero_division=np.nan
        )
        if tpr.max() > 0 and fpr.max() > 0:
            assert eo_ratio == pytest.approx(
                min(tpr.min() / tpr.max(), fpr.min() / fpr.max())
            )
