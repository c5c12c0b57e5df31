"""The audit of intersectional groups with IntersectionalSmoothing: structured
estimates beside the raw values, and the interaction tests in the drill-down."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.metrics import confusion_counts
from sklearn_smallfair.smoothing import IntersectionalSmoothing


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


def test_default_audit_has_no_structured_estimates():
    report = _audit("default")
    assert report.intersections is None


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
