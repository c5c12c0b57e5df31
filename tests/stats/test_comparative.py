"""Tests of the comparative separation test.

Statistics are checked three ways: closed forms on hand-made
data (z and p computed by hand), an independent per-pair reference implementation
of the counts and of the item-clustered variance, and simulation from the 8-cell
laws P(C, Y, A) with tolerances from binomial standard errors, where the verdicts
are also compared with those of the separation test.
"""

import math
import pickle
import warnings
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.stats import (
    ComparativeSeparationResult,
    adjust_pvalues,
    comparative_separation_statistic,
    comparative_separation_test,
    make_comparative_pairs,
    make_comparative_separation_scorer,
    separation_test,
)

ALPHA = 0.05
# order (C=1,Y=1,A=1), (0,1,1), (1,0,1), (0,0,1), (1,1,0), (0,1,0), (1,0,0), (0,0,0)
CELLS = np.array(
    [
        [1, 1, 1],
        [0, 1, 1],
        [1, 0, 1],
        [0, 0, 1],
        [1, 1, 0],
        [0, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
    ]
)
LAW_NULL = [0.22, 0.055, 0.09, 0.135, 0.18, 0.045, 0.11, 0.165]
LAWS_VIOLATED = [
    [0.22, 0.055, 0.081, 0.144, 0.18, 0.045, 0.121, 0.154],
    [0.231, 0.044, 0.081, 0.144, 0.171, 0.054, 0.121, 0.154],
    [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175],
]
JOINT_NULL_RATE = 1 - (1 - ALPHA) ** 2


def _sample_law(law, n, rng):
    """``(c, y, a)`` of ``n`` people drawn from the 8-cell law."""
    k = rng.choice(8, size=n, p=np.asarray(law) / np.sum(law))
    return CELLS[k, 0], CELLS[k, 1], CELLS[k, 2]


def _mc_bounds(rate, n_repeats, k=4.0):
    se = math.sqrt(rate * (1 - rate) / n_repeats)
    return rate - k * se, rate + k * se


# =====================================================================================
# 1. Closed forms and a per-pair reference
# =====================================================================================
Y6 = [3, 2, 1, 3, 2, 1]
S6 = [0.9, 0.5, 0.1, 0.2, 0.8, 0.0]
G6 = ["a", "a", "a", "b", "b", "b"]
PAIRS6 = [
    [0, 1],
    [1, 2],
    [0, 2],
    [3, 4],
    [4, 5],
    [3, 5],
    [0, 4],
    [3, 1],
    [4, 2],
    [1, 5],
    [3, 2],
    [0, 5],
]


@pytest.mark.parametrize("variance", ["clustered", "independent"])
def test_comparative_closed_form(variance):
    res = comparative_separation_test(
        Y6, S6, sensitive_features=G6, pairs=PAIRS6, variance=variance
    )
    assert isinstance(res, ComparativeSeparationResult)
    t = res.table
    assert t.index.names == ["higher", "lower"]
    assert t["n"].tolist() == [3, 3, 3, 3]
    # (a, a), (a, b) all correct; (b, a): [3, 1] wrong; (b, b): [3, 4] wrong
    assert t["correct"].tolist() == [3, 3, 2, 2]
    # cross: TPR(b, a) - TPR(a, b) = -1/3 with variance (2/3)(1/3)/3 + 0 = 2/27:
    # z = -(1/3) / sqrt(2/27) = -sqrt(1.5); within: TPR(b, b) - TPR(a, a), the same
    z = -math.sqrt(1.5)
    assert res.z_cross == pytest.approx(z, rel=1e-12)
    assert res.z_within == pytest.approx(z, rel=1e-12)
    assert res.p_value_cross == pytest.approx(math.erfc(-z / math.sqrt(2)), rel=1e-12)
    assert res.p_value_cross == pytest.approx(0.220671, abs=1e-6)
    assert res.violated is False
    assert res.n_pairs == 12 and res.n_predicted_ties == 0
    frame = res.to_frame()
    assert frame["test"].tolist() == ["cross", "within"]
    assert frame[["higher_a", "lower_a", "higher_b", "lower_b"]].values.tolist() == [
        ["b", "a", "a", "b"],
        ["b", "b", "a", "a"],
    ]
    np.testing.assert_allclose(frame["se"], math.sqrt(2 / 27))
    assert res.tpr_matrix.loc["b", "a"] == pytest.approx(2 / 3)
    assert res.pvalues.index.names == [
        "test",
        "higher_a",
        "lower_a",
        "higher_b",
        "lower_b",
    ]
    assert res.pvalues.index.tolist() == [
        ("cross", "b", "a", "a", "b"),
        ("within", "b", "b", "a", "a"),
    ]
    np.testing.assert_array_equal(res.pvalues, frame["p_adjusted"])
    np.testing.assert_array_equal(res.reject, frame["reject"])
    assert "ComparativeSeparationResult(violated=False" in repr(res)


def test_clustered_variance_closed_form():
    # cell (a, b): item 0 is the higher item of two correct pairs, item 3 of two
    # wrong ones; the lower items are all distinct. Residuals +-1/2, item sums
    # +1, -1 and four +-1/2: SS = 1 + 1 + 4/4 = 3, P = 4/4 = 1, so
    # V = (SS - P) / n^2 = 2/16, twice the independent mu (1 - mu) / n = 1/16.
    y = [1, 0, 0, 1, 0, 0, 1, 0]
    s = [5, 0, 0, -5, 0, 0, 0, 0]
    g = ["a", "b", "b", "a", "b", "b", "b", "a"]
    pairs = [[0, 1], [0, 2], [3, 4], [3, 5], [6, 7]]
    with pytest.warns(UndefinedGroupMetricWarning, match="no usable pairs"):
        clustered = comparative_separation_test(y, s, sensitive_features=g, pairs=pairs)
    with pytest.warns(UndefinedGroupMetricWarning):
        indep = comparative_separation_test(
            y, s, sensitive_features=g, pairs=pairs, variance="independent"
        )
    assert clustered.table.loc[("a", "b"), "se"] == pytest.approx(math.sqrt(2 / 16))
    assert indep.table.loc[("a", "b"), "se"] == pytest.approx(math.sqrt(1 / 16))
    # (b, a) has one pair (6 over 7, tied scores: incorrect): tpr 0, variance 0
    assert clustered.table.loc[("b", "a"), "tpr"] == 0.0
    assert clustered.n_predicted_ties == 1
    # cross z: (0 - 1/2) / sqrt(2/16)
    assert clustered.z_cross == pytest.approx(-0.5 / math.sqrt(2 / 16))
    assert indep.z_cross == pytest.approx(-0.5 / math.sqrt(1 / 16))
    # within-group cells are empty: NaN tests, the verdict from the cross test
    assert np.isnan(clustered.p_value_within) and np.isnan(clustered.z_within)
    assert clustered.violated == (clustered.p_value_cross <= ALPHA)


def _reference(y, s, g, pairs, tie="incorrect"):
    """Per-pair loops: cell counts, and dyadic item-clustered variances."""
    labels = sorted(set(g))
    hi, lo, out = [], [], []
    for i, j in pairs:
        if y[i] == y[j]:
            continue
        h, low = (i, j) if y[i] > y[j] else (j, i)
        if s[h] == s[low]:
            if tie == "drop":
                continue
            o = 0.5 if tie == "half" else 0.0
        else:
            o = 1.0 if s[h] > s[low] else 0.0
        hi.append(h)
        lo.append(low)
        out.append(o)
    members = defaultdict(list)
    for k, (h, low) in enumerate(zip(hi, lo)):
        members[(g[h], g[low])].append(k)
    mean = {c: sum(out[k] for k in ks) / len(ks) for c, ks in members.items()}
    resid = [out[k] - mean[(g[hi[k]], g[lo[k]])] for k in range(len(out))]

    def variance(coef):
        sums, own = defaultdict(float), 0.0
        for k, w in coef.items():
            v = w * resid[k]
            sums[hi[k]] += v
            sums[lo[k]] += v
            own += v * v
        return max(sum(x * x for x in sums.values()) - own, own)

    def cell_var(c):
        ks = members[c]
        return variance({k: 1 / len(ks) for k in ks})

    table = {c: (len(ks), sum(out[k] for k in ks)) for c, ks in members.items()}
    cross, within = {}, {}
    for p in range(len(labels)):
        for q in range(p + 1, len(labels)):
            a, b = labels[q], labels[p]
            coef = {k: 1 / len(members[(a, b)]) for k in members[(a, b)]}
            for k in members[(b, a)]:
                coef[k] = -1 / len(members[(b, a)])
            cross[(a, b)] = variance(coef)
            within[(a, b)] = cell_var((a, a)) + cell_var((b, b))
    cells = {c: cell_var(c) for c in members}
    return table, cells, cross, within


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
@pytest.mark.parametrize("seed", [0, 1])
def test_counts_and_clustered_variance_match_per_pair_reference(tie, seed):
    # regression labels, three groups, rounded scores (predicted ties), items reused
    rng = np.random.default_rng(seed)
    n = 60
    y = rng.integers(0, 6, n)
    s = np.round(y + rng.normal(size=n), 0)
    g = rng.choice(["a", "b", "c"], size=n)
    pairs = np.column_stack([rng.integers(0, n, 400), rng.integers(0, n, 400)])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    res = comparative_separation_test(
        y, s, sensitive_features=g, pairs=pairs, tie=tie, correction=None
    )
    table, cells, cross, within = _reference(
        y.tolist(), s.tolist(), g.tolist(), pairs, tie
    )
    for (a, b), (count, correct) in table.items():
        assert res.table.loc[(a, b), "n"] == count
        assert res.table.loc[(a, b), "correct"] == pytest.approx(correct)
        assert res.table.loc[(a, b), "se"] ** 2 == pytest.approx(
            cells[(a, b)], rel=1e-9
        )
    assert res.table["n"].sum() == res.n_pairs == sum(c for c, _ in table.values())
    frame = res.frame.set_index(["test", "higher_a", "higher_b"])
    for (a, b), v in cross.items():
        assert frame.loc[("cross", a, b), "se"] ** 2 == pytest.approx(v, rel=1e-9)
    for (a, b), v in within.items():
        assert frame.loc[("within", a, b), "se"] ** 2 == pytest.approx(v, rel=1e-9)
    z = frame["difference"] / frame["se"]
    np.testing.assert_allclose(frame["z"], z, rtol=1e-12)


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
def test_chunked_counting_and_sparse_items_match_reference(monkeypatch, tie):
    from sklearn_smallfair.stats import _pairs

    rng = np.random.default_rng(8)
    n = 80
    y = rng.integers(0, 4, n)
    s = np.round(y + rng.normal(size=n), 0)
    g = rng.choice(["a", "b", "c"], size=n)
    pairs = np.column_stack([rng.integers(0, n, 30), rng.integers(0, n, 30)])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]  # few pairs: only used items kept
    kw = dict(sensitive_features=g, pairs=pairs, tie=tie, correction=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        dense = comparative_separation_test(y, s, **kw)
        monkeypatch.setattr(_pairs, "_DENSE_CLUSTER_MIN", 0)
        sparse = comparative_separation_test(y, s, **kw)
        monkeypatch.setattr(_pairs, "_CHUNK", 7)  # several chunks, a short last
        chunked = comparative_separation_test(y, s, **kw)
        jud = np.sign(y[pairs[:, 0]] - y[pairs[:, 1]])
        judged = comparative_separation_test(
            y_score=s,
            sensitive_features=g,
            pairs=pairs[jud != 0],
            judgments=jud[jud != 0],
            tie=tie,
            correction=None,
        )
    table, cells, _, _ = _reference(y.tolist(), s.tolist(), g.tolist(), pairs, tie)
    for (a, b), (count, correct) in table.items():
        assert dense.table.loc[(a, b), "n"] == count
        assert dense.table.loc[(a, b), "correct"] == pytest.approx(correct)
        assert dense.table.loc[(a, b), "se"] ** 2 == pytest.approx(cells[(a, b)])
    for other in (sparse, chunked, judged):
        pd.testing.assert_frame_equal(other.table, dense.table, rtol=1e-12)
        pd.testing.assert_frame_equal(other.frame, dense.frame, rtol=1e-12)
    assert chunked.n_predicted_ties == dense.n_predicted_ties


def test_clustered_equals_independent_without_shared_items():
    rng = np.random.default_rng(5)
    n = 4000
    c, y, a = _sample_law(LAWS_VIOLATED[0], n, rng)
    s = c + 0.0
    perm = rng.permutation(n)
    pairs = perm.reshape(-1, 2)  # every item in exactly one pair
    pairs = pairs[y[pairs[:, 0]] != y[pairs[:, 1]]]
    kw = dict(sensitive_features=a, pairs=pairs)
    clustered = comparative_separation_test(y, s, **kw)
    indep = comparative_separation_test(y, s, variance="independent", **kw)
    np.testing.assert_allclose(clustered.frame["z"], indep.frame["z"], rtol=1e-10)
    np.testing.assert_allclose(clustered.table["se"], indep.table["se"], rtol=1e-10)


def test_tie_policies():
    y = [1, 0, 1, 0]
    s = [0.5, 0.5, 0.9, 0.1]  # pair (0, 1) tied, pair (2, 3) correct
    g = ["a", "b", "a", "b"]
    pairs = [[0, 1], [2, 3], [2, 1], [0, 3]]  # all cell (a, b); [0, 3] correct
    kw = dict(sensitive_features=g, pairs=pairs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        inc = comparative_separation_test(y, s, **kw)
        half = comparative_separation_test(y, s, tie="half", **kw)
        drop = comparative_separation_test(y, s, tie="drop", **kw)
    cell = ("a", "b")
    assert inc.table.loc[cell, ["n", "correct"]].tolist() == [4, 3]
    assert half.table.loc[cell, "correct"] == 3.5
    assert half.table.loc[cell, "tpr"] == pytest.approx(3.5 / 4)
    assert drop.table.loc[cell, ["n", "correct"]].tolist() == [3, 3]
    assert inc.n_predicted_ties == half.n_predicted_ties == drop.n_predicted_ties == 1
    assert drop.n_pairs == 3 and inc.n_pairs == 4


def test_labels_with_ties_in_given_pairs_are_dropped():
    y = [1, 1, 0, 0]
    s = [0.9, 0.8, 0.1, 0.2]
    g = ["a", "b", "a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        res = comparative_separation_test(
            y, s, sensitive_features=g, pairs=[[0, 1], [0, 3], [2, 3], [1, 2]]
        )
    assert res.n_pairs == 2  # (0, 1) and (2, 3) have tied labels
    assert res.pairs.shape == (4, 2)


# =====================================================================================
# 2. All pairs: counts against a double loop, variances against DeLong and simulation
# =====================================================================================
def _double_loop(y, s, g, labels, tie):
    """Every ordered pair (h, l) with y_h > y_l, by cell: n, correct, predicted ties."""
    K = len(labels)
    code = {v: k for k, v in enumerate(labels)}
    n = np.zeros((K, K))
    correct = np.zeros((K, K))
    ties = 0
    for h in range(len(y)):
        for low in range(len(y)):
            if not y[h] > y[low]:
                continue
            a, b = code[g[h]], code[g[low]]
            if s[h] == s[low]:
                ties += 1
                if tie == "drop":
                    continue
                correct[a, b] += 0.5 if tie == "half" else 0.0
            else:
                correct[a, b] += s[h] > s[low]
            n[a, b] += 1
    return n, correct, ties


def _small_data(seed, n, n_labels, n_scores, n_groups):
    """Integer labels and scores with many ties (or continuous when a count is 0)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_labels, n) * 0.5 if n_labels else rng.normal(size=n)
    s = rng.integers(0, n_scores, n) / 3 if n_scores else rng.normal(size=n)
    g = rng.choice(["a", "b", "c"][:n_groups], size=n)
    return y, s, g


ALL_PAIRS_CASES = [
    # (seed, items, label values (0: continuous), score values, groups)
    (0, 40, 2, 3, 2),
    (1, 35, 2, 0, 2),
    (2, 50, 5, 4, 3),
    (3, 30, 0, 5, 2),
    (4, 45, 0, 0, 3),
    (5, 25, 8, 2, 2),
    (6, 12, 3, 1, 2),
]


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
@pytest.mark.parametrize("case", ALL_PAIRS_CASES)
def test_all_pairs_counts_equal_double_loop(case, tie):
    y, s, g = _small_data(*case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        res = comparative_separation_test(y, s, sensitive_features=g, tie=tie)
    labels = sorted(set(g))
    n, correct, ties = _double_loop(y.tolist(), s.tolist(), g.tolist(), labels, tie)
    assert res.pair_source == "all" and res.pairs is None
    np.testing.assert_array_equal(res.table["n"].to_numpy(), n.ravel())
    np.testing.assert_array_equal(res.table["correct"].to_numpy(), correct.ravel())
    assert res.n_predicted_ties == ties
    assert res.n_pairs == n.sum()
    # not vacuous: pairs counted (all scores tied in the last case: none with
    # tie="drop") and predicted ties met
    assert n.sum() > 0 or (tie == "drop" and case[3] == 1)
    assert ties > 0 or case[3] == 0


@pytest.mark.parametrize("n_labels", [2, 3, 0])
def test_per_item_placements_equal_double_loop(n_labels):
    from sklearn_smallfair.stats._allpairs import AllPairs

    y, s, g = _small_data(7, 30, n_labels, 3, 3)
    codes = np.unique(g, return_inverse=True)[1]
    plan = AllPairs(y, s)
    above, below = plan.placements(codes, 3)
    tied_above, tied_below = plan.tied_placements(codes, 3)
    pairs_above, pairs_below = plan.label_placements(codes, 3)
    for i in range(len(y)):
        for b in range(3):
            in_b = codes == b
            lower, higher = in_b & (y < y[i]), in_b & (y > y[i])
            assert above[i, b] == (lower & (s < s[i])).sum()
            assert below[i, b] == (higher & (s > s[i])).sum()
            assert tied_above[i, b] == (lower & (s == s[i])).sum()
            assert tied_below[i, b] == (higher & (s == s[i])).sum()
            assert pairs_above[i, b] == lower.sum()
            assert pairs_below[i, b] == higher.sum()


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
def test_all_pairs_equal_explicit_list_of_every_pair(tie):
    # the same cells as the list of all pairs; with variance="clustered" the
    # per-item residual sums of both counts agree (same variances)
    y, s, g = _small_data(8, 60, 4, 6, 3)
    every = np.array(list(combinations(range(len(y)), 2)))
    kw = dict(sensitive_features=g, tie=tie, variance="clustered", correction=None)
    listed = comparative_separation_test(y, s, pairs=every, **kw)
    counted = comparative_separation_test(y, s, **kw)
    pd.testing.assert_frame_equal(listed.table, counted.table, rtol=1e-10)
    pd.testing.assert_frame_equal(listed.frame, counted.frame, rtol=1e-10)
    assert listed.n_predicted_ties == counted.n_predicted_ties > 0


# the compared cells of two groups, (higher, lower) codes: cross TPR(1, 0) vs
# TPR(0, 1), within TPR(1, 1) vs TPR(0, 0)
_CROSS_AND_WITHIN = (
    (np.array([1, 1]), np.array([0, 1])),
    (np.array([0, 0]), np.array([1, 0])),
)


def _delong(pos, neg):
    """DeLong's AUC (ties half) and variance from placement values, by loops."""
    psi = np.array(
        [[1.0 if p > q else 0.5 if p == q else 0.0 for q in neg] for p in pos]
    )
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = psi.mean()
    return auc, v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg), v10, v01


def test_u_statistic_variance_is_delong_for_binary_labels():
    rng = np.random.default_rng(9)
    n = 80
    g = rng.choice(["a", "b"], size=n)
    y = rng.integers(0, 2, n)
    s = np.round(y + rng.normal(size=n), 1)  # ties in scores
    res = comparative_separation_test(
        y, s, sensitive_features=g, tie="half", variance="u_statistic"
    )
    parts = {}
    for a in "ab":
        for b in "ab":
            pos = s[(g == a) & (y == 1)]
            neg = s[(g == b) & (y == 0)]
            auc, var, v10, v01 = _delong(pos, neg)
            parts[(a, b)] = (v10, v01, len(pos), len(neg))
            assert res.table.loc[(a, b), "tpr"] == pytest.approx(auc, rel=1e-12)
            assert res.table.loc[(a, b), "se"] ** 2 == pytest.approx(var, rel=1e-9)
    # the cross difference: DeLong's covariance of two AUCs sharing no sample but
    # built from the same items of each group (the positives of a are in (a, b),
    # its negatives in (b, a)): the variance adds up over the groups' items
    v10_ab, v01_ab, p_a, n_b = parts[("a", "b")]
    v10_ba, v01_ba, p_b, n_a = parts[("b", "a")]
    # items of a: positives (placements in (a, b)) and negatives (in (b, a)),
    # one sample of p_a + n_a items; the same for b
    x_a = np.concatenate([v10_ab - v10_ab.mean(), -(v01_ba - v01_ba.mean())])
    x_a /= np.concatenate([np.full(p_a, p_a), np.full(n_a, n_a)])
    x_b = np.concatenate([v01_ab - v01_ab.mean(), -(v10_ba - v10_ba.mean())])
    x_b /= np.concatenate([np.full(n_b, n_b), np.full(p_b, p_b)])
    scale = lambda k: k / (k - 1)  # noqa: E731
    var_d = 0.0
    for x, k_pos, k_neg in ((x_a, p_a, n_a), (x_b, n_b, p_b)):
        var_d += scale(k_pos) * np.sum(x[:k_pos] ** 2) + scale(k_neg) * np.sum(
            x[k_pos:] ** 2
        )
    cross = res.frame.set_index("test").loc["cross"]
    assert cross["se"] ** 2 == pytest.approx(var_d, rel=1e-9)
    # within: the two cells share no item
    within = res.frame.set_index("test").loc["within"]
    expected = (
        res.table.loc[("a", "a"), "se"] ** 2 + res.table.loc[("b", "b"), "se"] ** 2
    )
    assert within["se"] ** 2 == pytest.approx(expected, rel=1e-12)


def _draw_items(kind, n, rng):
    a = (rng.random(n) < 0.4).astype(np.int64)
    if kind == "binary":
        y = (rng.random(n) < 0.3 + 0.2 * a).astype(np.int64)
        s = y + 0.8 * rng.normal(size=n) + 0.3 * a
    elif kind == "integer":
        y = rng.integers(0, 5, n)
        s = np.round(y + rng.normal(size=n) + 0.3 * a, 1)
    else:
        y = rng.normal(size=n)
        s = y + rng.normal(size=n)
    return y, s, a


@pytest.mark.parametrize("kind", ["binary", "integer", "continuous"])
def test_u_statistic_variance_matches_simulation(kind):
    # the mean estimated variance of TPR(1, 0), of the cross difference and of the
    # within difference against their variances over simulated data sets; the
    # tolerance is four Monte Carlo standard errors of the ratio (sample variance
    # of near-normal statistics: relative error sqrt(2 / (R - 1))), plus the
    # estimator's known upward small-sample bias of at most 10 % at this size
    from sklearn_smallfair.stats._allpairs import AllPairs, count_all_pairs

    rng = np.random.default_rng(2026)
    R, n = 800, 300
    stats, estimates = [], []
    for _ in range(R):
        y, s, a = _draw_items(kind, n, rng)
        c = count_all_pairs(AllPairs(y, s), a, 2, tie="half", variance="u_statistic")
        within_var, _ = c.within(1, 0)
        stats.append(
            [c.tpr[1, 0], c.tpr[1, 0] - c.tpr[0, 1], c.tpr[1, 1] - c.tpr[0, 0]]
        )
        estimates.append([c.var[1, 0], c.var_cross[1, 0], within_var])
    stats, estimates = np.array(stats), np.array(estimates)
    ratio = estimates.mean(axis=0) / stats.var(axis=0, ddof=1)
    rel_se = math.sqrt(2 / (R - 1))
    assert np.all(ratio > 1 - 4 * rel_se), ratio
    assert np.all(ratio < 1.10 + 4 * rel_se), ratio


def test_binary_classifier_identity_tpr_product_all_pairs():
    # with the predicted labels as scores, a (positive of a, negative of b) pair
    # is ordered correctly exactly when the positive is predicted 1 and the
    # negative 0: on all pairs TPR(a, b) = TPR_a TNR_b holds exactly in-sample
    rng = np.random.default_rng(3)
    c, y, a = _sample_law(LAWS_VIOLATED[2], 3000, rng)
    res = comparative_separation_test(y, c, sensitive_features=a)
    half = comparative_separation_test(y, c, sensitive_features=a, tie="half")
    sep = separation_test(y, c, sensitive_features=a).groups.set_index("group")
    tpr, fpr = sep["tpr"], sep["fpr"]
    for ga in (0, 1):
        for gb in (0, 1):
            expected = tpr[ga] * (1 - fpr[gb])
            assert res.table.loc[(ga, gb), "tpr"] == pytest.approx(expected, rel=1e-12)
            # a tied pair (both 1 or both 0) counts half
            tied = tpr[ga] * fpr[gb] + (1 - tpr[ga]) * (1 - fpr[gb])
            assert half.table.loc[(ga, gb), "tpr"] == pytest.approx(
                expected + 0.5 * tied, rel=1e-12
            )


def test_all_pairs_deterministic_and_independent_of_random_state():
    y, s, g = _story_points(2)
    runs = [
        comparative_separation_test(y, s, sensitive_features=g, random_state=seed)
        for seed in (None, None, 0, 1, np.random.default_rng(5))
    ]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].frame, other.frame)
        pd.testing.assert_frame_equal(runs[0].table, other.table)
    assert runs[0].variance == "pooled" and runs[0].method == "asymptotic"
    # the published procedure draws pairs: its verdict depends on the draw
    drawn = [
        comparative_separation_test(
            y, s, sensitive_features=g, n_pairs=2 * len(y), random_state=seed
        ).p_value_cross
        for seed in range(5)
    ]
    assert len(set(drawn)) == 5


@pytest.mark.slow
def test_all_pairs_of_a_million_items():
    # Every pair of a million items (over 10^11 pairs) is counted without
    # forming a pair; the speed against a pair loop is in bench_separation.py
    rng = np.random.default_rng(0)
    n = 1_000_000
    g = (rng.random(n) < 0.3).astype(np.int64)
    for y in (rng.integers(0, 2, n), rng.integers(0, 8, n)):
        s = np.round(y + rng.normal(size=n), 2)
        res = comparative_separation_test(y, s, sensitive_features=g)
        assert res.n_pairs > 10**11
        for p in (res.p_value_cross, res.p_value_within):
            assert np.isfinite(p) and 0 <= p <= 1


# =====================================================================================
# 3. The permutation test
# =====================================================================================
def test_permutation_counts_match_recount_of_each_resample():
    from sklearn_smallfair.stats._allpairs import AllPairs, count_all_pairs

    y, s, g = _small_data(11, 40, 3, 4, 3)
    codes = np.unique(g, return_inverse=True)[1]
    plan = AllPairs(y, s)
    rng = np.random.default_rng(0)
    G = np.stack([rng.permutation(codes) for _ in range(6)])
    strict, tied = plan.resampled_counts(G, 3, ties=True)
    for row, counts in enumerate(strict):
        ref = count_all_pairs(plan, G[row], 3, tie="incorrect", variance="independent")
        np.testing.assert_array_equal(counts, ref.correct)
        assert tied[row].sum() == ref.n_predicted_ties


def test_permutation_keeps_labels_per_group_and_matches_pvalue_rule():
    from sklearn_smallfair.stats._allpairs import AllPairs, permutation_differences
    from sklearn_smallfair.stats._permutation import permutation_pvalue

    y, s, g = _small_data(12, 60, 3, 0, 2)
    codes = np.unique(g, return_inverse=True)[1]
    plan = AllPairs(y, s)
    first, second = _CROSS_AND_WITHIN
    observed, null = permutation_differences(
        plan,
        codes,
        2,
        first,
        second,
        tie="incorrect",
        n_resamples=500,
        rng=np.random.default_rng(1),
    )
    res = comparative_separation_test(
        y,
        s,
        sensitive_features=g,
        method="permutation",
        n_resamples=500,
        random_state=np.random.SeedSequence(0),
    )
    np.testing.assert_allclose(observed, res.frame["difference"], rtol=1e-12)
    p = permutation_pvalue(np.abs(observed), np.abs(null).T)
    expected = (1 + (np.abs(null) >= np.abs(observed) * (1 - 1e-10)).sum(axis=0)) / 501
    np.testing.assert_allclose(p, expected)
    assert res.method == "permutation" and res.n_resamples == 500
    # p-values are multiples of 1 / (B + 1), in (0, 1]
    k = res.frame["p_value"].to_numpy() * 501
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)
    again = comparative_separation_test(
        y,
        s,
        sensitive_features=g,
        method="permutation",
        n_resamples=500,
        random_state=np.random.SeedSequence(0),
    )
    pd.testing.assert_frame_equal(res.frame, again.frame)


@pytest.mark.parametrize("tie", ["incorrect", "half", "drop"])
def test_permutation_pvalues_agree_with_a_loop_over_resamples(tie):
    # the vectorized resamples against recounting each permuted data set
    from sklearn_smallfair.stats._allpairs import AllPairs, permutation_differences

    y, s, g = _small_data(13, 30, 3, 3, 2)
    codes = np.unique(g, return_inverse=True)[1]
    plan = AllPairs(y, s)
    first, second = _CROSS_AND_WITHIN
    _, null = permutation_differences(
        plan,
        codes,
        2,
        first,
        second,
        tie=tie,
        n_resamples=40,
        rng=np.random.default_rng(4),
    )
    # the same permutations, drawn the same way
    rng = np.random.default_rng(4)
    by_label = np.argsort(plan.label_rank, kind="stable")
    keys = rng.random((40, len(y))) + plan.label_rank[by_label]
    order = np.argsort(keys, axis=1)
    for row in range(40):
        perm = np.empty(len(y), dtype=codes.dtype)
        perm[by_label] = codes[by_label][order[row]]
        # labels of each group unchanged
        for level in np.unique(y):
            assert np.array_equal(
                np.bincount(perm[y == level], minlength=2),
                np.bincount(codes[y == level], minlength=2),
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            t = (
                comparative_separation_test(
                    y,
                    s,
                    sensitive_features=perm,
                    tie=tie,
                    correction=None,
                    stratify=False,  # the permutation test's pooled cells
                )
                .frame["difference"]
                .to_numpy()
            )
        np.testing.assert_allclose(null[row], t, rtol=1e-12, atol=1e-15)


def test_permutation_more_groups_power_and_relabelling():
    # three groups: each family's permutation p-values adjusted by Holm; a clear
    # violation (group "z" scored lower among the high labels) is detected; the
    # p-values do not depend on the names of the groups
    y, s, g = _story_points(3, n=240)
    s = s - 1.0 * ((g == "z") & (y >= 5))
    kw = dict(method="permutation", n_resamples=500, random_state=0)
    res = comparative_separation_test(y, s, sensitive_features=g, **kw)
    for test in ("cross", "within"):
        sub = res.frame[res.frame["test"] == test]
        np.testing.assert_allclose(
            sub["p_adjusted"], adjust_pvalues(sub["p_value"].to_numpy(), "holm")
        )
    assert res.violated and res.p_value_within <= 0.01
    renamed = np.array([{"x": "c", "y": "b", "z": "a"}[v] for v in g])
    other = comparative_separation_test(y, s, sensitive_features=renamed, **kw)
    assert sorted(other.frame["p_value"]) == pytest.approx(sorted(res.frame["p_value"]))


def test_permutation_errors_and_warnings():
    y, s, g = _story_points(3, n=120)
    with pytest.raises(ValueError, match="not available with given pairs"):
        comparative_separation_test(
            y, s, sensitive_features=g, pairs=[[0, 1], [2, 3]], method="permutation"
        )
    with pytest.raises(ValueError, match=r"not available with pairs drawn"):
        comparative_separation_test(
            y, s, sensitive_features=g, n_pairs=100, method="permutation"
        )
    with pytest.raises(InvalidParameterError, match="'n_resamples' parameter"):
        comparative_separation_test(
            y, s, sensitive_features=g, method="permutation", n_resamples=99
        )
    # all labels distinct: nothing to permute within label strata
    rng = np.random.default_rng(0)
    with pytest.warns(UserWarning, match="only 1 distinct way"):
        res = comparative_separation_test(
            rng.normal(size=50),
            rng.normal(size=50),
            sensitive_features=rng.choice(["a", "b"], 50),
            method="permutation",
            n_resamples=100,
            random_state=0,
        )
    assert (res.frame["p_value"] == 1.0).all()


# =====================================================================================
# 4. Simulation: TPR(a, b) = TPR_a TNR_b, and agreement with separation
# =====================================================================================
def test_binary_classifier_identity_tpr_product():
    rng = np.random.default_rng(20261121)
    n = 200_000
    c, y, a = _sample_law(LAWS_VIOLATED[2], n, rng)
    pairs = make_comparative_pairs(y, n_pairs=2_000_000, random_state=1)
    res = comparative_separation_test(y, c, sensitive_features=a, pairs=pairs)
    sep = separation_test(y, c, sensitive_features=a).groups.set_index("group")
    tpr = sep["tpr"]
    tnr = 1 - sep["fpr"]
    law = np.asarray(LAWS_VIOLATED[2])
    for ga in (0, 1):
        for gb in (0, 1):
            row = res.table.loc[(ga, gb)]
            mu = row["tpr"]
            # given the items, each counted pair is a uniform draw from the
            # (positive of a) x (negative of b) pairs: a binomial proportion whose
            # mean is exactly the sample product
            se = math.sqrt(mu * (1 - mu) / row["n"])
            assert abs(mu - tpr[ga] * tnr[gb]) < 4 * se
            # and the population identity, within the item-clustered error (plus
            # the sampling error of the product, of the same order)
            in_a = CELLS[:, 2] == ga
            in_b = CELLS[:, 2] == gb
            pos, neg = CELLS[:, 1] == 1, CELLS[:, 1] == 0
            tpr_a = law[in_a & pos & (CELLS[:, 0] == 1)].sum() / law[in_a & pos].sum()
            tnr_b = law[in_b & neg & (CELLS[:, 0] == 0)].sum() / law[in_b & neg].sum()
            assert abs(mu - tpr_a * tnr_b) < 4 * math.sqrt(2) * row["se"]


@pytest.mark.parametrize("law", LAWS_VIOLATED)
def test_both_tests_reject_violating_laws(law):
    rng = np.random.default_rng(7)
    c, y, a = _sample_law(law, 20_000, rng)
    sep = separation_test(y, c, sensitive_features=a)
    comp = comparative_separation_test(y, c, sensitive_features=a, random_state=0)
    assert sep.violated and comp.violated


def _rejection_rates(n, n_repeats, seed, **kwargs):
    rng = np.random.default_rng(seed)
    sep = comp = 0
    for r in range(n_repeats):
        c, y, a = _sample_law(LAW_NULL, n, rng)
        sep += separation_test(y, c, sensitive_features=a).violated
        comp += comparative_separation_test(
            y, c, sensitive_features=a, random_state=r, **kwargs
        ).violated
    return sep / n_repeats, comp / n_repeats


def test_null_law_calibration():
    # under the law satisfying separation, each joint verdict rejects at a rate
    # near 1 - (1 - alpha)^2 = 0.0975
    n_repeats = 300
    sep, comp = _rejection_rates(1000, n_repeats, seed=11)
    lo, hi = _mc_bounds(JOINT_NULL_RATE, n_repeats)
    assert lo < sep < hi
    assert lo < comp < hi


@pytest.mark.slow
def test_sampled_pairs_calibration_long():
    # the published procedure: 2 n random pairs
    n_repeats = 2000
    sep, comp = _rejection_rates(2000, n_repeats, seed=12, n_pairs=4000)
    lo, hi = _mc_bounds(JOINT_NULL_RATE, n_repeats)
    assert lo < sep < hi
    # the clustered variance is asymptotic: allow a small excess
    assert lo < comp < hi + 0.02
    # with 2n random pairs every item is in about four pairs; treating the pairs
    # as independent then rejects far more often than the nominal rate
    _, naive = _rejection_rates(
        2000, 400, seed=13, n_pairs=4000, variance="independent"
    )
    assert naive > 0.2


# Null data sets of the calibration table (the user guide's "Size" table):
# binary labels with the predicted labels as scores, from LAW_NULL (the groups'
# prevalences differ, 0.55 and 0.45); integer labels 0..4 drawn independently of
# the group, scores round(y / 2 + N(0, 1), 1). Both satisfy separation, and so
# H0c and H0w.
def _null_items(kind, n, rng):
    if kind == "binary":
        c, y, a = _sample_law(LAW_NULL, n, rng)
        return y, c.astype(np.float64), a
    a = (rng.random(n) < 0.4).astype(np.int64)
    y = rng.integers(0, 5, n)
    return y, np.round(0.5 * y + rng.normal(size=n), 1), a


def _null_pvalues(kind, n, n_repeats, n_resamples, seed):
    """P-values (cross, within) of the asymptotic test on ``n_repeats`` null data
    sets, and of the permutation test on the first ``n_perm`` of them."""
    from scipy.special import stdtr

    from sklearn_smallfair.stats._allpairs import (
        AllPairs,
        count_all_pairs,
        permutation_differences,
    )
    from sklearn_smallfair.stats._permutation import permutation_pvalue

    rng = np.random.default_rng(seed)
    asym, perm = [], []
    first, second = _CROSS_AND_WITHIN
    n_perm = n_repeats if n_resamples else 0
    for _ in range(n_repeats):
        y, s, a = _null_items(kind, n, rng)
        if np.unique(a).size < 2:
            continue
        plan = AllPairs(y, s)
        c = count_all_pairs(plan, a, 2, tie="incorrect", variance="u_statistic")
        if (c.n == 0).any():
            continue
        t = c.tpr
        v_w, df_w = c.within(1, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.array(
                [
                    (t[1, 0] - t[0, 1]) / np.sqrt(c.var_cross[1, 0]),
                    (t[1, 1] - t[0, 0]) / np.sqrt(v_w),
                ]
            )
        z = np.where(np.isnan(z), 0.0, z)
        asym.append(2 * stdtr(np.array([c.df_cross[1, 0], df_w]), -np.abs(z)))
        if len(perm) < n_perm:
            observed, null = permutation_differences(
                plan,
                a,
                2,
                first,
                second,
                tie="incorrect",
                n_resamples=n_resamples,
                rng=rng,
            )
            perm.append(permutation_pvalue(np.abs(observed), np.abs(null).T))
    return np.array(asym), np.array(perm)


CALIBRATION_CASES = {
    # (kind, n): (data sets, data sets of the permutation test)
    ("binary", 50): (2000, 600),
    ("binary", 200): (2000, 600),
    ("binary", 1000): (1000, 300),
    ("integer", 50): (2000, 600),
    ("integer", 200): (2000, 600),
    ("integer", 1000): (1000, 300),
}


@pytest.mark.slow
def test_calibration_table_all_pairs_and_permutation(capsys):
    # the joint verdict min(p_cross, p_within) <= alpha has the nominal rate
    # 1 - (1 - alpha)^2 = 0.0975 (alpha = 0.05 per test); the asymptotic test
    # must reject at most 1.5 points above it (up to two Monte Carlo standard
    # errors), the permutation test at most two standard errors above it
    rows = []
    for seed, ((kind, n), (n_repeats, n_perm)) in enumerate(CALIBRATION_CASES.items()):
        asym, _ = _null_pvalues(kind, n, n_repeats, 0, seed)
        _, perm = _null_pvalues(kind, n, n_perm, 100, 1000 + seed)
        for method, p in (("asymptotic", asym), ("permutation", perm)):
            joint = (p.min(axis=1) <= ALPHA).mean()
            se = math.sqrt(JOINT_NULL_RATE * (1 - JOINT_NULL_RATE) / len(p))
            rows.append(
                (
                    kind,
                    n,
                    method,
                    len(p),
                    (p[:, 0] <= ALPHA).mean(),
                    (p[:, 1] <= ALPHA).mean(),
                    joint,
                    se,
                )
            )
            assert len(p) >= 0.95 * (n_repeats if method == "asymptotic" else n_perm)
            bound = 0.015 if method == "asymptotic" else 0.0
            assert joint <= JOINT_NULL_RATE + bound + 2 * se, rows[-1]
            for k in (0, 1):
                se_1 = math.sqrt(ALPHA * (1 - ALPHA) / len(p))
                assert (p[:, k] <= ALPHA).mean() <= ALPHA + bound + 2 * se_1, rows[-1]
    with capsys.disabled():
        print("\nlabels   items  method       sets  cross  within  joint  (MC se)")
        for kind, n, method, m, c, w, j, se in rows:
            print(
                f"{kind:8s} {n:5d}  {method:11s} {m:5d}  {c:.3f}  {w:.3f}   "
                f"{j:.3f}  ({se:.3f})"
            )


# =====================================================================================
# 5. Labels, judgments, reproducibility
# =====================================================================================
def _story_points(seed=0, n=300):
    rng = np.random.default_rng(seed)
    points = rng.choice([1, 2, 3, 5, 8, 13, 21], size=n)
    g = rng.choice(["x", "y", "z"], size=n)
    s = np.log(points) + rng.normal(scale=0.7, size=n) + 0.3 * (g == "z")
    return points, s, g


@pytest.mark.parametrize(
    "transform",
    [np.log, np.sqrt, lambda v: v**3 - 7, lambda v: (v > 4).astype(float) + v / 100],
)
def test_regression_labels_invariant_to_monotone_transform(transform):
    y, s, g = _story_points()
    pairs = make_comparative_pairs(y, random_state=3)
    base = comparative_separation_test(y, s, sensitive_features=g, pairs=pairs)
    other = comparative_separation_test(
        transform(y.astype(float)), s, sensitive_features=g, pairs=pairs
    )
    pd.testing.assert_frame_equal(base.table, other.table)
    pd.testing.assert_frame_equal(base.frame, other.frame)
    # drawn pairs depend on the labels only through ties: the same seed gives the
    # same pairs for any strictly increasing transform
    drawn = make_comparative_pairs(transform(y.astype(float)), random_state=3)
    np.testing.assert_array_equal(drawn, pairs)


def test_judgments_equal_pointwise_input():
    y, s, g = _story_points(1)
    pairs = make_comparative_pairs(y, random_state=4)
    pointwise = comparative_separation_test(y, s, sensitive_features=g, pairs=pairs)
    judgments = np.sign(y[pairs[:, 0]] - y[pairs[:, 1]])
    explicit = comparative_separation_test(
        y_score=s, sensitive_features=g, pairs=pairs, judgments=judgments
    )
    pd.testing.assert_frame_equal(pointwise.table, explicit.table)
    pd.testing.assert_frame_equal(pointwise.frame, explicit.frame)
    booleans = comparative_separation_test(
        y_score=s, sensitive_features=g, pairs=pairs, judgments=judgments > 0
    )
    pd.testing.assert_frame_equal(booleans.frame, explicit.frame)
    as_list = comparative_separation_test(
        y_score=list(s),
        sensitive_features=pd.Series(g),
        pairs=pairs.tolist(),
        judgments=judgments.astype(float).tolist(),
    )
    pd.testing.assert_frame_equal(as_list.frame, explicit.frame)


def test_make_comparative_pairs():
    y = np.array([0, 1, 1, 0, 2, 2, 2])
    pairs = make_comparative_pairs(y, random_state=0)
    assert pairs.dtype == np.int64 and pairs.ndim == 2 and pairs.shape[1] == 2
    assert pairs.shape[0] <= 2 * len(y)
    assert (y[pairs[:, 0]] != y[pairs[:, 1]]).all()
    again = make_comparative_pairs(y, random_state=0)
    np.testing.assert_array_equal(pairs, again)
    big = make_comparative_pairs(y, n_pairs=10_000, random_state=1)
    assert 0.6 * 10_000 < big.shape[0] < 10_000  # P(y_i != y_j) = 1 - 17/49
    # both orders of the items appear, and the draws depend on the seed
    assert (big[:, 0] < big[:, 1]).any() and (big[:, 0] > big[:, 1]).any()
    assert not np.array_equal(make_comparative_pairs(y, random_state=2), pairs)
    rng = np.random.default_rng(0)
    assert make_comparative_pairs(y, random_state=rng).shape[1] == 2
    assert make_comparative_pairs([True, False, True]).shape[1] == 2


def test_reproducible_with_random_state():
    # drawn pairs (n_pairs): the seed fixes the draw
    y, s, g = _story_points(2)
    kw = dict(sensitive_features=g, n_pairs=2 * len(y))
    r1 = comparative_separation_test(y, s, random_state=9, **kw)
    r2 = comparative_separation_test(y, s, random_state=9, **kw)
    r3 = comparative_separation_test(y, s, random_state=10, **kw)
    pd.testing.assert_frame_equal(r1.frame, r2.frame)
    np.testing.assert_array_equal(r1.pairs, r2.pairs)
    assert not np.array_equal(r1.pairs, r3.pairs)
    assert r1.pair_source == "drawn" and r1.variance == "clustered"
    short = comparative_separation_test(
        y, s, sensitive_features=g, n_pairs=50, random_state=9
    )
    assert short.pairs.shape[0] <= 50


def test_more_groups_table_and_corrections():
    y, s, g = _story_points(3, n=600)
    res = comparative_separation_test(y, s, sensitive_features=g, random_state=0)
    assert res.table.shape[0] == 9
    assert res.tpr_matrix.shape == (3, 3)
    frame = res.frame
    assert (frame["test"] == "cross").sum() == 3 and (
        frame["test"] == "within"
    ).sum() == 3
    for test in ("cross", "within"):
        sub = frame[frame["test"] == test]
        np.testing.assert_allclose(
            sub["p_adjusted"], adjust_pvalues(sub["p_value"].to_numpy(), "holm")
        )
    cross = frame[frame["test"] == "cross"]
    assert list(zip(cross["higher_a"], cross["lower_a"])) == [
        ("y", "x"),
        ("z", "x"),
        ("z", "y"),
    ]
    assert res.p_value_cross == pytest.approx(cross["p_adjusted"].min())
    assert np.isnan(res.z_cross) and np.isnan(res.z_within)
    bonf = comparative_separation_test(
        y, s, sensitive_features=g, random_state=0, correction="bonferroni"
    )
    np.testing.assert_allclose(
        bonf.frame["p_adjusted"], np.minimum(1, 3 * bonf.frame["p_value"])
    )
    # intersectional groups from two columns
    two = pd.DataFrame({"g": g, "h": np.arange(len(g)) % 2})
    inter = comparative_separation_test(y, s, sensitive_features=two, random_state=0)
    assert inter.table.shape[0] == 36


def test_empty_cell_warns_and_gives_nan_tests():
    # group b has only positives: no pair has a truly-lower item in b
    y = [1, 0, 1, 0, 1, 1]
    s = [0.9, 0.1, 0.8, 0.3, 0.2, 0.7]
    g = ["a", "a", "a", "a", "b", "b"]
    with pytest.warns(
        UndefinedGroupMetricWarning,
        match=r"no usable pairs\) for cell\(s\) \('a', 'b'\)",
    ):
        res = comparative_separation_test(y, s, sensitive_features=g, random_state=0)
    assert np.isnan(res.table.loc[("a", "b"), "tpr"])
    assert np.isnan(res.table.loc[("b", "b"), "tpr"])
    assert np.isnan(res.p_value_cross) and np.isnan(res.p_value_within)
    assert res.violated is False


# =====================================================================================
# 6. Bad input
# =====================================================================================
Y4, S4, G4 = [1, 0, 2, 3], [0.1, 0.2, 0.3, 0.4], ["a", "b", "a", "b"]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(pairs=[[0, 4]]), ValueError, r"indices from 0 to 4.*4 items"),
        (dict(pairs=[[-1, 2]]), ValueError, r"valid indices 0\.\.3"),
        (dict(pairs=[[0, 1], [2, 2]]), ValueError, r"1 self-pair.*row 1"),
        (dict(pairs=[0, 1]), ValueError, r"shape \(n_pairs, 2\)"),
        (dict(pairs=[[0, 1, 2]]), ValueError, r"shape \(n_pairs, 2\)"),
        (dict(pairs=np.empty((0, 2), int)), ValueError, "pairs is empty"),
        (dict(pairs=[[0.5, 1]]), ValueError, "integer item indices"),
        (dict(pairs=[["0", "1"]]), TypeError, "integer item indices"),
        (dict(pairs=[[0, 1]], n_pairs=5), ValueError, "omit it when passing pairs"),
        (dict(n_pairs=0), InvalidParameterError, "'n_pairs' parameter"),
        (dict(n_pairs=10**9), InvalidParameterError, r"n_pairs.*50000000"),
        (dict(tie="random"), InvalidParameterError, "'tie' parameter"),
        (dict(variance="robust"), InvalidParameterError, "'variance' parameter"),
        (dict(alpha=0), InvalidParameterError, "'alpha' parameter"),
        (dict(correction="sidak"), InvalidParameterError, "'correction' parameter"),
        (dict(method="exact"), InvalidParameterError, "'method' parameter"),
        (dict(n_resamples=10), InvalidParameterError, "'n_resamples' parameter"),
        (
            dict(pairs=[[0, 1]], variance="u_statistic"),
            ValueError,
            "variance='u_statistic' is a variance of the count over all pairs",
        ),
        (dict(y_true=[1, 0, 2]), ValueError, "inconsistent lengths"),
        (dict(y_true=[1, 0, np.nan, 2]), ValueError, "y_true contains 1 missing"),
        (dict(y_score=[0.1, np.inf, 0.3, 0.4]), ValueError, "y_score contains 1"),
        (dict(y_score=None), ValueError, "y_score is required"),
        (dict(y_true=None), ValueError, "pass y_true"),
        (dict(y_true=["lo", "hi", "lo", "hi"]), TypeError, "y_true must be numeric"),
        (dict(y_score=np.ones((4, 2))), ValueError, "y_score must be 1-D"),
        (dict(sensitive_features=["a", "b"]), ValueError, r"2 rows but y_score has 4"),
        (dict(sensitive_features=["a"] * 4), ValueError, "at least two are needed"),
        (dict(sensitive_features={"g": G4}), TypeError, "got a dict"),
        (dict(sensitive_features=None), ValueError, "sensitive_features is required"),
        (dict(y_true=[1, 1, 1, 1], pairs=[[0, 1]]), ValueError, "tied labels"),
        (dict(y_true=[1, 1, 1, 1]), ValueError, "two different values"),
        (dict(judgments=[1]), ValueError, "not both"),
        (dict(y_true=None, judgments=[1]), ValueError, "judgments need pairs"),
        (
            dict(y_true=None, pairs=[[0, 1], [2, 3]], judgments=[1, 0]),
            ValueError,
            r"\+1 \(the first item.*\[0\]",
        ),
        (
            dict(y_true=None, pairs=[[0, 1], [2, 3]], judgments=[1, 2]),
            ValueError,
            r"got \[2\]",
        ),
        (
            dict(y_true=None, pairs=[[0, 1], [2, 3]], judgments=[1]),
            ValueError,
            "1 entries but pairs has 2 rows",
        ),
        (
            dict(y_true=None, pairs=[[0, 1]], judgments=[np.nan]),
            ValueError,
            "judgments contains 1 missing",
        ),
        (
            dict(y_true=None, pairs=[[0, 1]], judgments=["up"]),
            TypeError,
            r"judgments must be \+1/-1",
        ),
        (
            dict(y_true=None, pairs=[[0, 1]], judgments=[1], n_pairs=3),
            ValueError,
            "omit it with pairs",
        ),
    ],
)
def test_comparative_bad_input(kwargs, error, match):
    args = dict(y_true=Y4, y_score=S4, sensitive_features=G4)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        comparative_separation_test(**args)


def test_unusual_dtypes_and_few_drawn_pairs():
    y, s, g = _story_points(7, n=200)
    pairs = make_comparative_pairs(y, random_state=0)
    base = comparative_separation_test(y, s, sensitive_features=g, pairs=pairs)
    for variant in (pairs.astype(np.uint32), pairs.astype(np.int32), pairs * 1.0):
        other = comparative_separation_test(y, s, sensitive_features=g, pairs=variant)
        pd.testing.assert_frame_equal(base.frame, other.frame)
    huge = y.astype(np.int64) * 2**40 - 2**62  # spans more than int32
    other = comparative_separation_test(huge, s, sensitive_features=g, pairs=pairs)
    pd.testing.assert_frame_equal(base.frame, other.frame)
    # unsigned labels and scores (a difference would wrap around), non-integer
    # labels (not packed with the groups), many groups (wider pair codes)
    rank = np.unique(s, return_inverse=True)[1]
    ranked = comparative_separation_test(y, rank, sensitive_features=g, pairs=pairs)
    for labels, scores in (
        (y.astype(np.uint8), rank.astype(np.uint16)),
        (y * 0.37 + 0.05, rank.astype(np.uint64)),
    ):
        other = comparative_separation_test(
            labels, scores, sensitive_features=g, pairs=pairs
        )
        pd.testing.assert_frame_equal(ranked.frame, other.frame)
    many = np.arange(y.shape[0]) % 12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        wide = comparative_separation_test(y, s, sensitive_features=many, pairs=pairs)
    table, _, _, _ = _reference(
        y.tolist(), s.tolist(), many.tolist(), pairs, "incorrect"
    )
    for (a, b), (count, correct) in table.items():
        assert wide.table.loc[(a, b), "n"] == count
        assert wide.table.loc[(a, b), "correct"] == correct
    with pytest.raises(ValueError, match="none of the n_pairs=1 drawn pairs"):
        comparative_separation_test(
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            np.arange(10.0),
            sensitive_features=[0, 1] * 5,
            n_pairs=1,
            random_state=0,
        )


def test_make_comparative_pairs_bad_input():
    with pytest.raises(ValueError, match="two different values"):
        make_comparative_pairs([3, 3, 3])
    with pytest.raises(ValueError, match="two different values"):
        make_comparative_pairs([3])
    with pytest.raises(InvalidParameterError, match="'n_pairs' parameter"):
        make_comparative_pairs([0, 1], n_pairs=-2)
    with pytest.raises(InvalidParameterError, match="'n_pairs' parameter"):
        make_comparative_pairs([0, 1], n_pairs=2.5)
    with pytest.raises(InvalidParameterError, match="'random_state' parameter"):
        make_comparative_pairs([0, 1], random_state="seed")
    with pytest.raises(ValueError, match="missing or non-finite"):
        make_comparative_pairs([0, np.nan, 1])


def test_too_many_pairs_is_an_error_before_any_work():
    from sklearn_smallfair.stats._pairs import MAX_PAIRS

    y = np.arange(1000) % 3
    with pytest.raises(
        InvalidParameterError, match=rf"'n_pairs' parameter.*\[1, {MAX_PAIRS}\]"
    ):
        make_comparative_pairs(y, n_pairs=10**9)
    with pytest.raises(InvalidParameterError, match="'n_pairs' parameter"):
        comparative_separation_test(
            y, y, sensitive_features=y % 2, n_pairs=MAX_PAIRS + 1
        )
    assert make_comparative_pairs(y, n_pairs=10).shape[1] == 2


# =====================================================================================
# 7. Seeds and explicit judgments
# =====================================================================================
def test_drawn_pairs_are_reproducible_and_judgments_give_the_same_table():
    y, s, g = _story_points(4)
    res = comparative_separation_test(
        y, s, sensitive_features=g, n_pairs=500, tie="half", random_state=3
    )
    twin = comparative_separation_test(
        y, s, sensitive_features=g, n_pairs=500, tie="half", random_state=3
    )
    pd.testing.assert_frame_equal(res.frame, twin.frame)  # same seed
    tests = res.pvalues.index.get_level_values("test").tolist()
    assert tests == ["cross"] * 3 + ["within"] * 3
    # explicit pairs and judgments
    pairs = res.pairs
    jud = np.sign(y[pairs[:, 0]] - y[pairs[:, 1]])
    keep = jud != 0
    judged = comparative_separation_test(
        y_score=s, sensitive_features=g, pairs=pairs[keep], judgments=jud[keep],
        tie="half",
    )  # fmt: skip
    pd.testing.assert_frame_equal(judged.table, res.table)
    # defaults: all pairs, and random_state=0
    default = comparative_separation_test(y, s, sensitive_features=g)
    assert default.pairs is None and default.pair_source == "all"
    perm = comparative_separation_test(
        y, s, sensitive_features=g, method="permutation", n_resamples=200
    )
    assert perm.method == "permutation"
    pd.testing.assert_frame_equal(perm.table, default.table)
    again = comparative_separation_test(
        y, s, sensitive_features=g, method="permutation", n_resamples=200,
        random_state=0,
    )  # fmt: skip
    pd.testing.assert_frame_equal(again.frame, perm.frame)


# =====================================================================================
# 8. Scorer
# =====================================================================================


@pytest.fixture
def classification():
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x0", "x1", "x2"])
    A = pd.Series(rng.choice(["f", "m"], size=n, p=[0.3, 0.7]), name="sex")
    y = pd.Series((X["x0"] + 0.6 * (A == "m") + rng.normal(size=n) > 0).astype(int))
    return X, y, A


def test_statistic_function():
    y, s, g = _story_points(5)
    gap = comparative_separation_statistic(y, s, sensitive_features=g)
    res = comparative_separation_test(y, s, sensitive_features=g, random_state=0)
    assert gap == pytest.approx(res.frame["difference"].abs().max())
    p = comparative_separation_statistic(
        y, s, sensitive_features=g, statistic="min_pvalue"
    )
    assert p == pytest.approx(min(res.p_value_cross, res.p_value_within))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        comparative_separation_statistic(y, s)
    with pytest.raises(InvalidParameterError, match="'statistic' parameter"):
        comparative_separation_statistic(y, s, sensitive_features=g, statistic="mean")


def test_statistic_nan_warns_naming_the_cell():
    # group "b" has a single label: its within cell (b, b) has no pairs
    y = [0, 1, 2, 0, 1, 2, 1, 1]
    s = [0.1, 0.5, 0.9, 0.2, 0.4, 0.8, 0.3, 0.6]
    g = ["a"] * 6 + ["b"] * 2
    for statistic in ("max_gap", "min_pvalue"):
        with pytest.warns(UndefinedGroupMetricWarning, match=r"\('b', 'b'\)") as rec:
            value = comparative_separation_statistic(
                y, s, sensitive_features=g, statistic=statistic, stratify=False
            )
        assert len(rec) == 1
        if statistic == "max_gap":
            assert np.isnan(value) and "mean over folds" in str(rec[0].message)
        else:  # the cross test of the pooled cells is defined
            assert 0 <= value <= 1 and "left out" in str(rec[0].message)
    # stratified (the default), the cross cells (a, b) and (b, a) have pairs but
    # no label pair in common (b's items all have label 1): the cross test is NaN
    # too, and the one warning says so
    for statistic in ("max_gap", "min_pvalue"):
        with pytest.warns(UndefinedGroupMetricWarning, match=r"\('b', 'b'\)") as rec:
            value = comparative_separation_statistic(
                y, s, sensitive_features=g, statistic=statistic
            )
        assert len(rec) == 1 and np.isnan(value)
        message = str(rec[0].message)
        assert "no label pair in common" in message and "mean over folds" in message
        assert "cross ('b', 'a') vs ('a', 'b')" in message
    with pytest.raises(ValueError, match="no label pair in common"):
        comparative_separation_statistic(y, s, sensitive_features=g, nan_policy="raise")
    with pytest.warns(UndefinedGroupMetricWarning) as rec:
        res = comparative_separation_test(y, s, sensitive_features=g)
    messages = [str(w.message) for w in rec]
    assert len(messages) == 2 and all(w.filename == __file__ for w in rec)
    assert "no label pair (stratum) in common" in messages[1]
    assert res.frame["p_value"].isna().all()


def test_scorer_grid_search_with_routing(classification, routing):
    X, y, A = classification
    scorer = make_comparative_separation_scorer(n_pairs=3000)
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        LogisticRegression(),
        {"C": [0.01, 1.0]},
        scoring={"gap": scorer, "acc": "accuracy"},
        refit="acc",
        cv=cv,
        error_score="raise",
    ).fit(X, y, sensitive_features=A)
    scores = search.cv_results_["mean_test_gap"]
    assert np.isfinite(scores).all() and (scores <= 0).all()
    # a fold's score recomputed by hand: decision_function scores, the fold's items
    train, test = next(cv.split(X, y))
    est = LogisticRegression(C=1.0).fit(X.iloc[train], y.iloc[train])
    by_hand = comparative_separation_statistic(
        y.iloc[test].to_numpy(),
        est.decision_function(X.iloc[test]),
        sensitive_features=A.iloc[test],
        n_pairs=3000,
    )
    assert search.cv_results_["split0_test_gap"][1] == pytest.approx(-by_hand)


def test_scorer_regression_cross_validate_and_min_pvalue(routing):
    y, s, g = _story_points(6, n=450)
    X = np.column_stack([s, np.random.default_rng(0).normal(size=len(s))])
    scorer = make_comparative_separation_scorer(statistic="min_pvalue")
    assert scorer._sign == 1
    assert make_comparative_separation_scorer()._sign == -1
    res = cross_validate(
        Ridge(),
        X,
        np.log(y),
        cv=3,
        scoring=scorer,
        params={"sensitive_features": g},
        error_score="raise",
    )
    assert ((res["test_score"] >= 0) & (res["test_score"] <= 1)).all()


def test_scorer_without_routing_explains(classification):
    X, y, _ = classification
    assert sklearn.get_config()["enable_metadata_routing"] is False
    scorer = make_comparative_separation_scorer()
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_validate(
            LogisticRegression(), X, y, cv=3, scoring=scorer, error_score="raise"
        )
    assert sklearn.get_config()["enable_metadata_routing"] is False


def test_scorer_bad_options_and_pickle():
    with pytest.raises(InvalidParameterError, match="'statistic' parameter"):
        make_comparative_separation_scorer(statistic="gap")
    with pytest.raises(InvalidParameterError, match="'tie' parameter"):
        make_comparative_separation_scorer(tie="none")
    with pytest.raises(InvalidParameterError, match="'n_pairs' parameter"):
        make_comparative_separation_scorer(n_pairs=0)
    with pytest.raises(InvalidParameterError, match="'response_method' parameter"):
        make_comparative_separation_scorer(response_method="foo")
    scorer = make_comparative_separation_scorer(n_pairs=100)
    again = pickle.loads(pickle.dumps(scorer))
    assert "n_pairs=100" in repr(again)
