"""The audit of intersectional groups: IntersectionalSmoothing's structured
estimates beside the raw and the smoothed values, and the interaction tests in
the drill-down."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.metrics import confusion_counts
from sklearn_smallfair.smoothing import AdditiveSmoothing, IntersectionalSmoothing


def _rows(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    groups = pd.DataFrame(
        {
            "race": rng.choice(list("ABCD"), n, p=[0.5, 0.3, 0.15, 0.05]),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    y = rng.integers(0, 2, n)
    err = np.where((groups["race"] == "C") & (groups["sex"] == "F"), 0.45, 0.15)
    return y, np.where(rng.random(n) < 1 - err, y, 1 - y), groups


def _audit(smoothing, groups=None):
    y, p, g = _rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_predictions(
            y,
            p,
            sensitive_features=g if groups is None else groups(g),
            smoothing=smoothing,
        )


def _structured_heads(page):
    """The headers of the drill-down's tables of structured estimates."""
    at = page.index('class="data structured"')
    table = page[at : page.index("</table>", at)]
    return re.findall(r"<abbr[^>]*>([^<]*)</abbr>", table)


def test_default_audit_has_structured_estimates():
    report = _audit("default")
    table = report.intersections
    assert report.intersections_note is None
    assert list(table.index) == list(report.frame.index)
    for m in report.metrics:
        for suffix in ("", "_low", "_high"):
            assert f"{m}_structured{suffix}" in table
        assert f"{m}_interaction_p" in table
    # beside the report's own smoothing, which stays Cross-Prior
    assert report.smoothing.startswith("CrossPriorSmoothing(")
    assert not np.allclose(table["fpr_structured"], report.frame["fpr_smoothed"])
    assert table.loc["C|F", "fpr_interaction"]
    heads = _structured_heads(report.to_html())
    assert heads[:5] == [
        "Intersection",
        "People",
        "Raw TPR [95% CI]",
        "Cross-Prior [95% CI]",
        "Structured [95% CI]",
    ]
    assert "Interaction p" in heads


def test_structured_estimates_without_smoothing():
    report = _audit(None)
    assert "tpr_structured" in report.intersections
    heads = _structured_heads(report.to_html())
    assert heads[2:4] == ["Raw TPR [95% CI]", "Structured [95% CI]"]
    assert not any(h.startswith(("Cross-Prior", "Smoothed")) for h in heads)


def test_other_smoothing_is_a_smoothed_column():
    report = _audit(AdditiveSmoothing())
    heads = _structured_heads(report.to_html())
    assert heads[2:5] == [
        "Raw TPR [95% CI]",
        "Smoothed [95% CI]",
        "Structured [95% CI]",
    ]


def test_intersectional_smoothing_is_the_report_smoothing():
    report = _audit(IntersectionalSmoothing())
    for m in report.metrics:
        np.testing.assert_allclose(
            report.frame[f"{m}_smoothed"].to_numpy(),
            report.intersections[f"{m}_structured"].to_numpy(),
        )
    heads = _structured_heads(report.to_html())
    assert heads[2:4] == ["Raw TPR [95% CI]", "Structured [95% CI]"]
    assert not any(h.startswith(("Cross-Prior", "Smoothed")) for h in heads)


def test_one_attribute_has_no_structured_estimates():
    report = _audit("default", groups=lambda g: g["race"])
    assert report.intersections is None
    assert report.intersections_note is None
    assert 'class="data structured"' not in report.to_html()


def test_one_level_is_a_note_not_an_error():
    report = _audit("default", groups=lambda g: g.assign(sex="F"))
    assert report.intersections is None
    assert "sex" in report.intersections_note
    assert "single level" in report.intersections_note
    page = report.to_html()
    assert 'class="data structured"' not in page


def test_multiclass_audit_keeps_its_smoothing_only():
    rng = np.random.default_rng(1)
    _, _, g = _rows()
    y = rng.integers(0, 3, len(g))
    p = np.where(rng.random(len(g)) < 0.8, y, rng.integers(0, 3, len(g)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g)
    assert all(r.intersections is None for r in report.reports.values())


def test_structured_estimates_and_interaction_tests():
    report = _audit(IntersectionalSmoothing())
    table = report.intersections
    y, p, g = _rows()
    counts = confusion_counts(y, p, sensitive_features=g)
    frame = pd.DataFrame(
        counts.counts,
        index=pd.Index(counts.groups, name="race|sex"),
        columns=["TP", "FN", "FP", "TN"],
    )
    fitted = IntersectionalSmoothing().fit(frame)
    for m in ("tpr", "fpr", "ppv"):
        test = fitted.interaction_test(m, alpha=report.alpha, correction="holm")
        np.testing.assert_allclose(
            table[f"{m}_interaction_p"].to_numpy(), test["pvalue_adjusted"].to_numpy()
        )
        np.testing.assert_allclose(
            table[f"{m}_structured"].to_numpy(),
            report.frame[f"{m}_smoothed"].to_numpy(),
        )
        low, high = table[f"{m}_structured_low"], table[f"{m}_structured_high"]
        assert (low <= table[f"{m}_structured"]).all()
        assert (table[f"{m}_structured"] <= high).all()
    # the strong interaction of C|F in FPR is found
    assert table.loc["C|F", "fpr_interaction"]
    payload = json.loads(report.to_json())
    assert len(payload["intersections"]) == len(table)
    page = report.to_html()
    assert "Interaction p" in page and "Structured" in page
    assert "more than its race and sex explain" in page


def test_one_attribute_or_one_level_is_a_clear_error():
    with pytest.raises(ValueError, match="nothing to borrow across attributes"):
        _audit(IntersectionalSmoothing(), groups=lambda g: g["race"])
    with pytest.raises(ValueError, match="sex"):
        _audit(IntersectionalSmoothing(), groups=lambda g: g.assign(sex="F"))


@pytest.mark.parametrize("metric", ["mcc"])
def test_metrics_without_a_test_have_estimates_only(metric):
    y, p, g = _rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(
            y,
            p,
            sensitive_features=g,
            smoothing=IntersectionalSmoothing(),
            metrics=["tpr", metric],
            tests=(),
        )
    assert f"{metric}_structured" in report.intersections
    assert f"{metric}_interaction_p" not in report.intersections
