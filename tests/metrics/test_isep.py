"""Tests of the separation metric ``I_sep``."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_smallfair.metrics import isep_score


def _published_isep(y, y_pred, s):
    """The published ``Metrics.Isep``: logistic regressions (scikit-learn's
    defaults) of the 0/1 group on ``(y, y_pred)`` and on ``y``, and the ratio of
    the summed log-likelihood gain to minus the margin's log-likelihood."""
    joint = pd.DataFrame({"y": y, "y_pred": y_pred})
    margin = np.asarray(y).reshape(-1, 1)
    p_joint = LogisticRegression().fit(joint, s).predict_proba(joint)
    p_margin = LogisticRegression().fit(margin, s).predict_proba(margin)
    rows = np.arange(len(s))
    info = np.sum(np.log(p_joint[rows, s] / p_margin[rows, s]))
    entropy = np.sum(np.log(p_margin[rows, s]))
    return info / -entropy


def test_closed_form_plug_in_mutual_information():
    # constant label: I_sep = I(S; Ŷ) / H(S) of the empirical law, which the
    # unpenalized regressions fit exactly (both models are saturated).
    # group 0: predictions 1, 1, 1, 0; group 1: 1, 0, 0, 0
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    y_pred = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    y = np.full(8, 2.0)
    # P(S = s | Ŷ) is 3/4 for six samples, 1/4 for two; P(S = s) = 1/2
    expected = (6 * np.log(1.5) + 2 * np.log(0.5)) / (8 * np.log(2))
    assert expected == pytest.approx(0.188722, abs=1e-6)
    got = isep_score(y, y_pred, sensitive_features=s, C=np.inf, max_iter=1000)
    assert got == pytest.approx(expected, abs=1e-6)


def test_closed_form_binary_label():
    # binary label, prediction independent of the group within each label:
    # the joint model gains nothing -> 0 (saturated margin model, and the
    # prediction's coefficient is 0 at the maximum likelihood)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1])
    s = np.array([0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1])
    y_pred = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1])
    got = isep_score(y, y_pred, sensitive_features=s, C=np.inf, max_iter=1000)
    assert got == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_matches_published_code(seed):
    rng = np.random.default_rng(seed)
    n = 150
    s = rng.integers(0, 2, n)
    y = rng.choice([1, 2, 3, 5, 8, 13], n).astype(float)
    y_pred = y + rng.normal(scale=2, size=n) + seed * 0.8 * s
    assert isep_score(y, y_pred, sensitive_features=s) == pytest.approx(
        _published_isep(y, y_pred, s), rel=1e-10, abs=1e-12
    )


def test_grows_with_the_violation_and_ignores_group_coding():
    rng = np.random.default_rng(0)
    n = 400
    s = rng.integers(0, 2, n)
    y = rng.normal(size=n)
    noise = rng.normal(scale=0.5, size=n)
    values = [
        isep_score(y, y + noise + d * s, sensitive_features=s) for d in (0, 0.5, 1)
    ]
    assert values[0] < 0.02 < values[1] < values[2]
    named = np.where(s == 1, "women", "men")
    assert isep_score(y, y + noise + s, sensitive_features=named) == pytest.approx(
        values[2], rel=1e-12
    )


def test_three_groups_multinomial():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 3, 300)
    y = rng.normal(size=300)
    value = isep_score(y, y + s + rng.normal(size=300), sensitive_features=s)
    assert 0 < value < 1


def test_errors():
    with pytest.raises(ValueError, match="single group"):
        isep_score([1, 2, 3], [1, 2, 3], sensitive_features=[0, 0, 0])
    with pytest.raises(ValueError, match="numeric"):
        isep_score(["a", "b"], [1, 2], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="inconsistent lengths"):
        isep_score([1, 2, 3], [1, 2], sensitive_features=[0, 1, 1])
    with pytest.raises(ValueError, match="C"):
        isep_score([1, 2], [1, 2], sensitive_features=[0, 1], C=0)


@pytest.mark.slow
def test_jira_published_formula(jira_path):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline

    items = pd.read_csv(jira_path)
    train = items[items["split_mark"] != "test"]
    test = items[items["split_mark"] == "test"]
    model = make_pipeline(TfidfVectorizer(), Ridge()).fit(
        train["text"], train["storypoint"]
    )
    pred = model.predict(test["text"])
    y, s = test["storypoint"].to_numpy(), test["is_internal"].to_numpy()
    value = isep_score(y, pred, sensitive_features=s)
    assert value == pytest.approx(_published_isep(y, pred, s), rel=1e-10)
    assert 0 <= value < 1


@pytest.mark.slow
def test_null_law_is_half_a_chi_square_over_the_entropy():
    # without penalty, 2 (sum log P(s | y, ŷ) - sum log P(s | y)) is the
    # likelihood-ratio statistic of one extra coefficient: chi-square with 1
    # degree of freedom when ŷ tells nothing more of the group (mean 1). With
    # balanced groups independent of y, -sum log P(s | y) is about n log 2, so
    # n log(2) I_sep averages 1/2 under the null.
    rng = np.random.default_rng(7)
    n, reps = 200, 150
    values = []
    for _ in range(reps):
        s = rng.integers(0, 2, n)
        y = rng.normal(size=n)
        y_pred = y + rng.normal(scale=0.5, size=n)
        values.append(
            isep_score(y, y_pred, sensitive_features=s, C=np.inf, max_iter=1000)
        )
    scaled = np.array(values) * n * np.log(2)
    # Monte Carlo standard error of the mean: sqrt(0.5 / 150) = 0.06
    assert scaled.mean() == pytest.approx(0.5, abs=0.15)
    assert (scaled >= -1e-9).all()
    # a 0.3-sd shift of group 1's predictions is detected far above that
    s = rng.integers(0, 2, n)
    y = rng.normal(size=n)
    shifted = y + 0.3 * s + rng.normal(scale=0.5, size=n)
    assert isep_score(y, shifted, sensitive_features=s, C=np.inf) * n * np.log(2) > 5
