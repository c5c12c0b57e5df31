"""
=============================================
Planning a MATCH audit: power against n
=============================================

How many people must a group have for the MATCH test
(:func:`~sklearn_smallfair.stats.match_test`) to notice that its true positive
rate is lower than the reference's? With ProPublica's COMPAS matrix of all
defendants as the reference (TPR 0.53), we draw the exact power of the
two-sided test at level 0.05 (:func:`~sklearn_smallfair.stats.match_power`)
against the group size for TPR gaps of 0.1, 0.2 and 0.3, and mark the sizes
from which the power stays above 80 %
(:func:`~sklearn_smallfair.stats.match_sample_size`). See the user guide,
:ref:`planning`.
"""

# %%
# The reference
# -------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair.datasets import load_published_confusion_matrices
from sklearn_smallfair.stats import match_power, match_sample_size

table = load_published_confusion_matrices("COMPAS")
reference = table.loc[table["group"] == "ALL", ["TP", "FN", "FP", "TN"]]
reference = reference.to_numpy()[0]
print("reference (TP, FN, FP, TN):", reference)

# %%
# Exact power against n
# ---------------------
# The power is saw-toothed: one more person changes the rejection region by
# whole matrices. Every size from 5 to 600 is evaluated exactly.
sizes = np.arange(5, 601)
fig, ax = plt.subplots(figsize=(7, 4))
for gap in (0.3, 0.2, 0.1):
    power = match_power("tpr", reference, sizes, effect=-gap)
    (line,) = ax.plot(sizes, power, lw=1, label=f"TPR lower by {gap}")
    if gap >= 0.2:
        n = match_sample_size("tpr", reference, effect=-gap)
        ax.axvline(n, color=line.get_color(), ls=":", lw=1)
        print(f"gap {gap}: 80% power from n = {n}")
ax.axhline(0.8, color="grey", lw=0.8)
ax.axhline(0.05, color="grey", lw=0.8, ls="--")
ax.set_xlabel("group size n")
ax.set_ylabel("power (two-sided, alpha = 0.05)")
ax.set_title("MATCH test of TPR against the COMPAS reference")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()
