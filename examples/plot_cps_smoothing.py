"""
===========================================================
Cross-Prior Smoothing of small groups drawn from COMPAS
===========================================================

How much does a per-group true positive rate (TPR) or false positive rate
(FPR) move when a group has 10, 20 or 50 people, and what does Cross-Prior
Smoothing (:class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`) change?

We take ProPublica's published COMPAS confusion matrices
(:func:`~sklearn_smallfair.datasets.load_published_confusion_matrices`) and
treat the Black and the White group's cell proportions as the truth. From each
we draw many small subgroups with a multinomial law, compute TPR and FPR on the
raw counts and on the smoothed counts, and compare them with the whole group's
value. As in the downsampling experiments of the small-groups literature, a
subgroup stands for the whole group observed at a small size, and its reference
is everybody else: the ``ALL`` matrix minus the whole group (``ALL`` also
contains defendants of other races).
"""

# %%
# Published matrices and true proportions
# ---------------------------------------
# Cells are ordered ``(TP, FN, FP, TN)``.

import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair import CELLS
from sklearn_smallfair.datasets import load_published_confusion_matrices
from sklearn_smallfair.metrics import compute_metric
from sklearn_smallfair.smoothing import CrossPriorSmoothing

compas = load_published_confusion_matrices("COMPAS").set_index("group")
print(compas[list(CELLS)])

group_names = ["Black", "White"]
group_counts = compas.loc[group_names, list(CELLS)].to_numpy()  # (2, 4)
all_counts = compas.loc["ALL", list(CELLS)].to_numpy()  # (4,)
proportions = group_counts / group_counts.sum(axis=1, keepdims=True)

metric_names = ["tpr", "fpr"]
whole_group = {m: compute_metric(m, group_counts) for m in metric_names}
for m in metric_names:
    print(
        f"whole-group {m.upper()}: "
        + ", ".join(f"{g} {v:.3f}" for g, v in zip(group_names, whole_group[m]))
    )

# %%
# Draw small subgroups
# --------------------
# One call draws every subgroup: ``counts`` has shape
# ``(n_sizes, n_groups, n_resamples, 4)``. Cross-Prior Smoothing with ``lam=10``
# shrinks each draw toward its reference's proportions and keeps its size; the
# references, shape ``(n_groups, 4)``, broadcast against the draws.
sizes = np.array([10, 20, 50])
n_resamples = 20_000
rng = np.random.default_rng(0)
counts = rng.multinomial(
    sizes[:, None, None],
    proportions[None, :, None, :],
    size=(len(sizes), len(group_names), n_resamples),
)
reference = all_counts - group_counts  # "rest": ALL minus the whole group
smoothed = CrossPriorSmoothing(lam=10).transform(counts, reference[None, :, None, :])

raw = {m: compute_metric(m, counts) for m in metric_names}  # NaN = undefined
cps = {m: compute_metric(m, smoothed) for m in metric_names}

# %%
# How often is the raw value undefined, and how far off is it?
# ------------------------------------------------------------
# The raw TPR is undefined (0/0) whenever a subgroup has no positives, which for
# White defendants (9 % positives) happens in almost 40 % of the groups of
# 10. The smoothed values are always defined. Errors are measured against the
# whole group's value; the raw root-mean-square error (RMSE) is over the
# defined draws only, which flatters the raw estimate.
print(
    f"{'metric':6} {'group':6} {'n':>3} {'raw undefined':>14} "
    f"{'raw RMSE':>9} {'CPS RMSE':>9} {'CPS bias':>9}"
)
for m in metric_names:
    for j, g in enumerate(group_names):
        for i, n in enumerate(sizes):
            r, s = raw[m][i, j], cps[m][i, j]
            truth = whole_group[m][j]
            print(
                f"{m.upper():6} {g:6} {n:3d} {np.isnan(r).mean():14.1%} "
                f"{np.sqrt(np.nanmean((r - truth) ** 2)):9.3f} "
                f"{np.sqrt(np.mean((s - truth) ** 2)):9.3f} "
                f"{np.mean(s) - truth:+9.3f}"
            )

# %%
# Spread of the estimates around the whole-group value
# ----------------------------------------------------
# Boxes span the 25th to 75th percentiles of the draws, whiskers the 5th to 95th;
# the raw boxes only use the defined draws, and the percentage above them is the
# share of draws where the raw value is undefined. The solid line is the whole
# group's value, the dotted line the reference's value (``ALL`` minus the
# whole group), toward which smoothing pulls.
whole_reference = {m: compute_metric(m, reference) for m in metric_names}
raw_color, cps_color = "tab:orange", "tab:blue"
fig, axes = plt.subplots(
    len(metric_names),
    len(group_names),
    figsize=(9, 6.5),
    sharex=True,
    layout="constrained",
)
for row, m in enumerate(metric_names):
    for col, g in enumerate(group_names):
        ax = axes[row, col]
        for i in range(len(sizes)):
            r = raw[m][i, col]
            defined = r[~np.isnan(r)]
            for values, offset, color in (
                (defined, -0.18, raw_color),
                (cps[m][i, col], 0.18, cps_color),
            ):
                ax.boxplot(
                    values,
                    positions=[i + offset],
                    widths=0.3,
                    whis=(5, 95),
                    showfliers=False,
                    patch_artist=True,
                    boxprops={"facecolor": color, "alpha": 0.6},
                    medianprops={"color": "black"},
                )
            ax.text(
                i - 0.18,
                1.02,
                f"{np.isnan(r).mean():.0%} undef.",
                ha="center",
                va="bottom",
                fontsize=8,
                color=raw_color,
            )
        ax.axhline(whole_group[m][col], color="black", lw=1.2)
        ax.axhline(whole_reference[m][col], color="black", lw=1, ls=":")
        ax.set_ylim(-0.03, 1.1)
        ax.set_xticks(range(len(sizes)), [f"n = {n}" for n in sizes])
        ax.set_title(f"{m.upper()}, subgroups of {g} defendants", fontsize=10)
        if col == 0:
            ax.set_ylabel(m.upper())
handles = [
    plt.Rectangle(
        (0, 0),
        1,
        1,
        facecolor=raw_color,
        alpha=0.6,
        label="raw (defined draws); % = share undefined",
    ),
    plt.Rectangle(
        (0, 0),
        1,
        1,
        facecolor=cps_color,
        alpha=0.6,
        label="Cross-Prior Smoothing, lam = 10",
    ),
    plt.Line2D([], [], color="black", lw=1.2, label="whole group"),
    plt.Line2D([], [], color="black", lw=1, ls=":", label="reference (ALL - group)"),
]
fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=9)
fig.suptitle(f"COMPAS: {n_resamples:,} multinomial subgroups per size")

plt.show()

# %%
# Reading the figure
# ------------------
# * Raw rates of small groups are jagged and wide: with 10 White defendants the
#   raw TPR is undefined in almost 40 % of the draws and otherwise mostly 0
#   or 1.
# * Smoothing narrows the spread and never leaves a hole, at the price of a
#   pull toward the reference. For White subgroups that pull is upward,
#   because the reference is dominated by Black defendants, whose TPR and FPR
#   are higher (for Black subgroups it is downward). A subgroup with no
#   positives gets exactly the reference's TPR.
# * The pull fades as ``n`` grows: the prior's weight is ``lam / (n + lam)`` on
#   every cell. For a rate such as the TPR the smoothed value is
#   ``(TP + lam p'_TP) / (n_pos + lam p'_pos)``: the subgroup's own positives
#   against ``lam`` times the reference's share of positives, about 1.3
#   borrowed positives here. A subgroup of 10 White defendants has about 0.9
#   positives on average, so the borrowed ones weigh at least as much as its
#   own.
# * The raw root-mean-square error above ignores the undefined draws; an
#   auditor gets no number at all for those groups.
