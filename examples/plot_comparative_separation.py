"""
=============================================================
Power of separation tests: labelled people or judged pairs
=============================================================

Separation asks whether a binary classifier's true positive rate (TPR) and
false positive rate (FPR) are the same in two groups. It can be tested on
people with labels (:func:`~sklearn_smallfair.stats.separation_test`), or on
*pairs* of people judged "who ranks higher?" when such comparative judgments
are cheaper to collect than labels
(:func:`~sklearn_smallfair.stats.comparative_separation_test`). How many
people, or how many pairs, are needed to detect a given violation?

For four laws of prediction ``C``, label ``Y`` and group ``A``, we draw the
power of both tests against the sample size: the closed forms of
:func:`~sklearn_smallfair.stats.separation_power` and
:func:`~sklearn_smallfair.stats.comparative_separation_power` as lines, and
the rejection rates of simulated data sets from
:func:`~sklearn_smallfair.stats.simulate_separation_power` as points with
two-standard-error bars. The horizontal axis of the pairs panel is twice that
of the people panel, to show the rule of thumb "about twice as many pairs as
people". See the user guide, :ref:`separation`.
"""

# %%
# Four laws P(C, Y, A)
# --------------------
# Each law lists the joint probabilities of ``(TP, FN, FP, TN)`` of group
# ``A=1`` followed by those of group ``A=0``. The first satisfies separation
# (TPR 0.8 and FPR 0.4 in both groups); the others violate it.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_smallfair.metrics import compute_metric
from sklearn_smallfair.stats import (
    comparative_separation_power,
    comparative_separation_sample_size,
    separation_power,
    separation_sample_size,
    simulate_separation_power,
)

laws = {
    "no violation": [0.22, 0.055, 0.09, 0.135, 0.18, 0.045, 0.11, 0.165],
    "FPR gap": [0.22, 0.055, 0.081, 0.144, 0.18, 0.045, 0.121, 0.154],
    "TPR and FPR gaps": [0.231, 0.044, 0.081, 0.144, 0.171, 0.054, 0.121, 0.154],
    "opposite gaps": [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175],
}


def rates(p):
    """TPR and FPR of groups A=1 and A=0 (rows (TP, FN, FP, TN) of each group)."""
    g = np.reshape(p, (2, 4))
    return compute_metric("tpr", g), compute_metric("fpr", g)


print(
    pd.DataFrame(
        {name: np.concatenate(rates(p)) for name, p in laws.items()},
        index=["TPR_1", "TPR_0", "FPR_1", "FPR_0"],
    )
    .T.round(3)
    .to_string()
)

# %%
# Sample sizes for 80 % power
# ---------------------------
# The smallest number of people (separation) and of judged pairs (comparative
# separation) whose joint test rejects with probability 0.8 at
# ``alpha = 0.05``. The law without violation has none: its power stays at the
# false-positive rate ``1 - 0.95^2 = 0.0975``.
rows = {}
for name, p in laws.items():
    if name == "no violation":
        continue
    n = separation_sample_size(p, power=0.8)
    n_pairs = comparative_separation_sample_size(p, power=0.8)
    rows[name] = {"people": n, "pairs": n_pairs, "pairs / people": n_pairs / n}
sizes = pd.DataFrame(rows).T.astype({"people": int, "pairs": int})
print(sizes.round(2).to_string())

# %%
# Power curves, closed form and simulation
# ----------------------------------------
# 2,000 simulated data sets per point; the bars are two Monte Carlo standard
# errors.
n_line = np.linspace(50, 4000, 200)
n_sim = np.array([250, 500, 1000, 2000, 4000])
colors = dict(zip(laws, ["0.4", "tab:blue", "tab:orange", "tab:green"]))

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True, layout="constrained")
for i, (name, p) in enumerate(laws.items()):
    for ax, comparative in zip(axes, (False, True)):
        scale = 2 if comparative else 1
        if comparative:
            line = comparative_separation_power(p, scale * n_line)["power"]
            sim = simulate_separation_power(
                p,
                comparative=True,
                n_pairs=scale * n_sim,
                n_repeats=2000,
                random_state=i,
            )
        else:
            line = separation_power(p, n_line)["power"]
            sim = simulate_separation_power(p, n_sim, n_repeats=2000, random_state=i)
        ax.plot(scale * n_line, line, color=colors[name], label=name)
        ax.errorbar(
            scale * n_sim,
            sim["power"],
            yerr=2 * sim["power_se"],
            fmt="o",
            ms=4,
            capsize=2,
            color=colors[name],
        )
for ax, label in zip(axes, ["people n", "judged pairs n_pairs"]):
    ax.axhline(0.8, color="0.7", lw=0.8, ls="--")
    ax.axhline(1 - 0.95**2, color="0.7", lw=0.8, ls=":")
    ax.set_xlabel(label)
    ax.grid(color="0.93")
axes[0].set_title("separation (labelled people)")
axes[1].set_title("comparative separation (pairs; axis twice as long)")
axes[0].set_ylabel("power of the joint test (alpha = 0.05)")
axes[0].set_ylim(0, 1.02)
axes[0].legend(loc="lower right", fontsize=9)

plt.show()

# %%
# Reading the figure
# ------------------
# * The simulated points sit on the closed-form lines: the normal
#   approximation with expected group sizes is accurate from a few hundred
#   people on. The law without violation stays near the false-positive rate
#   ``0.0975`` (dotted line) at every size; the Wald test is slightly liberal
#   in small samples (a simulated rate of 0.107 at 250 people, 0.102 at 500).
# * With the pairs axis drawn twice as long, the two panels look alike: about
#   twice as many judged pairs as labelled people give the same power. For
#   these laws the ratio of the sample sizes for 80 % power is 1.8 to 2.3.
#   The exact ratio depends on the law: for "TPR and FPR gaps" the TPR gap and
#   the FPR gap nearly cancel in the cross-group comparison
#   ``TPR(1, 0) = TPR_1 TNR_0`` against ``TPR(0, 1) = TPR_0 TNR_1``, so the
#   pairs lose more power there.
# * The pairs panel is about *judged* pairs, each pair a new judgment by an
#   annotator. When every person has a label, the comparative test does not
#   draw pairs: :func:`~sklearn_smallfair.stats.comparative_separation_test`
#   counts all pairs of the labelled people (stratified by their label pair),
#   with the variance of the U-statistic under separation, and its verdict
#   does not depend on a seed (see
#   :ref:`comparative_all_pairs` in the user guide).
