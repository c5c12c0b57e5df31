"""The multiclass MATCH test against brute-force sums over all K x K matrices, the
binary test on hand-built one-vs-rest matrices, Monte Carlo and its size under H0."""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

from sklearn_smallfair.exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import multiclass_confusion_counts, multiclass_metric
from sklearn_smallfair.stats import adjust_pvalues, match_test, multiclass_match_test

K = 3


def _all_matrices(n, k):
    """Every k x k matrix of total n by stars and bars (itertools, not the
    package's enumeration)."""
    d = k * k
    rows = []
    for bars in itertools.combinations(range(n + d - 1), d - 1):
        edges = (-1, *bars, n + d - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(d)])
    return np.array(rows).reshape(-1, k, k)


def _brute_tails(metric, average, n, p_ref, observed):
    """P(S <= s | defined), P(S >= s | defined), P(undefined) by a plain sum."""
    cms = _all_matrices(n, K)
    pmf = stats.multinomial.pmf(cms.reshape(len(cms), -1), n, p_ref.reshape(-1))
    assert np.isclose(pmf.sum(), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = multiclass_metric(metric, cms, average=average)
    defined = ~np.isnan(values)
    tol = 1e-12 * max(1.0, abs(observed))
    p_def = pmf[defined].sum()
    lower = pmf[defined & (values <= observed + tol)].sum() / p_def
    upper = pmf[defined & (values >= observed - tol)].sum() / p_def
    return lower, upper, 1.0 - p_def


def _reference(seed):
    rng = np.random.default_rng(seed)
    ref = rng.integers(1, 30, size=(K, K)) + np.diag(rng.integers(20, 60, size=K))
    return ref


@pytest.mark.parametrize(
    "metric, average",
    [
        ("kappa", None),
        ("mcc", None),
        ("accuracy", None),
        ("balanced_accuracy", None),
        ("tpr", "macro"),
        ("f1", "weighted"),
        ("ppv", "micro"),
    ],
)
@pytest.mark.parametrize(
    "n, seed", [(6, 0), pytest.param(9, 1, marks=pytest.mark.slow)]
)
def test_enumeration_equals_brute_force_sum(metric, average, n, seed):
    ref = _reference(seed)
    p_ref = ref / ref.sum()
    rng = np.random.default_rng(100 + seed)
    # groups: a typical draw, one far from the reference, and a diagonal one
    groups = np.stack(
        [
            rng.multinomial(n, p_ref.reshape(-1)).reshape(K, K),
            rng.multinomial(n, np.full(K * K, 1 / K**2)).reshape(K, K),
            np.diag([n - 2 * (n // 3), n // 3, n // 3]),
        ]
    )
    res = multiclass_match_test(
        counts=groups,
        reference=ref,
        metric=metric,
        average=average,
        method="enumerate",
        correction=None,
        confidence_level=None,
    ).frame
    checked = 0
    for g in range(len(groups)):
        s = float(multiclass_metric(metric, groups[g], average=average))
        row = res.iloc[g]
        assert row["score"] == pytest.approx(s) or np.isnan(s)
        if np.isnan(s):
            assert np.isnan(row["p_value"])
            continue
        lower, upper, undefined = _brute_tails(metric, average, n, p_ref, s)
        assert row["p_lower_tail"] == pytest.approx(lower, rel=1e-9, abs=1e-14)
        assert row["p_upper_tail"] == pytest.approx(upper, rel=1e-9, abs=1e-14)
        assert row["p_undefined"] == pytest.approx(undefined, abs=1e-12)
        assert row["p_value"] == pytest.approx(min(1.0, 2 * min(lower, upper)))
        assert row["method"] == "enumerate"
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("metric, average", [("kappa", None), ("tpr", "macro")])
def test_reference_range_inverts_the_tails(metric, average):
    # the central range of the exact null law: the smallest value whose lower
    # tail exceeds (1 - level) / 2 and the largest whose upper tail does, so that
    # any score outside it has a two-sided p-value of at most 1 - level
    n, level = 6, 0.9
    ref = _reference(3)
    p_ref = ref / ref.sum()
    # groups of size n: all in one cell, the diagonal, off the diagonal
    groups = np.stack(
        [np.diag([n, 0, 0]), np.diag([2, 2, 2]), np.eye(K, k=1, dtype=int) * 3]
    )
    res = multiclass_match_test(
        counts=groups,
        reference=ref,
        metric=metric,
        average=average,
        method="enumerate",
        correction=None,
        confidence_level=level,
    ).frame
    assert (res["n"] == n).all()
    assert res["reference_range_low"].nunique() == 1  # same size, same reference
    low, high = res["reference_range_low"].iloc[0], res["reference_range_high"].iloc[0]
    from sklearn_smallfair._multiclass_counts import enumerate_multiclass_matrices

    mats = enumerate_multiclass_matrices(n, K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = multiclass_metric(metric, mats, average=average)
    flat = mats.reshape(len(mats), -1)
    pmf = stats.multinomial.pmf(flat, n, p_ref.reshape(-1))
    ok = ~np.isnan(values)
    v, w = values[ok], pmf[ok] / pmf[ok].sum()
    half = (1 - level) / 2
    support = np.unique(v)
    below = np.array([w[v <= x + 1e-12].sum() for x in support])
    above = np.array([w[v >= x - 1e-12].sum() for x in support])
    assert low == pytest.approx(support[below > half].min(), abs=1e-12)
    assert high == pytest.approx(support[above > half].max(), abs=1e-12)
    outside = (res["score"] < low - 1e-12) | (res["score"] > high + 1e-12)
    assert outside.any()
    assert (res.loc[outside, "p_value"] <= 1 - level + 1e-12).all()


@pytest.mark.parametrize(
    "group",
    [
        np.array([[2, 1, 1], [0, 2, 0], [1, 0, 0]]),
        pytest.param(
            np.array([[2, 1, 1], [1, 3, 0], [2, 0, 2]]), marks=pytest.mark.slow
        ),
    ],
)
def test_enumeration_and_the_aggregation_property(group):
    """At n = 7 and n = 12 (125,970 matrices): kappa by enumeration, and the
    per-class TPR of the binary test (Multinomial(n, q_k) one-vs-rest) equals the
    brute-force sum over all 3 x 3 matrices."""
    n = int(group.sum())
    ref = _reference(3)
    p_ref = ref / ref.sum()
    res = multiclass_match_test(
        counts=group[None], reference=ref, metric="kappa", confidence_level=None
    ).frame
    lower, upper, _ = _brute_tails("kappa", None, n, p_ref, res["score"].iloc[0])
    assert res["p_lower_tail"].iloc[0] == pytest.approx(lower, rel=1e-9)
    assert res["p_upper_tail"].iloc[0] == pytest.approx(upper, rel=1e-9)

    per_class = multiclass_match_test(
        counts=group[None],
        reference=ref,
        metric="tpr",
        confidence_level=None,
        correction=None,
        method="exact",  # the published law: per class, the known reference
    ).frame
    cms = _all_matrices(n, K)
    pmf = stats.multinomial.pmf(cms.reshape(len(cms), -1), n, p_ref.reshape(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = multiclass_metric("tpr", cms)  # (N, K)
    observed = multiclass_metric("tpr", group)
    for k in range(K):
        ok = ~np.isnan(values[:, k])
        p_def = pmf[ok].sum()
        below = pmf[ok & (values[:, k] <= observed[k] + 1e-12)].sum() / p_def
        above = pmf[ok & (values[:, k] >= observed[k] - 1e-12)].sum() / p_def
        assert per_class["p_lower_tail"].iloc[k] == pytest.approx(below, rel=1e-9)
        assert per_class["p_upper_tail"].iloc[k] == pytest.approx(above, rel=1e-9)
        assert per_class["p_undefined"].iloc[k] == pytest.approx(1 - p_def, abs=1e-12)


def _hand_ovr(c, k):
    """(TP, FN, FP, TN) of class k written out cell by cell."""
    tp = c[k][k]
    fn = sum(c[k][j] for j in range(len(c)) if j != k)
    fp = sum(c[i][k] for i in range(len(c)) if i != k)
    tn = sum(c[i][j] for i in range(len(c)) for j in range(len(c)) if i != k and j != k)
    return [tp, fn, fp, tn]


@pytest.mark.parametrize("metric", ["tpr", "ppv", "f1"])
@pytest.mark.parametrize("reference", ["rest", "total", "b"])
def test_per_class_path_equals_binary_test_on_hand_built_ovr(metric, reference):
    counts = {
        "a": [[30, 5, 1], [6, 25, 4], [2, 5, 22]],
        "b": [[20, 4, 2], [5, 18, 3], [1, 4, 16]],
        "c": [[2, 3, 1], [2, 1, 1], [1, 2, 3]],
    }
    labels = ["low", "mid", "high"]
    res = multiclass_match_test(
        counts=counts,
        labels=labels,
        metric=metric,
        reference=reference,
        random_state=0,
    ).frame
    total = np.sum(list(counts.values()), axis=0)
    binary, refs = {}, []
    for g, c in counts.items():
        if reference == "rest":
            ref = total - np.asarray(c)
        elif reference == "total":
            ref = total
        else:
            ref = np.asarray(counts["b"])
        for k, label in enumerate(labels):
            binary[(g, label)] = _hand_ovr(c, k)
            refs.append(_hand_ovr(ref.tolist(), k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceWarning)  # references of 73
        expected = match_test(
            counts={f"{g}-{c}": v for (g, c), v in binary.items()},
            reference=np.array(refs),
            metric=metric,
            correction=None,
            random_state=0,
        ).frame
    assert res[["group", "class"]].apply(tuple, axis=1).tolist() == list(binary)
    for column in (
        "n",
        "score",
        "reference_score",
        "p_lower_tail",
        "p_upper_tail",
        "p_value",
        "p_undefined",
        "score_low",
    ):
        np.testing.assert_allclose(
            res[column].to_numpy(float), expected[column].to_numpy(float), rtol=1e-12
        )
    # the reference's range at the group's size: exact for the joint ratios; for
    # f1 the quantiles of null draws keyed by the group's label (the labels here
    # differ, and at these sizes a quantile jumps between the few values f1
    # takes), so only ordered around the reference's value
    low = res["reference_range_low"].to_numpy(float)
    high = res["reference_range_high"].to_numpy(float)
    if metric == "f1":
        ref = res["reference_score"].to_numpy(float)
        assert ((low <= ref + 1e-12) & (ref <= high + 1e-12)).all()
    else:
        np.testing.assert_allclose(low, expected["reference_range_low"], rtol=1e-12)
        np.testing.assert_allclose(high, expected["reference_range_high"], rtol=1e-12)
    assert (res["method"] == expected["method"]).all()
    # one family across groups and classes
    np.testing.assert_allclose(
        res["p_adjusted"], adjust_pvalues(expected["p_value"].to_numpy(), "holm")
    )


def test_montecarlo_within_its_standard_error_of_exact():
    ref = _reference(5)
    rng = np.random.default_rng(5)
    groups = np.stack(
        [rng.multinomial(10, np.full(K * K, 1 / K**2)).reshape(K, K) for _ in range(3)]
    )
    common = {
        "counts": groups,
        "reference": ref,
        "confidence_level": None,
        "correction": None,
    }
    for metric, average in (("kappa", None), ("f1", "macro")):
        exact = multiclass_match_test(
            metric=metric, average=average, method="enumerate", **common
        ).frame
        mc = multiclass_match_test(
            metric=metric,
            average=average,
            method="montecarlo",
            n_resamples=40_000,
            random_state=1,
            **common,
        ).frame
        assert (mc["se"] > 0).all()
        assert "se" not in exact.columns
        # the (count + 1) / (base + 1) estimate is biased by at most 1 / n_resamples
        gap = np.abs(mc["p_value"] - exact["p_value"])
        assert (gap <= 4 * mc["se"] + 1e-4).all(), (gap, mc["se"])


def test_montecarlo_is_reproducible_and_keyed_by_group():
    ref = _reference(6)
    groups = {
        "x": [[5, 2, 1], [1, 6, 2], [0, 3, 9]],
        "y": [[9, 1, 1], [2, 8, 0], [1, 1, 7]],
    }
    kw = {
        "reference": ref,
        "metric": "mcc",
        "method": "montecarlo",
        "n_resamples": 2000,
        "confidence_level": None,
        "correction": None,
    }
    a = multiclass_match_test(counts=groups, random_state=3, **kw).frame
    b = multiclass_match_test(counts=groups, random_state=3, **kw).frame
    alone = multiclass_match_test(counts={"y": groups["y"]}, random_state=3, **kw)
    np.testing.assert_array_equal(a["p_value"], b["p_value"])
    assert a["p_value"].iloc[1] == alone.frame["p_value"].iloc[0]


@pytest.mark.slow
def test_size_under_h0_by_simulation():
    """Groups drawn from the reference law: the exact test rejects at most alpha
    of them (up to simulation error); groups from another law are rejected often."""
    n, n_groups, alpha = 8, 600, 0.1
    ref = _reference(7)
    p_ref = (ref / ref.sum()).reshape(-1)
    rng = np.random.default_rng(7)
    null = rng.multinomial(n, p_ref, size=n_groups).reshape(-1, K, K)
    kw = {
        "reference": ref,
        "method": "enumerate",
        "confidence_level": None,
        "correction": None,
    }
    for metric in ("kappa", "accuracy"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = multiclass_match_test(counts=null, metric=metric, **kw).frame["p_value"]
        tested = p.notna()
        assert tested.mean() > 0.9
        rate = (p[tested] <= alpha).mean()
        assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / tested.sum())
        assert rate > 0.02  # not vacuous: the test does reject sometimes
    off = 1.0 - np.eye(K).reshape(-1)  # mostly wrong predictions
    worse = rng.multinomial(n, (off + 0.1) / (off + 0.1).sum(), size=200)
    worse = worse.reshape(-1, K, K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = multiclass_match_test(counts=worse, metric="accuracy", **kw).frame[
            "p_value"
        ]
    assert (p <= alpha).mean() > 0.5


def test_rows_equal_counts():
    rng = np.random.default_rng(0)
    t = rng.choice(["low", "mid", "high"], 300)
    p = np.where(rng.random(300) < 0.6, t, rng.choice(["low", "mid", "high"], 300))
    g = rng.choice(["u", "v", "w"], 300)
    kw = {"metric": ["tpr", "kappa"], "random_state": 0, "n_resamples": 1000}
    from_rows = multiclass_match_test(t, p, sensitive_features=g, **kw)
    counts = multiclass_confusion_counts(t, p, sensitive_features=g)
    from_counts = multiclass_match_test(counts=counts, **kw)
    assert from_rows.frame.equals(from_counts.frame)
    assert set(from_rows.frame["class"].dropna()) == {"high", "low", "mid"}
    assert from_rows.frame["metric"].tolist().count("kappa") == 3
    assert from_rows.pvalues.index.names == ["group", "class", "metric"]


def test_reference_warnings():
    groups = np.array([[[3, 1, 0], [1, 4, 1], [0, 1, 5]]])
    with pytest.warns(ReferenceWarning, match="empty cells"):
        multiclass_match_test(
            counts=groups,
            reference=[[9, 1, 0], [1, 9, 1], [1, 1, 9]],
            confidence_level=None,
        )
    with (
        pytest.warns(ReferenceWarning, match="no case of true class"),
        pytest.warns(UndefinedGroupMetricWarning, match="never defined"),
    ):
        multiclass_match_test(
            counts=groups,
            reference=[[9, 1, 1], [0, 0, 0], [1, 1, 9]],
            confidence_level=None,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferenceWarning)
        multiclass_match_test(
            counts=groups, reference=np.ones((3, 3)), confidence_level=None
        )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"counts": np.ones((2, 3, 4))}, ValueError, "square"),
        (
            {"counts": np.ones((3, 3, 3)), "labels": ["a", "b"]},
            ValueError,
            "labels must name the 3 classes",
        ),
        (
            {"counts": np.ones((2, 3, 3)), "metric": "kappa", "average": "macro"},
            ValueError,
            "does not apply",
        ),
        ({"counts": np.ones((2, 3, 3)), "metric": "ofi"}, ValueError, "two groups"),
        (
            {"counts": np.ones((2, 3, 3)), "metric": "kappa", "method": "exact"},
            ValueError,
            "method='exact' applies to per-class",
        ),
        (
            {
                "counts": np.full((2, 3, 3), 10),
                "metric": "kappa",
                "method": "enumerate",
            },
            ValueError,
            "n <= 20 for K = 3",
        ),
        ({"counts": np.full((2, 3, 3), 0.5)}, ValueError, "integer"),
        (
            {"counts": np.ones((2, 3, 3)), "reference": np.ones((4, 4))},
            ValueError,
            "shape",
        ),
        ({"counts": np.ones((2, 3, 3)), "reference": "zzz"}, ValueError, "not 'rest'"),
        ({"counts": np.ones((1, 3, 3))}, ValueError, "single group"),
        ({"counts": np.ones((2, 3, 3)), "y_true": [1]}, ValueError, "not both"),
        ({"y_true": [0, 1], "y_pred": [0, 1]}, ValueError, "sensitive_features"),
        ({"counts": np.ones((2, 3, 3)), "average": "median"}, ValueError, "average"),
        ({"counts": np.ones((2, 3, 3)), "metric": []}, ValueError, "empty"),
    ],
)
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        multiclass_match_test(**kwargs)


def test_four_classes_equal_brute_force():
    n, k = 5, 4
    rng = np.random.default_rng(11)
    ref = rng.integers(1, 20, size=(k, k)) + np.diag([30, 20, 25, 15])
    p_ref = ref / ref.sum()
    groups = np.stack(
        [rng.multinomial(n, np.full(k * k, 1 / k**2)).reshape(k, k) for _ in range(3)]
    )
    res = multiclass_match_test(
        counts=groups,
        reference=ref,
        metric="mcc",
        correction=None,
        confidence_level=None,
    ).frame
    cms = _all_matrices(n, k)
    pmf = stats.multinomial.pmf(cms.reshape(len(cms), -1), n, p_ref.reshape(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = multiclass_metric("mcc", cms)
    ok = ~np.isnan(values)
    checked = 0
    for g in range(3):
        s = res["score"].iloc[g]
        if np.isnan(s):
            continue
        below = pmf[ok & (values <= s + 1e-12)].sum() / pmf[ok].sum()
        assert res["p_lower_tail"].iloc[g] == pytest.approx(below, rel=1e-9)
        assert res["method"].iloc[g] == "enumerate"
        checked += 1
    assert checked >= 2
