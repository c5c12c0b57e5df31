"""Separation and comparative separation tests on real data.

Skipped when the shared reference data is not available. The slow tests repeat a
protocol over seeded 50/50 splits of COMPAS and German credit; the Jira test runs
one regression pipeline end to end.

The protocol (also in ``examples/plot_separation_real_data.py``): for each split,
stratified on the label and both sensitive attributes of the dataset, fit a
``StandardScaler`` + ``LogisticRegression`` on the training half, without
treatment and with the Reweighing sample weights of the attribute, predict the
labels of the test half, and run on the test half

- :func:`separation_test` on the predicted labels, and
- :func:`comparative_separation_test` on pairs drawn by
  :func:`make_comparative_pairs` (``n_pairs = 2 n``), the score being the
  predicted label (a tie counts as incorrectly ordered), so that
  ``TPR(a, b) = TPR_a TNR_b`` and the two tests test the same hypothesis.

The detection rate of a test is the fraction of the splits in which it declares
separation violated at ``alpha = 0.05``.
"""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_smallfair.datasets._realdata import _read_compas, _read_german
from sklearn_smallfair.preprocessing import reweighing_weights
from sklearn_smallfair.stats import (
    comparative_separation_test,
    make_comparative_pairs,
    separation_test,
)

N_SPLITS = 50


def _model():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def run_protocol(X, y, attrs, n_splits):
    """One row per split, attribute and treatment with the two verdicts."""
    strata = y * 4 + attrs.iloc[:, 0].to_numpy() * 2 + attrs.iloc[:, 1].to_numpy()
    rows = []
    for seed in range(n_splits):
        train, test = train_test_split(
            np.arange(y.shape[0]), test_size=0.5, stratify=strata, random_state=seed
        )
        X_train, X_test = X.iloc[train], X.iloc[test]
        baseline = _model().fit(X_train, y[train])
        pairs = make_comparative_pairs(y[test], random_state=seed)
        for attr in attrs.columns:
            a = attrs[attr].to_numpy()
            weights = reweighing_weights(y[train], sensitive_features=a[train])
            reweighed = _model().fit(
                X_train, y[train], logisticregression__sample_weight=weights
            )
            for treatment, model in (("none", baseline), ("reweighing", reweighed)):
                pred = model.predict(X_test)
                sep = separation_test(y[test], pred, sensitive_features=a[test])
                comp = comparative_separation_test(
                    y[test], pred, sensitive_features=a[test], pairs=pairs
                )
                rows.append(
                    {
                        "attribute": attr,
                        "treatment": treatment,
                        "split": seed,
                        "separation": sep.violated,
                        "comparative": comp.violated,
                    }
                )
    return pd.DataFrame(rows)


def _rates(verdicts):
    return verdicts.groupby(["attribute", "treatment"])[
        ["separation", "comparative"]
    ].mean()


@pytest.fixture(scope="module")
def compas_verdicts(compas_path):
    return run_protocol(*_read_compas(compas_path), N_SPLITS)


@pytest.fixture(scope="module")
def german_verdicts(german_path):
    return run_protocol(*_read_german(german_path), N_SPLITS)


def _check_proportions(verdicts):
    counts = verdicts.groupby(["attribute", "treatment"]).size()
    assert (counts == N_SPLITS).all()  # every split gave a verdict
    assert verdicts["split"].nunique() == N_SPLITS
    rates = _rates(verdicts)
    assert ((rates >= 0) & (rates <= 1)).all().all()
    # k detections out of N_SPLITS
    np.testing.assert_allclose(rates * N_SPLITS, np.round(rates * N_SPLITS))


# Detection rates measured over the 50 splits (seeds 0-49), separation /
# comparative separation:
#
#   COMPAS race       none 1.00 / 1.00   reweighing 1.00 / 0.70
#   COMPAS sex        none 1.00 / 1.00   reweighing 0.48 / 0.20
#   German age_gt_25  none 0.42 / 0.20   reweighing 0.20 / 0.14
#   German sex        none 0.38 / 0.34   reweighing 0.08 / 0.16
#
# Over three other sets of 50 seeds the COMPAS rates without treatment were 1.00
# every time, with reweighing 1.00 / 0.68-0.74 (race) and 0.42-0.58 / 0.20-0.34
# (sex); German separation 0.46-0.62 (age) and 0.34-0.44 (sex) without treatment,
# 0.12-0.24 with reweighing. The German comparative rates (0.12-0.36) did not
# move consistently with reweighing, so nothing is asserted about them.


@pytest.mark.slow
def test_compas_detection_rates(compas_verdicts):
    _check_proportions(compas_verdicts)
    rates = _rates(compas_verdicts)
    # without treatment both tests detect the violation in (nearly) every split
    for attr in ("race", "sex"):
        assert rates.loc[(attr, "none"), "separation"] >= 0.9
        assert rates.loc[(attr, "none"), "comparative"] >= 0.9
    # reweighing lowers the detection rates for sex (both tests) ...
    assert rates.loc[("sex", "reweighing"), "separation"] <= 0.8
    assert rates.loc[("sex", "reweighing"), "comparative"] <= 0.5
    # ... and the comparative one for race, while the separation test still
    # detects a violation in every split: reweighing makes the training label
    # independent of race, which reverses the gaps (the reweighed model's TPR and
    # FPR are lower for Caucasian defendants, by about 0.10 and 0.04) rather than
    # closing them
    none, rew = rates.loc[("race", "none")], rates.loc[("race", "reweighing")]
    assert none["comparative"] - rew["comparative"] >= 0.15
    assert rew["separation"] >= 0.9


@pytest.mark.slow
def test_german_detection_rates(german_verdicts):
    _check_proportions(german_verdicts)
    rates = _rates(german_verdicts)
    # German credit has 500 test people and smaller gaps: the separation test
    # detects a violation in about 2 splits in 5 without treatment, above its
    # false-positive rate 0.0975, and reweighing lowers that (pooled over both
    # attributes: 0.40 -> 0.14 measured)
    none = rates.xs("none", level="treatment")["separation"]
    rew = rates.xs("reweighing", level="treatment")["separation"]
    assert none.mean() >= 0.25
    assert none.mean() - rew.mean() >= 0.1


@pytest.mark.slow
def test_separation_and_comparative_verdicts_agree(compas_verdicts, german_verdicts):
    verdicts = pd.concat(
        [
            compas_verdicts.assign(dataset="COMPAS"),
            german_verdicts.assign(dataset="German"),
        ]
    )
    agree = verdicts["separation"] == verdicts["comparative"]
    # where the violation is large (COMPAS without treatment) the verdicts agree
    # in every split (measured 1.00)
    large = (verdicts["dataset"] == "COMPAS") & (verdicts["treatment"] == "none")
    assert agree[large].mean() >= 0.95
    # overall they agree in most splits (measured 0.80 of 400 verdict pairs; 0.77
    # to 0.79 over other seeds), and the disagreements are mostly the less
    # powerful comparative test missing a violation: when it detects one, the
    # separation test does too (measured 0.89 to 0.91)
    assert agree.mean() >= 0.65
    assert verdicts.loc[verdicts["comparative"], "separation"].mean() >= 0.8


# =====================================================================================
# Jira story points: comparative separation of a regression model
# =====================================================================================
def test_jira_story_points_end_to_end(jira_path):
    df = pd.read_csv(jira_path)
    assert len(df) == 284
    train = df[df["split_mark"] != "test"]
    test = df[df["split_mark"] == "test"].reset_index(drop=True)
    assert len(test) == 65
    model = make_pipeline(TfidfVectorizer(), Ridge(alpha=1.0))
    model.fit(train["text"], train["storypoint"])
    y = test["storypoint"].to_numpy()
    s = model.predict(test["text"])
    a = test["is_internal"].to_numpy()

    # all pairs of the test split
    pairs = np.array(list(combinations(range(len(y)), 2)))
    res = comparative_separation_test(y, s, sensitive_features=a, pairs=pairs)
    # brute-force count of the K x K cells: (group of the truly higher item,
    # group of the truly lower item), correct when the prediction orders the
    # pair strictly in the true order
    i, j = pairs.T
    usable = y[i] != y[j]
    hi = np.where(y[i] > y[j], i, j)[usable]
    lo = np.where(y[i] > y[j], j, i)[usable]
    correct = s[hi] > s[lo]
    assert res.n_pairs == usable.sum()
    for (gh, gl), row in res.table.iterrows():
        cell = (a[hi] == gh) & (a[lo] == gl)
        assert row["n"] == cell.sum()
        assert row["correct"] == correct[cell].sum()
    assert res.tpr_matrix.shape == (2, 2)
    assert np.isfinite(res.tpr_matrix.to_numpy()).all()
    assert 0 <= res.p_value_cross <= 1 and 0 <= res.p_value_within <= 1
    # measured: p = 0.62 (cross) and 0.40 (within), no violation detected
    assert not res.violated

    # pairs drawn from the test split (2 n = 130 draws, ties dropped)
    drawn = make_comparative_pairs(y, random_state=0)
    res_drawn = comparative_separation_test(y, s, sensitive_features=a, pairs=drawn)
    assert res_drawn.n_pairs == drawn.shape[0] <= 2 * len(y)
    assert res_drawn.table["n"].sum() == res_drawn.n_pairs
    assert 0 <= res_drawn.p_value_cross <= 1 and 0 <= res_drawn.p_value_within <= 1
