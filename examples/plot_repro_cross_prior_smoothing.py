"""
=================================================================
Reproducing the Cross-Prior Smoothing study's Figure 2 and COMPAS
=================================================================

The small-data study behind Cross-Prior Smoothing (CPS) shows how ACC, MCC and
TPR are distributed over the confusion matrices of a small group (its Figure
2), and compares, on COMPAS, the raw metric of a small subgroup with a uniform
prior and with CPS toward the rest of the population. Everything here is
computed exactly from the published confusion matrices embedded in the package
(:func:`~sklearn_smallfair.datasets.load_published_confusion_matrices`), by
enumerating the confusion matrices
(:func:`~sklearn_smallfair.enumerate_confusion_matrices`). The complete run,
with ``n = 1000`` and all ten published groups, is
``benchmarks/repro_cross_prior_smoothing.py``; its numbers are on the
reproduction page of the documentation.
"""

# %%
# Figure 2: the metrics over the matrices of size n
# --------------------------------------------------
# The study's code draws the matrices from a multinomial law with the four
# cells equally likely (each person is TP, FN, FP or TN with probability 1/4);
# here that law is computed exactly, weighting every matrix by its
# probability (:func:`~sklearn_smallfair.multinomial_logpmf`). For comparison,
# the dashed lines give every matrix the same weight ("all confusion matrices
# of size n"). Undefined values (a TPR without positives, an MCC with an empty
# row or column) are left out, as in the study.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair import CELLS, enumerate_confusion_matrices, multinomial_logpmf
from sklearn_smallfair.datasets import load_published_confusion_matrices
from sklearn_smallfair.metrics import compute_metric
from sklearn_smallfair.model_selection import downsampling_experiment
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing


def quantile_function(values, weights, levels):
    """The quantiles of a weighted discrete law, undefined values left out."""
    keep = np.isfinite(values)
    order = np.argsort(values[keep], kind="stable")
    cum = np.cumsum(weights[keep][order])
    idx = np.searchsorted(cum / cum[-1], levels - 1e-12)
    return values[keep][order][np.minimum(idx, keep.sum() - 1)]


levels = np.linspace(0, 1, 401)
limits = {"acc": 0.5, "mcc": 0.0, "tpr": 0.5}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), layout="constrained")
for n, color in zip([5, 25, 100], ["C0", "C1", "C2"]):
    cms = enumerate_confusion_matrices(n)
    multinomial = np.exp(multinomial_logpmf(cms, [0.25] * 4))
    for ax, (metric, limit) in zip(axes, limits.items()):
        with np.errstate(all="ignore"):
            values = compute_metric(metric, cms)
        for weights, style in [(multinomial, "-"), (np.ones(len(cms)), "--")]:
            q = quantile_function(values, weights, levels)
            ax.plot(100 * levels, q, style, color=color, lw=1.2,
                    label=f"n = {n}" if style == "-" else None)  # fmt: skip
        ax.axhline(limit, color="0.6", lw=0.8, ls=":")
        ax.set_title(metric.upper())
        ax.set_xlabel("percentile")
axes[0].set_ylabel("value")
axes[0].legend(title="multinomial (solid)\nuniform (dashed)", fontsize=8)
plt.show()

# %%
# Under the study's law each metric concentrates at its limit (0.5, 0 and 0.5,
# dotted) as ``n`` grows: the middle of each solid curve flattens. Over all
# matrices with equal weights the curves barely change with ``n``: a quarter of
# the matrices of size 100 have an accuracy of at most 0.32. The figure of the
# study is the multinomial one.
#
# Table 2: the published matrices
# -------------------------------
# The embedded COMPAS matrices (cells ``TP, FN, FP, TN``), the row of all
# defendants (it counts every race) and the true "all other races", with their
# TPR and FPR, and the same rates after exchanging FN and FP, the layout in
# which the study's table prints them.
compas = load_published_confusion_matrices("COMPAS").set_index("group")[list(CELLS)]
compas.loc["ALL - Black - White"] = (
    compas.loc["ALL"] - compas.loc["Black"] - compas.loc["White"]
)
counts = compas.to_numpy()
swapped = counts[:, [0, 2, 1, 3]]
table = compas.assign(
    tpr=compute_metric("tpr", counts),
    fpr=compute_metric("fpr", counts),
    tpr_if_swapped=compute_metric("tpr", swapped),
    fpr_if_swapped=compute_metric("fpr", swapped),
)
print(table.round(3).to_string())

folk = load_published_confusion_matrices("Folktables").set_index("group")
tp, fn, fp, tn = folk.loc["Multiracial", list(CELLS)]
n_multi = tp + fn + fp + tn
print(
    f"\nFolktables Multiracial: n = {n_multi}, positives {tp + fn} "
    f"(prevalence {(tp + fn) / n_multi:.4f}), predicted positives {tp + fp} "
    f"(PPR {(tp + fp) / n_multi:.4f})"
)

# %%
# Smoothing against no prior and a uniform prior
# ----------------------------------------------
# Subgroups of ``n`` people drawn from the Black and the White group
# (multinomial, computed exactly); the error of a subgroup's score is measured
# against the whole group's score. ``raw``: the metric as is (no prior; the
# MSE is over the subgroups where it is defined); ``uniform``: one pseudo-count
# in every cell; ``cps_5``: CPS with ``lam = 5`` toward the rest of the
# defendants (``ALL`` minus the group).
groups = load_published_confusion_matrices("COMPAS", include_all=False)
res = downsampling_experiment(
    counts=groups,
    reference=compas.loc[["ALL", "ALL"]].to_numpy() - groups[list(CELLS)].to_numpy(),
    metrics=["tpr", "fpr"],
    estimators={
        "raw": None,
        "uniform": AdditiveSmoothing(1.0),
        "cps_5": CrossPriorSmoothing(5),
    },
    sizes=range(5, 151, 5),
)
mse = res.pivot_table(index=["group", "metric", "n"], columns="estimator", values="mse")
print(mse.loc[(slice(None), slice(None), [5, 25, 150]), :].round(4).to_string())

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True, layout="constrained")
for ax, metric in zip(axes, ["tpr", "fpr"]):
    for (group, estimator), style in zip(
        [(g, e) for g in ["Black", "White"] for e in ["raw", "uniform", "cps_5"]],
        ["C0-", "C0--", "C0:", "C1-", "C1--", "C1:"],
    ):
        curve = mse.loc[(group, metric)][estimator]
        ax.plot(curve.index, curve.to_numpy(), style, label=f"{group}, {estimator}")
    ax.set_title(f"MSE of the subgroup's {metric.upper()}")
    ax.set_xlabel("subgroup size n")
    ax.set_yscale("log")
axes[0].legend(fontsize=8, ncols=2)
plt.show()

# %%
# Reading the figures
# -------------------
# * The raw TPR's MSE starts near 0.2 at ``n = 5`` for both groups (and the
#   raw TPR is undefined for a large share of the subgroups, which this MSE
#   leaves out); both priors bring it down by a factor of 2.5 or more.
# * The uniform prior wins on the TPR at the smallest sizes: it pulls every
#   cell toward a quarter of the subgroup, and with it the TPR toward 0.5,
#   close to these groups' TPRs (0.62 and 0.37). On the FPR (0.38 and 0.18)
#   it is the worse prior, and on the prevalence, whose value here is near
#   0.1, it is worse than no prior at all (see the reproduction page). CPS's
#   pull toward the rest of the population does not depend on such luck.
