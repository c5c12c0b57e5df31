"""The positive label as scikit-learn decides it, at every entry point.

``pos_label=None`` means 1 for labels {0, 1} or {-1, 1}; any other pair of labels
(German-credit style {1, 2}, "yes"/"no") is an error naming the labels until the
positive one is given, and then the counts are those of that label.
"""

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier

from sklearn_smallfair.audit import FairnessAudit, audit_predictions
from sklearn_smallfair.metrics import confusion_counts, group_metrics
from sklearn_smallfair.model_selection import downsampling_experiment
from sklearn_smallfair.stats import match_test, separation_test

RNG = np.random.default_rng(0)
Y = RNG.integers(0, 2, 60)
P = np.where(RNG.random(60) < 0.8, Y, 1 - Y)
G = np.repeat(["a", "b", "c"], 20)


def _entry_points(y, p, **kw):
    return {
        "confusion_counts": lambda: confusion_counts(y, p, sensitive_features=G, **kw),
        "group_metrics": lambda: group_metrics(y, p, sensitive_features=G, **kw),
        "match_test": lambda: match_test(y, p, sensitive_features=G, **kw),
        "separation_test": lambda: separation_test(y, p, sensitive_features=G, **kw),
        "audit_predictions": lambda: audit_predictions(
            y, p, sensitive_features=G, **kw
        ),
        "downsampling_experiment": lambda: downsampling_experiment(
            y, p, sensitive_features=G, sizes=[5], metrics=["tpr"], **kw
        ),
    }


@pytest.mark.parametrize("name", sorted(_entry_points(Y, P)))
@pytest.mark.parametrize(
    "coding", [(1, 2), ("no", "yes"), (2, 1)], ids=["1-2", "no-yes", "2-1"]
)
def test_other_labels_need_pos_label(name, coding):
    negative, positive = coding
    y, p = np.where(Y == 1, positive, negative), np.where(P == 1, positive, negative)
    with pytest.raises(ValueError, match=r"pos_label"):
        _entry_points(y, p)[name]()
    # with the positive label named, the result is that of the 0/1 coding
    labelled = confusion_counts(y, p, sensitive_features=G, pos_label=positive)
    plain = confusion_counts(Y, P, sensitive_features=G)
    np.testing.assert_array_equal(np.asarray(labelled[1]), np.asarray(plain[1]))
    _entry_points(y, p, pos_label=positive)[name]()


@pytest.mark.parametrize("coding", [(0, 1), (-1, 1)])
def test_zero_one_and_minus_one_one_default_to_one(coding):
    negative, positive = coding
    y, p = np.where(Y == 1, positive, negative), np.where(P == 1, positive, negative)
    table = group_metrics(y, p, sensitive_features=G)
    np.testing.assert_array_equal(
        table["tpr"], group_metrics(Y, P, sensitive_features=G)["tpr"]
    )


def test_fairness_audit_takes_pos_label():
    X = np.zeros((60, 1))
    y = np.where(Y == 1, "yes", "no")
    est = DummyClassifier(strategy="stratified", random_state=0)
    with pytest.raises(ValueError, match=r"pos_label"):
        FairnessAudit(est).fit(X, y).audit(X, y, sensitive_features=G)
    report = (
        FairnessAudit(est, pos_label="yes").fit(X, y).audit(X, y, sensitive_features=G)
    )
    assert list(report.frame.index) == ["a", "b", "c"]
