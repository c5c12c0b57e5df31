"""Tests of the separation test (equal TPR and FPR across groups).

Statistics are checked on hand-made data (z and p computed by hand) and through
the estimator; the comparative test, and its agreement with this one, are in
``test_comparative.py``.
"""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.stats import (
    SeparationResult,
    SeparationTest,
    adjust_pvalues,
    separation_test,
)

ALPHA = 0.05


# =====================================================================================
# 1. Closed forms
# =====================================================================================
def _hand_data():
    # group a: 10 positives (8 predicted positive), 10 negatives (2 FP)
    # group b: 5 positives (2 TP), 5 negatives (3 FP)
    y_true = [1] * 10 + [0] * 10 + [1] * 5 + [0] * 5
    y_pred = [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8 + [1] * 2 + [0] * 3
    y_pred += [1] * 3 + [0] * 2
    groups = ["a"] * 20 + ["b"] * 10
    return y_true, y_pred, groups


def test_separation_closed_form():
    y_true, y_pred, groups = _hand_data()
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert isinstance(res, SeparationResult)
    # TPR_b = 0.4, TPR_a = 0.8: se^2 = 0.4*0.6/5 + 0.8*0.2/10 = 0.064,
    # z = -0.4 / sqrt(0.064) = -sqrt(2.5); FPR_b = 0.6, FPR_a = 0.2: z = +sqrt(2.5)
    z = math.sqrt(2.5)
    p = math.erfc(z / math.sqrt(2))
    assert res.z_tpr == pytest.approx(-z, rel=1e-12)
    assert res.z_fpr == pytest.approx(z, rel=1e-12)
    assert res.pvalue_tpr == pytest.approx(p, rel=1e-12)
    assert res.pvalue_fpr == pytest.approx(p, rel=1e-12)
    assert res.pvalue_tpr == pytest.approx(0.113846, abs=1e-6)
    assert res.violated is False
    assert separation_test(
        y_true, y_pred, sensitive_features=groups, alpha=0.2
    ).violated
    g = res.groups.set_index("group")
    assert g.loc["a", ["n", "n_pos", "n_neg", "tp", "fp"]].tolist() == [
        20,
        10,
        10,
        8,
        2,
    ]
    assert g.loc["b", ["n", "n_pos", "n_neg", "tp", "fp"]].tolist() == [10, 5, 5, 2, 3]
    assert g["tpr"].tolist() == [0.8, 0.4] and g["fpr"].tolist() == [0.2, 0.6]
    frame = res.to_frame()
    assert frame["metric"].tolist() == ["tpr", "fpr"]
    assert frame["group_a"].tolist() == ["b", "b"]  # group "1": second sorted label
    assert frame["group_b"].tolist() == ["a", "a"]
    assert frame["n_a"].tolist() == [5, 5] and frame["n_b"].tolist() == [10, 10]
    np.testing.assert_allclose(frame["difference"], [-0.4, 0.4])
    np.testing.assert_allclose(frame["p_adjusted"], frame["p_value"])
    assert res.pvalues.index.names == ["metric", "group_a", "group_b"]
    assert res.pvalues.index.tolist() == [("tpr", "b", "a"), ("fpr", "b", "a")]
    np.testing.assert_array_equal(res.pvalues, frame["p_adjusted"])
    np.testing.assert_array_equal(res.reject, frame["reject"])
    assert "SeparationResult(violated=False" in repr(res)
    frame.loc[0, "z"] = 0.0  # to_frame returns a copy
    assert res.frame.loc[0, "z"] != 0.0


def test_separation_zero_one_labels_and_sign():
    # with 0/1 groups, group "1" is 1; its higher TPR gives z > 0
    y_true = [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0]
    y_pred = [1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    groups = [1] * 6 + [0] * 6
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert res.z_tpr > 0
    assert res.frame["group_a"].iloc[0] == 1


def test_separation_sample_weight_equals_repetition_and_pos_label():
    y_true, y_pred, groups = _hand_data()
    w = np.random.default_rng(0).integers(1, 4, len(y_true))
    weighted = separation_test(
        y_true, y_pred, sensitive_features=groups, sample_weight=w
    )
    rep = separation_test(
        np.repeat(y_true, w),
        np.repeat(y_pred, w),
        sensitive_features=np.repeat(groups, w),
    )
    pd.testing.assert_frame_equal(weighted.frame, rep.frame, check_dtype=False)
    lab = {1: "yes", 0: "no"}
    strings = separation_test(
        [lab[v] for v in y_true],
        [lab[v] for v in y_pred],
        sensitive_features=groups,
        pos_label="yes",
    )
    plain = separation_test(y_true, y_pred, sensitive_features=groups)
    pd.testing.assert_frame_equal(strings.frame, plain.frame)


def test_separation_more_groups_pairwise_with_correction():
    rng = np.random.default_rng(3)
    n = 900
    groups = rng.choice(["a", "b", "c"], size=n)
    y_true = rng.integers(0, 2, n)
    bias = np.where(groups == "c", 0.3, 0.0)
    y_pred = (rng.random(n) < 0.3 + 0.4 * y_true + bias).astype(int)
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    frame = res.frame
    assert len(frame) == 6
    tpr = frame[frame["metric"] == "tpr"]
    assert list(zip(tpr["group_a"], tpr["group_b"])) == [
        ("b", "a"),
        ("c", "a"),
        ("c", "b"),
    ]
    for metric in ("tpr", "fpr"):
        sub = frame[frame["metric"] == metric]
        np.testing.assert_allclose(
            sub["p_adjusted"], adjust_pvalues(sub["p_value"].to_numpy(), "holm")
        )
    assert res.pvalue_tpr == pytest.approx(tpr["p_adjusted"].min())
    assert np.isnan(res.z_tpr) and np.isnan(res.z_fpr)
    assert res.violated  # group c has higher rates
    raw = separation_test(y_true, y_pred, sensitive_features=groups, correction=None)
    np.testing.assert_allclose(raw.frame["p_adjusted"], raw.frame["p_value"])
    assert raw.pvalue_fpr <= res.pvalue_fpr


def test_separation_undefined_rate_warns_and_gives_nan_test():
    y_true = [1, 1, 0, 0, 1, 1, 1]
    y_pred = [1, 0, 0, 1, 0, 0, 1]
    groups = ["a"] * 4 + ["b"] * 3  # b has no negatives: FPR_b undefined
    with pytest.warns(UndefinedGroupMetricWarning, match=r"FPR is undefined.*'b'"):
        res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert np.isnan(res.groups["fpr"].iloc[1])
    assert np.isnan(res.pvalue_fpr) and np.isnan(res.z_fpr)
    assert not np.isnan(res.pvalue_tpr)
    assert res.violated == (res.pvalue_tpr <= ALPHA)


# =====================================================================================
# 2. Bad input
# =====================================================================================
def test_separation_bad_input():
    y_true, y_pred, groups = _hand_data()
    with pytest.raises(ValueError, match="y_true must be binary"):
        separation_test([0, 1, 2, 1], [0, 1, 1, 1], sensitive_features=["a", "b"] * 2)
    with pytest.raises(ValueError, match="continuous values"):
        separation_test([0.5, 1.2], [0, 1], sensitive_features=["a", "b"])
    with pytest.raises(ValueError, match="at least two are needed"):
        separation_test(y_true, y_pred, sensitive_features=["a"] * len(y_true))
    with pytest.raises(ValueError, match="inconsistent lengths"):
        separation_test(y_true, y_pred[:-1], sensitive_features=groups)
    with pytest.raises(ValueError, match="sensitive_features has 3 rows"):
        separation_test(y_true, y_pred, sensitive_features=["a", "b", "c"])
    with pytest.raises(ValueError, match="missing or non-finite"):
        separation_test([1, np.nan], [1, 0], sensitive_features=["a", "b"])
    with pytest.raises(ValueError, match="alpha must be"):
        separation_test(y_true, y_pred, sensitive_features=groups, alpha=1.5)
    with pytest.raises(ValueError, match="correction must be one of"):
        separation_test(y_true, y_pred, sensitive_features=groups, correction="sidak")
    with pytest.raises(ValueError, match="sensitive_features is required"):
        separation_test(y_true, y_pred, sensitive_features=None)


# =====================================================================================
# 3. Estimator and the pooled variance
# =====================================================================================
def test_separation_estimator():
    y_true, y_pred, groups = _hand_data()
    est = SeparationTest(alpha=0.2, correction="bonferroni")
    assert est.get_params() == {
        "alpha": 0.2,
        "correction": "bonferroni",
        "pos_label": 1,
        "variance": "unpooled",
    }
    assert repr(est) == "SeparationTest(alpha=0.2, correction='bonferroni')"
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    assert not hasattr(twin, "result_")
    assert est.fit(y_true, y_pred, sensitive_features=groups) is est
    res = separation_test(
        y_true, y_pred, sensitive_features=groups, alpha=0.2, correction="bonferroni"
    )
    pd.testing.assert_frame_equal(est.results_, res.frame)
    pd.testing.assert_frame_equal(est.groups_, res.groups)
    assert est.violated_ is True
    pd.testing.assert_series_equal(est.pvalues_, res.pvalues)
    pd.testing.assert_series_equal(est.reject_, res.reject)
    assert est.pvalues_.loc["tpr"].min() == pytest.approx(res.pvalue_tpr)
    est.set_params(alpha=0.05).fit(y_true, y_pred, sensitive_features=groups)
    assert est.violated_ is False
    pickle.loads(pickle.dumps(est))


def test_pooled_variance_keeps_its_size_with_a_small_group():
    # null law: both groups FPR 0.12, one group with 5 negatives. The unpooled
    # Wald variance of a sample with FP = 0 is 0 and the test rejects whenever
    # that happens (0.88^5 = 0.53 of the time); the pooled score test does not.
    rng = np.random.default_rng(0)
    reps = 4000
    fp_small = rng.binomial(5, 0.12, reps)
    fp_big = rng.binomial(171, 0.12, reps)
    from sklearn_smallfair.stats._wald import wald_test

    _, p_unpooled = wald_test(fp_small, 5, fp_big, 171)
    _, p_pooled = wald_test(fp_small, 5, fp_big, 171, pooled=True)
    assert np.mean(p_unpooled < 0.05) > 0.45
    assert np.mean(p_pooled < 0.05) < 0.08
    # closed form of the pooled statistic
    z, _ = wald_test(1, 5, 20, 171, pooled=True)
    pp = 21 / 176
    assert z == pytest.approx(
        (1 / 5 - 20 / 171) / np.sqrt(pp * (1 - pp) * (1 / 5 + 1 / 171))
    )
    # through separation_test and its estimator
    y_true = np.r_[np.ones(50), np.zeros(171), np.ones(5), np.zeros(5)]
    y_pred = np.r_[np.ones(40), np.zeros(10), np.ones(20), np.zeros(151), np.ones(4),
                   np.zeros(1), np.zeros(5)]  # fmt: skip
    groups = ["big"] * 221 + ["small"] * 10
    unpooled = separation_test(y_true, y_pred, sensitive_features=groups)
    pooled = separation_test(
        y_true, y_pred, sensitive_features=groups, variance="pooled"
    )
    assert unpooled.violated and unpooled.pvalue_fpr < 1e-5
    assert not pooled.violated and pooled.variance == "pooled"
    est = SeparationTest(variance="pooled").fit(
        y_true, y_pred, sensitive_features=groups
    )
    assert est.pvalues_.loc[("fpr", "small", "big")] == pooled.pvalue_fpr
    with pytest.raises(ValueError, match="variance must be one of"):
        separation_test(y_true, y_pred, sensitive_features=groups, variance="exact")
