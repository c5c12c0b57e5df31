"""
=====================================================
Multiclass groups: per-class metrics, holes and MATCH
=====================================================

A model predicts one of three risk levels (low, mid, high) for people of three
groups, one of them small. We compute each group's one-vs-rest metrics per class,
count the K x K confusion matrices on which the metrics are undefined, smooth the
small group's matrix toward the others with Cross-Prior Smoothing, and ask the
multiclass MATCH test whether each group's scores are consistent with the rest of
the population at its size. Last, the fairness audit takes each class in turn.
"""

# %%
# Synthetic data: a small group with a worse model
# ------------------------------------------------
# Groups ``a`` and ``b`` have 400 and 300 people and the model is right 70 % of
# the time; the 25 people of group ``c`` get a model that is right half of the
# time.

from math import comb

import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.metrics import (
    count_undefined,
    group_metrics,
    multiclass_confusion_counts,
    multiclass_metric,
)
from sklearn_smallfair.model_selection import multiclass_downsampling_experiment
from sklearn_smallfair.stats import multiclass_match_test

rng = np.random.default_rng(0)
labels = np.array(["low", "mid", "high"])
sizes = {"a": 400, "b": 300, "c": 25}
accuracy = {"a": 0.7, "b": 0.7, "c": 0.5}
y_true, y_pred, groups = [], [], []
for g, n in sizes.items():
    t = rng.choice(labels, n, p=[0.5, 0.3, 0.2])
    p = np.where(rng.random(n) < accuracy[g], t, rng.choice(labels, n))
    y_true.append(t)
    y_pred.append(p)
    groups.append(np.full(n, g))
y_true, y_pred, groups = map(np.concatenate, (y_true, y_pred, groups))

res = multiclass_confusion_counts(
    y_true, y_pred, sensitive_features=groups, labels=labels
)
print(res.counts[2])  # group c: rows true, columns predicted

# %%
# Metrics per group and class
# ---------------------------
# Every binary metric is taken one-vs-rest for each class; ``support`` is the
# number of true cases of the class in the group.
table = group_metrics(
    y_true,
    y_pred,
    sensitive_features=groups,
    labels=labels,
    metrics=["tpr", "ppv"],
    zero_division=np.nan,
)
print(table[["n", "support", "tpr", "ppv"]].round(3))

# %%
# Holes: how many matrices leave a metric undefined
# -------------------------------------------------
# Among all 3 x 3 confusion matrices of a small size, the share on which the
# TPR of a given class (no true case of it), the multiclass MCC (a constant true
# or predicted class) or Cohen's kappa is 0/0.
for n in (5, 10, 25):
    total = comb(n + 8, 8)  # C(n + K^2 - 1, K^2 - 1) matrices
    holes = {m: count_undefined(m, n, n_classes=3) for m in ("tpr", "mcc", "kappa")}
    shares = ", ".join(f"{m} {h / total:.2%}" for m, h in holes.items())
    print(f"n = {n}: {total:,} matrices; undefined: {shares}")

# %%
# Cross-Prior Smoothing of the small group
# ----------------------------------------
# ``(c + lam p_rest) / (n + lam) n`` cell-wise: the small group's matrix is
# pulled toward the proportions of everybody else, and keeps its size.
c = res.counts[2].astype(float)
rest = res.counts[:2].sum(axis=0)
lam = 10
smoothed = (c + lam * rest / rest.sum()) / (c.sum() + lam) * c.sum()
for name, m in (("raw", c), (f"CPS, lam={lam}", smoothed)):
    print(
        f"{name:>13}: TPR per class {multiclass_metric('tpr', m).round(3)}, "
        f"kappa {float(multiclass_metric('kappa', m)):.3f}"
    )

# %%
# How much smoothing helps at small sizes
# ---------------------------------------
# Subgroups of ``n`` people drawn from each group's own proportions, scored raw
# and smoothed; mean squared error against the whole group's value.
exp = multiclass_downsampling_experiment(
    res,
    sizes=[5, 10, 20, 40, 80],
    metrics=["tpr", "kappa"],
    lam=[0, 10],
    n_resamples=2000,
    random_state=0,
)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=False)
for ax, metric in zip(axes, ["tpr_macro", "kappa"]):
    for (g, est), part in exp[exp["metric"] == metric].groupby(["group", "estimator"]):
        ax.plot(
            part["n"],
            part["mse"],
            marker="o",
            linestyle="-" if est == "raw" else "--",
            label=f"{g}, {est}",
        )
    ax.set(title=metric, xlabel="subgroup size n", ylabel="MSE", yscale="log")
axes[0].legend(fontsize=7)
fig.tight_layout()
plt.show()

# %%
# The multiclass MATCH test
# -------------------------
# Per class, each group's one-vs-rest TPR is tested against the rest of the
# population at the group's size (exact binomial law); the whole-matrix kappa is
# tested against the law of kappa over all 3 x 3 matrices of that size (Monte
# Carlo at these sizes). Holm's correction runs across groups and classes.
per_class = multiclass_match_test(
    y_true,
    y_pred,
    sensitive_features=groups,
    labels=labels,
    metric="tpr",
)
print(
    per_class.frame[
        ["group", "class", "n", "score", "reference_score", "p_value", "p_adjusted"]
    ].round(3)
)
whole = multiclass_match_test(
    y_true,
    y_pred,
    sensitive_features=groups,
    labels=labels,
    metric="kappa",
    n_resamples=20_000,
    random_state=0,
)
print(
    whole.frame[["group", "n", "score", "reference_score", "p_value", "method"]].round(
        3
    )
)

# %%
# The whole audit, class by class
# -------------------------------
# :func:`~sklearn_smallfair.audit.audit_predictions` audits each class
# one-vs-rest with the binary audit (raw and smoothed values with intervals,
# MATCH, separation, the smallest gap detectable at each group's size) and
# adjusts the p-values over every class together. ``report.to_html(path)``
# writes the same as one page with a section per class.
report = audit_predictions(
    y_true, y_pred, sensitive_features=groups, labels=labels, metrics=["tpr", "fpr"]
)
print(report.summary().splitlines()[0])
print(
    report.frame.xs("c")[
        ["n_pos", "tpr", "tpr_smoothed", "tpr_match_p_adjusted", "tpr_verdict"]
    ].round(3)
)
