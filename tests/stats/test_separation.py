"""Tests of the separation test (equal TPR and FPR across groups).

Statistics are checked on hand-made data (z and p computed by hand, the exact
test against scipy), through the estimator, and by their size under the null
measured by simulation at group sizes 5 to 200 (``slow``); the comparative test,
and its agreement with this one, are in ``test_comparative.py``. The exact test
itself is checked in ``test_exact.py``.
"""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import barnard_exact

from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.stats import (
    SeparationResult,
    adjust_pvalues,
    separation_test,
)
from sklearn_smallfair.stats._exact import (
    BERGER_BOOS_GAMMA,
    MAX_EXACT_N,
    barnard_exact_pvalues,
    score_statistic,
)
from sklearn_smallfair.stats._permutation import two_sample_permutation_pvalues
from sklearn_smallfair.stats._separation import (
    _TESTS,
    AUTO_MIN_EXPECTED,
    _choose,
    _compare,
)
from sklearn_smallfair.stats._wald import wald_test

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
    # the published test, method="wald": z and p by hand
    y_true, y_pred, groups = _hand_data()
    res = separation_test(y_true, y_pred, sensitive_features=groups, method="wald")
    assert isinstance(res, SeparationResult)
    assert res.method == "wald" and res.frame["method"].tolist() == ["wald"] * 2
    # TPR_b = 0.4, TPR_a = 0.8: se^2 = 0.4*0.6/5 + 0.8*0.2/10 = 0.064,
    # z = -0.4 / sqrt(0.064) = -sqrt(2.5); FPR_b = 0.6, FPR_a = 0.2: z = +sqrt(2.5)
    z = math.sqrt(2.5)
    p = math.erfc(z / math.sqrt(2))
    assert res.z_tpr == pytest.approx(-z, rel=1e-12)
    assert res.z_fpr == pytest.approx(z, rel=1e-12)
    assert res.p_value_tpr == pytest.approx(p, rel=1e-12)
    assert res.p_value_fpr == pytest.approx(p, rel=1e-12)
    assert res.p_value_tpr == pytest.approx(0.113846, abs=1e-6)
    assert res.violated is False
    assert separation_test(
        y_true, y_pred, sensitive_features=groups, alpha=0.2, method="wald"
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
    assert res.p_value_tpr == pytest.approx(tpr["p_adjusted"].min())
    assert np.isnan(res.z_tpr) and np.isnan(res.z_fpr)
    assert res.violated  # group c has higher rates
    raw = separation_test(y_true, y_pred, sensitive_features=groups, correction=None)
    np.testing.assert_allclose(raw.frame["p_adjusted"], raw.frame["p_value"])
    assert raw.p_value_fpr <= res.p_value_fpr


def test_separation_undefined_rate_warns_and_gives_nan_test():
    y_true = [1, 1, 0, 0, 1, 1, 1]
    y_pred = [1, 0, 0, 1, 0, 0, 1]
    groups = ["a"] * 4 + ["b"] * 3  # b has no negatives: FPR_b undefined
    with pytest.warns(UndefinedGroupMetricWarning, match=r"FPR is undefined.*'b'"):
        res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert np.isnan(res.groups["fpr"].iloc[1])
    assert np.isnan(res.p_value_fpr) and np.isnan(res.z_fpr)
    assert not np.isnan(res.p_value_tpr)
    assert res.violated == (res.p_value_tpr <= ALPHA)


def test_score_and_exact_closed_forms():
    y_true, y_pred, groups = _hand_data()
    score = separation_test(y_true, y_pred, sensitive_features=groups, method="score")
    # TPR: 2/5 against 8/10, pooled 10/15
    pp = 10 / 15
    z = (0.4 - 0.8) / math.sqrt(pp * (1 - pp) * (1 / 5 + 1 / 10))
    assert score.z_tpr == pytest.approx(z, rel=1e-12)
    assert score.p_value_tpr == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    assert score.frame["method"].tolist() == ["score", "score"]
    # the default uses the exact test on these small cells: scipy's Barnard test
    res = separation_test(y_true, y_pred, sensitive_features=groups)
    assert res.method == "auto" and res.frame["method"].tolist() == ["exact"] * 2
    assert res.z_tpr == score.z_tpr  # the statistic is the score statistic
    # Berger and Boos' form of the exact unconditional test: the supremum over a
    # 99.9 % interval of the common rate, plus 0.001
    exact = barnard_exact_pvalues([2, 3], 5, [8, 2], 10, gamma=BERGER_BOOS_GAMMA)
    np.testing.assert_allclose([res.p_value_tpr, res.p_value_fpr], exact, rtol=1e-12)
    # FPR 3/5 against 2/10 mirrors TPR 2/5 against 8/10 (successes and failures
    # exchanged): the same p-value. Barnard's supremum over all rates (gamma = 0)
    # is scipy's on the FPR table; on the TPR table floating-point noise splits a
    # tie and drops it from scipy's region
    assert exact[0] == pytest.approx(exact[1], abs=1e-12)
    barnard = barnard_exact_pvalues([2, 3], 5, [8, 2], 10)
    fpr = barnard_exact([[3, 2], [2, 8]], pooled=True).pvalue
    np.testing.assert_allclose(barnard, [fpr, fpr], atol=1e-9)
    assert barnard_exact([[2, 8], [3, 2]], pooled=True).pvalue < fpr - 1e-3
    assert (exact <= barnard + BERGER_BOOS_GAMMA + 1e-12).all()


def test_perfect_small_group_against_a_large_one():
    # a group of 10 classified perfectly against 1,000 people with TPR 0.8: the
    # unpooled variance of a rate of 0 or 1 is 0, and the published test calls
    # it a violation with p = 5e-29
    yt = np.r_[np.ones(500), np.zeros(500), np.ones(5), np.zeros(5)].astype(int)
    yp = np.r_[np.ones(400), np.zeros(100), np.ones(50), np.zeros(450), np.ones(5),
               np.zeros(5)].astype(int)  # fmt: skip
    groups = np.r_[["big"] * 1000, ["small"] * 10]
    wald = separation_test(yt, yp, sensitive_features=groups, method="wald")
    assert wald.violated and wald.p_value_tpr == pytest.approx(5.1e-29, rel=0.05)
    res = separation_test(yt, yp, sensitive_features=groups)
    assert not res.violated
    assert res.frame["method"].tolist() == ["exact", "exact"]
    assert res.p_value_tpr == pytest.approx(
        float(barnard_exact_pvalues(5, 5, 400, 500, gamma=BERGER_BOOS_GAMMA))
    )
    assert res.p_value_tpr > 0.3 and res.p_value_fpr > 0.5
    for method in ("exact", "score", "permutation"):
        other = separation_test(
            yt, yp, sensitive_features=groups, method=method, random_state=0
        )
        assert not other.violated, method


def test_auto_rule_exact_for_small_expected_counts():
    # min(n_a, n_b) min(p, 1 - p) below AUTO_MIN_EXPECTED: exact, else score
    x_a = np.array([5, 30, 3, 200, 2500, 0])
    n_a = np.array([10, 60, 200, 400, 5000, 0])
    x_b = np.array([40, 50, 20, 150, 10, 3])
    n_b = np.array([100, 90, 1000, 300, 20, 9])
    used = _TESTS[_choose("auto", x_a, n_a, x_b, n_b, True)]
    pooled = (x_a + x_b) / np.maximum(n_a + n_b, 1)
    expected = np.minimum(n_a, n_b) * np.minimum(pooled, 1 - pooled)
    assert used.tolist() == [
        "exact" if e < AUTO_MIN_EXPECTED else "score" for e in expected
    ]
    assert used.tolist() == ["exact", "score", "exact", "score", "score", "exact"]
    # fractional weights: the score test everywhere
    assert set(_TESTS[_choose("auto", x_a, n_a, x_b, n_b, False)]) == {"score"}
    # the exact test is only computed up to MAX_EXACT_N in the smaller group
    big = np.array([MAX_EXACT_N + 1])
    for method in ("auto", "exact"):
        used = _choose(method, big // 100, big, big // 100, big, True)
        assert _TESTS[used].tolist() == ["score"]


def test_methods_agree_on_large_cells():
    # about 1,000 positives and negatives per group; TPR 0.75 against 0.80
    rng = np.random.default_rng(4)
    n = 4000
    groups = rng.choice(["a", "b"], n)
    y_true = rng.integers(0, 2, n)
    tpr = np.where(groups == "a", 0.8, 0.75)
    y_pred = (rng.random(n) < np.where(y_true == 1, tpr, 0.2)).astype(int)
    frames = {
        m: separation_test(
            y_true, y_pred, sensitive_features=groups, method=m, random_state=0
        ).frame
        for m in ("auto", "exact", "score", "wald", "permutation")
    }
    assert frames["auto"]["method"].tolist() == ["score", "score"]
    pd.testing.assert_frame_equal(
        frames["auto"].drop(columns="method"), frames["score"].drop(columns="method")
    )
    score = frames["score"]["p_value"].to_numpy()
    assert score[0] < 0.01 < 0.3 < score[1]
    for m in ("exact", "wald", "permutation"):
        p = frames[m]["p_value"].to_numpy()
        assert p[0] == pytest.approx(score[0], rel=0.05, abs=0.002), m  # MC error
        assert p[1] > 0.3, m
    # the exact p-value is a supremum over the common rate: at large p-values it
    # can exceed the score test's (rates near 0 or 1 make |z| lumpy)
    assert frames["exact"]["p_value"][1] >= score[1] - 1e-9


def test_permutation_method():
    y_true, y_pred, groups = _hand_data()
    kw = dict(sensitive_features=groups, method="permutation", n_resamples=999)
    one = separation_test(y_true, y_pred, random_state=3, **kw)
    assert one.frame["method"].tolist() == ["permutation"] * 2
    two = separation_test(y_true, y_pred, random_state=3, **kw)
    pd.testing.assert_frame_equal(one.frame, two.frame)
    # p-values on the grid (1 + k) / (1 + B), statistic the score statistic
    k = one.frame["p_value"].to_numpy() * 1000 - 1
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)
    score = separation_test(y_true, y_pred, sensitive_features=groups, method="score")
    np.testing.assert_array_equal(one.frame["z"], score.frame["z"])
    # a comparison's stream is keyed by its labels: the same p-value with a third
    # group present, in any order
    extra_t = np.r_[y_true, [1, 0, 1, 0, 1, 1]]
    extra_p = np.r_[y_pred, [1, 0, 0, 0, 1, 1]]
    extra_g = np.r_[groups, ["0"] * 6]
    three = separation_test(
        extra_t,
        extra_p,
        random_state=3,
        correction=None,
        **{**kw, "sensitive_features": extra_g},
    ).frame
    pair = three[(three["group_a"] == "b") & (three["group_b"] == "a")]
    np.testing.assert_array_equal(pair["p_value"], one.frame["p_value"])
    # the permutation law is the conditional (hypergeometric) one
    p = separation_test(
        y_true, y_pred, random_state=1, **{**kw, "n_resamples": 100_000}
    ).p_value_tpr
    rng = np.random.default_rng(0)
    ref = float(
        two_sample_permutation_pvalues(2, 5, 8, 10, n_resamples=100_000, rng=rng)
    )
    assert p == pytest.approx(ref, abs=0.006)


def test_correction_none_is_none():
    y_true, y_pred, groups = _hand_data()
    groups = np.array(groups)
    groups[::3] = "c"
    a = separation_test(y_true, y_pred, sensitive_features=groups, correction="none")
    b = separation_test(y_true, y_pred, sensitive_features=groups, correction=None)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.correction is None
    np.testing.assert_array_equal(a.frame["p_adjusted"], a.frame["p_value"])


def test_fractional_weights():
    y_true, y_pred, groups = _hand_data()
    w = np.linspace(0.5, 2.0, len(y_true))
    res = separation_test(y_true, y_pred, sensitive_features=groups, sample_weight=w)
    assert res.frame["method"].tolist() == ["score", "score"]
    for method in ("exact", "permutation"):
        with pytest.raises(ValueError, match="needs whole counts"):
            separation_test(
                y_true, y_pred, sensitive_features=groups, sample_weight=w,
                method=method,
            )  # fmt: skip
    # whole weights are repetitions, for every method
    w = np.arange(len(y_true)) % 3 + 1
    for method in ("auto", "exact", "permutation"):
        kw = dict(method=method, random_state=0, n_resamples=199)
        weighted = separation_test(
            y_true, y_pred, sensitive_features=groups, sample_weight=w, **kw
        )
        rep = separation_test(
            np.repeat(y_true, w), np.repeat(y_pred, w),
            sensitive_features=np.repeat(groups, w), **kw,
        )  # fmt: skip
        pd.testing.assert_frame_equal(weighted.frame, rep.frame, check_dtype=False)


def test_exact_beyond_its_bound_uses_the_score_test_with_a_warning():
    # two groups of 1,500 positives and negatives, as whole frequency weights
    y_true = [1, 1, 0, 0] * 2
    y_pred = [1, 0, 1, 0] * 2
    groups = ["a"] * 4 + ["b"] * 4
    w = [1200, 300, 150, 1350, 1100, 400, 200, 1300]
    with pytest.warns(UserWarning, match=r"at most 1000 people.*'b' vs 'a'"):
        res = separation_test(
            y_true, y_pred, sensitive_features=groups, sample_weight=w, method="exact"
        )
    assert res.frame["method"].tolist() == ["score", "score"]
    auto = separation_test(y_true, y_pred, sensitive_features=groups, sample_weight=w)
    pd.testing.assert_frame_equal(res.frame, auto.frame)


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
    bad = [
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": 0}, "alpha"),
        ({"correction": "sidak"}, "correction"),
        ({"method": "fisher"}, "method"),
        ({"method": "Auto"}, "method"),
        ({"n_resamples": 99}, "n_resamples"),
        ({"n_resamples": 1000.0}, "n_resamples"),
        ({"random_state": -1}, "random_state"),
        ({"random_state": True}, "random_state"),
        ({"confidence_level": 1.0}, "confidence_level"),
    ]
    with pytest.raises(ValueError, match="sensitive_features is required"):
        separation_test(y_true, y_pred)
    for kwargs, name in bad:
        kw = {"sensitive_features": groups, **kwargs}
        with pytest.raises(
            InvalidParameterError,
            match=f"The '{name}' parameter of separation_test must be",
        ):
            separation_test(y_true, y_pred, **kw)


# =====================================================================================
# 3. The published test, and the result object
# =====================================================================================
def test_published_wald_test_rejects_a_small_group_with_a_rate_of_zero():
    y_true = np.r_[np.ones(50), np.zeros(171), np.ones(5), np.zeros(5)]
    y_pred = np.r_[np.ones(40), np.zeros(10), np.ones(20), np.zeros(151), np.ones(4),
                   np.zeros(1), np.zeros(5)]  # fmt: skip
    groups = ["big"] * 221 + ["small"] * 10
    # the published test rejects: the small group's FP is 0, its variance 0
    wald = separation_test(y_true, y_pred, sensitive_features=groups, method="wald")
    assert wald.violated and wald.p_value_fpr < 1e-5
    assert wald.method == "wald"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not separation_test(y_true, y_pred, sensitive_features=groups).violated


def test_result_pickles_and_is_reproducible():
    y_true, y_pred, groups = _hand_data()
    kw = dict(sensitive_features=groups, method="permutation", n_resamples=500)
    res = separation_test(y_true, y_pred, **kw)
    again = pickle.loads(pickle.dumps(res))
    pd.testing.assert_frame_equal(again.frame, res.frame)
    # random_state defaults to 0: identical calls give identical p-values
    pd.testing.assert_frame_equal(
        separation_test(y_true, y_pred, **kw).frame, res.frame
    )
    pd.testing.assert_frame_equal(
        separation_test(y_true, y_pred, random_state=0, **kw).frame, res.frame
    )


def test_audit_uses_the_default_test():
    from sklearn_smallfair.audit import audit_predictions

    rng = np.random.default_rng(5)
    n = 700
    g = rng.choice(["A", "B", "C"], n, p=[0.6, 0.37, 0.03])
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.2, 1 - y, y)
    report = audit_predictions(y, p, sensitive_features=g, tests=("separation",))
    res = separation_test(y, p, sensitive_features=g, reference="rest")
    assert "exact" in set(res.frame["method"]) and "score" in set(res.frame["method"])
    pd.testing.assert_frame_equal(
        report.separation.reset_index(drop=True), res.to_frame(), check_dtype=False
    )
    assert report.separation_violated == res.violated


# =====================================================================================
# 4. Size under the null, measured (the user guide's calibration table)
# =====================================================================================
SMALL_SIZES = (5, 10, 20, 50, 200)
LARGE_SIZE = 1000
NULL_RATES = (0.05, 0.2, 0.5, 0.95)
#: (rate of the small group, rate of the large group) for the power table
ALTERNATIVES = ((0.5, 0.8), (0.3, 0.1), (0.65, 0.8))
N_SETS = 10_000  # data sets per setting (permutation: N_PERM_SETS x 999 resamples)
N_PERM_SETS = 2000
METHODS = ("exact", "permutation", "auto", "score", "wald")


def _exact_rejects(x_a, n_a, x_b, n_b, alpha):
    """``p <= alpha`` of the exact test for many tables of one size.

    The p-value decreases as ``|z|`` grows (the rejection region shrinks), so the
    test rejects exactly above a critical ``|z|``, found by bisection over the
    observed tables' statistics with the exact p-values of a few of them.
    """
    t = np.abs(score_statistic(x_a, n_a, x_b, n_b))
    order = np.argsort(t)
    lo, hi = -1, t.shape[0]  # p(t[order[lo]]) > alpha >= p(t[order[hi]])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        k = order[mid]
        p = barnard_exact_pvalues(x_a[k], n_a, x_b[k], n_b, gamma=BERGER_BOOS_GAMMA)
        if p <= alpha:
            hi = mid
        else:
            lo = mid
    if hi == t.shape[0]:
        return np.zeros(t.shape, dtype=bool)
    return t >= t[order[hi]] * (1 - 1e-10)


def _rejection_rates(n_small, rate_small, rate_large, rng, alpha=0.05):
    """Rejection rates of every method on simulated data sets (2x2 tables drawn
    directly with binomials), and the share of them on which auto is exact."""
    x_a = rng.binomial(n_small, rate_small, N_SETS)
    x_b = rng.binomial(LARGE_SIZE, rate_large, N_SETS)
    n_a = np.full(N_SETS, n_small)
    n_b = np.full(N_SETS, LARGE_SIZE)
    z = score_statistic(x_a, n_a, x_b, n_b)
    out = {"score": 2 * ndtr(-np.abs(z)) <= alpha}
    out["wald"] = wald_test(x_a, n_a, x_b, n_b)[1] <= alpha
    out["exact"] = _exact_rejects(x_a, n_small, x_b, LARGE_SIZE, alpha)
    used = _TESTS[_choose("auto", x_a, n_a, x_b, n_b, True)]
    out["auto"] = np.where(used == "exact", out["exact"], out["score"])
    k = slice(0, N_PERM_SETS)
    perm = two_sample_permutation_pvalues(
        x_a[k], n_a[k], x_b[k], n_b[k], n_resamples=999, rng=rng
    )
    out["permutation"] = perm <= alpha
    rates = {m: float(np.mean(out[m])) for m in METHODS}
    return {**rates, "auto_exact_share": float(np.mean(used == "exact"))}


def calibration_tables(seed=20261124):
    """Rejection rates at alpha = 0.05: under equal rates (size) and under the
    alternatives (power), one row per setting."""
    rows = []
    settings = [(r, r) for r in NULL_RATES] + list(ALTERNATIVES)
    for n_small in SMALL_SIZES:
        for small, large in settings:
            key = [seed, n_small, round(small * 100), round(large * 100)]
            rates = _rejection_rates(n_small, small, large, np.random.default_rng(key))
            rows.append({"n_small": n_small, "rate_small": small,
                         "rate_large": large, **rates})  # fmt: skip
    table = pd.DataFrame(rows)
    null = table["rate_small"] == table["rate_large"]
    return table[null].reset_index(drop=True), table[~null].reset_index(drop=True)


@pytest.mark.slow
def test_size_under_the_null_at_small_group_sizes():
    alpha = 0.05
    size, power = calibration_tables()
    with pd.option_context("display.width", 200):
        print("\nsize\n", size.round(4).to_string(index=False))
        print("power\n", power.round(4).to_string(index=False))
    se = np.sqrt(alpha * (1 - alpha) / N_SETS)
    se_perm = np.sqrt(alpha * (1 - alpha) / N_PERM_SETS)
    assert (size["exact"] <= alpha + 2 * se).all()
    assert (size["permutation"] <= alpha + 2 * se_perm).all()
    assert (size["auto"] <= alpha + 0.015).all()
    # the published test does not keep its size with a small group
    assert size["wald"].max() > 0.5
    rare = size["rate_small"].isin([0.05, 0.95]) & (size["n_small"] <= 20)
    assert (size.loc[rare, "wald"] > 0.3).all()
    # the exact test is what auto uses in the small cells
    assert (size.loc[size["n_small"] <= 10, "auto_exact_share"] == 1).all()
    # the price of the calibrated default: auto loses little power against the
    # score test where that test keeps its size (n_small >= 20)
    larger = power["n_small"] >= 20
    assert (power.loc[larger, "auto"] >= power.loc[larger, "score"] - 0.02).all()


def test_exact_rejection_by_critical_value_matches_the_pvalues():
    # the shortcut of the calibration test agrees with the p-values themselves
    rng = np.random.default_rng(0)
    x_a = rng.binomial(10, 0.3, 300)
    x_b = rng.binomial(60, 0.3, 300)
    direct = barnard_exact_pvalues(x_a, 10, x_b, 60, gamma=BERGER_BOOS_GAMMA) <= 0.05
    np.testing.assert_array_equal(_exact_rejects(x_a, 10, x_b, 60, 0.05), direct)
    assert 0 < direct.sum() < direct.size


def test_compare_uses_each_rows_method():
    x_a, n_a = np.array([2, 2, 2, 2]), np.array([5, 5, 5, 0])
    x_b, n_b = np.array([8, 8, 8, 8]), np.array([10, 10, 10, 10])
    used = np.array([0, 1, 2, 0])  # codes into _TESTS
    assert _TESTS[used].tolist() == ["exact", "score", "wald", "exact"]
    z, p = _compare(x_a, n_a, x_b, n_b, used, n_resamples=99, seed=None, keys=None)
    assert p[0] == pytest.approx(
        float(barnard_exact_pvalues(2, 5, 8, 10, gamma=BERGER_BOOS_GAMMA))
    )
    assert p[1] == pytest.approx(float(2 * ndtr(-abs(score_statistic(2, 5, 8, 10)))))
    assert z[2] == pytest.approx(float(wald_test(2, 5, 8, 10)[0]))
    assert np.isnan(z[3]) and np.isnan(p[3])
    assert ndtri(0.975) > 1.9  # scipy's ndtri, used for the critical values


def test_counts_entry_equals_rows():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 2, 300)
    y_pred = rng.integers(0, 2, 300)
    groups = rng.choice(["a", "b", "c"], 300)
    table = pd.DataFrame(
        [
            [
                np.sum((groups == g) & (y_true == t) & (y_pred == p))
                for t, p in ((1, 1), (1, 0), (0, 1), (0, 0))
            ]
            for g in ("a", "b", "c")
        ],
        index=["a", "b", "c"],
        columns=["TP", "FN", "FP", "TN"],
    )
    for method in ("auto", "score", "wald", "permutation"):
        kw = dict(method=method, n_resamples=199, random_state=0)
        rows = separation_test(y_true, y_pred, sensitive_features=groups, **kw)
        for counts in (table, {g: list(r) for g, r in table.iterrows()}):
            res = separation_test(counts=counts, **kw)
            pd.testing.assert_frame_equal(res.frame, rows.frame, check_dtype=False)
            pd.testing.assert_frame_equal(res.groups, rows.groups, check_dtype=False)
            pd.testing.assert_frame_equal(
                res.equalized_odds, rows.equalized_odds, check_dtype=False
            )
    fractional = separation_test(counts=table * 0.5)
    assert set(fractional.frame["method"]) == {"score"}
    with pytest.raises(ValueError, match="not both"):
        separation_test(y_true, y_pred, sensitive_features=groups, counts=table)
    with pytest.raises(ValueError, match="needs whole counts"):
        separation_test(counts=table * 0.5, method="exact")
