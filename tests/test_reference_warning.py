"""The reference warnings name groups by label, keep to five names, and say when a
cell is empty everywhere (constant predictions) instead of asking for a larger
reference."""

import re
import warnings

import numpy as np
import pytest

from sklearn_smallfair._references import warn_small_references
from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.exceptions import ReferenceWarning
from sklearn_smallfair.stats import match_test


def _messages(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(*args, **kwargs)
    return [str(w.message) for w in caught if w.category is ReferenceWarning]


def _constant_predictions(n_groups=6, n=600):
    rng = np.random.default_rng(0)
    labels = [f"site {k}" for k in range(n_groups)]
    g = rng.choice(labels, n)
    y = rng.integers(0, 2, n)
    return y, np.ones(n, dtype=int), g


@pytest.mark.parametrize("entry", ["audit", "match"])
def test_constant_predictions_are_named_as_such(entry):
    y, p, g = _constant_predictions()
    if entry == "audit":
        messages = _messages(audit_predictions, y, p, sensitive_features=g)
    else:
        messages = _messages(
            match_test, y, p, sensitive_features=g, null="fixed-reference"
        )
    assert len(messages) == 1, messages
    text = messages[0]
    assert "every reference has FN = 0 and TN = 0" in text
    assert "predictions are constant" in text
    # no remedy that cannot help: the setting in use, a larger reference
    assert "reference='rest'" not in text and "larger reference" not in text
    assert not re.search(r"group \d", text)  # never "group 0 ... group 5"


def test_no_runtime_warning_from_constant_predictions():
    y, p, g = _constant_predictions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        audit_predictions(y, p, sensitive_features=g)


def test_at_most_five_groups_named_then_how_many():
    refs = np.tile([[50.0, 0.0, 20.0, 30.0]], (12, 1))
    refs[0, 1] = 5  # FN = 0 is not structural: one reference has FN
    text = _messages(warn_small_references, refs, labels=[f"g{k}" for k in range(12)])[
        0
    ]
    assert text.count("(FN = 0)") == 5 and "(11 in all)" in text
    assert "g0" not in text  # the reference with an FN is not listed


def test_the_setting_in_use_is_not_suggested_again():
    refs = np.array([[50.0, 0.0, 20.0, 30.0], [40.0, 3.0, 10.0, 30.0]])
    named = _messages(warn_small_references, refs, labels=["a", "b"])[0]
    assert "reference='rest' or 'total'" in named
    for setting in ("rest", "total"):
        text = _messages(
            warn_small_references,
            refs,
            labels=["a", "b"],
            min_reference=0,
            reference=setting,
        )[0]
        assert "group 'a' (FN = 0)" in text
        assert "reference='rest'" not in text
        assert "published population table" in text


def test_match_test_passes_its_reference_setting():
    # only group a has false negatives: everyone else of a has none
    counts = {"a": [30, 2, 10, 40], "b": [25, 0, 9, 45], "c": [20, 0, 12, 50]}
    text = _messages(
        match_test, counts=counts, reference="rest", null="fixed-reference"
    )
    assert len(text) == 1 and "group 'a' (FN = 0)" in text[0]
    assert "reference='rest'" not in text[0]


def test_group_metrics_smoothing_does_not_suggest_its_setting():
    import pandas as pd

    from sklearn_smallfair.metrics import group_metrics
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    counts = pd.DataFrame(
        {"TP": [300, 250, 200], "FN": [20, 0, 0], "FP": [100, 90, 120]}
        | {"TN": [400, 450, 500]},
        index=["a", "b", "c"],
    )
    smoothing = CrossPriorSmoothing()
    rest = _messages(
        group_metrics, counts=counts, reference="rest", smoothing=smoothing
    )
    assert len(rest) == 1 and "group 'a' (FN = 0)" in rest[0]
    assert "reference='rest'" not in rest[0]
    # one reference group with an empty cell is that group's, not the data's
    one = _messages(group_metrics, counts=counts, reference="b", smoothing=smoothing)
    assert len(one) == 1 and "predictions are constant" not in one[0]
    assert "larger reference" in one[0]
