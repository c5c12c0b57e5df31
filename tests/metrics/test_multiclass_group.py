"""group_metrics on K x K matrices: counts, smoothing and intervals against the
binary table of each one-vs-rest matrix, and the intervals' coverage."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from sklearn_smallfair._proportion_intervals import wilson_interval
from sklearn_smallfair.metrics import (
    group_metrics,
    multiclass_confusion_counts,
    multiclass_metric,
    one_vs_rest,
)
from sklearn_smallfair.metrics._multiclass_table import matrix_prior
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

LABELS = np.array(["low", "mid", "high"])
# a population's K x K proportions (rows true, columns predicted)
LAW = np.array([[0.20, 0.05, 0.02], [0.05, 0.20, 0.05], [0.02, 0.06, 0.35]])


def _rows(seed, n=240, n_groups=4):
    rng = np.random.default_rng(seed)
    t = LABELS[rng.integers(0, 3, n)]
    p = np.where(rng.random(n) < 0.6, t, LABELS[rng.integers(0, 3, n)])
    g = np.array(["g0", "g1", "g2", "g3"])[rng.integers(0, n_groups, n)]
    return t, p, g


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


KW = dict(
    metrics=["tpr", "ppv", "mb"],
    confidence_level=0.9,
    random_state=3,
    n_resamples=300,
    smoothing=CrossPriorSmoothing(lam=5, min_reference=0),
)
KW_AVG = dict(
    metrics=["tpr", "accuracy", "kappa", "mcc"],
    average="weighted",
    confidence_level=0.9,
    random_state=3,
    n_resamples=300,
    smoothing=CrossPriorSmoothing(lam="auto", min_reference=0),
)


@pytest.mark.parametrize("kwargs", [KW, KW_AVG])
def test_counts_path_equals_rows_path(kwargs):
    t, p, g = _rows(0)
    rows = _quiet(group_metrics, t, p, sensitive_features=g, labels=LABELS, **kwargs)
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    forms = [
        res,
        res.to_frame(),
        dict(zip(res.groups, res.counts)),
    ]
    for counts in forms:
        table = _quiet(group_metrics, counts=counts, labels=LABELS, **kwargs)
        pd.testing.assert_frame_equal(table, rows, check_exact=True)
        assert table.attrs == rows.attrs
    # a bare array: classes 0..K-1 and groups 0..G-1 by default, same values
    # (the draws are keyed by the group labels, which differ)
    bare = _quiet(group_metrics, counts=res.counts, **kwargs)
    values = [c for c in rows.columns if not c.endswith(("_low", "_high"))]
    np.testing.assert_array_equal(bare[values].to_numpy(), rows[values].to_numpy())
    if kwargs.get("average") is None:
        assert list(bare.index.get_level_values("class")[:3]) == [0, 1, 2]
    # a MulticlassCounts keeps its own labels
    direct = _quiet(group_metrics, counts=res, **kwargs)
    pd.testing.assert_frame_equal(direct, rows, check_exact=True)


def test_smoothed_classes_equal_one_vs_rest_smoothing_by_hand():
    t, p, g = _rows(1)
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    lam = 7.0
    cps = CrossPriorSmoothing(lam=lam, min_reference=0)
    table = _quiet(
        group_metrics,
        counts=res,
        labels=LABELS,
        smoothing=cps,
        metrics=["tpr", "ppv", "f1", "mb"],
        zero_division=np.nan,
    )
    c = res.counts.astype(float)
    rest = c.sum(axis=0) - c
    ovr, ovr_rest = one_vs_rest(c), one_vs_rest(rest)
    for k, label in enumerate(LABELS):
        # the class's one-vs-rest matrix smoothed toward the rest's, by hand
        n = ovr[:, k].sum(axis=1, keepdims=True)
        q = ovr_rest[:, k] / ovr_rest[:, k].sum(axis=1, keepdims=True)
        by_hand = (ovr[:, k] + lam * q) / (n + lam) * n
        tp, fn, fp, _ = by_hand.T
        rows = table.xs(label, level="class")
        np.testing.assert_allclose(rows["tpr_smoothed"], tp / (tp + fn), rtol=1e-12)
        np.testing.assert_allclose(rows["ppv_smoothed"], tp / (tp + fp), rtol=1e-12)
        np.testing.assert_allclose(
            rows["f1_smoothed"], 2 * tp / (2 * tp + fp + fn), rtol=1e-12
        )
        # and the binary table of the one-vs-rest counts says the same
        binary = _quiet(
            group_metrics,
            counts=dict(zip(res.groups, ovr[:, k])),
            metrics=["tpr", "ppv", "mb"],
            smoothing=cps,
        )
        for m in ("tpr", "ppv", "mb"):
            np.testing.assert_allclose(
                rows[f"{m}_smoothed"], binary[f"{m}_smoothed"], rtol=1e-12
            )
            np.testing.assert_array_equal(rows[m], binary[m])
    assert (table["lam"] == lam).all()


def test_whole_matrix_smoothing_and_additive_and_auto():
    t, p, g = _rows(2)
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    c = res.counts.astype(float)
    rest = c.sum(axis=0) - c
    # whole-matrix metrics on the smoothed K x K matrices
    cps = CrossPriorSmoothing(lam=4, min_reference=0)
    table = group_metrics(
        counts=res, smoothing=cps, average="macro", metrics=["kappa", "mcc", "tpr"]
    )
    smoothed = (
        (c + 4 * rest / rest.sum(axis=(1, 2), keepdims=True))
        / (c.sum(axis=(1, 2), keepdims=True) + 4)
        * c.sum(axis=(1, 2), keepdims=True)
    )
    for m in ("kappa", "mcc"):
        np.testing.assert_allclose(
            table[f"{m}_smoothed"], multiclass_metric(m, smoothed), rtol=1e-12
        )
    np.testing.assert_allclose(
        table["tpr_smoothed"],
        multiclass_metric("tpr", smoothed, average="macro"),
        rtol=1e-12,
    )
    # additive smoothing: eps on each of the K^2 cells
    add = group_metrics(counts=res, smoothing=AdditiveSmoothing(0.5), metrics="tpr")
    np.testing.assert_allclose(
        add["tpr_smoothed"],
        multiclass_metric("tpr", c + 0.5).reshape(-1),
        rtol=1e-12,
    )
    assert "lam" not in add.columns
    # lam="auto": one lam from the groups' K^2 cells, as transform_matrices learns
    auto = _quiet(
        group_metrics,
        counts=res,
        average="micro",
        metrics="kappa",
        smoothing=CrossPriorSmoothing(lam="auto", min_reference=0),
    )
    learned = _quiet(
        CrossPriorSmoothing(lam="auto", min_reference=0).transform_matrices, c, rest
    )
    np.testing.assert_allclose(
        auto["kappa_smoothed"], multiclass_metric("kappa", learned), rtol=1e-10
    )
    assert auto["lam"].nunique() == 1 and auto["lam"].iloc[0] > 0
    # reference= a named group and explicit matrices
    named = _quiet(
        group_metrics, counts=res, smoothing=cps, reference="g0", metrics="tpr"
    )
    explicit = _quiet(
        group_metrics, counts=res, smoothing=cps, reference=res.counts[0], metrics="tpr"
    )
    np.testing.assert_array_equal(named["tpr_smoothed"], explicit["tpr_smoothed"])


@pytest.mark.parametrize(
    "method", ["wilson", "clopper-pearson", "jeffreys", "posterior", "bootstrap"]
)
def test_class_intervals_equal_the_binary_table(method):
    t, p, g = _rows(4)
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    metrics = (
        ["tpr", "ppv"]
        if method in ("wilson", "clopper-pearson", "jeffreys")
        else ["tpr", "mb", "f1"]
    )
    cps = CrossPriorSmoothing(lam=6, min_reference=0)
    kw = dict(
        metrics=metrics,
        confidence_level=0.9,
        interval_method=method,
        random_state=11,
        n_resamples=400,
        smoothing=cps,
        zero_division=np.nan,
    )
    table = _quiet(group_metrics, counts=res, **kw)
    ovr = one_vs_rest(res.counts)
    for k, label in enumerate(LABELS):
        binary = _quiet(group_metrics, counts=dict(zip(res.groups, ovr[:, k])), **kw)
        rows = table.xs(label, level="class")
        for m in metrics:
            for col in (m, f"{m}_smoothed"):
                for end in ("_low", "_high"):
                    np.testing.assert_allclose(
                        rows[col + end].to_numpy(),
                        binary[col + end].to_numpy(),
                        rtol=1e-9,
                        err_msg=f"{label} {col}{end}",
                    )
        assert binary.attrs["interval_method"] == table.attrs["interval_method"]


def test_accuracy_and_whole_matrix_intervals():
    c = np.array([[[6, 2, 1], [1, 5, 2], [0, 2, 7]], [[3, 0, 1], [2, 2, 0], [1, 1, 4]]])
    table = group_metrics(
        counts=c,
        metrics=["accuracy", "kappa", "mcc"],
        average="micro",
        confidence_level=0.95,
        random_state=0,
    )
    hit, n = np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2))
    low, high = wilson_interval(hit, n, 0.05)
    np.testing.assert_allclose(table["accuracy_low"], low, rtol=1e-12)
    np.testing.assert_allclose(table["accuracy_high"], high, rtol=1e-12)
    assert table.attrs["interval_method"] == {
        "accuracy": "wilson",
        "kappa": "posterior",
        "mcc": "posterior",
    }
    # posterior: the trace's Beta (prior 2/K^2 per cell) against the Dirichlet draws
    post = group_metrics(
        counts=c,
        metrics=["accuracy"],
        average="micro",
        confidence_level=0.95,
        interval_method="posterior",
    )
    a = matrix_prior(3)
    assert a == pytest.approx(2 / 9)
    np.testing.assert_allclose(
        post["accuracy_low"], beta.ppf(0.025, hit + 3 * a, n - hit + 6 * a)
    )
    drawn = group_metrics(
        counts=c,
        metrics=["tpr"],
        average="micro",
        confidence_level=0.95,
        interval_method="posterior",
        n_resamples=20000,
        random_state=1,
    )
    # micro TPR is accuracy: its drawn interval agrees with the Beta within the
    # draws' error (sd of a 2.5 % quantile from 20000 draws: about 0.004)
    np.testing.assert_allclose(drawn["tpr_low"], post["accuracy_low"], atol=0.01)
    np.testing.assert_allclose(drawn["tpr_high"], post["accuracy_high"], atol=0.01)
    # kappa's interval holds its value; the small group's is the wider
    width = table["kappa_high"] - table["kappa_low"]
    assert (
        (table["kappa_low"] <= table["kappa"]) & (table["kappa"] <= table["kappa_high"])
    ).all()
    assert width.iloc[1] > width.iloc[0]


def test_intervals_reproducible_and_group_keyed():
    t, p, g = _rows(5)
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    kw = dict(
        metrics=["kappa", "ppv"],
        average="weighted",
        confidence_level=0.95,
        random_state=7,
        n_resamples=300,
        interval_method="bootstrap",
    )
    one = group_metrics(counts=res, **kw)
    pd.testing.assert_frame_equal(one, group_metrics(counts=res, **kw))
    # a group's interval does not depend on the other groups
    sub = {grp: m for grp, m in zip(res.groups, res.counts) if grp != "g1"}
    part = group_metrics(counts=sub, **kw)
    pd.testing.assert_frame_equal(part, one.drop(index="g1"))
    other = group_metrics(counts=res, **{**kw, "random_state": 8})
    assert not np.allclose(other["kappa_low"], one["kappa_low"])


def test_weighted_rows():
    t, p, g = _rows(8)
    cps = CrossPriorSmoothing(lam=5, min_reference=0)
    kw = dict(labels=LABELS, metrics=["tpr", "mb"], smoothing=cps, confidence_level=0.9)
    weighted = _quiet(
        group_metrics,
        t,
        p,
        sensitive_features=g,
        sample_weight=np.full(len(t), 2.0),
        random_state=0,
        **kw,
    )
    res = multiclass_confusion_counts(t, p, sensitive_features=g, labels=LABELS)
    doubled = _quiet(
        group_metrics,
        counts=dict(zip(res.groups, 2 * res.counts)),
        random_state=0,
        **kw,
    )
    # weights of 2 are the counts doubled: same values, smoothing and intervals
    pd.testing.assert_frame_equal(weighted, doubled, check_dtype=False, rtol=1e-12)
    plain = _quiet(group_metrics, t, p, sensitive_features=g, **kw)
    np.testing.assert_allclose(weighted["tpr"], plain["tpr"], rtol=1e-12)


def test_macro_intervals_mover_or_withheld_with_one_warning():
    t, p, g = _rows(6)
    metrics = ["tpr", "f1", "balanced_accuracy", "kappa"]
    with pytest.warns(UserWarning, match="no interval") as record:
        table = group_metrics(
            t,
            p,
            sensitive_features=g,
            average="macro",
            metrics=metrics,
            confidence_level=0.95,
            random_state=0,
        )
    assert sum("no interval" in str(w.message) for w in record) == 1
    message = str(next(w.message for w in record if "no interval" in str(w.message)))
    assert "for f1 (NaN" in message and "average=None" in message
    assert table["f1_low"].isna().all() and table["f1_high"].isna().all()
    assert table.attrs["interval_method"]["f1"] == "none"
    assert table.attrs["interval_method"]["tpr"] == "mover-wilson"
    assert table.attrs["interval_method"]["balanced_accuracy"] == "mover-wilson"
    assert table["kappa_low"].notna().all()
    # every class is in every group: balanced accuracy is the macro TPR
    np.testing.assert_allclose(table["balanced_accuracy_low"], table["tpr_low"])
    # posterior draws and the bootstrap: withheld
    with pytest.warns(UserWarning, match="for tpr, f1, balanced_accuracy"):
        drawn = group_metrics(
            t,
            p,
            sensitive_features=g,
            average="macro",
            metrics=metrics,
            confidence_level=0.95,
            interval_method="bootstrap",
            random_state=0,
        )
    assert drawn["tpr_low"].isna().all()


@pytest.mark.parametrize("method", ["auto", "jeffreys", "clopper-pearson"])
def test_macro_mover_by_hand(method):
    # a class absent from group 1's truth: with zero_division=nan its TPR is
    # left out of the mean
    c = np.array([[[6, 2, 1], [1, 5, 2], [0, 2, 7]], [[3, 0, 1], [2, 2, 0], [0, 0, 0]]])
    table = _quiet(
        group_metrics,
        counts=c,
        metrics=["tpr", "ppv", "fdr"],
        average="macro",
        zero_division=np.nan,
        confidence_level=0.9,
        interval_method=method,
    )
    score = {"auto": "wilson"}.get(method, method)
    from sklearn_smallfair._proportion_intervals import SCORE_FUNCTIONS

    diag = np.diagonal(c, axis1=1, axis2=2).astype(float)
    for name, k, m in (
        ("tpr", diag, c.sum(axis=2)),
        ("ppv", diag, c.sum(axis=1)),
        ("fdr", c.sum(axis=1) - diag, c.sum(axis=1)),
    ):
        assert table.attrs["interval_method"][name] == f"mover-{score}"
        for i in range(2):
            ok = m[i] > 0
            ki, mi = k[i][ok], m[i][ok].astype(float)
            lo, hi = SCORE_FUNCTIONS[score](ki, mi, 0.1)
            w = 1.0 / ok.sum()
            mean = np.mean(ki / mi)
            assert table[name].iloc[i] == pytest.approx(mean, rel=1e-12)
            expect_lo = mean - np.sqrt(np.sum((w * (ki / mi - lo)) ** 2))
            expect_hi = mean + np.sqrt(np.sum((w * (hi - ki / mi)) ** 2))
            assert table[f"{name}_low"].iloc[i] == pytest.approx(
                max(expect_lo, 0.0), rel=1e-12, abs=1e-15
            )
            assert table[f"{name}_high"].iloc[i] == pytest.approx(
                min(expect_hi, 1.0), rel=1e-12
            )


def test_errors_name_the_argument_and_the_fix():
    t, p, g = _rows(7)
    c = multiclass_confusion_counts(t, p, sensitive_features=g).counts
    with pytest.raises(ValueError, match=r"pos_label='low'.*y_true == 'low'"):
        group_metrics(t, p, sensitive_features=g, labels=LABELS, pos_label="low")
    with pytest.raises(ValueError, match="pos_label"):
        group_metrics(counts=c, pos_label=2)
    with pytest.raises(ValueError, match=r"whole numbers.*sample_weight"):
        group_metrics(counts=c + 0.5)
    with pytest.raises(ValueError, match="square"):
        group_metrics(counts=np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="negative"):
        group_metrics(counts=-c)
    with pytest.raises(ValueError, match="labels must name the 3 classes"):
        group_metrics(counts=c, labels=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="not both"):
        group_metrics(t, p, counts=c)
    with pytest.raises(ValueError, match="sample_weight"):
        group_metrics(counts=c, sample_weight=np.ones(4))
    with pytest.raises(ValueError, match=r"kappa is not one.*'posterior'"):
        group_metrics(
            counts=c,
            metrics=["kappa"],
            average="micro",
            confidence_level=0.9,
            interval_method="wilson",
        )
    with pytest.raises(ValueError, match="mb is not a proportion"):
        group_metrics(
            counts=c, metrics=["mb"], confidence_level=0.9, interval_method="wilson"
        )
    with pytest.raises(ValueError, match=r"without the column\(s\) \['count'\]"):
        group_metrics(counts=pd.DataFrame({"true": [0], "predicted": [1]}))
    frame = multiclass_confusion_counts(t, p, sensitive_features=g).to_frame()
    with pytest.raises(ValueError, match=r"class\(es\) \['high'\].*add them"):
        group_metrics(counts=frame, labels=["low", "mid", "other"])
    with pytest.raises(TypeError, match="'count' column must hold numbers"):
        group_metrics(counts=frame.assign(count="x"))
    with pytest.raises(ValueError, match="'count' column must hold finite"):
        group_metrics(counts=frame.assign(count=-1))
    # without a group column the table is one group
    one = group_metrics(counts=frame.drop(columns="group"), metrics="tpr")
    np.testing.assert_array_equal(one.index.get_level_values("group"), [0, 0, 0])
    with pytest.raises(ValueError, match="not 'rest', 'total', a group label"):
        group_metrics(counts=c, smoothing=CrossPriorSmoothing(2), reference="zz")


# ---------------------------------------------------------------------------------
# Coverage at n = 30 per group, K = 3
# ---------------------------------------------------------------------------------
def _coverage(law, method, seed, n=30, n_groups=600):
    law = law / law.sum()
    counts = np.random.default_rng(seed).multinomial(n, law.ravel(), n_groups)
    counts = counts.reshape(n_groups, 3, 3)
    out = {}
    for avg, metrics in (
        (None, ["tpr", "ppv"]),
        ("weighted", ["tpr", "ppv", "accuracy", "kappa", "mcc"]),
        ("micro", ["fpr"]),
        ("macro", ["tpr", "ppv", "balanced_accuracy"] if method == "auto" else []),
    ):
        if not metrics:
            continue
        table = _quiet(
            group_metrics,
            counts=counts,
            metrics=metrics,
            average=avg,
            confidence_level=0.95,
            interval_method=method,
            n_resamples=500,
            random_state=seed,
            zero_division=np.nan,
        )
        for m in metrics:
            whole = m in ("accuracy", "kappa", "mcc", "balanced_accuracy")
            truth = multiclass_metric(m, law, average=None if whole else avg)
            if avg is None:
                truth = np.tile(truth, n_groups)
            ok = ~table[f"{m}_undefined"].to_numpy()
            lo, hi = table[f"{m}_low"].to_numpy(), table[f"{m}_high"].to_numpy()
            name = m if whole or avg is None else f"{m}_{avg}"
            out[name] = ((lo <= truth) & (truth <= hi))[ok].mean()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("method", ["auto", "posterior"])
def test_coverage_at_30_per_group_and_3_classes(method):
    """With 600 groups a coverage of 0.95 is measured within +-0.009 (one sd), so
    the band [0.925, 0.975] (2.8 sd) fails a correct interval about once in 200
    runs of a new seed (the seeds here are fixed), and fails an interval at the
    90 % level or a posterior with 1/2 pseudo-count per cell (accuracy 0.887,
    kappa 0.885 on the first law). The per-class bootstrap, which undercovers at
    this size (0.86 to 0.89), is not held to it. With ``"auto"`` a class's
    interval is Clopper-Pearson's, which covers at least 95 % by construction
    (0.98 here): it is held to the lower bound only."""
    laws = [LAW, np.array([[0.45, 0.08, 0.02], [0.07, 0.20, 0.05], [0.02, 0.03, 0.08]])]
    for i, law in enumerate(laws):
        for name, cov in _coverage(law, method, seed=i).items():
            exact = method == "auto" and name in ("tpr", "ppv")  # per class
            assert 0.925 <= cov <= (1.0 if exact else 0.975), (method, i, name, cov)
