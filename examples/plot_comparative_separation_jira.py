"""
==========================================================
Comparative separation of a story-point regression (Jira)
==========================================================

Separation is defined for classifiers, but its comparative version needs no
classes: for a pair of items whose true order is known, is the model's order
right equally often whatever the groups of the two items? Here the items are
284 backlog items of the Jira Software project, the label is the story points
the team gave each item (1 to 20), and the model is a text regression that
predicts story points from the item's title and description. The groups are
``is_internal``: ``1`` for items written as user stories, ``0`` for defect and
other requests.

We fit a ``TfidfVectorizer`` + ``Ridge`` model on the training and validation
items, predict the 65 test items, and test comparative separation
(:func:`~sklearn_smallfair.stats.comparative_separation_test`) on all pairs of
test items (the default), with its permutation test, and on pairs drawn at
random as in the published procedure. See the user guide, :ref:`separation`.

The data file is not shipped with the package: the example reads it from the
data folder (:func:`~sklearn_smallfair.datasets.get_data_home`: the environment
variable ``SMALLFAIR_DATA``, else ``~/smallfair_data``), and only prints how to
get it when it is absent. It is the Jira Software table
(``jirasoftware_filtered.csv``) that the authors of the comparative separation
study derived from the GPT2SP story-point data and published with their code.
"""

# %%
# The data
# --------
# ``jirasoftware_filtered.csv`` has one row per item with its ``text`` (title
# and description), ``storypoint``, ``is_internal`` and ``split_mark`` (train,
# val or test).
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

from sklearn_smallfair.datasets import get_data_home
from sklearn_smallfair.stats import comparative_separation_test

path = get_data_home() / "jirasoftware_filtered.csv"
if not path.is_file():
    items = None
    print(
        f"jirasoftware_filtered.csv is not in {get_data_home()}: copy it there "
        f"from the comparative separation study's code (or set SMALLFAIR_DATA to "
        f"a folder holding it), then run this example again."
    )
else:
    items = pd.read_csv(path)
    print(
        items.groupby(["split_mark", "is_internal"])["storypoint"]
        .agg(["size", "mean", "median"])
        .round(2)
        .to_string()
    )

# %%
# The model
# ---------
# TF-IDF features of the text and a ridge regression, fitted on the training
# and validation items together (219 items); the predictions of the 65 test
# items are the scores.
if items is not None:
    train = items[items["split_mark"] != "test"]
    test = items[items["split_mark"] == "test"].reset_index(drop=True)
    model = make_pipeline(TfidfVectorizer(), Ridge(alpha=1.0))
    model.fit(train["text"], train["storypoint"])
    y = test["storypoint"].to_numpy()
    score = model.predict(test["text"])
    groups = test["is_internal"].to_numpy()
    rho = spearmanr(y, score).statistic
    print(
        f"test items: {len(y)}; mean absolute error {np.abs(score - y).mean():.2f} "
        f"story points; Spearman correlation {rho:.3f}"
    )

# %%
# All pairs of the test items
# ---------------------------
# The 65 test items form 2,080 pairs; those with equal story points carry no
# order and are dropped. Each remaining pair falls in one of the four cells
# ``(higher, lower)``: the groups of the item with more and with fewer story
# points. ``TPR(a, b)`` is the fraction of the pairs of cell ``(a, b)`` that the
# model orders correctly (a predicted tie counts as incorrect).
#
# Given labels and scores, the test counts every pair (without forming them) and
# needs no seed. Pairs that share an item are not independent: the standard
# errors are those of the U-statistic, from the items' placements.
#
# The story points take seven values, so by default the cells are compared
# within the strata of equal label pairs (``tpr_a`` and ``tpr_b`` are the
# cells' rates standardized over the strata; the table keeps the pooled rates),
# with the variance under separation. ``stratify=False,
# variance="u_statistic"`` compares the pooled cells, each group's variance
# from its own items.
if items is not None:
    res_all = comparative_separation_test(y, score, sensitive_features=groups)
    print(res_all.table.round(3).to_string())
    print()
    print("K x K comparative TPR (rows: group of the higher item):")
    print(res_all.tpr_matrix.round(3).to_string())
    print()
    columns = ["test", "tpr_a", "tpr_b", "difference", "se", "df", "p_value"]
    print(res_all.frame[columns].round(3))
    print(res_all)
    res_pooled = comparative_separation_test(
        y, score, sensitive_features=groups, stratify=False, variance="u_statistic"
    )
    print(res_pooled.frame[columns].round(3))

# %%
# The permutation test
# --------------------
# With 65 items the t reference is an approximation; permuting the group labels
# among the items of equal story points gives a test whose level holds at any
# size (of separation: the scores do not depend on the group, given the
# points).
if items is not None:
    res_perm = comparative_separation_test(
        y,
        score,
        sensitive_features=groups,
        method="permutation",
        n_resamples=9999,
        random_state=0,
    )
    print(res_perm.frame[["test", "difference", "p_value"]].round(3))

# %%
# Randomly drawn pairs: the published procedure
# ---------------------------------------------
# The published test draws random pairs (here ``2 n = 130``, drawn with
# replacement, the tied ones dropped) and treats them as independent
# (``variance="independent"``). Its verdict depends on the draw; five seeds:
if items is not None:
    published = [
        comparative_separation_test(
            y,
            score,
            sensitive_features=groups,
            n_pairs=2 * len(y),
            variance="independent",
            random_state=seed,
        )
        for seed in range(5)
    ]
    res_drawn = published[0]
    print(res_drawn.table.round(3).to_string())
    print()
    for seed, res in enumerate(published):
        print(
            f"seed {seed}: {res.n_pairs} usable pairs, p cross = "
            f"{res.p_value_cross:.3f}, p within = {res.p_value_within:.3f}"
        )

# %%
# The comparative TPR tables
# --------------------------
# Each cell shows ``TPR(a, b)`` and the counts ``correct / n``.
if items is None:
    fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
    ax.text(
        0.5,
        0.5,
        "Jira story-point data not available:\nsee the message printed above",
        ha="center",
        va="center",
        transform=ax.transAxes,
    )
    ax.set_axis_off()
else:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
    for ax, res, title in zip(
        axes,
        (res_all, res_drawn),
        (
            f"all pairs ({res_all.n_pairs} usable)",
            f"{res_drawn.n_pairs} drawn pairs (published test, seed 0)",
        ),
    ):
        tpr = res.tpr_matrix
        image = ax.imshow(tpr.to_numpy(), vmin=0, vmax=1, cmap="RdYlBu")
        for (hi, lo), row in res.table.iterrows():
            r, c = tpr.index.get_loc(hi), tpr.columns.get_loc(lo)
            ax.text(
                c,
                r,
                f"{row['tpr']:.2f}\n{row['correct']:g} / {row['n']:g}",
                ha="center",
                va="center",
            )
        labels = ["0 (request)", "1 (user story)"]
        ax.set_xticks(range(2), labels)
        ax.set_yticks(range(2), labels)
        ax.set_xlabel("group of the lower item")
        ax.set_ylabel("group of the higher item")
        ax.set_title(
            f"{title}\np cross = {res.p_value_cross:.2f}, "
            f"p within = {res.p_value_within:.2f}",
            fontsize=10,
        )
    fig.colorbar(image, ax=axes, label="comparative TPR", shrink=0.8)

plt.show()

# %%
# Reading the results
# -------------------
# * The model is weak: a mean absolute error of 1.88 story points and a
#   Spearman correlation of 0.20 with the true points on the test items. It
#   orders 53 % to 61 % of the pairs correctly, little better than the 50 % of a
#   random order.
# * On all pairs, the pairs whose higher item is a user story are ordered
#   correctly a little more often (``TPR(1, 1) = 0.61`` against ``TPR(0, 0) =
#   0.53`` within the groups, ``TPR(1, 0) = 0.61`` against ``TPR(0, 1) = 0.54``
#   across them), but neither gap is significant (p = 0.66 across and 0.46
#   within with the t reference; 0.65 and 0.32 by permutation): no violation of
#   comparative separation is detected. The result is the same at every run.
# * 1,703 pairs do not make 1,703 independent observations: they are built from
#   65 items, each in about 50 pairs. The cells' standard errors (0.07 to 0.10)
#   are three to four times those of independent pairs (``sqrt(0.25 / 536) =
#   0.02`` for the largest cell), and the t reference has only 22 and 35
#   degrees of freedom: it is the number of items, not of pairs, that limits
#   what can be detected here.
# * The published procedure counts about 100 drawn pairs (14 to 35 per cell)
#   and its p-values move with the seed (0.33 to 0.82 across, 0.23 to 1.00
#   within over five seeds); with this weak a model no draw detects a violation,
#   but ``TPR(1, 0)`` is 0.38 (12 of 32) in the first draw, against 0.61 on all
#   pairs.
