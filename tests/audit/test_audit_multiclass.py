"""The audit of multiclass predictions: each class's binary audit, one-vs-rest."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_smallfair._random import child_seed, resolve_seed
from sklearn_smallfair.audit import (
    AuditReport,
    FairnessAudit,
    MulticlassAuditReport,
    audit_predictions,
)
from sklearn_smallfair.exceptions import (
    ReferenceWarning,
    UndefinedGroupMetricWarning,
)
from sklearn_smallfair.metrics import (
    multiclass_confusion_counts,
    multiclass_metric,
    one_vs_rest,
)
from sklearn_smallfair.smoothing import CrossPriorSmoothing
from sklearn_smallfair.stats import adjust_pvalues, multiclass_match_test

LABELS = ["low", "mid", "high"]
FAST = dict(n_resamples=500, random_state=3)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceWarning)
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        yield


def _rows(n=240, seed=0, groups=("a", "b", "c"), weights=(0.55, 0.3, 0.15)):
    """Three classes; group c's "mid" people are mostly predicted "low"."""
    rng = np.random.default_rng(seed)
    y = rng.choice(LABELS, n)
    g = rng.choice(list(groups), n, p=list(weights))
    right = rng.random(n) < 0.75
    p = np.where(right, y, rng.choice(LABELS, n))
    p = np.where((g == groups[-1]) & (y == "mid") & (rng.random(n) < 0.7), "low", p)
    return y, p, g


def _binary(y, p, g, label, **kw):
    return audit_predictions(
        y == label, p == label, sensitive_features=g, pos_label=True, **kw
    )


# =====================================================================================
# each class is the binary audit of y == k, pred == k
# =====================================================================================
def test_each_class_is_the_binary_audit_without_correction():
    y, p, g = _rows()
    kw = dict(FAST, correction="none", metrics=["tpr", "ppv"])
    multi = audit_predictions(y, p, sensitive_features=g, labels=LABELS, **kw)
    assert isinstance(multi, MulticlassAuditReport)
    assert list(multi.reports) == LABELS
    for label in LABELS:
        by_hand = _binary(y, p, g, label, **kw)
        got = multi.reports[label]
        assert isinstance(got, AuditReport)
        # counts, metrics, intervals, smoothed values, p-values, gaps, verdicts
        pd.testing.assert_frame_equal(got.frame, by_hand.frame, check_exact=True)
        pd.testing.assert_frame_equal(got.match, by_hand.match, check_exact=True)
        pd.testing.assert_frame_equal(
            got.separation, by_hand.separation, check_exact=True
        )
        assert got.separation_violated == by_hand.separation_violated
        # the stacked frame holds the same rows under (group, class)
        pd.testing.assert_frame_equal(
            multi.frame.xs(label, level="class"), by_hand.frame, check_exact=True
        )
    assert multi.frame.index.names == ["group", "class"]
    assert multi.frame.shape[0] == 3 * len(LABELS)


def test_the_correction_runs_over_every_class():
    y, p, g = _rows(n=150, seed=1)
    metrics = ["tpr", "fpr"]
    multi = audit_predictions(
        y, p, sensitive_features=g, labels=LABELS, metrics=metrics, **FAST
    )
    alone = {
        k: _binary(y, p, g, k, metrics=metrics, correction="none", **FAST)
        for k in LABELS
    }
    alpha = multi.alpha
    # family="all": one Holm family over every group x class x metric
    raws = {
        m: np.concatenate([alone[k].frame[f"{m}_match_p_value"] for k in LABELS])
        for m in metrics
    }
    joint = np.split(
        adjust_pvalues(np.concatenate([raws[m] for m in metrics]), "holm"),
        len(metrics),
    )
    for m, adjusted in zip(metrics, joint):
        raw = raws[m]
        expected = np.split(adjusted, len(LABELS))
        for k, want in zip(LABELS, expected):
            f = multi.reports[k].frame
            np.testing.assert_array_equal(
                f[f"{m}_match_p_value"], alone[k].frame[f"{m}_match_p_value"]
            )
            np.testing.assert_array_equal(f[f"{m}_match_p_adjusted"], want)
            np.testing.assert_array_equal(f[f"{m}_match_reject"], want <= alpha)
            rows = multi.reports[k].match
            rows = rows[rows["metric"] == m].set_index("group")
            np.testing.assert_array_equal(rows.loc[f.index, "p_adjusted"], want)
        # holm over 3 groups x 3 classes: 9 tests of the metric, not 3
        per_class = adjust_pvalues(alone[LABELS[0]].frame[f"{m}_match_p_value"], "holm")
        smallest = np.nanmin(raw[:3])
        assert np.nanmin(expected[0]) >= np.nanmin(per_class)
        assert np.nanmin(expected[0]) >= smallest
    # one family: the tests of every group, class and metric
    assert multi.n_tests == {m: 3 * len(LABELS) * len(metrics) for m in metrics}
    for m in metrics:
        assert multi.reports["low"]._n_tests(m) == 3 * len(LABELS) * len(metrics)
    # separation: per rate, one family of the pairs of every class
    for m in ("tpr", "fpr"):
        tables = [alone[k].separation for k in LABELS]
        raw = np.concatenate([t.loc[t["metric"] == m, "p_value"] for t in tables])
        want = np.split(adjust_pvalues(raw, "holm"), len(LABELS))
        for k, w in zip(LABELS, want):
            sep = multi.reports[k].separation
            got = sep.loc[sep["metric"] == m, "p_adjusted"]
            np.testing.assert_array_equal(got, w)
    any_reject = (multi.separation["p_adjusted"] <= alpha).any()
    assert multi.separation_violated == bool(any_reject)
    assert set(multi.separation["class"]) == set(LABELS)
    assert "holm over the 3 groups x 3 classes x 2 metrics" in multi.summary()


@pytest.mark.slow
def test_each_class_is_the_binary_audit_every_metric():
    y, p, g = _rows(n=300, seed=10)
    kw = dict(FAST, correction="none", metrics=["fpr", "f1", "npv", "mcc"])
    multi = audit_predictions(y, p, sensitive_features=g, **kw)
    for label in LABELS:
        by_hand = _binary(y, p, g, label, **kw)
        got = multi.reports[label]
        pd.testing.assert_frame_equal(got.frame, by_hand.frame, check_exact=True)
        pd.testing.assert_frame_equal(got.match, by_hand.match, check_exact=True)


def test_the_gap_of_one_class_is_found():
    y, p, g = _rows(n=600, seed=2)
    multi = audit_predictions(
        y, p, sensitive_features=g, metrics=["tpr"], tests=("match",), **FAST
    )
    verdicts = multi.frame["tpr_verdict"]
    assert verdicts.loc[("c", "mid")] == "gap"
    assert multi.frame.loc[("c", "mid"), "tpr"] < 0.5
    assert "Class 'mid'" in multi.summary()
    assert any(t.startswith("class 'mid': c (n = ") for t in multi.findings())


def test_labels_detected_order_and_counts_inputs():
    y, p, g = _rows(n=150, seed=4)
    kw = dict(FAST, metrics=["tpr"], tests=())
    detected = audit_predictions(y, p, sensitive_features=g, **kw)
    assert detected.labels.tolist() == sorted(LABELS)  # the sorted classes
    given = audit_predictions(y, p, sensitive_features=g, labels=LABELS, **kw)
    assert given.labels.tolist() == LABELS
    for k in LABELS:  # the order of the classes changes no class's audit
        pd.testing.assert_frame_equal(
            given.reports[k].frame, detected.reports[k].frame, check_exact=True
        )
    mc = multiclass_confusion_counts(y, p, sensitive_features=g, labels=LABELS)
    inputs = [
        (mc, None),
        (mc, ["high", "low", "mid"]),  # reordered by labels
        ({grp: c for grp, c in zip(mc.groups, mc.counts)}, LABELS),
    ]
    for counts, labels in inputs:
        r = audit_predictions(counts=counts, labels=labels, **kw)
        for k in LABELS:
            pd.testing.assert_frame_equal(
                r.reports[k].frame,
                given.reports[k].frame,
                check_exact=True,
                check_index_type=False,
            )
    arr = audit_predictions(counts=mc.counts, **kw)
    assert arr.labels.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(
        arr.reports[1].frame["tpr"].to_numpy(), given.reports["mid"].frame["tpr"]
    )


def test_binary_input_keeps_the_binary_audit():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 200)
    p = np.where(rng.random(200) < 0.8, y, 1 - y)
    g = rng.choice(["a", "b"], 200)
    default = audit_predictions(y, p, sensitive_features=g, metrics="tpr", **FAST)
    assert isinstance(default, AuditReport)
    explicit = audit_predictions(
        y, p, sensitive_features=g, pos_label=1, metrics="tpr", **FAST
    )
    pd.testing.assert_frame_equal(default.frame, explicit.frame, check_exact=True)
    # the rows are counted once: the audit of their counts is the same audit
    table = pd.DataFrame(
        {
            "TP": [((y == 1) & (p == 1) & (g == k)).sum() for k in "ab"],
            "FN": [((y == 1) & (p == 0) & (g == k)).sum() for k in "ab"],
            "FP": [((y == 0) & (p == 1) & (g == k)).sum() for k in "ab"],
            "TN": [((y == 0) & (p == 0) & (g == k)).sum() for k in "ab"],
        },
        index=pd.Index(["a", "b"], name="group"),
    )
    counted = audit_predictions(counts=table, metrics="tpr", **FAST)
    pd.testing.assert_frame_equal(
        counted.frame, default.frame, check_exact=True, check_index_type=False
    )
    # two classes with labels: the per-class audit, class 1 is the binary one
    both = audit_predictions(
        y, p, sensitive_features=g, labels=[0, 1], metrics="tpr", **FAST
    )
    assert isinstance(both, MulticlassAuditReport)
    np.testing.assert_array_equal(
        both.reports[1].frame["tpr_match_p_value"], default.frame["tpr_match_p_value"]
    )


def test_intersections_have_margins_per_class():
    y, p, g = _rows(n=200, seed=6)
    sex = np.where(np.arange(200) % 3 == 0, "F", "M")
    two = pd.DataFrame({"g": g, "sex": sex})
    multi = audit_predictions(
        y, p, sensitive_features=two, metrics=["tpr"], tests=(), **FAST
    )
    by_hand = audit_predictions(
        y == "mid",
        p == "mid",
        sensitive_features=two,
        pos_label=True,
        metrics=["tpr"],
        tests=(),
        **FAST,
    )
    got = multi.reports["mid"]
    for a in ("g", "sex"):
        pd.testing.assert_frame_equal(got.marginals[a], by_hand.marginals[a])
    pd.testing.assert_frame_equal(got.frame, by_hand.frame, check_exact=True)


def test_an_explicit_reference_is_a_k_by_k_matrix():
    y, p, g = _rows(n=150, seed=11)
    ref = np.array([[50, 10, 5], [8, 60, 12], [4, 9, 40]])  # rows true, in LABELS
    kw = dict(FAST, metrics=["tpr"], tests=("match",), correction="none")
    multi = audit_predictions(
        y, p, sensitive_features=g, labels=LABELS, reference=ref, **kw
    )
    for k, label in enumerate(LABELS):
        by_hand = _binary(y, p, g, label, reference=one_vs_rest(ref)[k], **kw)
        pd.testing.assert_frame_equal(
            multi.reports[label].frame, by_hand.frame, check_exact=True
        )
    np.testing.assert_allclose(
        multi.frame.xs("mid", level="class")["tpr_reference"], 60 / 80
    )
    with pytest.raises(ValueError, match=r"reference given as counts .* 3 x 3"):
        audit_predictions(y, p, sensitive_features=g, reference=[1, 2, 3, 4], **kw)


def test_whole_matrix_metrics_by_hand():
    y, p, g = _rows(n=200, seed=12)
    multi = audit_predictions(
        y, p, sensitive_features=g, labels=LABELS, metrics=["tpr"],
        tests=("match",), matrix_metrics=["accuracy", "kappa"], **FAST,
    )  # fmt: skip
    t = multi.matrix
    mc = multiclass_confusion_counts(y, p, sensitive_features=g, labels=LABELS)
    rest = mc.counts.sum(axis=0) - mc.counts
    smoothed = CrossPriorSmoothing(lam=10.0).transform_matrices(mc.counts, rest)
    for m in ("accuracy", "kappa"):
        np.testing.assert_array_equal(t[m], multiclass_metric(m, mc.counts))
        np.testing.assert_array_equal(t[f"{m}_reference"], multiclass_metric(m, rest))
        np.testing.assert_array_equal(
            t[f"{m}_smoothed"], multiclass_metric(m, smoothed)
        )
        # the multiclass MATCH test, with the audit's seed for the metric
        seed = child_seed(resolve_seed(FAST["random_state"]), "matrix", m)
        test = multiclass_match_test(
            counts=mc.counts, labels=LABELS, metric=m, n_resamples=FAST["n_resamples"],
            confidence_level=0.95, random_state=seed,
        ).frame  # fmt: skip
        for col, src in (("match_p_value", "p_value"),
                         ("match_p_adjusted", "p_adjusted"), ("low", "score_low"),
                         ("interval_high", "reference_range_high")):  # fmt: skip
            np.testing.assert_array_equal(t[f"{m}_{col}"], test[src])
        assert (t[f"{m}_match_reject"] == (t[f"{m}_match_p_adjusted"] <= 0.05)).all()
    assert t.loc["c", "accuracy_match_reject"]  # group c's "mid" goes to "low"
    assert "Whole-matrix accuracy" in multi.summary()
    page = multi.to_html(include_plots=False)
    assert "<section id='whole-matrix'>" in page and page.count("<h3>kappa</h3>") == 1
    assert len(json.loads(multi.to_json())["whole_matrix"]) == 3
    with pytest.raises(ValueError, match=r"matrix_metrics .*\['tpr'\]"):
        audit_predictions(y, p, sensitive_features=g, matrix_metrics=["tpr"])
    with pytest.raises(ValueError, match="these targets are binary"):
        audit_predictions(y == "low", p == "low", sensitive_features=g,
                          matrix_metrics="accuracy")  # fmt: skip


def test_bad_input_names_the_argument():
    y, p, g = _rows(n=60, seed=7)
    with pytest.raises(ValueError, match=r"pos_label='mid'.*multiclass.*Drop"):
        audit_predictions(y, p, sensitive_features=g, pos_label="mid")
    with pytest.raises(ValueError, match=r"pos_label=1 .*multiclass"):
        audit_predictions(y, p, sensitive_features=g, labels=LABELS, pos_label=1)
    with pytest.raises(ValueError, match=r"y_pred has class\(es\) \['high'\].*labels"):
        audit_predictions(
            np.where(y == "high", "low", y),
            p,
            sensitive_features=g,
            labels=["low", "mid"],
        )
    with pytest.raises(ValueError, match="labels must list at least two classes"):
        audit_predictions(y, p, sensitive_features=g, labels=["low"])
    with pytest.raises(ValueError, match="repeated"):
        audit_predictions(y, p, sensitive_features=g, labels=["low", "low", "mid"])
    mc = multiclass_confusion_counts(y, p, sensitive_features=g, labels=LABELS)
    with pytest.raises(ValueError, match=r"labels=\['low', 'mid'\] must hold"):
        audit_predictions(counts=mc, labels=["low", "mid"])
    with pytest.raises(ValueError, match="labels has 2 classes but counts are 3 x 3"):
        audit_predictions(counts=mc.counts, labels=["x", "y"])
    with pytest.raises(ValueError, match=r"either rows .* or counts"):
        audit_predictions(y, p, sensitive_features=g, counts=mc)
    with pytest.raises(ValueError, match="empty"):
        audit_predictions(counts=np.zeros((2, 3, 3), dtype=int))
    # a binary error stays the binary one
    with pytest.raises(ValueError, match="pos_label"):
        audit_predictions(
            [0, 1, 1, 0], [0, 1, 0, 0], sensitive_features=list("aabb"), pos_label=2
        )


def test_outputs_and_unique_html_ids(tmp_path):
    y, p, g = _rows(n=120, seed=8)
    multi = audit_predictions(y, p, sensitive_features=g, metrics=["tpr"], **FAST)
    page = multi.to_html(tmp_path / "report.html", include_plots=False)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    ids = re.findall(r"""\bid=["']([^"']+)["']""", page)
    assert len(ids) == len(set(ids)) and len(ids) > 20
    for k in range(3):
        assert f"id='c{k}'" in page and f"href='#c{k}'" in page
        assert f'name="c{k}-order"' in page
        assert f"#c{k}-order-evidence:checked~.view-evidence" in page
    for target in re.findall(r"href='#([^']+)'", page):
        assert target in ids
    assert page.count("<h1>") == 1 and "Class &#x27;mid&#x27;" in page
    # every group's 3 x 3 matrix, its diagonal marked
    assert page.count("<table class='data cm'>") == 3
    assert page.count("<td class=diag>") == 9
    first = multi.counts.counts[0]
    row = "".join(
        f"<td{' class=diag' if j == 0 else ''}>{v}</td>" for j, v in enumerate(first[0])
    )
    assert row in page
    text = multi.to_csv(tmp_path / "groups.csv")
    back = pd.read_csv(tmp_path / "groups.csv", index_col=[0, 1])
    assert back.index.names == ["group", "class"] and len(back) == 9
    assert text.splitlines()[0].startswith("group,class,n,n_pos")
    payload = json.loads(multi.to_json(tmp_path / "audit.json"))
    assert payload["classes"] == ["high", "low", "mid"]
    assert set(payload["findings"]) == {"high", "low", "mid"}
    assert len(payload["groups"]) == 9
    assert sum(r["count"] for r in payload["confusion_matrices"]) == 120
    with pytest.raises(ValueError, match="label='x' is not a class"):
        multi.plot("x")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = multi.plot("mid")
    assert len([a for a in fig.axes if a.get_visible()]) == 1  # one metric
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert any(text.startswith("c") for text in labels)
    plt.close(fig)


def test_fairness_audit_of_a_multiclass_model():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=300), [-0.5, 0.5])
    g = np.where(rng.random(300) < 0.2, "small", "large")
    audit = FairnessAudit(LogisticRegression(), metrics=["tpr"], **FAST).fit(X, y)
    report = audit.audit(X, y, sensitive_features=g)
    assert isinstance(report, MulticlassAuditReport)
    assert report.labels.tolist() == [0, 1, 2]
    pred = audit.predict(X)
    by_hand = _binary(y, pred, g, 2, metrics=["tpr"], correction="none", **FAST)
    np.testing.assert_array_equal(
        report.reports[2].frame["tpr_match_p_value"], by_hand.frame["tpr_match_p_value"]
    )
    fixed = FairnessAudit(
        LogisticRegression(), metrics=["tpr"], labels=[2, 1, 0], tests=(), **FAST
    ).fit(X, y)
    assert fixed.audit(X, y, sensitive_features=g).labels.tolist() == [2, 1, 0]
