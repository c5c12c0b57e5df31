"""FairnessAudit, audit_predictions and AuditReport."""

import json
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_smallfair.audit import AuditReport, FairnessAudit, audit_predictions
from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import group_metrics
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.stats import match_test, separation_test

HOSTILE = [
    "<script>document.title='pwned'</script>",
    '<img src=x onerror="alert(1)">',
]


def _rows(seed=0, n=1200, sizes=(0.6, 0.3, 0.08, 0.02), names=None):
    rng = np.random.default_rng(seed)
    names = names or ["A", "B", "C", "D"]
    g = np.asarray(names, dtype=object)[rng.choice(len(sizes), n, p=sizes)]
    y = rng.integers(0, 2, n)
    flip = rng.random(n) < np.where(g == names[1], 0.35, 0.15)
    return y, np.where(flip, 1 - y, y), g


def _counts_frame(y, p, g):
    cells = {"TP": (y == 1) & (p == 1), "FN": (y == 1) & (p == 0)}
    cells |= {"FP": (y == 0) & (p == 1), "TN": (y == 0) & (p == 0)}
    return pd.DataFrame({k: v for k, v in cells.items()}).groupby(g).sum()


def test_frame_matches_the_building_blocks():
    y, p, g = _rows()
    report = audit_predictions(y, p, sensitive_features=g, random_state=3)
    f = report.frame
    table = group_metrics(
        y,
        p,
        sensitive_features=g,
        metrics=["tpr", "fpr", "ppv"],
        smoothing=CrossPriorSmoothing(10),
        zero_division=np.nan,
    )
    pd.testing.assert_frame_equal(
        f[["n", "n_pos", "n_neg"]], table[["n", "n_pos", "n_neg"]]
    )
    for m in ("tpr", "fpr", "ppv"):
        np.testing.assert_allclose(f[m], table[m])
        np.testing.assert_allclose(f[f"{m}_smoothed"], table[f"{m}_smoothed"])
    match = match_test(
        y,
        p,
        sensitive_features=g,
        metric=["tpr", "fpr", "ppv"],
        correction="holm",
    ).to_frame()
    for m in ("tpr", "fpr", "ppv"):
        ref = match[match["metric"] == m].set_index("group").reindex(f.index)
        np.testing.assert_allclose(f[f"{m}_match_p_adjusted"], ref["p_adjusted"])
        np.testing.assert_array_equal(f[f"{m}_match_reject"], ref["reject"])
        np.testing.assert_allclose(f[f"{m}_reference"], ref["reference_score"])
    sep = separation_test(y, p, sensitive_features=g, reference="rest").to_frame()
    pd.testing.assert_frame_equal(
        report.separation.reset_index(drop=True), sep, check_dtype=False
    )
    assert (
        report.separation_violated
        == separation_test(y, p, sensitive_features=g, reference="rest").violated
    )
    for m in ("tpr", "fpr"):
        rows = sep[sep["metric"] == m]
        for group in f.index:
            inv = (rows["group_a"] == group) | (rows["group_b"] == group)
            assert (
                f.loc[group, f"{m}_separation_p_adjusted"]
                == rows.loc[inv, "p_adjusted"].min()
            )


def test_rows_and_counts_give_the_same_report():
    y, p, g = _rows(1)
    a = audit_predictions(y, p, sensitive_features=g, random_state=0)
    b = audit_predictions(counts=_counts_frame(y, p, g), random_state=0)
    pd.testing.assert_frame_equal(a.frame, b.frame, check_names=False)
    pd.testing.assert_frame_equal(a.separation, b.separation)


def test_reference_ranges_are_the_match_tests_and_shown_once():
    # the range of the group's value that the MATCH test accepts: the one of
    # match_test (at level alpha), computed once; without the test, no range
    y, p, g = _rows(2, n=600, sizes=(0.9, 0.1))
    report = audit_predictions(
        y, p, sensitive_features=g, tests=("match",), metrics=["tpr", "fpr"]
    )
    f = report.frame
    counts = _counts_frame(y, p, g)[["TP", "FN", "FP", "TN"]]
    res = match_test(counts=counts, metric=["tpr", "fpr"], confidence_level=0.95).frame
    for m in ("tpr", "fpr"):
        rows = res[res["metric"] == m].set_index("group")
        for end in ("low", "high"):
            np.testing.assert_allclose(
                f[f"{m}_interval_{end}"].to_numpy(),
                rows.loc[f.index, f"reference_range_{end}"].to_numpy(),
            )
        # the group's own value outside the range is a rejection at 5 %
        outside = (f[m] < f[f"{m}_interval_low"]) | (f[m] > f[f"{m}_interval_high"])
        assert (f.loc[outside, f"{m}_match_p_value"] <= 0.05 + 1e-9).all()
    without = audit_predictions(
        y, p, sensitive_features=g, tests=(), metrics=["tpr"]
    ).frame
    assert without["tpr_interval_low"].isna().all()


def test_reproducible_and_seed_sensitive():
    y, p, g = _rows(3)
    a = audit_predictions(y, p, sensitive_features=g, random_state=7)
    b = audit_predictions(y, p, sensitive_features=g, random_state=7)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    # the reference ranges and the tests of proportions are exact: no seed
    c = audit_predictions(y, p, sensitive_features=g, random_state=8)
    cols = [c for c in a.frame.columns if "interval" in c or "match" in c]
    pd.testing.assert_frame_equal(a.frame[cols], c.frame[cols])
    # metrics without a closed form draw their posterior intervals: the seed
    d = audit_predictions(y, p, sensitive_features=g, metrics=["mcc"], random_state=7)
    e = audit_predictions(y, p, sensitive_features=g, metrics=["mcc"], random_state=8)
    pd.testing.assert_frame_equal(
        d.frame,
        audit_predictions(
            y, p, sensitive_features=g, metrics=["mcc"], random_state=7
        ).frame,
    )
    assert d.frame["mcc"].equals(e.frame["mcc"])


def test_summary_wording():
    rng = np.random.default_rng(4)
    big = 2000
    y = np.r_[rng.integers(0, 2, big), np.ones(6, int), np.zeros(8, int)]
    p = np.r_[np.where(rng.random(big) < 0.1, 1 - y[:big], y[:big]), [1, 1, 1, 0, 0, 0],
              [0] * 8]  # fmt: skip
    g = np.r_[np.where(np.arange(big) < 1000, "big1", "big2"), ["tiny"] * 6,
              ["nopos"] * 8]  # fmt: skip
    p[1000:big] = np.where(rng.random(1000) < 0.4, 1 - y[1000:big], y[1000:big])
    with pytest.warns(UndefinedGroupMetricWarning) as record:
        report = audit_predictions(y, p, sensitive_features=g)
    assert len(record) == 1
    assert "tpr for ['nopos']; fpr for ['tiny']; ppv for ['nopos']" in str(
        record[0].message
    )
    text = report.summary()
    assert "big2 (n = 1000): TPR" in text and "unlikely under the reference" in text
    assert (
        "tiny (n = 6): TPR = 0.500, 95% CI [0.12, 0.88], vs 0.739 for everyone else: "
        "inconclusive at this size" in text
    )
    # a group of 6 is never reassuring: the gap it could exclude is above 0.1
    assert "more than the tolerance of 0.10" in text
    # a non-rejection is never called consistent, fine or noise
    assert "consistent" not in text and "noise" not in text
    assert "at n = 6 no PPV gap at all is detectable with 80% power" in text
    assert "nopos (n = 8): TPR is undefined" in text
    assert "Separation (equalized odds): violated" in text
    assert "Small group(s) with fewer than 30 people: nopos, tiny" in text
    assert text.splitlines()[0].startswith("Fairness audit: 4 groups, 2,014 people")
    assert report.frame.loc["nopos", "tpr_undefined"]
    assert not np.isnan(report.frame.loc["nopos", "tpr_smoothed"])


def test_html_is_self_contained_and_escaped(tmp_path):
    pytest.importorskip("matplotlib")
    y, p, g = _rows(5, names=["A", "B", *HOSTILE])
    report = audit_predictions(y, p, sensitive_features=g, title="<b>Audit</b> & co")
    path = tmp_path / "report.html"
    page = report.to_html(path)
    assert path.read_text(encoding="utf-8") == page
    for name in HOSTILE:
        assert name not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "<title>&lt;b&gt;Audit&lt;/b&gt; &amp; co</title>" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count('<img alt="') == 1 and "data:image/png;base64," in page
    assert "<script" not in page.replace("&lt;script", "")
    assert "http://" not in page and "https://" not in page  # loads nothing
    for section in (
        "summary",
        "findings",
        "groups",
        "match",
        "separation",
        "plots",
        "notes",
    ):
        assert f"<section id='{section}'>" in page
    no_plots = report.to_html(include_plots=False)
    assert "data:image/png" not in no_plots


def test_csv_and_json(tmp_path):
    y, p, g = _rows(6)
    report = audit_predictions(y, p, sensitive_features=g)
    text = report.to_csv(tmp_path / "r.csv")
    back = pd.read_csv(tmp_path / "r.csv", index_col=0)
    assert text == (tmp_path / "r.csv").read_text()
    np.testing.assert_allclose(back["tpr"], report.frame["tpr"])
    payload = json.loads(report.to_json(tmp_path / "r.json"))
    assert payload["metrics"] == ["tpr", "fpr", "ppv"]
    assert len(payload["groups"]) == len(report.frame)
    assert payload["findings"] == report.findings()
    assert payload["separation_violated"] == report.separation_violated


def test_plot():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y, p, g = _rows(7)
    report = audit_predictions(y, p, sensitive_features=g, metrics=["tpr", "fpr"])
    fig = report.plot()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["tpr", "fpr"]
    raw = axes[0].collections[-1]  # the raw values, drawn after the ranges
    order = report._group_order("evidence")
    np.testing.assert_allclose(raw.get_offsets()[:, 0], report.frame.loc[order, "tpr"])
    with pytest.raises(ValueError, match="were not audited"):
        report.plot(metrics=["mcc"])
    plt.close("all")


def test_options_and_bad_input():
    y, p, g = _rows(8)
    r = audit_predictions(
        y, p, sensitive_features=g, tests=(), smoothing=None, metrics="mcc"
    )
    assert r.match is None and r.separation is None and r.separation_violated is None
    np.testing.assert_allclose(r.frame["mcc_smoothed"], r.frame["mcc"])
    assert "mcc_match_p_value" not in r.frame
    r = audit_predictions(y, p, sensitive_features=g, smoothing=AdditiveSmoothing(1))
    assert r.smoothing == "AdditiveSmoothing(eps=1)"
    r = audit_predictions(y, p, sensitive_features=g, tests=())
    assert r.smoothing.startswith("CrossPriorSmoothing(lam=10.0")
    two = pd.DataFrame({"a": g, "b": np.where(y == 1, "x", "y")})
    with pytest.warns(UndefinedGroupMetricWarning, match=r"tpr for \['A\|y'"):
        inter = audit_predictions(y, p, sensitive_features=two, tests=("match",))
    assert len(inter.frame) == 8
    with pytest.raises(ValueError, match="subset of"):
        audit_predictions(y, p, sensitive_features=g, tests=("bias",))
    with pytest.raises(ValueError, match="'alpha' parameter of audit_predictions"):
        audit_predictions(y, p, sensitive_features=g, alpha=1.5)
    with pytest.raises(ValueError, match=r"unknown metric|Unknown metric|not a metric"):
        audit_predictions(y, p, sensitive_features=g, metrics=["tprr"])
    # more than two classes: the per-class audit (tests/audit/test_audit_multiclass)
    multi = audit_predictions(y * 2 + p, p, sensitive_features=g, tests=())
    assert list(multi.labels) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"inconsistent|length|rows"):
        audit_predictions(y[:-1], p, sensitive_features=g)
    with pytest.raises(TypeError, match="'smoothing' parameter of audit_predictions"):
        audit_predictions(y, p, sensitive_features=g, smoothing=10)
    with pytest.raises(TypeError, match="'title' parameter of audit_predictions"):
        audit_predictions(y, p, sensitive_features=g, title=3)
    # a count of resamples, at least 100
    for n_resamples in (0, 2.5, 99):
        with pytest.raises(
            ValueError, match="'n_resamples' parameter of audit_predictions"
        ):
            audit_predictions(y, p, sensitive_features=g, n_resamples=n_resamples)


# =====================================================================================
# FairnessAudit
# =====================================================================================
def _classification(seed=0, n=500):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    g = np.where(rng.random(n) < 0.1, "small", "large")
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 0).astype(int)
    return X, y, g


def test_meta_estimator_delegates_and_audits():
    X, y, g = _classification()
    audit = FairnessAudit(LogisticRegression(C=0.5)).fit(X, y)
    direct = LogisticRegression(C=0.5).fit(X, y)
    np.testing.assert_array_equal(audit.predict(X), direct.predict(X))
    np.testing.assert_allclose(audit.predict_proba(X), direct.predict_proba(X))
    np.testing.assert_allclose(audit.decision_function(X), direct.decision_function(X))
    assert audit.score(X, y) == direct.score(X, y)
    np.testing.assert_array_equal(audit.classes_, [0, 1])
    assert audit.n_features_in_ == 4
    report = audit.audit(X, y, sensitive_features=g)
    assert isinstance(report, AuditReport)
    assert report.title == "Fairness audit of LogisticRegression"
    expected = audit_predictions(y, direct.predict(X), sensitive_features=g)
    pd.testing.assert_frame_equal(report.frame, expected.frame)
    assert audit.get_params()["estimator__C"] == 0.5


def test_prefit_clone_pipeline_and_pickle():
    X, y, g = _classification(1)
    fitted = LogisticRegression().fit(X, y)
    audit = FairnessAudit(fitted, prefit=True)
    report = audit.audit(X, y, sensitive_features=g)  # no fit needed
    assert report.frame["n"].sum() == 500
    assert audit.fit(X, y).estimator_ is fitted
    with pytest.raises(NotFittedError):
        FairnessAudit(LogisticRegression(), prefit=True).fit(X, y)
    with pytest.raises(NotFittedError, match="call fit"):
        FairnessAudit(LogisticRegression()).audit(X, y, sensitive_features=g)
    # auditing an already fitted model needs neither fit nor prefit=True (this
    # used to raise NotFittedError)
    direct = FairnessAudit(fitted).audit(X, y, sensitive_features=g)
    pd.testing.assert_frame_equal(direct.frame, report.frame)
    cloned = clone(FairnessAudit(LogisticRegression(C=2.0), alpha=0.1))
    assert cloned.get_params()["alpha"] == 0.1 and not hasattr(cloned, "estimator_")
    pipe = make_pipeline(StandardScaler(), FairnessAudit(LogisticRegression()))
    pipe.fit(X, y)
    inner = pipe[-1]
    report = inner.audit(pipe[0].transform(X), y, sensitive_features=g)
    assert report.frame.shape[0] == 2
    wrapped = FairnessAudit(make_pipeline(StandardScaler(), LogisticRegression()))
    wrapped.fit(X, y)
    assert wrapped.audit(X, y, sensitive_features=g).frame.shape[0] == 2
    again = pickle.loads(pickle.dumps(wrapped))
    np.testing.assert_array_equal(again.predict(X), wrapped.predict(X))


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(FairnessAudit(LogisticRegression()))


def test_correction_none_means_no_correction():
    # the command accepted --correction none while the API refused "none"
    y, p = (
        np.array([1, 0, 1, 0, 1, 0, 1, 0] * 3),
        np.array([1, 0, 0, 0, 1, 1, 1, 0] * 3),
    )
    g = ["a"] * 12 + ["b"] * 12
    none = audit_predictions(y, p, sensitive_features=g, correction="none")
    plain = audit_predictions(y, p, sensitive_features=g, correction=None)
    pd.testing.assert_frame_equal(none.frame, plain.frame)
    assert "adjusted" not in none.summary().splitlines()[0]


def test_group_intervals_in_frame_match_group_metrics():
    from sklearn_smallfair.metrics import group_metrics
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9], "c": [2, 1, 0, 3]}
    for kwargs, level in (
        ({}, 0.95),
        ({"alpha": 0.1}, 0.95),
        ({"confidence_level": 0.8}, 0.8),
    ):
        report = audit_predictions(
            counts=counts, metrics=["tpr", "ppv", "mcc"], tests=(), **kwargs
        )
        assert report.confidence_level == pytest.approx(level)
        table = group_metrics(
            counts=counts,
            metrics=["tpr", "ppv", "mcc"],
            smoothing=CrossPriorSmoothing(lam=10.0),
            confidence_level=level,
            zero_division=np.nan,
        )
        f = report.frame
        for m in ("tpr", "ppv"):  # closed form (Wilson): no draws
            for col in (f"{m}_low", f"{m}_high"):
                np.testing.assert_allclose(f[col], table[col])
            np.testing.assert_allclose(
                f[f"{m}_smoothed_low"], table[f"{m}_smoothed_low"]
            )
        for m in ("tpr", "ppv", "mcc"):
            assert (f[f"{m}_low"] <= f[m]).all()
            assert (f[m] <= f[f"{m}_high"]).all()
    narrow = audit_predictions(
        counts=counts, metrics="tpr", tests=(), confidence_level=0.5
    )
    wide = audit_predictions(
        counts=counts, metrics="tpr", tests=(), confidence_level=0.99
    )
    w = wide.frame["tpr_high"] - wide.frame["tpr_low"]
    n = narrow.frame["tpr_high"] - narrow.frame["tpr_low"]
    assert (w > n).all()


def test_no_smoothing_copies_the_raw_intervals():
    counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9]}
    f = audit_predictions(counts=counts, metrics="tpr", tests=(), smoothing=None).frame
    np.testing.assert_array_equal(f["tpr_smoothed_low"], f["tpr_low"])
    np.testing.assert_array_equal(f["tpr_smoothed_high"], f["tpr_high"])


def test_confidence_level_validated_and_passed_by_the_estimator():
    from sklearn.linear_model import LogisticRegression

    from sklearn_smallfair.audit import FairnessAudit

    with pytest.raises(ValueError, match="confidence_level"):
        audit_predictions(
            counts={"a": [1, 1, 1, 1], "b": [1, 1, 1, 1]}, confidence_level=1.0
        )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    g = np.where(rng.random(200) < 0.2, "s", "l")
    report = (
        FairnessAudit(LogisticRegression(), confidence_level=0.8, tests=())
        .fit(X, y)
        .audit(X, y, sensitive_features=g)
    )
    assert report.confidence_level == 0.8
    assert "80% CI" in report.to_html(include_plots=False)


def test_every_non_rejection_finding_states_the_interval():
    counts = {"big": [300, 100, 60, 540], "tiny": [2, 3, 1, 4]}
    report = audit_predictions(counts=counts, metrics=["tpr", "fpr"])
    f = report.frame
    lines = [x for x in report.findings() if "inconclusive at this size" in x]
    assert lines
    for line in lines:
        assert re.search(r"= \d\.\d{3}, 95% CI \[\d\.\d\d, \d\.\d\d\], vs", line)
    low, high = f.loc["tiny", "tpr_low"], f.loc["tiny", "tpr_high"]
    assert f"TPR = 0.400, 95% CI [{low:.2f}, {high:.2f}], vs" in "\n".join(lines)


def test_summary_without_findings_names_the_widest_interval():
    counts = {"a": [5, 5, 5, 5], "b": [6, 6, 6, 6]}
    text = audit_predictions(counts=counts, metrics="tpr", tests=()).summary()
    assert "none differs from it by 0.05 or more" in text
    assert "the widest 95% CI, a's TPR [" in text


def test_html_tables_show_value_with_interval():
    counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9]}
    report = audit_predictions(counts=counts, metrics=["tpr"], tests=("match",))
    page = report.to_html(include_plots=False)
    low, high = report.frame.loc["b", ["tpr_low", "tpr_high"]]
    assert f"0.6 [{low:.2f}, {high:.2f}]" in page
    assert "TPR [95% CI]" in page and "TPR smoothed [95% CI]" in page
    assert "group&#x27;s 95% confidence interval" in page or "95% confidence" in page


def test_json_records_the_interval_level_and_columns():
    counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9]}
    payload = json.loads(
        audit_predictions(
            counts=counts, metrics="tpr", tests=(), confidence_level=0.9
        ).to_json()
    )
    assert payload["confidence_level"] == 0.9
    assert {"tpr_low", "tpr_high", "tpr_smoothed_low"} <= set(payload["groups"][0])


# =====================================================================================
# what the audit could have detected, the verdicts, the report at many groups
# =====================================================================================


def test_verdicts_follow_the_rule_and_the_level_of_one_gap_among_the_tests():
    from sklearn_smallfair.audit._detectable import detectable_gaps

    counts = {f"g{k}": [30, 10, 10, 50] for k in range(6)}
    counts |= {"small": [3, 1, 1, 5], "gap": [30, 30, 10, 50], "mid": [14, 6, 5, 25]}
    # groups of 100 exclude gaps above about 0.3 only: a tolerance that allows
    # them, then the default 0.1, under which no cell is reassuring
    report = audit_predictions(
        counts=counts, metrics=["tpr", "fpr"], tests=("match",), tolerance=0.5
    )
    strict = audit_predictions(counts=counts, metrics=["tpr", "fpr"], tests=("match",))
    for m in ("tpr", "fpr"):
        green = report.frame[f"{m}_verdict"] == "no gap detected"
        assert green.any()
        assert (strict.frame.loc[green, f"{m}_verdict"] == "inconclusive").all()
        assert "more than the tolerance of 0.10" in strict.cell("g0", m)["text"]
    f = report.frame
    cms = np.array([counts[g] for g in f.index], dtype=float)
    others = cms.sum(axis=0) - cms
    seen = set()
    # one correction family: the tests of the 9 groups x 2 metrics
    n_tests = int(report.match["p_value"].notna().sum())
    assert n_tests == 2 * len(counts)
    for m, cells in (("tpr", [0, 1]), ("fpr", [2, 3])):
        share = cms[:, cells].sum(axis=1) / cms.sum(axis=1)
        expected = detectable_gaps(m, others, f["n"], share, alpha=0.05 / n_tests)
        np.testing.assert_array_equal(f[f"{m}_detectable_gap"], expected)
        for _, row in f.iterrows():
            v, d = row[f"{m}_verdict"], abs(row[f"{m}_detectable_gap"])
            lo, hi, ref = row[f"{m}_low"], row[f"{m}_high"], row[f"{m}_reference"]
            seen.add(v)
            if row[f"{m}_match_reject"]:
                assert v == "gap"
            elif v == "no gap detected":
                assert ref - d <= lo <= hi <= ref + d
                assert d <= report.tolerance
            else:
                assert v == "inconclusive"
                assert (
                    np.isnan(d)
                    or d > report.tolerance
                    or not (ref - d <= lo <= hi <= ref + d)
                )
    assert seen == {"gap", "no gap detected", "inconclusive"}
    assert np.isnan(f.loc["small", "tpr_detectable_gap"])  # n = 10: none
    assert (
        "at n = 10 no TPR gap at all is detectable"
        in report.cell("small", "tpr")["text"]
    )
    # without a correction one gap is tested at alpha: smaller detectable gaps
    plain = audit_predictions(
        counts=counts, metrics=["tpr"], tests=("match",), correction=None
    ).frame
    both = f["tpr_detectable_gap"].notna() & plain["tpr_detectable_gap"].notna()
    assert both.sum() >= 6
    assert (
        plain.loc[both, "tpr_detectable_gap"].abs()
        < f.loc[both, "tpr_detectable_gap"].abs()
    ).all()
    # the summary states what the audit could not see, per metric
    assert "What the audit could not see, TPR:" in report.summary()


def test_a_value_outside_its_range_says_why_it_is_not_a_finding():
    counts = {f"g{k}": [30, 10, 10, 50] for k in range(9)}
    counts["odd"] = [30, 22, 10, 50]  # unadjusted p = 0.012, adjusted 0.12
    report = audit_predictions(counts=counts, metrics=["tpr"], tests=("match",))
    row = report.frame.loc["odd"]
    assert row["tpr"] < row["tpr_interval_low"]
    assert row["tpr_match_p_value"] < 0.05 < row["tpr_match_p_adjusted"]
    cell = report.cell("odd", "tpr")
    assert cell["verdict"] == "inconclusive" and cell["outside"]
    assert "not after the holm adjustment for the 10 tests of the audit" in cell["text"]
    assert "consistent" not in cell["text"]
    findings = report.findings()
    assert findings[0] == cell["text"]  # ranked first: no gap is rejected
    page = report.to_html(include_plots=False)
    assert "multiplicity" in page and "&#8224;" in page


def test_intersections_get_marginals_and_a_drilldown():
    rng = np.random.default_rng(11)
    n = 1600
    race = rng.choice(["a", HOSTILE[0]], n)  # a label made of markup
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    # the TPR gap follows sex: F's positives are missed
    y_pred = np.where((y == 1) & (sex == "F") & (rng.random(n) < 0.4), 0, y)
    features = pd.DataFrame({"race": race, "sex": sex})
    report = audit_predictions(
        y, y_pred, sensitive_features=features, metrics=["tpr"], tests=("match",)
    )
    assert list(report.marginals) == ["race", "sex"]
    for attr, values in (("race", race), ("sex", sex)):
        expected = group_metrics(
            y, y_pred, sensitive_features=values, metrics=["tpr"], smoothing=None
        )
        np.testing.assert_allclose(report.marginals[attr]["tpr"], expected["tpr"])
        np.testing.assert_array_equal(report.marginals[attr]["n"], expected["n"])
    assert report.parts.loc[f"{HOSTILE[0]}|F"].tolist() == [HOSTILE[0], "F"]
    assert report.overall["tpr"] == pytest.approx(y_pred[y == 1].mean())
    page = report.to_html(include_plots=False)
    assert "<section id='drilldown'>" in page and 'class="cross"' in page
    assert "follows sex = F most" in page
    assert HOSTILE[0] not in page and "&lt;script&gt;" in page
    payload = json.loads(report.to_json())
    assert [r["n"] for r in payload["marginals"]["sex"]] == list(
        report.marginals["sex"]["n"]
    )
    single = audit_predictions(y, y_pred, sensitive_features=race, tests=())
    assert single.marginals is None and "drilldown" not in single.to_html(
        include_plots=False
    )


def test_html_at_many_groups_ranks_and_keeps_the_comparisons_that_matter():
    rng = np.random.default_rng(12)
    counts = {
        f"region {k:02d}": rng.multinomial(int(n), [0.3, 0.1, 0.15, 0.45])
        for k, n in enumerate(np.geomspace(8, 200, 20).round())
    }
    counts["region 99"] = [10, 40, 40, 110]
    report = audit_predictions(counts=counts, metrics=["tpr", "fpr"], n_resamples=500)
    page = report.to_html(include_plots=False)
    # orders (evidence, size, name, each metric's gaps): one ranked table each
    assert page.count('<table class="matrix compact">') == 5
    assert page.count('<td class="rank">') == 5 * 21
    assert page.count('type="radio"') == 5 and page.count(" checked>") == 1
    # the headline names the largest gap
    assert '<p class="headline"><strong>' in page
    assert report.frame.index[0] not in page.split('class="headline"')[1][:20]
    top = page.split("<ol class='top'>")[1].split("</ol>")[0]
    assert top.count("<li>") == 5
    assert "more finding(s), by kind</summary>" in page
    sep = report.separation
    shown = page.split("<section id='separation'>")[1].split("<details>")[0]
    n_shown = shown.count("<tr>") - 1
    assert sep["reject"].sum() <= n_shown <= sep["reject"].sum() + 8 < len(sep)
    assert f"All {len(sep)} comparisons</summary>" in page
    # each group against everyone else by default: 21 per rate, not 210
    assert len(sep) == 2 * 21 and set(sep["group_b"]) == {"rest"}
    assert "each group against everyone else" in shown
    every = audit_predictions(
        counts=counts, metrics=["tpr"], tests=("separation",), separation_pairs="all"
    )
    assert len(every.separation) == 2 * 21 * 20 // 2
    assert "every pair of groups" in every.to_html(include_plots=False)
    # the rate's denominator is not called the group's size
    assert "Denominator A" in shown and "People A" not in shown
    assert "@media print" in page and "overflow-x:auto" in page
    assert '<abbr title="' in page and "snake" not in page
    assert "tpr_match_p_adjusted" not in page  # readable headers only
    assert "<script" not in page.replace("&lt;script", "")


def test_pos_label_of_text_targets_follows_scikit_learns_rule():
    from sklearn.dummy import DummyClassifier

    from sklearn_smallfair.audit import FairnessAudit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = np.where(rng.random(120) < 0.4, "yes", "no")
    g = np.where(rng.random(120) < 0.3, "s", "l")
    counts = {"s": [5, 5, 2, 8], "l": [40, 10, 5, 45]}
    fitted = DummyClassifier(strategy="stratified", random_state=0).fit(X, y)
    audit = FairnessAudit(fitted, pos_label="yes", tests=("match",))
    report = audit.audit(X, y, sensitive_features=g)
    pred = fitted.predict(X)
    expected = audit_predictions(
        y == "yes", pred == "yes", sensitive_features=g, tests=("match",)
    )
    np.testing.assert_array_equal(report.frame["tpr"], expected.frame["tpr"])
    assert audit_predictions(counts=counts).frame.shape[0] == 2
    message = r"labels \['no', 'yes'\].*pos_label"
    with pytest.raises(ValueError, match=message):
        FairnessAudit(fitted, tests=()).audit(X, y, sensitive_features=g)
    with pytest.raises(ValueError, match=message):
        audit_predictions(y, pred, sensitive_features=g, tests=())
    # {0, 1} and {-1, 1}: 1 is the positive class
    signed = np.where(y == "yes", 1, -1)
    report = audit_predictions(
        signed, np.where(pred == "yes", 1, -1), sensitive_features=g, tests=()
    )
    np.testing.assert_array_equal(report.frame["tpr"], expected.frame["tpr"])
