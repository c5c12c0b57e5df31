"""Multiclass confusion matrices against scikit-learn, per group and per class."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    matthews_corrcoef,
    precision_recall_fscore_support,
)

from sklearn_smallfair.metrics import (
    multiclass_confusion_counts,
    multiclass_metric,
    one_vs_rest,
)
from sklearn_smallfair.metrics._registry import compute_metric

LABELS = ["low", "mid", "high"]


def _data(seed, n=300, k=3, n_groups=4):
    rng = np.random.default_rng(seed)
    labels = np.array(LABELS[:k] if k <= 3 else [f"c{i}" for i in range(k)])
    t = labels[rng.integers(0, k, n)]
    # predictions agree with the truth 60 % of the time
    p = np.where(rng.random(n) < 0.6, t, labels[rng.integers(0, k, n)])
    g = rng.integers(0, n_groups, n)
    return t, p, g, labels


@pytest.mark.parametrize("seed", range(3))
def test_counts_match_sklearn_confusion_matrix_per_group(seed):
    t, p, g, labels = _data(seed)
    w = np.random.default_rng(seed).random(t.shape[0])
    for weights in (None, w):
        res = multiclass_confusion_counts(
            t, p, sensitive_features=g, labels=labels, sample_weight=weights
        )
        assert list(res.labels) == list(labels)
        for i, grp in enumerate(res.groups):
            m = g == grp
            expected = confusion_matrix(
                t[m],
                p[m],
                labels=labels,
                sample_weight=None if weights is None else weights[m],
            )
            np.testing.assert_allclose(res.counts[i], expected, rtol=1e-12)
    overall = multiclass_confusion_counts(t, p, labels=labels)
    np.testing.assert_array_equal(overall.counts, confusion_matrix(t, p, labels=labels))


def test_default_labels_sorted_union_and_long_frame():
    res = multiclass_confusion_counts([2, 0, 1], [0, 0, 3])
    assert list(res.labels) == [0, 1, 2, 3]
    assert res.counts.sum() == 3
    frame = multiclass_confusion_counts(
        ["a", "b"], ["b", "b"], sensitive_features=["x", "y"]
    ).to_frame()
    assert list(frame.columns) == ["group", "true", "predicted", "count"]
    assert frame["count"].sum() == 2 and len(frame) == 2 * 4


def test_one_vs_rest_is_sklearn_binary_matrix():
    t, p, _, labels = _data(7)
    cm = confusion_matrix(t, p, labels=labels)
    ovr = one_vs_rest(cm)
    for k, lab in enumerate(labels):
        binary = confusion_matrix(t == lab, p == lab, labels=[False, True])
        tn, fp, fn, tp = binary.ravel()
        np.testing.assert_array_equal(ovr[k], [tp, fn, fp, tn])
    # any leading shape
    stack = np.stack([cm, cm.T, 2 * cm])[None]
    assert one_vs_rest(stack).shape == (1, 3, 3, 4)
    np.testing.assert_array_equal(one_vs_rest(stack)[0, 1], one_vs_rest(cm.T))


@pytest.mark.parametrize("average", [None, "macro", "weighted", "micro"])
@pytest.mark.parametrize("zero_division", [np.nan, 0.0, 1.0])
def test_precision_recall_f1_match_sklearn(average, zero_division):
    for seed in range(4):
        # small groups so that some classes are never predicted / never true
        t, p, _, labels = _data(seed, n=7)
        cm = confusion_matrix(t, p, labels=labels)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = precision_recall_fscore_support(
                t, p, labels=labels, average=average, zero_division=zero_division
            )
            ours = [
                multiclass_metric(m, cm, average=average, zero_division=zero_division)
                for m in ("ppv", "tpr", "f1")
            ]
        for a, b in zip(ours, sk[:3]):
            np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)


def test_whole_matrix_metrics_match_sklearn():
    for seed in range(20):
        k = 3 + seed % 3
        t, p, _, labels = _data(seed, n=40, k=k)
        cm = confusion_matrix(t, p, labels=labels)
        np.testing.assert_allclose(
            multiclass_metric("mcc", cm), matthews_corrcoef(t, p), rtol=1e-12
        )
        np.testing.assert_allclose(
            multiclass_metric("kappa", cm), cohen_kappa_score(t, p), rtol=1e-12
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bacc = balanced_accuracy_score(t, p)
        np.testing.assert_allclose(
            multiclass_metric("balanced_accuracy", cm), bacc, rtol=1e-12
        )
        np.testing.assert_allclose(
            multiclass_metric("accuracy", cm), np.mean(t == p), rtol=1e-12
        )


def test_binary_case_agrees_with_the_binary_registry():
    # K = 2 with the positive class first: per-class metric of class 0 is the
    # binary registry metric of the (TP, FN, FP, TN) matrix
    rng = np.random.default_rng(0)
    cms = rng.integers(0, 9, size=(200, 2, 2))
    binary = cms.reshape(200, 4)  # [[TP, FN], [FP, TN]] with class 0 positive
    for name in ("tpr", "fpr", "ppv", "npv", "f1", "ppr", "pt", "mb", "fdr"):
        np.testing.assert_array_equal(
            multiclass_metric(name, cms)[:, 0],
            compute_metric(name, binary),
            err_msg=name,
        )
    np.testing.assert_allclose(
        multiclass_metric("accuracy", cms),
        compute_metric("acc", binary),
        rtol=1e-12,
        equal_nan=True,
    )
    # Gorodkin's R_K reduces to the binary MCC for K = 2
    np.testing.assert_allclose(
        multiclass_metric("mcc", cms),
        compute_metric("mcc", binary),
        rtol=1e-12,
        equal_nan=True,
    )


def test_undefined_values_follow_the_policy():
    cm = np.array([[3, 0, 0], [0, 0, 0], [0, 0, 2]])  # class "mid" absent
    with pytest.warns(Warning, match="undefined"):
        out = multiclass_metric("tpr", cm, zero_division="warn")
    assert np.isnan(out[1]) and out[0] == 1.0
    assert multiclass_metric("tpr", cm, zero_division=0.0)[1] == 0.0
    # left out of the macro mean, like scikit-learn with zero_division=nan
    assert multiclass_metric("tpr", cm, average="macro") == 1.0
    # everything in one class: kappa and R_K are 0/0
    one = np.array([[5, 0], [0, 0]])
    assert np.isnan(multiclass_metric("kappa", one))
    assert np.isnan(multiclass_metric("mcc", one))
    assert multiclass_metric("mcc", one, zero_division=0.0) == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(y_true=["a", "b", "z"], y_pred=["a", "b", "b"], labels=["a", "b"]),
            "y_true has class.*'z'.*not in labels",
        ),
        (
            dict(y_true=["a", "b"], y_pred=["a", "q"], labels=["a", "b"]),
            "y_pred has class.*'q'",
        ),
        (dict(y_true=["a", "a"], y_pred=["a", "a"]), "at least two classes"),
        (dict(y_true=[0.5, 1.0], y_pred=[1.0, 0.5]), "continuous"),
        (dict(y_true=["a", "b"], y_pred=["a"]), "inconsistent lengths"),
        (
            dict(y_true=["a", "b"], y_pred=["a", "b"], labels=["a", "a", "b"]),
            "repeated",
        ),
    ],
)
def test_bad_input_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        multiclass_confusion_counts(**kwargs)


def test_bad_matrices_and_averages():
    with pytest.raises(ValueError, match="square"):
        multiclass_metric("tpr", np.ones((3, 2)))
    with pytest.raises(ValueError, match="negative"):
        multiclass_metric("tpr", -np.ones((2, 2)))
    with pytest.raises(ValueError, match="does not apply"):
        multiclass_metric("kappa", np.ones((2, 2)), average="macro")
    with pytest.raises(ValueError, match="average"):
        multiclass_metric("tpr", np.ones((2, 2)), average="samples")
    with pytest.raises(ValueError, match="two groups"):
        multiclass_metric("ofi", np.ones((2, 2)))


@pytest.mark.parametrize("k, n_max", [(3, 6), (4, 3), (5, 2)])
def test_hole_counts_equal_enumeration(k, n_max):
    from math import comb

    from sklearn_smallfair._multiclass_counts import enumerate_multiclass_matrices
    from sklearn_smallfair.metrics import count_undefined

    names = (
        "tpr",
        "fpr",
        "ppv",
        "npv",
        "f1",
        "f1_original",
        "pt",
        "mb",
        "acc",
        "mcc",
        "kappa",
        "balanced_accuracy",
        "accuracy",
    )
    for n in range(n_max + 1):
        mats = enumerate_multiclass_matrices(n, k)
        assert mats.shape[0] == comb(n + k * k - 1, k * k - 1)
        assert (mats.sum(axis=(1, 2)) == n).all()
        assert np.unique(mats.reshape(mats.shape[0], -1), axis=0).shape[0] == len(mats)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in names:
                values = multiclass_metric(name, mats)
                if values.ndim == 2:  # one-vs-rest: every class has the same count
                    holes = np.isnan(values).sum(axis=0)
                    assert (holes == holes[0]).all(), name
                    holes = holes[0]
                else:
                    holes = np.isnan(values).sum()
                assert count_undefined(name, n, n_classes=k) == holes, (name, n)


def test_hole_counts_closed_forms_at_large_n():
    from math import comb

    from sklearn_smallfair.metrics import count_undefined

    k, n = 3, 150
    # a joint ratio is undefined when its two blocks are empty: the class's row
    # (K cells) for tpr leaves K^2 - K free cells
    assert count_undefined("tpr", n, n_classes=k) == comb(
        n + k * k - k - 1, k * k - k - 1
    )
    assert count_undefined("mcc", n, n_classes=k) == 2 * k * comb(n + k - 1, k - 1) - 9
    assert count_undefined("accuracy", n, n_classes=k) == 0
    assert count_undefined("kappa", n, n_classes=4) == 4
    # K = 2 is the binary count
    assert count_undefined("tpr", 12, n_classes=2) == 13
    with pytest.raises(ValueError, match="n_classes"):
        count_undefined("tpr", 5, n_classes=1)
    with pytest.raises(ValueError, match="2 GiB"):
        from sklearn_smallfair._multiclass_counts import enumerate_multiclass_matrices

        enumerate_multiclass_matrices(200, 4)


def test_group_table_against_sklearn_per_group():
    from sklearn.metrics import recall_score

    from sklearn_smallfair.metrics import group_metrics

    t, p, g, labels = _data(11, n=400, k=3, n_groups=5)
    table = group_metrics(
        t, p, sensitive_features=g, labels=labels, metrics=["tpr", "ppv"]
    )
    assert table.index.names == ["group", "class"]
    assert table.shape[0] == 5 * 3
    for grp in range(5):
        m = g == grp
        np.testing.assert_allclose(
            table.loc[grp, "tpr"].to_numpy(),
            recall_score(t[m], p[m], labels=labels, average=None),
            rtol=1e-12,
        )
        assert (table.loc[grp, "n"] == m.sum()).all()
        np.testing.assert_array_equal(
            table.loc[grp, "support"].to_numpy(),
            [np.sum(t[m] == lab) for lab in labels],
        )
    averaged = group_metrics(
        t,
        p,
        sensitive_features=g,
        labels=labels,
        metrics=["tpr", "mcc", "kappa"],
        average="weighted",
    )
    for grp in range(5):
        m = g == grp
        assert averaged.loc[grp, "tpr"] == pytest.approx(
            recall_score(t[m], p[m], labels=labels, average="weighted"), rel=1e-12
        )
        assert averaged.loc[grp, "mcc"] == pytest.approx(
            matthews_corrcoef(t[m], p[m]), rel=1e-12
        )
        assert averaged.loc[grp, "kappa"] == pytest.approx(
            cohen_kappa_score(t[m], p[m]), rel=1e-12
        )


def test_group_table_undefined_policy_and_errors():
    from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
    from sklearn_smallfair.metrics import group_metrics

    t = ["a", "a", "b", "c", "c", "b"]
    p = ["a", "b", "b", "c", "a", "b"]
    g = [0, 0, 0, 1, 1, 1]
    with pytest.warns(UndefinedGroupMetricWarning, match=r"\(0, 'c'\)"):
        table = group_metrics(t, p, sensitive_features=g, metrics="tpr")
    assert table.loc[(0, "c"), "tpr_undefined"]
    filled = group_metrics(t, p, sensitive_features=g, metrics="tpr", zero_division=0.0)
    assert filled.loc[(0, "c"), "tpr"] == 0.0
    assert filled.loc[(0, "c"), "tpr_undefined"]
    with pytest.raises(ValueError, match="whole K x K matrix"):
        group_metrics(t, p, sensitive_features=g, metrics=["kappa"])
    with pytest.raises(ValueError, match=r"[Uu]nknown metric"):
        group_metrics(t, p, sensitive_features=g, metrics=["tprr"])


def test_group_metrics_takes_multiclass_targets():
    from sklearn_smallfair.metrics import group_metrics

    t, p, g, labels = _data(5, n=200)
    table = group_metrics(
        t, p, sensitive_features=g, labels=labels, metrics=["tpr", "ppv"]
    )
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(
        table,
        group_metrics(
            t, p, sensitive_features=g, labels=labels, metrics=["tpr", "ppv"]
        ),
    )
    averaged = group_metrics(
        t, p, sensitive_features=g, average="macro", metrics=["tpr", "kappa"]
    )
    assert list(averaged.index) == sorted(set(g))
    # binary input without labels/average is the binary table, unchanged
    binary = group_metrics(
        (t == "low").astype(int), (p == "low").astype(int), sensitive_features=g
    )
    assert list(binary.columns[:3]) == ["n", "n_pos", "n_neg"]
    # pos_label has no multiclass meaning: the error names the binarized call
    with pytest.raises(ValueError, match=r"pos_label.*y_true == 'low'"):
        group_metrics(t, p, sensitive_features=g, average="macro", pos_label="low")


def test_group_scorer_in_grid_search_on_a_multiclass_model():
    import sklearn
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, cross_validate

    from sklearn_smallfair.metrics import aggregate_group_metric, make_group_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=300), [-0.5, 0.5])  # 3 classes
    A = rng.choice(["a", "b", "c"], size=300)
    scorer = make_group_scorer("tpr", average="macro", labels=[0, 1, 2])
    kappa = make_group_scorer("kappa", labels=[0, 1, 2], aggregate="min")
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            LogisticRegression(max_iter=500),
            {"C": [0.01, 1.0]},
            scoring={"tpr_gap": scorer, "kappa_min": kappa},
            refit="tpr_gap",
            cv=3,
        ).fit(X, y, sensitive_features=A)
        cv = cross_validate(
            LogisticRegression(max_iter=500),
            X,
            y,
            scoring=scorer,
            cv=3,
            params={"sensitive_features": A},
            return_estimator=True,
            return_indices=True,
        )
    assert np.isfinite(search.cv_results_["mean_test_tpr_gap"]).all()
    assert (search.cv_results_["mean_test_kappa_min"] <= 1).all()
    # each fold's score is minus the macro-TPR difference between groups
    for est, test in zip(cv["estimator"], cv["indices"]["test"]):
        expected = aggregate_group_metric(
            y[test],
            est.predict(X[test]),
            sensitive_features=A[test],
            metric="tpr",
            average="macro",
            labels=[0, 1, 2],
        )
        table = multiclass_metric(
            "tpr",
            np.stack(
                [
                    confusion_matrix(
                        y[test][A[test] == g],
                        est.predict(X[test])[A[test] == g],
                        labels=[0, 1, 2],
                    )
                    for g in ("a", "b", "c")
                ]
            ),
            average="macro",
        )
        assert expected == pytest.approx(table.max() - table.min(), abs=1e-12)
    np.testing.assert_allclose(
        -cv["test_score"],
        [
            aggregate_group_metric(
                y[t],
                e.predict(X[t]),
                sensitive_features=A[t],
                metric="tpr",
                average="macro",
                labels=[0, 1, 2],
            )
            for e, t in zip(cv["estimator"], cv["indices"]["test"])
        ],
    )


@pytest.mark.parametrize("metric, average", [("tpr", "macro"), ("kappa", None)])
def test_multiclass_scorer_smooths_the_k_by_k_matrices(metric, average):
    from sklearn_smallfair.metrics import aggregate_group_metric, group_metrics
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 200)
    pred = np.where(rng.random(200) < 0.7, y, rng.integers(0, 3, 200))
    groups = rng.choice(["a", "b", "c", "d"], 200, p=[0.4, 0.3, 0.2, 0.1])
    cps = CrossPriorSmoothing(lam=10)
    table = group_metrics(
        y,
        pred,
        sensitive_features=groups,
        labels=[0, 1, 2],
        metrics=[metric],
        average=average or "macro",
        smoothing=cps,
        reference="total",
    )
    smoothed = table[f"{metric}_smoothed"].to_numpy()
    got = aggregate_group_metric(
        y,
        pred,
        sensitive_features=groups,
        metric=metric,
        average=average,
        labels=[0, 1, 2],
        smoothing=cps,
        reference="total",
    )
    assert got == smoothed.max() - smoothed.min()
    raw = aggregate_group_metric(
        y,
        pred,
        sensitive_features=groups,
        metric=metric,
        average=average,
        labels=[0, 1, 2],
    )
    assert raw == table[metric].max() - table[metric].min()
    assert got != raw  # smoothing changes the groups' values


def test_multiclass_scorer_errors():
    from sklearn_smallfair.metrics import aggregate_group_metric, make_group_scorer
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    with pytest.raises(ValueError, match="per-class metric"):
        make_group_scorer("tpr", labels=[0, 1, 2])
    with pytest.raises(ValueError, match="difference_upper"):
        aggregate_group_metric(
            [0, 1, 2],
            [0, 1, 2],
            sensitive_features=[0, 0, 1],
            metric="tpr",
            average="macro",
            aggregate="difference_upper",
            smoothing=CrossPriorSmoothing(5),
        )
    with pytest.raises(ValueError, match="difference_upper"):
        aggregate_group_metric(
            [0, 1, 2],
            [0, 1, 2],
            sensitive_features=[0, 0, 1],
            metric="tpr",
            average="macro",
            aggregate="difference_upper",
        )


def test_k_by_k_smoothing_warnings_name_the_groups():
    from sklearn_smallfair.exceptions import ReferenceWarning
    from sklearn_smallfair.metrics import group_metrics
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 120)
    pred = np.where(rng.random(120) < 0.7, y, rng.integers(0, 3, 120))
    groups = rng.choice(["north", "south", "rural"], 120)
    with pytest.warns(ReferenceWarning, match="group 'north'") as caught:
        group_metrics(
            y,
            pred,
            sensitive_features=groups,
            labels=[0, 1, 2],
            metrics=["tpr"],
            average="macro",
            smoothing=CrossPriorSmoothing(lam=10),
        )
    references = [w for w in caught if issubclass(w.category, ReferenceWarning)]
    assert not any("position" in str(w.message) for w in references)
    assert all(w.filename == __file__ for w in references)
