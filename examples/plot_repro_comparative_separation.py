"""
=========================================================
Reproducing the comparative-separation study on real data
=========================================================

The comparative-separation study trains a logistic regression on half of
COMPAS and of German credit, with no treatment, with FairBalance
(:func:`~sklearn_smallfair.preprocessing.fairbalance_weights`) or with
Reweighing (:func:`~sklearn_smallfair.preprocessing.reweighing_weights`)
weights, and counts over 1,000 random splits how often the separation test and
the comparative separation test find a violation (its Table V); on 284 Jira
backlog items it fits a story-point regression with and without FairReweighing
weights
(:func:`~sklearn_smallfair.preprocessing.fair_reweighing_weights`) and measures
the separation metric :math:`I_{sep}`
(:func:`~sklearn_smallfair.metrics.isep_score`) (its Table VIII). This example
runs the study's protocol (its cohort, split, model and tests) on a few splits,
and the package's recommended tests on the same models beside it; the full
1,000 splits are in ``benchmarks/repro_comparative_separation.py``, and the
numbers of that run, with the reason for every difference, are on the
reproduction page of the documentation.

The data are not shipped with the package. They are read from the package's
data folder (:func:`~sklearn_smallfair.datasets.get_data_home`), where
:func:`~sklearn_smallfair.datasets.fetch_compas` and
:func:`~sklearn_smallfair.datasets.fetch_german_credit` download them; the
study's ``jirasoftware_filtered.csv`` is read from the same folder.
"""

# %%
# The study's cohorts
# -------------------
# COMPAS: all 7,214 defendants of ``compas-scores-two-years.csv``, ``race`` = 1
# for Caucasian against all others, ``sex`` = 1 for men, label 1 = no
# recidivism within two years; ten features, the two attributes among them.
# German credit: ``age`` replaced by ``age > 25`` and the personal status by
# sex. The loaders locate the files and check them; the rows are then read
# without the loaders' filtering, as in the study.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_smallfair.datasets import (
    fetch_compas,
    fetch_german_credit,
    get_data_home,
)
from sklearn_smallfair.metrics import isep_score
from sklearn_smallfair.preprocessing import (
    fair_reweighing_weights,
    fairbalance_weights,
    reweighing_weights,
)
from sklearn_smallfair.stats import (
    comparative_separation_test,
    make_comparative_pairs,
    separation_test,
)

COMPAS_FEATURES = [
    "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count",
    "juv_other_count", "priors_count", "c_charge_degree", "c_charge_desc",
]  # fmt: skip
GERMAN_COLUMNS = [
    "status", "month", "credit_history", "purpose", "credit_amount", "savings",
    "employment", "installment_rate", "sex", "other_debtors", "residence_since",
    "property", "age", "installment_plans", "housing", "number_of_credits",
    "skill_level", "people_liable_for", "telephone", "foreign_worker", "credit",
]  # fmt: skip


def study_compas():
    raw = pd.read_csv(fetch_compas(download_if_missing=False).filename)
    X = raw[COMPAS_FEATURES].copy()
    X["sex"] = (X["sex"] == "Male").astype(int)
    X["race"] = (X["race"] == "Caucasian").astype(int)
    X["c_charge_desc"] = X["c_charge_desc"].fillna("(missing)")
    y = (raw["two_year_recid"] == 0).to_numpy().astype(int)
    return X, y, X[["sex", "race"]]


def study_german():
    path = fetch_german_credit(download_if_missing=False).filename
    X = pd.read_csv(path, sep=r"\s+", header=None, names=GERMAN_COLUMNS)
    y = (X.pop("credit") == 1).to_numpy().astype(int)
    X["age"] = (X["age"] > 25).astype(int)
    X["sex"] = X["sex"].isin(["A91", "A93", "A94"]).astype(int)
    return X, y, X[["age", "sex"]]


datasets = {}
for name, load in [("COMPAS", study_compas), ("German", study_german)]:
    try:
        datasets[name] = load()
    except OSError:
        print(
            f"{name} skipped: run fetch_compas() and fetch_german_credit() once "
            f"(or set SMALLFAIR_DATA to a folder holding the files)."
        )
for name, (_, y, _) in datasets.items():
    print(f"{name}: {len(y)} people, favourable rate {y.mean():.3f}")

# %%
# The study's protocol
# --------------------
# Each split puts ``floor(size / 2)`` random people of every (attributes,
# label) cell in the test half. Text columns are one-hot encoded, numeric ones
# standardized on the training half, and ``LogisticRegression(max_iter=100000)``
# is fitted with the treatment's weights, computed with both attributes
# together. On the test half, for each attribute:
#
# * **published**: the Wald test of the TPR and FPR gaps
#   (``separation_test(method="wald")``), and the comparative test on ``2 n``
#   random pairs with the independent-pairs variance;
# * **calibrated** (the package's defaults): the exact or score test, and the
#   comparative test on all pairs with the U-statistic variance estimated under
#   separation (the pairs stratified by their label pair; with binary labels
#   there is one stratum).
#
# A violation is declared when the smaller of the two p-values is below 0.05.
N_SPLITS = {"COMPAS": 8, "German": 25}


def split(A, y, rng):
    cell = np.unique(np.column_stack([A, y]), axis=0, return_inverse=True)[1].ravel()
    order = np.lexsort((rng.random(len(y)), cell))
    sizes = np.bincount(cell)
    rank = np.empty(len(y), dtype=int)
    rank[order] = np.arange(len(y)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return rank < sizes[cell] // 2


def run(X, y, A, n_splits):
    text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    onehot = OneHotEncoder(handle_unknown="ignore").fit_transform(X[text])
    numeric = X.drop(columns=text).to_numpy(dtype=float)
    rows = []
    for seed in range(n_splits):
        rng = np.random.default_rng(seed)
        test = split(A.to_numpy(), y, rng)
        scaled = StandardScaler().fit(numeric[~test]).transform(numeric)
        Z = sparse.hstack([onehot, scaled]).tocsr()
        pairs = make_comparative_pairs(
            y[test], n_pairs=2 * test.sum(), random_state=rng
        )
        for treatment, weigh in [
            ("none", None),
            ("FairBalance", fairbalance_weights),
            ("Reweighing", reweighing_weights),
        ]:
            w = weigh(y[~test], sensitive_features=A[~test]) if weigh else None
            model = LogisticRegression(max_iter=100000)
            pred = model.fit(Z[~test], y[~test], sample_weight=w).predict(Z[test])
            for attr in A.columns:
                a = A[attr].to_numpy()[test]
                kw = dict(sensitive_features=a)
                sep = separation_test(y[test], pred, method="wald", **kw)
                comp = comparative_separation_test(
                    y[test], pred, pairs=pairs, variance="independent", **kw
                )
                rows.append(
                    {
                        "attribute": attr,
                        "treatment": treatment,
                        "separation, published": sep.pvalues.min() < 0.05,
                        "comparative, published": comp.pvalues.min() < 0.05,
                        "separation, calibrated": separation_test(
                            y[test], pred, **kw
                        ).violated,
                        "comparative, calibrated": comparative_separation_test(
                            y[test], pred, **kw
                        ).violated,
                    }
                )
    return pd.DataFrame(rows)


rates = {
    name: run(X, y, A, N_SPLITS[name])
    .groupby(["attribute", "treatment"], sort=False)
    .mean()
    for name, (X, y, A) in datasets.items()
}
for name, table in rates.items():
    print(f"\n{name}: detection rates over {N_SPLITS[name]} splits")
    print(table.round(2).to_string())

# %%
# The published rates beside ours
# -------------------------------
# The study's Table V (1,000 splits) as crosses; bars: our rates with the
# published tests (full colour) and the calibrated ones (light).
PUBLISHED = {  # (dataset, attribute, treatment): (separation, comparative)
    ("COMPAS", "sex", "none"): (1.0, 1.0),
    ("COMPAS", "race", "none"): (1.0, 1.0),
    ("COMPAS", "sex", "FairBalance"): (0.245, 0.312),
    ("COMPAS", "race", "FairBalance"): (0.37, 0.411),
    ("COMPAS", "sex", "Reweighing"): (0.286, 0.38),
    ("COMPAS", "race", "Reweighing"): (0.642, 0.455),
    ("German", "age", "none"): (0.844, 0.676),
    ("German", "sex", "none"): (0.523, 0.613),
    ("German", "age", "FairBalance"): (0.241, 0.323),
    ("German", "sex", "FairBalance"): (0.18, 0.313),
    ("German", "age", "Reweighing"): (0.223, 0.325),
    ("German", "sex", "Reweighing"): (0.135, 0.35),
}
fig, axes = plt.subplots(
    1, max(len(rates), 1), figsize=(11, 4), sharey=True, layout="constrained"
)
axes = np.atleast_1d(axes)
for ax, (name, table) in zip(axes, rates.items()):
    x = np.arange(len(table))
    for k, (test, color) in enumerate([("separation", "C0"), ("comparative", "C1")]):
        offset = (k - 0.5) * 0.4
        ax.bar(x + offset - 0.1, table[f"{test}, published"], 0.2, color=color,
               label=f"{test}, published test")  # fmt: skip
        ax.bar(x + offset + 0.1, table[f"{test}, calibrated"], 0.2, color=color,
               alpha=0.35, label=f"{test}, calibrated test")  # fmt: skip
        paper = [PUBLISHED[(name, *idx)][k] for idx in table.index]
        ax.plot(
            x + offset,
            paper,
            "kx",
            ms=7,
            label="published (1,000 splits)" if k else None,
        )
    ax.set_xticks(x, [f"{a}\n{t}" for a, t in table.index], fontsize=8)
    ax.set_title(f"{name} ({N_SPLITS[name]} splits)")
axes[0].set_ylabel("detection rate (alpha = 0.05)")
axes[0].legend(fontsize=7, loc="upper right")
if not rates:
    axes[0].text(
        0.5, 0.5, "data not available", ha="center", transform=axes[0].transAxes
    )
plt.show()

# %%
# Table VIII: story points, FairReweighing and I_sep
# --------------------------------------------------
# The study's model is a sentence embedding whose pretrained weights are not
# available from the package index; a TF-IDF + ridge regression stands in for
# it, fitted on the 219 training and validation items with and without the
# FairReweighing weights (Reweighing with neighbour-count densities, for a
# continuous label). On the 65 test items: the MAE, the Spearman correlation,
# ``I_sep`` and the comparative test on all pairs of test items.
jira_path = get_data_home() / "jirasoftware_filtered.csv"
if not jira_path.is_file():
    print(
        f"Jira skipped: place the study's jirasoftware_filtered.csv in "
        f"{jira_path.parent}."
    )
else:
    items = pd.read_csv(jira_path)
    train = items[items["split_mark"] != "test"]
    test = items[items["split_mark"] == "test"]
    y_test, groups = test["storypoint"].to_numpy(), test["is_internal"].to_numpy()
    weights = {
        "none": None,
        "FairReweighing": fair_reweighing_weights(
            train["storypoint"], sensitive_features=train["is_internal"]
        ),
    }
    rows = {}
    for treatment, w in weights.items():
        model = make_pipeline(TfidfVectorizer(), Ridge(alpha=1.0))
        model.fit(train["text"], train["storypoint"], ridge__sample_weight=w)
        pred = model.predict(test["text"])
        comp = comparative_separation_test(y_test, pred, sensitive_features=groups)
        rows[treatment] = {
            "MAE": np.abs(pred - y_test).mean(),
            "Spearman": spearmanr(pred, y_test).statistic,
            "I_sep": isep_score(y_test, pred, sensitive_features=groups),
            "comparative p (all pairs)": comp.pvalues.min(),
        }
    print(pd.DataFrame(rows).T.round(4).to_string())

# %%
# Reading the figure
# ------------------
# With a handful of splits the rates are coarse (a standard error of up to 0.18
# with 8 splits, 0.10 with 25): compare them with the crosses only roughly. The
# 1,000-split run of the benchmark script is what the reproduction page sets
# beside the study's table, with the reason for every difference. Two things
# show already:
#
# * with the study's cohort and features, the German rates without treatment
#   come close to the published 0.844 and 0.676 for age, far above the rates of
#   the same tests on the package's loader features, where age is in years and
#   the personal status is not reduced to sex (the reproduction page measures
#   each of these changes);
# * on Jira the stand-in model is weaker than the study's (the study reports an
#   MAE of 1.548 and a Spearman correlation of 0.436), so its ``I_sep`` and
#   comparative results are those of another model;
# * the published and the calibrated tests mostly agree where the violation
#   is large; they part where it is small, and there the published
#   comparative test, whose independent-pairs variance is too small for pairs
#   that share people, is the one to distrust.
