"""Group labels that are traps: a continuous column and unused categorical levels
are warned about, once per call, naming the column; ordinary group columns are
not."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.exceptions import SensitiveFeaturesWarning
from sklearn_smallfair.metrics import group_metrics
from sklearn_smallfair.stats import match_test, separation_test

RNG = np.random.default_rng(0)
N = 2000
Y = RNG.integers(0, 2, N)
P = RNG.integers(0, 2, N)
FRAME = pd.DataFrame(
    {
        "race": RNG.choice(["Black", "White", "Hispanic", "Other"], N),
        "age": RNG.integers(18, 97, N),
        "sex": pd.Categorical(RNG.choice(["F", "M"], N), categories=["F", "M", "X"]),
        "flag": RNG.integers(0, 2, N),
        "band": RNG.choice([1.5, 2.5, 3.5], N),
    }
)


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(*args, **kwargs)
    return [w for w in caught if w.category is SensitiveFeaturesWarning]


@pytest.mark.parametrize(
    "entry",
    [
        lambda f: audit_predictions(Y, P, sensitive_features=f, tests=()),
        lambda f: group_metrics(Y, P, sensitive_features=f),
        lambda f: match_test(Y, P, sensitive_features=f, metric="tpr"),
        lambda f: separation_test(Y, P, sensitive_features=f),
    ],
    ids=["audit", "group_metrics", "match_test", "separation_test"],
)
def test_age_as_a_group_warns_once_naming_the_column(entry):
    caught = _caught(entry, FRAME[["race", "age"]])
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "'age'" in text and "79 distinct values" in text and "pd.cut" in text
    assert caught[0].filename == __file__  # points at the caller


def test_unused_categorical_level_is_named():
    caught = _caught(group_metrics, Y, P, sensitive_features=FRAME[["race", "sex"]])
    assert len(caught) == 1
    assert "'sex'" in str(caught[0].message) and "'X'" in str(caught[0].message)
    # the intersections that do not occur are normal: no warning without 'X'
    used = FRAME[["race", "sex"]].assign(
        sex=FRAME["sex"].cat.remove_unused_categories()
    )
    assert not _caught(group_metrics, Y, P, sensitive_features=used)


@pytest.mark.parametrize("column", ["race", "flag", "band"])
def test_ordinary_group_columns_do_not_warn(column):
    assert not _caught(group_metrics, Y, P, sensitive_features=FRAME[column])


def test_many_integer_codes_warn_unless_passed_as_text_or_categorical():
    codes = np.arange(N) % 60  # 60 regions coded as integers
    caught = _caught(group_metrics, Y, P, sensitive_features=codes)
    assert len(caught) == 1 and "60 distinct values" in str(caught[0].message)
    assert not _caught(group_metrics, Y, P, sensitive_features=codes.astype(str))
    categorical = pd.Categorical(codes)
    assert not _caught(group_metrics, Y, P, sensitive_features=categorical)


def test_fractional_scores_warn():
    score = np.round(RNG.random(N), 2)
    caught = _caught(group_metrics, Y, P, sensitive_features=score)
    assert len(caught) == 1 and "looks continuous" in str(caught[0].message)


def test_audit_with_a_categorical_column_in_a_frame():
    # the intersections' parts hold the categorical's labels
    report = audit_predictions(
        Y,
        P,
        sensitive_features=FRAME[["race", "sex"]].assign(
            sex=FRAME["sex"].cat.remove_unused_categories()
        ),
        tests=(),
    )
    assert set(report.parts["sex"]) == {"F", "M"}
    assert set(report.marginals) == {"race", "sex"}
