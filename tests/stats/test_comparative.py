"""Tests of the comparative separation test.

Statistics are checked three ways (DESIGN.md section 6): closed forms on hand-made
data (z and p computed by hand), an independent per-pair reference implementation
of the counts and of the item-clustered variance, and simulation from the 8-cell
laws P(C, Y, A) with tolerances from binomial standard errors, where the verdicts
are also compared with those of the separation test.
"""

import math
import pickle
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.stats import (
    ComparativeSeparationResult,
    ComparativeSeparationTest,
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
    assert res.pvalue_cross == pytest.approx(math.erfc(-z / math.sqrt(2)), rel=1e-12)
    assert res.pvalue_cross == pytest.approx(0.220671, abs=1e-6)
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
    assert np.isnan(clustered.pvalue_within) and np.isnan(clustered.z_within)
    assert clustered.violated == (clustered.pvalue_cross <= ALPHA)


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
# 2. Simulation: TPR(a, b) = TPR_a TNR_b, and agreement with separation
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


def _rejection_rates(n, n_repeats, seed, variance="clustered"):
    rng = np.random.default_rng(seed)
    sep = comp = 0
    for r in range(n_repeats):
        c, y, a = _sample_law(LAW_NULL, n, rng)
        sep += separation_test(y, c, sensitive_features=a).violated
        comp += comparative_separation_test(
            y, c, sensitive_features=a, random_state=r, variance=variance
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
def test_null_law_calibration_long():
    n_repeats = 2000
    sep, comp = _rejection_rates(2000, n_repeats, seed=12)
    lo, hi = _mc_bounds(JOINT_NULL_RATE, n_repeats)
    assert lo < sep < hi
    # the clustered variance is asymptotic: allow a small excess
    assert lo < comp < hi + 0.02
    # with 2n random pairs every item is in about four pairs; treating the pairs
    # as independent then rejects far more often than the nominal rate
    _, naive = _rejection_rates(2000, 400, seed=13, variance="independent")
    assert naive > 0.2


# =====================================================================================
# 3. Labels, judgments, reproducibility
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
    y, s, g = _story_points(2)
    r1 = comparative_separation_test(y, s, sensitive_features=g, random_state=9)
    r2 = comparative_separation_test(y, s, sensitive_features=g, random_state=9)
    r3 = comparative_separation_test(y, s, sensitive_features=g, random_state=10)
    pd.testing.assert_frame_equal(r1.frame, r2.frame)
    np.testing.assert_array_equal(r1.pairs, r2.pairs)
    assert not np.array_equal(r1.pairs, r3.pairs)
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
    assert res.pvalue_cross == pytest.approx(cross["p_adjusted"].min())
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
    assert np.isnan(res.pvalue_cross) and np.isnan(res.pvalue_within)
    assert res.violated is False


# =====================================================================================
# 4. Bad input
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
        (dict(n_pairs=0), ValueError, "n_pairs must be"),
        (dict(tie="random"), ValueError, "tie must be one of"),
        (dict(variance="robust"), ValueError, "variance must be one of"),
        (dict(alpha=0), ValueError, "alpha must be"),
        (dict(correction="sidak"), ValueError, "correction must be one of"),
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
    with pytest.raises(ValueError, match="n_pairs must be"):
        make_comparative_pairs([0, 1], n_pairs=-2)
    with pytest.raises(ValueError, match="n_pairs must be"):
        make_comparative_pairs([0, 1], n_pairs=2.5)
    with pytest.raises(TypeError, match="random_state must be"):
        make_comparative_pairs([0, 1], random_state="seed")
    with pytest.raises(ValueError, match="missing or non-finite"):
        make_comparative_pairs([0, np.nan, 1])


# =====================================================================================
# 5. Estimator
# =====================================================================================
def test_comparative_estimator():
    y, s, g = _story_points(4)
    est = ComparativeSeparationTest(n_pairs=500, tie="half", random_state=3)
    params = est.get_params()
    assert params["n_pairs"] == 500 and params["tie"] == "half"
    assert params["variance"] == "clustered" and params["correction"] == "holm"
    assert "n_pairs=500" in repr(est) and "random_state=3" in repr(est)
    twin = clone(est)
    assert twin.get_params() == params
    est.fit(y, s, sensitive_features=g)
    twin.fit(y, s, sensitive_features=g)
    pd.testing.assert_frame_equal(est.results_, twin.results_)  # same seed
    res = comparative_separation_test(
        y, s, sensitive_features=g, n_pairs=500, tie="half", random_state=3
    )
    pd.testing.assert_frame_equal(est.table_, res.table)
    np.testing.assert_array_equal(est.pairs_, res.pairs)
    assert est.violated_ == res.violated
    pd.testing.assert_series_equal(est.pvalues_, res.pvalues)
    pd.testing.assert_series_equal(est.reject_, res.reject)
    tests = est.pvalues_.index.get_level_values("test").tolist()
    assert tests == ["cross"] * 3 + ["within"] * 3
    # explicit pairs and judgments (n_pairs is ignored then)
    pairs = res.pairs
    jud = np.sign(y[pairs[:, 0]] - y[pairs[:, 1]])
    keep = jud != 0
    est.fit(y_score=s, sensitive_features=g, pairs=pairs[keep], judgments=jud[keep])
    pd.testing.assert_frame_equal(est.table_, res.table)


# =====================================================================================
# 6. Scorer
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
    assert p == pytest.approx(min(res.pvalue_cross, res.pvalue_within))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        comparative_separation_statistic(y, s)
    with pytest.raises(ValueError, match="statistic must be one of"):
        comparative_separation_statistic(y, s, sensitive_features=g, statistic="mean")


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
    with pytest.raises(ValueError, match="statistic must be one of"):
        make_comparative_separation_scorer(statistic="gap")
    with pytest.raises(ValueError, match="tie must be one of"):
        make_comparative_separation_scorer(tie="none")
    with pytest.raises(ValueError, match="n_pairs must be"):
        make_comparative_separation_scorer(n_pairs=0)
    scorer = make_comparative_separation_scorer(n_pairs=100)
    again = pickle.loads(pickle.dumps(scorer))
    assert "n_pairs=100" in repr(again)
