"""The audit reports' text and notebook (HTML) representations."""

import re

import numpy as np
import pytest

from sklearn_smallfair.audit import audit_predictions

pytestmark = pytest.mark.filterwarnings("ignore")


def _binary(groups, seed=0):
    rng = np.random.default_rng(seed)
    n = len(groups)
    return rng.integers(0, 2, n), rng.integers(0, 2, n)


@pytest.fixture(scope="module")
def report():
    counts = {"a": [40, 10, 5, 45], "<script>": [5, 5, 2, 8], "c": [1, 9, 9, 1]}
    return audit_predictions(counts=counts, metrics=["tpr", "fpr"])


@pytest.fixture(scope="module")
def many():
    groups = [f"group_{k:02d}" for k in range(60)] * 20
    y_true, y_pred = _binary(groups)
    return audit_predictions(y_true, y_pred, sensitive_features=groups)


def test_repr_names_groups_metrics_tests_and_flagged(report):
    text = repr(report)
    assert "\n" in text
    for name in ("a", "<script>", "c", "tpr", "fpr", "MATCH", "separation"):
        assert name in text
    flagged = int((report.frame[["tpr_verdict", "fpr_verdict"]] == "gap").sum().sum())
    assert f"flagged cells (gap): {flagged} of 6" in text
    assert ".summary()" in text


def test_repr_html_escapes_labels(report):
    page = report._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert report.title in page
    assert "Verdicts of 6 group x metric cells" in page
    for metric in ("tpr", "fpr"):
        assert metric in page
    # the headline is the strongest gap's sentence
    gap = next(t for k, _, t in report._ranked() if k == "gap")
    assert gap.split(":")[0] in page


def test_repr_html_escapes_title():
    report = audit_predictions(
        counts={"a": [40, 10, 5, 45], "b": [5, 5, 2, 8]},
        metrics="tpr",
        title="<b>audit</b>",
    )
    assert "<b>audit</b>" not in report._repr_html_()
    assert "&lt;b&gt;audit&lt;/b&gt;" in report._repr_html_()


def test_one_group():
    groups = ["only"] * 40
    y_true, y_pred = _binary(groups)
    report = audit_predictions(
        y_true, y_pred, sensitive_features=groups, tests=(), reference="total"
    )
    text = repr(report)
    assert "groups (1): only" in text
    assert "none tested" in text
    page = report._repr_html_()
    assert "only" in page and "not tested" in page
    assert "No test was run." in page


def test_sixty_groups_bounded(many):
    text = repr(many)
    assert "groups (60)" in text and "(52 more)" in text
    assert "group_00" in text and "group_59" not in text
    assert len(text) < 1000
    page = many._repr_html_()
    assert page.count("<tr>") == 21  # header and 20 groups
    assert "40 more groups" in page
    assert len(page) < 20_000


def test_long_label_is_cut():
    label = "x" * 200
    report = audit_predictions(
        counts={label: [40, 10, 5, 45], "b": [5, 5, 2, 8]}, metrics="tpr"
    )
    assert label not in repr(report)
    assert max(len(line) for line in repr(report).splitlines()) < 120


@pytest.fixture(scope="module")
def multiclass():
    y_true = ["low", "mid", "high"] * 20
    y_pred = ["low", "mid", "high"] * 10 + ["low", "low", "high"] * 10
    groups = ["a"] * 30 + ["<script>"] * 30
    return audit_predictions(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=["tpr"],
        labels=["low", "mid", "high"],
        tests=("match",),
    )


def test_multiclass_repr(multiclass):
    text = repr(multiclass)
    assert text.startswith("MulticlassAuditReport: Fairness audit\n")
    for name in ("a", "<script>", "'low'", "'mid'", "'high'", "tpr", "MATCH"):
        assert name in text
    assert "flagged cells (gap): 2 of 6" in text


def test_multiclass_repr_html(multiclass):
    page = multiclass._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert re.search(r"class &#x27;mid&#x27;: &lt;script&gt; \(n = 30\)", page)
    assert page.count("<tr>") == 4  # header and 3 classes


def test_multiclass_sixty_groups_bounded():
    rng = np.random.default_rng(0)
    groups = [f"group_{k:02d}" for k in range(60)] * 20
    labels = ["x", "y", "z"]
    report = audit_predictions(
        rng.choice(labels, len(groups)),
        rng.choice(labels, len(groups)),
        sensitive_features=groups,
        labels=labels,
        tests=("match",),
    )
    assert "groups (60)" in repr(report)
    assert len(repr(report)) < 1000
    assert len(report._repr_html_()) < 10_000
