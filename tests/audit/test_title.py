"""The report is titled after the model that makes the predictions."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_smallfair.audit import FairnessAudit


@pytest.mark.parametrize(
    "estimator",
    [
        LogisticRegression(),
        make_pipeline(StandardScaler(), LogisticRegression()),
        GridSearchCV(make_pipeline(StandardScaler(), LogisticRegression()), {}, cv=2),
        CalibratedClassifierCV(LogisticRegression(), cv=2),
    ],
    ids=["plain", "pipeline", "search", "calibrated"],
)
def test_title_names_the_model(estimator):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    groups = np.repeat(["a", "b"], 100)
    report = FairnessAudit(estimator).fit(X, y).audit(X, y, sensitive_features=groups)
    assert report.title == "Fairness audit of LogisticRegression"
    named = (
        FairnessAudit(estimator)
        .fit(X, y)
        .audit(X, y, sensitive_features=groups, title="Credit model")
    )
    assert named.title == "Credit model"
