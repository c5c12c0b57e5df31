"""Tests of the one shape of the test results (MATCH, separation, comparative).

Each result is a frozen table of tests: ``pvalues`` are the p-values that decide
the tests (``p_adjusted``), ``reject`` is ``pvalues <= alpha`` everywhere, and the
HTML display escapes labels.
"""

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.stats import (
    ComparativeSeparationResult,
    MatchResult,
    SeparationResult,
    comparative_separation_test,
    match_test,
    separation_test,
)
from sklearn_smallfair.stats._results import PairwiseResult, TestResult, rejects

# separation: group a has TPR 0.8 and FPR 0.2, group b TPR 0.4 and FPR 0.6
Y_TRUE = [1] * 10 + [0] * 10 + [1] * 5 + [0] * 5
Y_PRED = [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8 + [1] * 2 + [0] * 3 + [1] * 3 + [0] * 2
# comparative: six items, twelve pairs, the pairs (b higher, a lower) half wrong
Y6 = [3, 2, 1, 3, 2, 1]
S6 = [0.9, 0.5, 0.1, 0.2, 0.8, 0.0]
PAIRS6 = [[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [0, 4], [3, 1], [4, 2]]
PAIRS6 += [[1, 5], [3, 2], [0, 5]]
MATCH_COUNTS = [[8, 2, 1, 9], [3, 3, 4, 10], [1, 5, 2, 12]]


def _run(kind, labels=("a", "b", "c"), **kwargs):
    """A result of each test on fixed data, with the given group labels."""
    if kind == "match":
        counts = dict(zip(labels, MATCH_COUNTS))
        return match_test(counts=counts, metric="tpr", **kwargs)
    a, b = labels[:2]
    if kind == "separation":
        groups = [a] * 20 + [b] * 10
        return separation_test(Y_TRUE, Y_PRED, sensitive_features=groups, **kwargs)
    groups = [a] * 3 + [b] * 3
    return comparative_separation_test(
        Y6, S6, sensitive_features=groups, pairs=PAIRS6, **kwargs
    )


KINDS = ["match", "separation", "comparative"]
CLASSES = {
    "match": MatchResult,
    "separation": SeparationResult,
    "comparative": ComparativeSeparationResult,
}


# =====================================================================================
# 1. One base
# =====================================================================================
@pytest.mark.parametrize("kind", KINDS)
def test_results_share_the_base(kind):
    res = _run(kind)
    assert type(res) is CLASSES[kind]
    assert isinstance(res, TestResult)
    assert dataclasses.is_dataclass(res)
    assert [f.name for f in dataclasses.fields(res)][:2] == ["frame", "alpha"]
    # one implementation of the shared behaviour, not one per class
    for name in ("to_frame", "pvalues", "reject", "_repr_html_", "__repr__"):
        assert name not in vars(CLASSES[kind]), name


def test_pairwise_results_share_the_verdict():
    assert issubclass(SeparationResult, PairwiseResult)
    assert issubclass(ComparativeSeparationResult, PairwiseResult)
    assert not issubclass(MatchResult, PairwiseResult)


# =====================================================================================
# 2. pvalues: the p-values that decide, indexed like the rows
# =====================================================================================
@pytest.mark.parametrize(
    "kind, keys",
    [
        ("match", ["group"]),
        ("separation", ["metric", "group_a", "group_b"]),
        ("comparative", ["test", "higher_a", "lower_a", "higher_b", "lower_b"]),
    ],
)
def test_pvalues_are_p_adjusted_indexed_by_row_keys(kind, keys):
    res = _run(kind, correction="bonferroni")
    frame = res.frame
    assert res.pvalues.index.names == keys
    assert res.pvalues.index.tolist() == (
        frame[keys[0]].tolist()
        if len(keys) == 1
        else list(frame[keys].itertuples(index=False, name=None))
    )
    assert res.pvalues.name == "p_adjusted" and res.pvalues.dtype == np.float64
    np.testing.assert_array_equal(res.pvalues.to_numpy(), frame["p_adjusted"])
    assert res.reject.index.equals(res.pvalues.index)


def test_pvalues_are_the_adjusted_ones_when_an_adjustment_applies():
    # three groups: each family holds three comparisons, adjusted by Holm
    rng = np.random.default_rng(0)
    g = rng.choice(["a", "b", "c"], size=300)
    y = rng.integers(0, 2, 300)
    p = (rng.random(300) < 0.3 + 0.4 * y + 0.2 * (g == "c")).astype(int)
    sep = separation_test(y, p, sensitive_features=g, correction="holm")
    comp = comparative_separation_test(y, p, sensitive_features=g, random_state=0)
    match = match_test(y, p, sensitive_features=g, correction="holm")
    for res in (sep, comp, match):
        f = res.frame
        assert (f["p_adjusted"] > f["p_value"]).any()  # the adjustment matters
        np.testing.assert_array_equal(res.pvalues.to_numpy(), f["p_adjusted"])


# =====================================================================================
# 3. reject: p <= alpha, everywhere
# =====================================================================================
@pytest.mark.parametrize("kind", KINDS)
def test_reject_is_pvalues_at_most_alpha(kind):
    for alpha in (0.01, 0.05, 0.3, 0.9):
        res = _run(kind, alpha=alpha)
        expected = res.pvalues.to_numpy() <= alpha
        np.testing.assert_array_equal(res.reject.to_numpy(), expected)
        np.testing.assert_array_equal(res.frame["reject"].to_numpy(), expected)
        assert res.reject.dtype == bool and res.reject.name == "reject"


@pytest.mark.parametrize("kind", KINDS)
def test_a_pvalue_equal_to_alpha_rejects(kind):
    p = _run(kind).pvalues
    alpha = float(p[p < 1].iloc[0])
    res = _run(kind, alpha=alpha)
    at = res.pvalues.to_numpy() == alpha
    assert at.any()
    assert res.reject.to_numpy()[at].all()
    assert res.frame["reject"].to_numpy()[at].all()
    if isinstance(res, PairwiseResult):
        assert res.violated is True
    # just below the p-value nothing at it rejects
    below = _run(kind, alpha=np.nextafter(alpha, 0.0))
    assert not below.reject.to_numpy()[at].any()


@pytest.mark.parametrize("cls", [MatchResult, SeparationResult, TestResult])
def test_the_rule_on_a_hand_made_table(cls):
    frame = pd.DataFrame(
        {
            "group": ["a", "b", "c", "d"],
            "metric": "tpr",
            "group_a": ["a", "b", "c", "d"],
            "group_b": "z",
            "z": 0.0,
            "p_adjusted": [0.05, 0.0500001, 0.01, np.nan],
        }
    )
    if cls is SeparationResult:
        res = cls(frame, 0.05, groups=pd.DataFrame(), correction=None)
    else:
        res = cls(frame, 0.05)
    assert res.reject.tolist() == [True, False, True, False]  # NaN never rejects
    assert res.frame["reject"].tolist() == [True, False, True, False]
    assert rejects([0.05, np.nan], 0.05).tolist() == [True, False]
    assert "reject" not in frame  # the table given is not modified


@pytest.mark.parametrize("kind", ["separation", "comparative"])
def test_violated_is_any_rejection(kind):
    for alpha in (0.01, 0.2207, 0.5):
        res = _run(kind, alpha=alpha)
        assert res.violated is bool(res.reject.any())
        p1, p2 = (
            (res.p_value_tpr, res.p_value_fpr)
            if kind == "separation"
            else (
                res.p_value_cross,
                res.p_value_within,
            )
        )
        assert res.violated == (min(p1, p2) <= alpha)


# =====================================================================================
# 4. Frozen, copies, display
# =====================================================================================
@pytest.mark.parametrize("kind", KINDS)
def test_results_are_frozen(kind):
    res = _run(kind)
    names = [f.name for f in dataclasses.fields(res)] + ["new_attribute"]
    for name in names:
        with pytest.raises(AttributeError):
            setattr(res, name, None)
    with pytest.raises(AttributeError):
        del res.alpha
    with pytest.raises(AttributeError):
        res.pvalues = None  # a property without a setter
    assert res.alpha == 0.05


@pytest.mark.parametrize("kind", KINDS)
def test_to_frame_is_a_copy_and_results_pickle(kind):
    res = _run(kind)
    out = res.to_frame()
    pd.testing.assert_frame_equal(out, res.frame)
    out["reject"] = ~out["reject"]
    assert not out["reject"].equals(res.frame["reject"])
    again = pickle.loads(pickle.dumps(res))
    assert type(again) is type(res)
    pd.testing.assert_frame_equal(again.frame, res.frame)
    pd.testing.assert_series_equal(again.reject, res.reject)


@pytest.mark.parametrize("kind", KINDS)
def test_repr_is_one_short_line(kind):
    res = _run(kind)
    text = repr(res)
    assert "\n" not in text and len(text) < 200
    assert text.startswith(f"{type(res).__name__}(")
    assert f"n_tests={len(res.frame)}" in text
    assert f"n_rejected={int(res.reject.sum())}" in text


@pytest.mark.parametrize("kind", KINDS)
def test_repr_html_escapes_labels(kind):
    res = _run(kind, labels=("<b>x</b>", "y&z", "w"))
    html = res._repr_html_()
    assert "<table" in html
    assert "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "y&amp;z" in html


# =====================================================================================
# 5. confidence_interval: the table's interval at any level
# =====================================================================================
def test_separation_confidence_interval_is_the_table_interval():
    groups = ["a"] * 20 + ["b"] * 10
    res = separation_test(Y_TRUE, Y_PRED, sensitive_features=groups)
    ci = res.confidence_interval()
    np.testing.assert_allclose(ci.low, res.frame["difference_low"])
    np.testing.assert_allclose(ci.high, res.frame["difference_high"])
    assert ci.low.index.equals(res.pvalues.index)
    low, high = res.confidence_interval(confidence_level=0.8)
    other = separation_test(
        Y_TRUE, Y_PRED, sensitive_features=groups, confidence_level=0.8
    )
    np.testing.assert_allclose(low, other.frame["difference_low"])
    np.testing.assert_allclose(high, other.frame["difference_high"])
    assert (low >= ci.low).all() and (high <= ci.high).all()
    # computed from the counts, so also on results without intervals
    bare = separation_test(
        Y_TRUE, Y_PRED, sensitive_features=groups, confidence_level=None
    )
    assert "difference_low" not in bare.frame
    np.testing.assert_allclose(bare.confidence_interval().low, ci.low)
    with pytest.raises(ValueError, match="confidence_level"):
        res.confidence_interval(confidence_level=1.5)


@pytest.mark.parametrize("null", ["two-sample", "fixed-reference"])
def test_match_confidence_interval_is_the_table_interval(null):
    counts = dict(zip("abc", MATCH_COUNTS))
    kw = dict(counts=counts, metric=["tpr", "mcc"], null=null, random_state=4)
    res = match_test(**kw)
    ci = res.confidence_interval()
    np.testing.assert_allclose(ci.low, res.frame["score_low"])
    np.testing.assert_allclose(ci.high, res.frame["score_high"])
    assert ci.low.index.equals(res.pvalues.index)
    other = match_test(confidence_level=0.8, **kw)
    low, high = res.confidence_interval(confidence_level=0.8)
    np.testing.assert_allclose(low, other.frame["score_low"])
    np.testing.assert_allclose(high, other.frame["score_high"])
    again = pickle.loads(pickle.dumps(res)).confidence_interval()
    pd.testing.assert_series_equal(again.low, ci.low)


def test_multiclass_match_result_has_no_confidence_interval():
    from sklearn_smallfair.stats import multiclass_match_test

    res = multiclass_match_test(
        counts={
            "a": [[8, 1, 1], [2, 6, 2], [1, 1, 9]],
            "b": [[3, 3, 4], [1, 4, 1], [1, 2, 3]],
        },
        metric="kappa",
    )
    with pytest.raises(ValueError, match="score_low"):
        res.confidence_interval()
