"""The dataset-adaptive normalized metric: factors, limits, bounds, scorer, errors."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import normalized_mutual_info_score, r2_score
from sklearn.model_selection import KFold, cross_validate

from sklearn_smallfair.adaptive import (
    AdaptiveNormalizedReport,
    adaptive_normalized_report,
    adaptive_normalized_score,
    make_adaptive_scorer,
)
from sklearn_smallfair.adaptive._factors import (
    _clustering_snr,
    _default_snr_factor,
    _dimensionality_factor,
)


def sigma(z):
    return 1.0 / (1.0 + math.exp(-z))


# --------------------------------------------------------------------------
# each factor against hand-computed values


def test_binary_factors_by_hand():
    y_true = [0, 0, 0, 0, 0, 0, 1, 1]
    y_pred = [0, 0, 0, 0, 0, 1, 1, 1]
    rep = adaptive_normalized_report(y_true, y_pred, n_features=1)
    assert rep.task == "binary" and rep.base_metric == "accuracy"
    assert rep.raw_score == pytest.approx(7 / 8)
    assert (rep.n_features, rep.n_samples) == (1, 8)
    f = 1 + sigma(1 / (0.05 * 8) - 1) - 0.5
    assert rep.dimensionality_factor == pytest.approx(f)
    assert rep.snr == pytest.approx(7.0)  # 7 correct, 1 wrong
    assert rep.snr_factor == pytest.approx(1 - math.exp(-7))
    assert rep.imbalance_name == "CI"
    assert rep.imbalance == pytest.approx(3.0)
    assert rep.imbalance_factor == pytest.approx(1 + math.log(3))
    expected = 7 / 8 * f * (1 - math.exp(-7)) / (1 + math.log(3))
    assert rep.unclipped_score == pytest.approx(expected)
    assert rep.score == pytest.approx(expected)
    assert adaptive_normalized_score(y_true, y_pred, n_features=1) == rep.score


def test_multiclass_acir_by_hand():
    y_true = np.array(["a"] * 4 + ["b"] * 2 + ["c"] * 1)
    y_pred = np.array(["a", "a", "a", "b", "b", "b", "c"])
    X = np.zeros((7, 1))
    rep = adaptive_normalized_report(y_true, y_pred, X=X)
    acir = (4 / 4 + 2 / 4 + 1 / 4) / 3
    assert rep.task == "multiclass" and rep.imbalance_name == "ACIR"
    assert rep.imbalance == pytest.approx(acir)
    assert rep.imbalance_factor == pytest.approx(1 + math.log(1 / acir))
    assert rep.snr == pytest.approx(6.0)
    # d = 1, N = 7: d / (0.05 N) = 2.857 > 1
    assert rep.dimensionality_factor == pytest.approx(1 + sigma(1 / 0.35 - 1) - 0.5)


def test_regression_factors_by_hand():
    y_true = np.array([1.0, 2.0, 3.0, 4.0])
    y_pred = np.array([1.5, 2.0, 2.5, 4.0])
    rep = adaptive_normalized_report(
        y_true, y_pred, n_features=1, n_samples=100, task="regression"
    )
    assert rep.task == "regression" and rep.base_metric == "r2"
    assert rep.raw_score == pytest.approx(r2_score(y_true, y_pred))
    assert rep.snr == pytest.approx(30.0 / 0.5)  # sum y^2 / sum residual^2
    assert rep.imbalance_name is None and math.isnan(rep.imbalance)
    assert rep.imbalance_factor == 1.0
    assert rep.dimensionality_factor == 1.0


def test_negative_r2_clips_to_zero():
    rep = adaptive_normalized_report([1.5, 2.5, 3.5], [3.5, 2.5, 1.5], n_features=1)
    assert rep.task == "regression"
    assert rep.raw_score < 0 and rep.unclipped_score < 0 and rep.score == 0.0


def test_clustering_factors_by_hand():
    X = np.array([[0.0, 0.0], [0.0, 2.0], [10.0, 0.0], [10.0, 2.0]])
    labels = [0, 0, 1, 1]
    rep = adaptive_normalized_report([0, 0, 1, 1], labels, X=X, task="clustering")
    # centroids (0, 1), (10, 1), overall (5, 1): B = 4 * 25 = 100, W = 4 * 1
    assert rep.snr == pytest.approx(100 / 4)
    assert rep.raw_score == pytest.approx(1.0)
    assert rep.base_metric == "nmi" and rep.imbalance_factor == 1.0
    rep2 = adaptive_normalized_report(
        [0, 1, 0, 1], labels, X=X, task="clustering", n_samples=1000
    )
    assert rep2.raw_score == pytest.approx(
        normalized_mutual_info_score([0, 1, 0, 1], labels)
    )


def test_clustering_snr_edge_cases():
    X = np.ones((4, 2))
    assert _clustering_snr(X, np.array([0, 0, 1, 1])) == 0.0  # 0 / 0
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    assert _clustering_snr(X, np.array([0, 0, 1, 1])) == math.inf
    assert _clustering_snr(X, np.array([0, 0, 0, 0])) == 0.0


def test_report_conversions():
    rep = adaptive_normalized_report([0, 1, 1], [0, 1, 0], n_features=3)
    assert isinstance(rep, AdaptiveNormalizedReport)
    d = rep.to_dict()
    assert list(d) == [
        "task",
        "base_metric",
        "raw_score",
        "n_features",
        "n_samples",
        "dimensionality_factor",
        "snr",
        "snr_factor",
        "imbalance_name",
        "imbalance",
        "imbalance_factor",
        "unclipped_score",
        "score",
    ]
    s = rep.to_series()
    assert isinstance(s, pd.Series) and s["score"] == rep.score


@pytest.mark.parametrize(
    "metric, expected",
    [("accuracy", 4 / 6), ("balanced_accuracy", (2 / 3 + 2 / 3) / 2), ("f1", 2 / 3)],
)
def test_classification_base_metrics(metric, expected):
    y_true = [0, 0, 0, 1, 1, 1]
    y_pred = [0, 0, 1, 1, 1, 0]
    rep = adaptive_normalized_report(y_true, y_pred, n_features=1, base_metric=metric)
    assert rep.raw_score == pytest.approx(expected)


def test_f1_pos_label_follows_scikit_learn_rule():
    # {-1, 1}: pos_label=None means 1
    rep = adaptive_normalized_report(
        [-1, -1, -1, 1, 1, 1], [-1, -1, 1, 1, 1, -1], n_features=1, base_metric="f1"
    )
    assert rep.raw_score == pytest.approx(2 / 3)
    # other labels: pos_label is required, and the error names the labels
    y_true = ["no", "no", "no", "yes", "yes", "yes"]
    y_pred = ["no", "no", "yes", "yes", "yes", "yes"]
    with pytest.raises(ValueError, match=r"\['no', 'yes'\].*pos_label"):
        adaptive_normalized_score(y_true, y_pred, n_features=1, base_metric="f1")
    rep = adaptive_normalized_report(
        y_true, y_pred, n_features=1, base_metric="f1", pos_label="yes"
    )
    assert rep.raw_score == pytest.approx(6 / 7)
    # metrics without a positive class need no pos_label
    assert adaptive_normalized_score(y_true, y_pred, n_features=1) > 0


def test_callable_base_metric_and_snr_transform():
    rep = adaptive_normalized_report(
        [0, 1, 0, 1],
        [0, 1, 1, 1],
        n_features=1,
        n_samples=100,
        base_metric=lambda t, p: 0.5,
        snr_transform=lambda s: 0.8,
    )
    assert rep.base_metric == "callable"
    assert rep.score == pytest.approx(0.5 * 0.8)


def test_snr_scale():
    rep = adaptive_normalized_report(
        [0, 1, 0, 1], [0, 1, 1, 1], n_features=1, snr_scale=2.0
    )
    assert rep.snr_factor == pytest.approx(1 - math.exp(-3 / 2))


def test_d_and_n_from_x_and_overrides():
    X = pd.DataFrame(np.zeros((6, 3)))
    y = [0, 1, 0, 1, 0, 1]
    rep = adaptive_normalized_report(y, y, X=X)
    assert (rep.n_features, rep.n_samples) == (3, 6)
    rep = adaptive_normalized_report(y, y, X=X, n_features=2, n_samples=500)
    assert (rep.n_features, rep.n_samples) == (2, 500)
    rep = adaptive_normalized_report(y, y, n_features=2)
    assert rep.n_samples == 6


# --------------------------------------------------------------------------
# limits


def test_limits_of_f():
    assert _dimensionality_factor(1, 1000) == 1.0  # d << 0.05 N
    assert _dimensionality_factor(5, 100) == 1.0  # d = 0.05 N: sigma(0) - sigma(0)
    assert _dimensionality_factor(10, 100) == pytest.approx(1 + sigma(1) - 0.5)
    assert _dimensionality_factor(10**9, 1) == pytest.approx(1.5)
    assert _dimensionality_factor(10**9, 1) < 1.5 + 1e-12


def test_balanced_classes_give_h_one():
    y = [0, 1] * 5
    assert adaptive_normalized_report(y, y, n_features=1).imbalance_factor == 1.0
    y = ["a", "b", "c"] * 4
    rep = adaptive_normalized_report(y, y, n_features=1)
    assert rep.imbalance == 1.0 and rep.imbalance_factor == 1.0


def test_limits_of_g():
    assert _default_snr_factor(0.0, 1.0) == 0.0
    assert _default_snr_factor(math.inf, 1.0) == 1.0
    # a perfect prediction has SNR inf, g = 1
    rep = adaptive_normalized_report([0, 1, 1], [0, 1, 1], n_features=1)
    assert rep.snr == math.inf and rep.snr_factor == 1.0
    rep = adaptive_normalized_report(
        [0.0, 0.0], [0.0, 0.0], n_features=1, task="regression"
    )
    assert rep.snr == math.inf  # regression, zero residual


# --------------------------------------------------------------------------
# monotonicity


def test_f_increases_in_d_and_decreases_in_n():
    ds = np.arange(1, 200)
    fd = [_dimensionality_factor(int(d), 100) for d in ds]
    assert np.all(np.diff(fd) >= 0) and fd[-1] > fd[0]
    ns = np.arange(1, 500)
    fn = [_dimensionality_factor(10, int(n)) for n in ns]
    assert np.all(np.diff(fn) <= 0) and fn[0] > fn[-1]


def test_h_increases_with_imbalance():
    hs = []
    for minority in range(10, 0, -1):
        y = [0] * 10 + [1] * minority
        hs.append(adaptive_normalized_report(y, y, n_features=1).imbalance_factor)
    assert np.all(np.diff(hs) > 0)
    hs = []
    for minority in range(10, 0, -1):
        y = [0] * 10 + [1] * 10 + [2] * minority
        hs.append(adaptive_normalized_report(y, y, n_features=1).imbalance_factor)
    assert np.all(np.diff(hs) > 0)


def test_g_increases_in_snr():
    snrs = np.concatenate([[0.0], np.logspace(-3, 1, 50)])
    g = [_default_snr_factor(float(s), 1.0) for s in snrs]
    assert np.all(np.diff(g) > 0)
    big = [_default_snr_factor(float(s), 1.0) for s in [*np.logspace(1, 3), math.inf]]
    assert np.all(np.diff(big) >= 0)
    assert all(0 <= v <= 1 for v in g + big)


# --------------------------------------------------------------------------
# output always in [0, 1]


@settings(max_examples=60, deadline=None)
@given(
    y_true=st.lists(st.integers(0, 2), min_size=2, max_size=30),
    seed=st.integers(0, 2**16),
    n_features=st.integers(1, 1000),
    snr_scale=st.floats(0.01, 100),
)
def test_classification_score_in_unit_interval(y_true, seed, n_features, snr_scale):
    if len(set(y_true)) < 2:
        y_true = [*y_true, (y_true[0] + 1) % 3]
    rng = np.random.default_rng(seed)
    y_pred = rng.integers(0, 3, size=len(y_true))
    rep = adaptive_normalized_report(
        y_true, y_pred, n_features=n_features, snr_scale=snr_scale
    )
    assert 0.0 <= rep.score <= 1.0
    assert rep.score == min(1.0, max(0.0, rep.unclipped_score))


def test_regression_and_clustering_scores_in_unit_interval():
    rng = np.random.default_rng(0)
    for _ in range(40):
        n = int(rng.integers(2, 40))
        X = rng.normal(size=(n, int(rng.integers(1, 60))))
        y = rng.normal(size=n) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)
        y_pred = y + rng.normal(size=n) * rng.uniform(0, 10)
        assert 0.0 <= adaptive_normalized_score(y, y_pred, X=X) <= 1.0
        labels = rng.integers(0, 3, size=n)
        clusters = rng.integers(0, 3, size=n)
        score = adaptive_normalized_score(labels, clusters, X=X, task="clustering")
        assert 0.0 <= score <= 1.0


# --------------------------------------------------------------------------
# scorer


def test_scorer_in_cross_validate_classification():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0.5).astype(int)
    scorer = make_adaptive_scorer()
    cv = cross_validate(LogisticRegression(), X, y, cv=3, scoring=scorer)
    scores = cv["test_score"]
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    # the scorer equals the function on the evaluated split (N = split size)
    est = LogisticRegression().fit(X[:80], y[:80])
    expected = adaptive_normalized_score(y[80:], est.predict(X[80:]), X=X[80:])
    assert scorer(est, X[80:], y[80:]) == expected
    fixed = make_adaptive_scorer(n_samples=80)
    expected = adaptive_normalized_score(
        y[80:], est.predict(X[80:]), n_features=3, n_samples=80
    )
    assert fixed(est, X[80:], y[80:]) == expected
    assert "n_samples=80" in repr(fixed)


def test_scorer_in_cross_validate_regression_and_clustering():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = X @ np.array([1.0, -2.0]) + rng.normal(size=90)
    cv = cross_validate(
        Ridge(), X, y, cv=3, scoring={"adaptive": make_adaptive_scorer()}
    )
    assert np.all((cv["test_adaptive"] >= 0) & (cv["test_adaptive"] <= 1))
    labels = np.repeat([0, 1, 2], 30)
    Xc = rng.normal(size=(90, 2)) + labels[:, None] * 5
    cv = cross_validate(
        KMeans(n_clusters=3, n_init=1, random_state=0),
        Xc,
        labels,
        cv=KFold(3, shuffle=True, random_state=0),
        scoring=make_adaptive_scorer(task="clustering"),
    )
    assert np.all(cv["test_score"] > 0.9)


def test_scorer_errors():
    with pytest.raises(ValueError, match="task"):
        make_adaptive_scorer(task="ranking")
    with pytest.raises(ValueError, match="base_metric"):
        make_adaptive_scorer(base_metric="auc")
    with pytest.raises(ValueError, match="base_metric"):
        make_adaptive_scorer(task="regression", base_metric="accuracy")
    with pytest.raises(ValueError, match="n_samples"):
        make_adaptive_scorer(n_samples=0)
    with pytest.raises(ValueError, match="snr_scale"):
        make_adaptive_scorer(snr_scale=0)
    with pytest.raises(TypeError, match="snr_transform"):
        make_adaptive_scorer(snr_transform=3)
    est = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(AttributeError, match="response_method"):
        make_adaptive_scorer(response_method="nope")(est, [[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        make_adaptive_scorer()(est, [[0.0], [1.0]], [0, 1], sample_weight=[1, 1])


# --------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(n_features=0), ValueError, "n_features"),
        (dict(n_features=2, n_samples=0), ValueError, "n_samples"),
        (dict(n_features=1.5), TypeError, "n_features"),
        (dict(n_features=True), TypeError, "n_features"),
        (dict(), ValueError, "n_features"),
        (dict(X=np.zeros((4, 0))), ValueError, "n_features"),
        (dict(X=np.zeros((3, 2))), ValueError, "X has 3 rows"),
        (dict(X=np.zeros(4)), ValueError, "X must be 2-D"),
        (dict(X={"a": [1, 2, 3, 4]}), TypeError, "X"),
        (dict(n_features=1, task="ranking"), ValueError, "task"),
        (dict(n_features=1, base_metric="auc"), ValueError, "base_metric"),
        (dict(n_features=1, base_metric="r2"), ValueError, "base_metric"),
        (dict(n_features=1, snr_scale=-1), ValueError, "snr_scale"),
        (dict(n_features=1, snr_scale="x"), TypeError, "snr_scale"),
        (dict(n_features=1, snr_transform=1), TypeError, "snr_transform"),
        (dict(n_features=1, snr_transform=lambda s: -1), ValueError, "snr_transform"),
        (dict(n_features=1, snr_transform=lambda s: "a"), TypeError, "snr_transform"),
        (dict(n_features=1, base_metric=lambda t, p: np.nan), ValueError, "base_met"),
        (dict(n_features=1, base_metric=lambda t, p: None), TypeError, "base_metric"),
        (dict(task="clustering", n_features=1), ValueError, "needs X"),
    ],
)
def test_errors_name_the_argument(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        adaptive_normalized_score([0, 1, 0, 1], [0, 1, 1, 1], **kwargs)


@pytest.mark.parametrize(
    "y_true, task, inferred",
    [
        ([0, 1, 0, 1], "auto", "binary"),
        ([0, 1, 2, 1], "auto", "multiclass"),
        ([0, 1, 0, 1], "binary", None),
        ([0, 1, 2, 1], "multiclass", None),
    ],
)
def test_continuous_predictions_in_a_classification_task(y_true, task, inferred):
    # scores used to reach scikit-learn's "mix of binary and continuous targets"
    how = r" \(inferred from y_true\)" if inferred else ""
    expected = inferred or task
    with pytest.raises(
        ValueError,
        match=rf"y_pred holds continuous values, but task='{expected}'{how} compares "
        rf"class labels\. Pass predicted class labels .* or task='regression'",
    ):
        adaptive_normalized_score(y_true, [0.1, 0.9, 0.2, 0.7], n_features=1, task=task)
    # integral floats are labels
    assert 0 <= adaptive_normalized_score(
        y_true, np.asarray(y_true, dtype=float), n_features=1, task=task
    )


def test_continuous_targets_in_a_classification_task():
    with pytest.raises(
        ValueError, match=r"y_true holds continuous values, but task='binary'"
    ):
        adaptive_normalized_score(
            [0.5, 1.0, 0.0, 1.0], [0, 1, 0, 1], n_features=1, task="binary"
        )


def test_scorer_of_a_regressor_on_class_labels():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 2, 0, 1, 2])
    scorer = make_adaptive_scorer()
    with pytest.raises(ValueError, match="y_pred holds continuous values"):
        scorer(Ridge().fit(X, y), X, y)
    assert 0 <= make_adaptive_scorer(task="regression")(Ridge().fit(X, y), X, y) <= 1


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_snr_scale_must_be_finite(value):
    with pytest.raises(
        ValueError, match="'snr_scale' parameter of adaptive_normalized_score"
    ):
        adaptive_normalized_score([0, 1], [0, 1], n_features=1, snr_scale=value)


def test_data_errors():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        adaptive_normalized_score([0, 1, 0], [0, 1], n_features=1)
    with pytest.raises(ValueError, match="y_true contains"):
        adaptive_normalized_score([0.0, np.nan], [0.0, 1.0], n_features=1)
    with pytest.raises(ValueError, match="y_pred contains"):
        adaptive_normalized_score([0, 1], [0, None], n_features=1)
    with pytest.raises(ValueError, match="empty"):
        adaptive_normalized_score([], [], n_features=1)
    with pytest.raises(ValueError, match="y_true holds a single class"):
        adaptive_normalized_score([1, 1, 1], [1, 0, 1], n_features=1)
    with pytest.raises(ValueError, match="y_true holds a single class"):
        adaptive_normalized_score([1, 1], [1, 2], n_features=1, task="multiclass")
    with pytest.raises(ValueError, match="X contains NaN"):
        adaptive_normalized_score(
            [0, 1], [0, 1], X=[[0.0], [np.nan]], task="clustering"
        )
    with pytest.raises(TypeError, match="X must be numeric"):
        adaptive_normalized_score([0, 1], [0, 1], X=[["a"], ["b"]], task="clustering")
    with pytest.raises(TypeError, match="y_true must be numeric"):
        adaptive_normalized_score(
            ["a", "b"], ["a", "b"], n_features=1, task="regression"
        )
    with pytest.raises(ValueError, match="at least two samples"):
        adaptive_normalized_score([1.5], [1.0], n_features=1, task="regression")
    with pytest.raises(ValueError, match="y_true must be 1-D"):
        adaptive_normalized_score([[0, 1], [1, 0]], [[0, 1], [1, 0]], n_features=1)
