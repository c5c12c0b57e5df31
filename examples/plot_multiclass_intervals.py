"""
======================================================
Multiclass groups: intervals per class and per group
======================================================

A model predicts one of three risk levels for the people of three groups, one of
them of 24 people. :func:`~sklearn_smallfair.metrics.group_metrics` takes the
groups' 3 x 3 confusion matrices, smooths them toward the rest of the population
with Cross-Prior Smoothing and gives every value a 95 % interval: per class the
binomial interval of the class's one-vs-rest matrix, per group the intervals of
accuracy, kappa and balanced accuracy.
"""

# %%
# The groups' 3 x 3 matrices
# --------------------------
# Rows are the true class, columns the predicted class, as
# :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts` counts them from
# rows.

import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair.metrics import group_metrics
from sklearn_smallfair.smoothing import CrossPriorSmoothing

labels = ["low", "mid", "high"]
counts = {
    "a": [[150, 30, 10], [25, 90, 20], [8, 22, 75]],
    "b": [[120, 20, 12], [30, 70, 15], [5, 18, 60]],
    "c": [[8, 3, 1], [2, 4, 1], [1, 2, 2]],
}

# %%
# Per class, raw and smoothed
# ---------------------------
# A class's TPR is the TPR of its one-vs-rest matrix, with its Clopper-Pearson
# interval; the smoothed TPR (toward the other two groups, ``lam = 10``) has the
# hull of the interval of its Dirichlet posterior and of the raw interval, which
# still covers the class's own TPR if the group differs from the others.
table = group_metrics(
    counts=counts,
    labels=labels,
    metrics="tpr",
    smoothing=CrossPriorSmoothing(lam=10),
    confidence_level=0.95,
)
print(table[["support", "tpr", "tpr_low", "tpr_high", "tpr_smoothed"]].round(3))

fig, ax = plt.subplots(figsize=(7, 3.5))
for i, (column, shift, marker) in enumerate(
    [("tpr", -0.12, "o"), ("tpr_smoothed", 0.12, "s")]
):
    y = table[column].to_numpy()
    low = table[f"{column}_low"].to_numpy()
    high = table[f"{column}_high"].to_numpy()
    x = np.arange(len(table)) + shift
    ax.errorbar(
        x,
        y,
        yerr=[y - low, high - y],
        fmt=marker,
        capsize=3,
        label=["raw (Clopper-Pearson)", "smoothed (posterior hull)"][i],
    )
ax.set_xticks(np.arange(len(table)))
ax.set_xticklabels([f"{g}\n{c}" for g, c in table.index], fontsize=8)
ax.set_ylabel("TPR of the class")
ax.set_ylim(0, 1)
ax.set_title("95 % intervals of each class's TPR, by group")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
plt.show()

# %%
# Per group: accuracy, kappa and balanced accuracy
# ------------------------------------------------
# Accuracy is a binomial proportion (Wilson interval); kappa has the interval of
# the Dirichlet posterior of the group's nine cells; balanced accuracy, the mean
# of the classes' TPRs, has the MOVER interval built from the classes' Wilson
# intervals. ``table.attrs["interval_method"]`` names each column's method.
whole = group_metrics(
    counts=counts,
    labels=labels,
    metrics=["accuracy", "kappa", "balanced_accuracy"],
    average="macro",
    confidence_level=0.95,
    random_state=0,
)
columns = [
    f"{m}{end}"
    for m in ("accuracy", "kappa", "balanced_accuracy")
    for end in ("", "_low", "_high")
]
print(whole[["n", *columns]].round(3).T)
print(whole.attrs["interval_method"])

# %%
# Group ``c``'s intervals are about four times as wide as group ``a``'s: with 24
# people its kappa could be anything from no agreement beyond chance (0.02) to a
# moderate one (0.57), and its smallest class (5 people) leaves its TPR between
# 0.05 and 0.85.
