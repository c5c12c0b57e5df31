"""Tests of the comparative separation test stratified by the label pair, and of
its default variance under separation (``variance="pooled"``).

The stratified statistic is checked against a brute-force computation over every
pair of items, the binary case against the pooled statistic, the unstratified
variant (``stratify=False, variance="u_statistic"``) against the counting
kernel's own numbers, and the size of the defaults by simulation under
separation with group label mixes that differ, small groups and tied scores.
"""

import math
from itertools import product

import numpy as np
import pandas as pd
import pytest
from scipy.special import stdtr

from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.stats import comparative_separation_test
from sklearn_smallfair.stats._allpairs import AllPairs, count_all_pairs

ALPHA = 0.05
JOINT_NULL_RATE = 1 - (1 - ALPHA) ** 2


def _ordinal(seed, n=40, n_labels=4):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    y = np.where(g == 1, rng.integers(1, n_labels, n), rng.integers(0, n_labels - 1, n))
    s = np.round(0.5 * y + rng.normal(size=n))  # integer scores: ties
    return y, s, g


def _brute_force(y, s, g, tie):
    """Stratified cross and within differences and standardized rates, from
    every pair of items."""
    n_pairs, correct = {}, {}
    for h, lo in product(range(len(y)), repeat=2):
        if y[h] <= y[lo]:
            continue
        key = (g[h], g[lo], y[h], y[lo])
        if s[h] > s[lo]:
            c = 1.0
        elif s[h] == s[lo]:
            if tie == "drop":
                continue
            c = 0.5 if tie == "half" else 0.0
        else:
            c = 0.0
        n_pairs[key] = n_pairs.get(key, 0) + 1
        correct[key] = correct.get(key, 0.0) + c
    strata = sorted({(u, v) for (_, _, u, v) in n_pairs})
    out = []
    for first, second in (((1, 0), (0, 1)), ((1, 1), (0, 0))):
        num1 = num2 = total = 0.0
        for u, v in strata:
            n1 = n_pairs.get((*first, u, v), 0)
            n2 = n_pairs.get((*second, u, v), 0)
            if n1 == 0 or n2 == 0:
                continue
            w = n1 * n2 / (n1 + n2)
            total += w
            num1 += w * correct[(*first, u, v)] / n1
            num2 += w * correct[(*second, u, v)] / n2
        out.append((num1 / total, num2 / total, (num1 - num2) / total))
    return np.array(out)


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stratified_statistic_equals_brute_force(tie, seed):
    y, s, g = _ordinal(seed)
    res = comparative_separation_test(y, s, sensitive_features=g, tie=tie)
    assert res.stratified and res.variance == "pooled"
    expected = _brute_force(y, s, g, tie)
    got = res.frame[["tpr_a", "tpr_b", "difference"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # the cell table keeps the pooled rates
    unstratified = comparative_separation_test(
        y, s, sensitive_features=g, tie=tie, stratify=False
    )
    pd.testing.assert_frame_equal(res.table, unstratified.table)
    assert not unstratified.stratified
    t = res.table["tpr"]
    np.testing.assert_allclose(
        unstratified.frame["difference"],
        [t[(1, 0)] - t[(0, 1)], t[(1, 1)] - t[(0, 0)]],
        rtol=1e-12,
    )


def _pooled_variance_by_loops(y, s, g, first, second):
    """Variance of the stratified difference under separation, from explicit
    per-item placements against each label (tie="incorrect")."""
    y, s, g = map(np.asarray, (y, s, g))
    labels = np.unique(y)
    size = {(a, u): int(((g == a) & (y == u)).sum()) for a in (0, 1) for u in labels}
    pair_n = {
        (a, b, u, v): size[(a, u)] * size[(b, v)]
        for a, b, u, v in product((0, 1), (0, 1), labels, labels)
        if u > v
    }
    coef = {}
    total = 0.0
    for u, v in product(labels, labels):
        if u <= v:
            continue
        n1, n2 = pair_n[(*first, u, v)], pair_n[(*second, u, v)]
        if n1 and n2:
            w = n1 * n2 / (n1 + n2)
            total += w
            coef[(*first, u, v)] = w / n1
            coef[(*second, u, v)] = -w / n2
    coef = {k: c / total for k, c in coef.items()}
    n_label = {u: int((y == u).sum()) for u in labels}
    # pooled placements psi_i(v) and probabilities theta_uv
    psi = np.zeros((len(y), len(labels)))
    for i in range(len(y)):
        for k, v in enumerate(labels):
            other = y == v
            if v < y[i]:
                psi[i, k] = np.sum(s[other] < s[i]) / n_label[v]
            elif v > y[i]:
                psi[i, k] = np.sum(s[other] > s[i]) / n_label[v]
    var = 0.0
    for u in labels:
        items = np.flatnonzero(y == u)
        theta = psi[items].mean(axis=0)
        for a in (0, 1):
            beta = np.zeros(len(labels))
            for kv, v in enumerate(labels):
                for b in (0, 1):
                    key = (a, b, u, v) if v < u else (b, a, v, u)
                    beta[kv] += coef.get(key, 0.0) * size[(b, v)]
            x = (psi[items] - theta) @ beta
            var += size[(a, u)] * np.sum(x**2) / (len(items) - 1)
    return var


def test_pooled_variance_equals_explicit_computation():
    y, s, g = _ordinal(3, n=30)
    res = comparative_separation_test(y, s, sensitive_features=g)
    for row, (first, second) in enumerate((((1, 0), (0, 1)), ((1, 1), (0, 0)))):
        expected = _pooled_variance_by_loops(y, s, g, first, second)
        assert res.frame["se"].iloc[row] ** 2 == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("variance", ["pooled", "u_statistic"])
@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
def test_binary_labels_same_with_and_without_stratification(variance, tie):
    rng = np.random.default_rng(4)
    n = 60
    g = rng.choice(["a", "b"], n, p=[0.8, 0.2])
    y = (rng.random(n) < np.where(g == "a", 0.3, 0.6)).astype(int)
    s = (y + rng.normal(size=n) > 0.5).astype(float)  # binary predictions
    on = comparative_separation_test(
        y, s, sensitive_features=g, tie=tie, variance=variance
    )
    off = comparative_separation_test(
        y, s, sensitive_features=g, tie=tie, variance=variance, stratify=False
    )
    assert not on.stratified and not off.stratified
    pd.testing.assert_frame_equal(on.frame, off.frame)
    pd.testing.assert_frame_equal(on.table, off.table)


def test_unstratified_u_statistic_is_the_counting_kernel():
    # the unstratified variant: the counting kernel's pooled cells, DeLong variance
    # by group and t reference
    y, s, g = _ordinal(5, n=80)
    res = comparative_separation_test(
        y, s, sensitive_features=g, stratify=False, variance="u_statistic"
    )
    c = count_all_pairs(AllPairs(y, s), g, 2, tie="incorrect", variance="u_statistic")
    v_w, df_w = c.within(1, 0)
    diff = np.array([c.tpr[1, 0] - c.tpr[0, 1], c.tpr[1, 1] - c.tpr[0, 0]])
    var = np.array([c.var_cross[1, 0], v_w])
    df = np.array([c.df_cross[1, 0], df_w])
    p = 2 * stdtr(df, -np.abs(diff / np.sqrt(var)))
    np.testing.assert_array_equal(res.frame["difference"], diff)
    np.testing.assert_array_equal(res.frame["se"], np.sqrt(var))
    np.testing.assert_array_equal(res.frame["df"], df)
    np.testing.assert_allclose(res.frame["p_value"], p, rtol=1e-13)
    # the numbers of the unstratified variant's documented example
    old = comparative_separation_test(
        [1, 1, 0, 0, 1, 1, 0, 0],
        [0.9, 0.6, 0.4, 0.1, 0.7, 0.2, 0.5, 0.3],
        sensitive_features=list("aaaabbbb"),
        stratify=False,
        variance="u_statistic",
    )
    np.testing.assert_allclose(old.frame["se"], [math.sqrt(0.125), 0.5], rtol=1e-12)
    np.testing.assert_allclose(old.frame["df"], [2.0, 1.0])
    np.testing.assert_allclose(old.frame["p_value"], [0.552786, 0.5], atol=1e-6)


def test_many_labels_fall_back_and_options_are_checked():
    rng = np.random.default_rng(6)
    n = 50
    y = rng.normal(size=n)  # continuous: every pair its own stratum
    s = y + rng.normal(size=n)
    g = rng.integers(0, 2, n)
    res = comparative_separation_test(y, s, sensitive_features=g)
    assert not res.stratified
    off = comparative_separation_test(y, s, sensitive_features=g, stratify=False)
    pd.testing.assert_frame_equal(res.frame, off.frame)
    # one item per label: nothing to pool, so "auto" is the variance by group
    # (the unstratified variant), not a pooled variance of zero
    assert res.variance == "u_statistic"
    old = comparative_separation_test(
        y, s, sensitive_features=g, stratify=False, variance="u_statistic"
    )
    pd.testing.assert_frame_equal(res.frame, old.frame)
    assert (res.frame["se"] > 0.01).all() and (res.frame["p_value"] > 0).all()
    with pytest.raises(ValueError, match=r"variance='pooled' .* at most 10"):
        comparative_separation_test(y, s, sensitive_features=g, variance="pooled")
    # eleven labels: more than MAX_STRATIFIED_LABELS
    eleven = comparative_separation_test(np.arange(n) % 11, s, sensitive_features=g)
    assert not eleven.stratified
    assert eleven.variance == "u_statistic"
    ten = comparative_separation_test(np.arange(n) % 10, s, sensitive_features=g)
    assert ten.stratified and ten.variance == "pooled"
    with pytest.raises(InvalidParameterError, match="stratify"):
        comparative_separation_test(y, s, sensitive_features=g, stratify="yes")
    with pytest.raises(ValueError, match="variance='pooled'"):
        comparative_separation_test(
            y, s, sensitive_features=g, pairs=[[0, 1], [2, 3]], variance="pooled"
        )
    # the permutation test keeps the pooled cells
    perm = comparative_separation_test(
        np.arange(n) % 3,
        s,
        sensitive_features=g,
        method="permutation",
        n_resamples=199,
        random_state=0,
    )
    assert not perm.stratified


def test_more_groups_stratified():
    rng = np.random.default_rng(8)
    n = 90
    g = rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 4, n) + (g == "c")
    s = np.round(0.5 * y + rng.normal(size=n), 1)
    res = comparative_separation_test(y, s, sensitive_features=g)
    assert res.stratified and res.frame.shape[0] == 6
    assert np.isfinite(res.frame["p_value"]).all()


# =====================================================================================
# Size under separation (slow)
# =====================================================================================
P_LOW = np.array([0.35, 0.3, 0.2, 0.1, 0.05])


def _skewed_null(n, share, scores, rng):
    """Labels 0..4, group 1's skewed high; scores depend on the label only."""
    while True:
        a = (rng.random(n) < share).astype(np.int64)
        if 2 <= a.sum() <= n - 2:
            break
    y = np.where(a == 1, rng.choice(5, n, p=P_LOW[::-1]), rng.choice(5, n, p=P_LOW))
    latent = 0.5 * y + rng.normal(size=n)
    s = (latent > 1.0).astype(float) if scores == "binary" else latent
    return y, s, a


def _null_rates(n, share, scores, n_repeats, seed, **kwargs):
    rng = np.random.default_rng(seed)
    p = np.empty((n_repeats, 2))
    for r in range(n_repeats):
        y, s, a = _skewed_null(n, share, scores, rng)
        res = comparative_separation_test(y, s, sensitive_features=a, **kwargs)
        p[r] = np.nan_to_num([res.p_value_cross, res.p_value_within], nan=1.0)
    return (
        (p[:, 0] <= ALPHA).mean(),
        (p[:, 1] <= ALPHA).mean(),
        (p.min(axis=1) <= ALPHA).mean(),
    )


def _bound(rate, n_repeats):
    return rate + 0.015 + 3 * math.sqrt(rate * (1 - rate) / n_repeats)


@pytest.mark.slow
@pytest.mark.parametrize(
    "n, share, scores, n_repeats",
    [
        (50, 0.1, "continuous", 1500),  # a group of about 5 items
        (50, 0.5, "binary", 1500),  # binary predictions as scores: ties
        (1000, 0.5, "continuous", 400),
    ],
)
def test_default_keeps_its_level_under_separation(n, share, scores, n_repeats):
    cross, within, joint = _null_rates(n, share, scores, n_repeats, seed=n)
    assert cross <= _bound(ALPHA, n_repeats), (cross, within, joint)
    assert within <= _bound(ALPHA, n_repeats), (cross, within, joint)
    assert joint <= _bound(JOINT_NULL_RATE, n_repeats), (cross, within, joint)


@pytest.mark.slow
def test_size_check_can_fail_unstratified_statistic():
    # the pooled cells read the different label mixes as a violation
    n_repeats = 400
    cross, _, joint = _null_rates(
        1000, 0.5, "continuous", n_repeats, seed=1, stratify=False
    )
    assert cross > _bound(ALPHA, n_repeats)
    assert joint > _bound(JOINT_NULL_RATE, n_repeats)
    # and the unstratified variance with a group of about 5 of 50 items
    n_repeats = 1000
    _, _, joint = _null_rates(
        50,
        0.1,
        "continuous",
        n_repeats,
        seed=2,
        stratify=False,
        variance="u_statistic",
    )
    assert joint > _bound(JOINT_NULL_RATE, n_repeats)
